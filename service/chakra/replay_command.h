// `hetsim run --chakra DIR` as a request and its response, for the command line and the API alike: the
// cluster (its topology built once), the folder's traces and their repairs, then the replay and its
// Report. Two steps, so that a caller prints the traces' warnings before a replay that fails.
//
//   ReplayRequest req{.dir = "traces", .cluster = proto::Source::File("cluster.pbtxt")};
//   auto loaded = LoadReplay(req);           // loaded->workload.warnings: the repairs made
//   auto replayed = RunReplay(*loaded, req);  // replayed->report
#ifndef HETSIM_SERVICE_CHAKRA_REPLAY_COMMAND_H_
#define HETSIM_SERVICE_CHAKRA_REPLAY_COMMAND_H_

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "proto/hetsim.pb.h"
#include "proto/inputs.h"
#include "service/chakra/replay.h"
#include "service/chakra/trace.h"
#include "topology/device_graph.h"

namespace hetsim::chakra {

struct ReplayRequest {
  std::string dir;               // <prefix>.<rank>.et and <prefix>.comm_groups.json
  proto::Source cluster;         // rank r runs on global GPU r
  std::string comm_groups;       // ASTRA-sim's communicator groups JSON (empty: the folder's)
  bool ideal = false;            // ideal hardware on top of the cluster (Cluster.ideal)
  ReplayOptions options;         // network, limits, retime_compute (its dtype is the traces')
  bool record_wall_time = true;  // false: the Report leaves it out (byte-identical reports)
};

struct LoadedReplay {
  hetsim::v1::Cluster cluster;  // as simulated (ideal applied)
  std::unique_ptr<topology::Topology> topology;
  ChakraWorkload workload;  // .warnings: the repairs made while loading
  std::chrono::steady_clock::time_point start;
};

absl::StatusOr<LoadedReplay> LoadReplay(const ReplayRequest& request);

struct ReplayResponse {
  ReplayResult result;
  hetsim::v1::Report report;
};

// Replays the loaded traces: InvalidArgument for a GlobalMetadata dtype hetsim does not know (under
// retime_compute), or what ReplayChakra returns.
absl::StatusOr<ReplayResponse> RunReplay(const LoadedReplay& loaded, const ReplayRequest& request);

}  // namespace hetsim::chakra

#endif  // HETSIM_SERVICE_CHAKRA_REPLAY_COMMAND_H_
