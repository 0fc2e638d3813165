// Plan.prediction for a plan `hetsim plan` wrote: from hetsim's own planner (its cost model: t_i, c_i,
// memory, the DAG's iteration plus gradient synchronisation) or from the naive yardstick model
// (service/evaluation/naive_prediction.h), so `hetsim validate` can judge either against the simulation.
#ifndef HETSIM_SERVICE_EVALUATION_PLAN_PREDICTION_H_
#define HETSIM_SERVICE_EVALUATION_PLAN_PREDICTION_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "planner/planner.h"
#include "proto/hetsim.pb.h"

namespace hetsim::evaluation {

// Planner::Prediction in the schema's units (ms, GiB); `planner` names it. A plan of pipelines'
// (Prediction::pipelines) stages are every pipeline's in turn, as the run report lists them, each
// stage's grad_sync_ms what it waits for its layer ranges' all-reduces plus its optimizer step.
hetsim::v1::PlanPrediction FromPlannerPrediction(const planner::Prediction& p, absl::string_view planner);

// `kind` "hetsim" (the planner's own prediction `p`) or "naive"; `plan` (its model inline or not) is
// validated against `cluster` and `model` first. InvalidArgument for an unknown kind ("--prediction").
absl::StatusOr<hetsim::v1::PlanPrediction> PredictionFor(absl::string_view kind, const hetsim::v1::Plan& plan,
                                                         const hetsim::v1::Model& model,
                                                         const hetsim::v1::Cluster& cluster,
                                                         const planner::Prediction& p, absl::string_view planner);

}  // namespace hetsim::evaluation

#endif  // HETSIM_SERVICE_EVALUATION_PLAN_PREDICTION_H_
