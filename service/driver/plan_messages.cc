#include "service/driver/plan_messages.h"

#include <utility>

#include "base/status_macros.h"
#include "proto/plan_message.h"
#include "proto/resolve.h"
#include "proto/resolve_cluster.h"

namespace hetsim::driver {

absl::StatusOr<planner::PlanRequest> ResolvePlanRequest(const PlannerMessages& inputs, planner::PlanRequest settings) {
  settings.model = proto::ResolveModel(inputs.model, "model");
  HETSIM_ASSIGN_OR_RETURN(settings.cluster, proto::ResolveCluster(inputs.cluster, inputs.cluster_path));
  settings.tp_comm_overlap_config = inputs.tp_comm_overlap_config
                                        ? proto::ResolveTpCommOverlapConfig(*inputs.tp_comm_overlap_config)
                                        : spec::TpCommOverlapSpec{};
  settings.profile_scope = inputs.model.SerializeAsString();
  return settings;
}

hetsim::v1::Model PlannedModel(const PlannerMessages& inputs, const planner::PlanOutcome& outcome) {
  hetsim::v1::Model model = inputs.model;
  if (outcome.refined) model.mutable_transformer()->set_granularity(hetsim::v1::SUBLAYER);
  return model;
}

hetsim::v1::Plan PlanMessageOf(const spec::PlanSpec& plan, const PlannerMessages& inputs,
                               const planner::PlanOutcome& outcome, bool model_inline) {
  hetsim::v1::Plan message = proto::PlanMessage(plan);
  // A refined granularity is not what the model file says: the plan carries the model inline.
  if (model_inline || outcome.refined || inputs.model_path.empty()) {
    *message.mutable_model() = PlannedModel(inputs, outcome);
  } else {
    message.set_model_path(inputs.model_path);
  }
  if (inputs.tp_comm_overlap_config) *message.mutable_tp_comm_overlap_config() = *inputs.tp_comm_overlap_config;
  return message;
}

absl::StatusOr<Planned> PlanOnMessages(const PlannerMessages& inputs, const planner::PlanRequest& settings) {
  HETSIM_ASSIGN_OR_RETURN(const planner::PlanRequest request, ResolvePlanRequest(inputs, settings));
  Planned planned;
  HETSIM_ASSIGN_OR_RETURN(planned.outcome, planner::MakePlan(request));
  planned.model = PlannedModel(inputs, planned.outcome);
  planned.plan = PlanMessageOf(planned.outcome.plan, inputs, planned.outcome);
  return planned;
}

}  // namespace hetsim::driver
