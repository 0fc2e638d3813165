// A plan of data-parallel pipelines of different shapes (Plan.pipelines; docs/cost-model.md,
// "Pipelines of different shapes"): each pipeline set up as a plan of its own (proto::PipelinePlan),
// its stages' data-parallel reduction left to the layer ranges, all executed at once on one engine and
// one network with every layer range's gradient all-reduce over the GPUs that hold it
// (executor::ExecutePipelines: their flows share links); the report merged
// (traces/pipelines_report.h).
#ifndef HETSIM_SERVICE_DRIVER_SIMULATE_PIPELINES_H_
#define HETSIM_SERVICE_DRIVER_SIMULATE_PIPELINES_H_

#include "absl/status/statusor.h"
#include "proto/inputs.h"
#include "service/driver/simulate.h"
#include "traces/metrics.h"

namespace hetsim::driver {

// `inputs.plan` has pipelines (validated). Simulation.setup and .result are the first pipeline's;
// Simulation.pipelines has every one. Faults: resolved against the one cluster, applied once to the
// shared network and to every pipeline's GPUs; the report's fault part is the first pipeline's view.
absl::StatusOr<Simulation> SimulatePipelines(const proto::PlanInputs& inputs, const SimulateOptions& options);

// The report's options of a run: the opt-in approximations in force, the wall time when asked for.
traces::ReportOptions ReportOptionsFor(const SimulateOptions& options);

}  // namespace hetsim::driver

#endif  // HETSIM_SERVICE_DRIVER_SIMULATE_PIPELINES_H_
