// Where the files' messages meet the planner, which reads only the spec (planner/planner.h): the
// model and the cluster resolved once for it, and its spec plan written back as the Plan message that
// `hetsim plan` saves, `run --replan` simulates and `validate` ranks (proto/plan_message.h, with the
// model inline or by path and the TP-overlap settings as the request gave them).
//
//   driver::PlannerMessages in{.model = model, .cluster = cluster, .model_path = "model.pbtxt"};
//   planner::PlanRequest settings;  // the search's settings; its model and cluster come from `in`
//   settings.global_batch_size = 64;
//   absl::StatusOr<driver::Planned> planned = driver::PlanOnMessages(in, settings);
//   planned->plan;  // the Plan message; planned->outcome: the prediction, notes, statistics
#ifndef HETSIM_SERVICE_DRIVER_PLAN_MESSAGES_H_
#define HETSIM_SERVICE_DRIVER_PLAN_MESSAGES_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "base/spec/plan.h"
#include "planner/planner.h"
#include "proto/hetsim.pb.h"

namespace hetsim::driver {

// The planner's inputs as the files give them.
struct PlannerMessages {
  hetsim::v1::Model model = {};      // valid
  hetsim::v1::Cluster cluster = {};  // valid, presets applied
  std::string cluster_path = {};     // the cluster's file, for messages ("" = none)
  // Plan.tp_comm_overlap_config to price the plans with and to write into them (absent: Transformer
  // Engine's defaults, not written).
  std::optional<hetsim::v1::TpCommOverlapConfig> tp_comm_overlap_config = {};
  // How the written plan names its model: a path relative to the plan (empty = the model inline).
  std::string model_path = {};
};

// `settings` with the model, the cluster and the TP-overlap settings of `inputs` resolved into it, and
// the profile cache's scope (the model's bytes).
absl::StatusOr<planner::PlanRequest> ResolvePlanRequest(const PlannerMessages& inputs, planner::PlanRequest settings);

// The model message a plan indexes: `inputs.model`, at SUBLAYER granularity when the planner refined it.
hetsim::v1::Model PlannedModel(const PlannerMessages& inputs, const planner::PlanOutcome& outcome);

// `plan` (one of `outcome`'s) as a Plan message: the model inline when `model_inline`, when the
// planner refined it or when `inputs` names no path, else by `inputs.model_path`.
hetsim::v1::Plan PlanMessageOf(const spec::PlanSpec& plan, const PlannerMessages& inputs,
                               const planner::PlanOutcome& outcome, bool model_inline = false);

struct Planned {
  planner::PlanOutcome outcome;
  hetsim::v1::Model model;  // the model the plan indexes (PlannedModel)
  hetsim::v1::Plan plan;    // outcome.plan as a message (PlanMessageOf)
};

// Resolves, plans and writes.
absl::StatusOr<Planned> PlanOnMessages(const PlannerMessages& inputs, const planner::PlanRequest& settings);

}  // namespace hetsim::driver

#endif  // HETSIM_SERVICE_DRIVER_PLAN_MESSAGES_H_
