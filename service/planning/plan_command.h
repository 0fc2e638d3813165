// `hetsim plan` as one typed request for every front end (the command line, app/api and so Python):
// the planner's request, which of the search's plans to keep, and the prediction to store in it. The
// checks and the steps are written once here, so Python plans exactly as the command does.
#ifndef HETSIM_SERVICE_PLANNING_PLAN_COMMAND_H_
#define HETSIM_SERVICE_PLANNING_PLAN_COMMAND_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "planner/planner.h"
#include "service/driver/plan_messages.h"

namespace hetsim::planning {

struct PlanCommand {
  // Model (valid), cluster (valid, presets applied), the TP-overlap settings and the model's path.
  driver::PlannerMessages inputs;
  // The search's settings (its model and cluster come from `inputs`); its `planner` and `cp_comm` are
  // read from the two names below.
  planner::PlanRequest request;
  std::string planner_name = "hapt";  // hapt, tangram, megatron, alpa; also Plan.prediction.planner
  std::string cp_comm_type = "p2p";   // Megatron's --cp-comm-type: p2p, all_gather, a2a
  int alternative = 1;                // 1 = the best plan; K = the search's K-th best
  std::string prediction;             // "", "hetsim" or "naive": what Plan.prediction holds
};

// The settings no search can take, named as the command line names them ("--layers: must be >= 0"),
// in the order it checks them, each an InvalidArgument that IsUsageError recognises. The command line
// checks them before it reads any file; PlanWith checks them again.
absl::Status CheckPlanCommand(const PlanCommand& command);

// Checks the command, plans, keeps the chosen alternative and stores the prediction. Errors in the
// request (CheckPlanCommand's, and an alternative beyond those the search kept) are usage errors;
// a model that fits nowhere is the planner's FailedPrecondition.
absl::StatusOr<driver::Planned> PlanWith(const PlanCommand& command);

// True for the errors of the request itself (the command line prints its usage line after them).
bool IsUsageError(const absl::Status& status);

}  // namespace hetsim::planning

#endif  // HETSIM_SERVICE_PLANNING_PLAN_COMMAND_H_
