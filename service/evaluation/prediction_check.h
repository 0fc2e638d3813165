// One plan's prediction (Plan.prediction, written by any planner) against the plan's simulation: the
// error of every predicted quantity, and per stage where the time goes (compute, exposed
// communication, bubble, gradient synchronisation) predicted and simulated, so a cost-model author
// sees which term to fix. docs/validation-of-planners.md explains the comparison.
#ifndef HETSIM_SERVICE_EVALUATION_PREDICTION_CHECK_H_
#define HETSIM_SERVICE_EVALUATION_PREDICTION_CHECK_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"

namespace hetsim::evaluation {

// `plan` is valid and carries a prediction; `report` is its simulation (traces::BuildReport) with
// `microbatches` microbatches. Quantities compared, each where the prediction gives it:
//   prediction.iteration_time_ms             Report.iteration_time_ms
//   prediction.stages[i].forward_ms          StageReport.forward_ms_per_microbatch
//   prediction.stages[i].backward_ms         StageReport.backward_ms_per_microbatch
//   prediction.stages[i].boundary_transfer_ms BoundaryReport.transfer_ms of the boundary i -> i+1
//   prediction.stages[i].peak_memory_gib     StageReport.peak_memory_gib
// Stage terms: compute (compute_ms, else microbatches x (forward + backward)) against compute_busy_ms;
// exposed_comm against exposed_comm_ms; bubble against idle_ms; grad_sync against grad_sync_ms +
// optimizer_ms. With the iteration time and exactly one term missing, that term is the remainder
// (never below 0), as the simulator's idle time is. A plan of pipelines: the prediction's and the report's
// stages are every pipeline's in turn, each stage's compute over its own pipeline's microbatches.
hetsim::v1::PlanValidation ComparePrediction(const hetsim::v1::Plan& plan, int64_t microbatches,
                                             const hetsim::v1::Report& report, absl::string_view plan_file);

}  // namespace hetsim::evaluation

#endif  // HETSIM_SERVICE_EVALUATION_PREDICTION_CHECK_H_
