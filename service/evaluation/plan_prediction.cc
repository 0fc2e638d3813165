#include "service/evaluation/plan_prediction.h"

#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "base/units.h"
#include "proto/inputs.h"
#include "service/evaluation/naive_prediction.h"

namespace hetsim::evaluation {

namespace v1 = hetsim::v1;

v1::PlanPrediction FromPlannerPrediction(const planner::Prediction& p, absl::string_view planner) {
  v1::PlanPrediction out;
  out.set_planner(absl::StrFormat("hetsim %s planner", planner));
  out.set_iteration_time_ms(TimeToMilliseconds(p.iteration));
  // A plan of pipelines: every pipeline's stages in turn, no boundary after a pipeline's last stage.
  std::vector<bool> last(p.stages.size(), false);
  if (!last.empty()) last.back() = true;
  size_t end = 0;
  for (const planner::Prediction::Pipeline& pipe : p.pipelines) {
    end += static_cast<size_t>(pipe.stages);
    if (end > 0 && end <= last.size()) last[end - 1] = true;
  }
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const planner::StagePrediction& s = p.stages[i];
    v1::PredictedStage* o = out.add_stages();
    o->set_forward_ms(TimeToMilliseconds(s.forward));
    o->set_backward_ms(TimeToMilliseconds(s.backward));
    if (!last[i]) o->set_boundary_transfer_ms(TimeToMilliseconds(s.comm));
    o->set_peak_memory_gib(BytesToGib(static_cast<double>(s.peak_bytes)));
    o->set_grad_sync_ms(TimeToMilliseconds(s.grad_sync));
  }
  return out;
}

absl::StatusOr<v1::PlanPrediction> PredictionFor(absl::string_view kind, const v1::Plan& plan, const v1::Model& model,
                                                 const v1::Cluster& cluster, const planner::Prediction& p,
                                                 absl::string_view planner) {
  if (kind == "hetsim") return FromPlannerPrediction(p, planner);
  if (kind != "naive") {
    return absl::InvalidArgumentError(absl::StrFormat("--prediction: \"%s\" is not hetsim or naive", kind));
  }
  proto::PlanInputs inputs;
  inputs.cluster = cluster;
  inputs.model = model;
  inputs.plan = plan;
  *inputs.plan.mutable_model() = model;
  HETSIM_RETURN_IF_ERROR(proto::ValidatePlanInputs(inputs));
  return evaluation::NaivePrediction(inputs);
}

}  // namespace hetsim::evaluation
