// What a replay of Chakra traces means to a reader: the Report message (the fields that have a
// meaning without a plan: iteration time, GPUs, network model, events, flows), a short text summary
// and a Chrome trace with a process per rank (threads: GPU compute, CPU, communication).
#ifndef HETSIM_SERVICE_CHAKRA_REPLAY_REPORT_H_
#define HETSIM_SERVICE_CHAKRA_REPLAY_REPORT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "service/chakra/replay.h"
#include "service/chakra/trace.h"

namespace hetsim::chakra {

// `wall_time_s` < 0 leaves the wall time out (byte-identical reports).
v1::Report BuildReplayReport(const ChakraWorkload& workload, const ReplayResult& result, absl::string_view trace_dir,
                             const v1::Cluster& cluster, network::NetworkMode mode, double wall_time_s);

std::string FormatReplaySummary(const ChakraWorkload& workload, const ReplayResult& result, const v1::Report& report);

// Chrome Trace Event JSON; timestamps in microseconds printed from integer picoseconds.
std::string ReplayChromeTrace(const ChakraWorkload& workload, const ReplayResult& result);

}  // namespace hetsim::chakra

#endif  // HETSIM_SERVICE_CHAKRA_REPLAY_REPORT_H_
