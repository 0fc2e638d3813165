// What an executed iteration means to a user: the Report message (proto/hetsim.proto) with
// throughput, utilisation, balance, per-stage time breakdown and memory, per-boundary transfer
// overlap and per-link-class utilisation. Definitions are in docs/metrics.md.
//
//   auto setup = driver::BuildSetup(inputs, mode);
//   auto result = executor::Execute(*setup, {});
//   v1::Report report = BuildReport(*setup, *result, {.wall_time_s = 0.42});
#ifndef HETSIM_TRACES_METRICS_H_
#define HETSIM_TRACES_METRICS_H_

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "proto/hetsim.pb.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"
#include "sim/pipeline/iteration_metrics.h"

namespace hetsim::traces {

// Throughput, MFU, TFLOP/s per GPU, the bubble ratio and eta (HAPT Eq. 25) are computed by
// pipeline::ComputeIterationMetrics (sim/pipeline/iteration_metrics.h), which the planner's
// prediction calls too.

struct ReportOptions {
  std::optional<double> wall_time_s;        // left out of the report when unset (deterministic output)
  std::vector<std::string> approximations;  // opt-in approximations in force, into Report.approximations
};

v1::Report BuildReport(const executor::ExecutionSetup& setup, const executor::ExecutionResult& result,
                       const ReportOptions& options = {});

// The executed iteration as the inputs of the shared definitions (sim/pipeline/iteration_metrics.h):
// its work, times and every stage's load. MergePipelineReports sums them over pipelines.
pipeline::IterationFigures IterationFiguresOf(const executor::ExecutionSetup& setup,
                                              const executor::ExecutionResult& result);

// "flow (max-min fair)" or "analytical (contention-free)".
const char* NetworkModelDescription(network::NetworkMode mode);

}  // namespace hetsim::traces

#endif  // HETSIM_TRACES_METRICS_H_
