// What an executed iteration means to a user: the Report message (proto/hetsim.proto) with
// throughput, utilisation, balance, per-stage time breakdown and memory, per-boundary transfer
// overlap and per-link-class utilisation. Definitions are in docs/metrics.md.
//
//   auto setup = sim::executor::BuildExecutionSetup(inputs, mode);
//   auto result = sim::executor::Execute(*setup, {});
//   v1::Report report = BuildReport(*setup, *result, {.wall_time_s = 0.42});
#ifndef HETSIM_TRACES_METRICS_H_
#define HETSIM_TRACES_METRICS_H_

#include <optional>
#include <span>

#include "proto/hetsim.pb.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"

namespace hetsim::traces {

// eta (HAPT Eq. 25) is sim::pipeline::Eta (sim/pipeline/hapt_metrics.h), shared with the planner.

// Model FLOPs utilisation: model FLOPs of the iteration / (iteration seconds x sum of peak FLOP/s).
double Mfu(double model_flop, double iteration_seconds, double sum_peak_flop_per_s);

// 1 - sum of busy compute time / (stages x span), busy times per stage.
double BubbleRatio(std::span<const double> busy_per_stage, double span);

struct ReportOptions {
  std::optional<double> wall_time_s;  // left out of the report when unset (deterministic output)
};

v1::Report BuildReport(const sim::executor::ExecutionSetup& setup, const sim::executor::ExecutionResult& result,
                       const ReportOptions& options = {});

// "flow (max-min fair)" or "analytical (contention-free)".
const char* NetworkModelDescription(sim::NetworkMode mode);

}  // namespace hetsim::traces

#endif  // HETSIM_TRACES_METRICS_H_
