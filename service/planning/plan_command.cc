#include "service/planning/plan_command.h"

#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "proto/io.h"
#include "proto/limits.h"
#include "service/evaluation/plan_prediction.h"

namespace hetsim::planning {
namespace {

// The payload that marks a usage error: the request, not the inputs or the search, is at fault.
constexpr char kUsagePayload[] = "hetsim.planning/usage";

absl::Status UsageError(absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kUsagePayload, absl::Cord());
  return status;
}

// The search's K-th best plan in place of the best, named "<best>-altK", its model named as the best's.
absl::Status ChooseAlternative(int alternative, planner::PlanOutcome* outcome) {
  if (alternative == 1) return absl::OkStatus();
  if (static_cast<size_t>(alternative) > outcome->alternatives.size()) {
    return UsageError(
        absl::StrFormat("--alternative: the search kept %d plans, not %d", outcome->alternatives.size(), alternative));
  }
  spec::PlanSpec chosen = outcome->alternatives[alternative - 1];
  chosen.name = absl::StrCat(outcome->plan.name, "-alt", alternative);
  outcome->plan = std::move(chosen);
  outcome->prediction = outcome->alternative_predictions[alternative - 1];
  return absl::OkStatus();
}

// The planner's request with the names parsed, once every setting is checked.
absl::StatusOr<planner::PlanRequest> CheckedRequest(const PlanCommand& command) {
  planner::PlanRequest req = command.request;
  absl::StatusOr<planner::PlannerKind> kind = planner::ParsePlannerKind(command.planner_name);
  if (!kind.ok()) return UsageError(kind.status().message());
  req.planner = *kind;
  if (req.layers < 0) return UsageError("--layers: must be >= 0");
  if (req.global_batch_size == 0) return UsageError("--global-batch: must be > 0");
  if (req.global_batch_size > proto::limits::kMaxGlobalBatch) {  // a plan's own bound; 2^63 wrapped to -1 microbatches
    return UsageError(absl::StrFormat("--global-batch: %d is more than %d (Plan.global_batch_size's bound)",
                                      req.global_batch_size, proto::limits::kMaxGlobalBatch));
  }
  if (req.context_parallel < 0) return UsageError("--context-parallel: must be >= 0");
  if (command.alternative < 1) return UsageError("--alternative: must be >= 1");
  if (!proto::IsValidUtf8(req.name)) return UsageError("--name: not valid UTF-8");
  if (absl::Status s = ValidateMaxWallSeconds(req.max_wall_seconds, "--max-wall-seconds"); !s.ok()) {
    return UsageError(s.message());
  }
  absl::StatusOr<spec::ContextParallelComm> cp_comm = planner::ParseCpCommType(command.cp_comm_type);
  if (!cp_comm.ok()) return UsageError(cp_comm.status().message());
  req.cp_comm = *cp_comm;
  if (!command.prediction.empty() && command.prediction != "hetsim" && command.prediction != "naive") {
    return UsageError(absl::StrFormat("--prediction: \"%s\" is not hetsim or naive", command.prediction));
  }
  return req;
}

}  // namespace

absl::Status CheckPlanCommand(const PlanCommand& command) { return CheckedRequest(command).status(); }

absl::StatusOr<driver::Planned> PlanWith(const PlanCommand& command) {
  HETSIM_ASSIGN_OR_RETURN(const planner::PlanRequest settings, CheckedRequest(command));
  HETSIM_ASSIGN_OR_RETURN(const planner::PlanRequest request, driver::ResolvePlanRequest(command.inputs, settings));
  driver::Planned planned;
  HETSIM_ASSIGN_OR_RETURN(planned.outcome, planner::MakePlan(request));
  HETSIM_RETURN_IF_ERROR(ChooseAlternative(command.alternative, &planned.outcome));
  planned.model = driver::PlannedModel(command.inputs, planned.outcome);
  planned.plan = driver::PlanMessageOf(planned.outcome.plan, command.inputs, planned.outcome);
  if (!command.prediction.empty()) {
    HETSIM_ASSIGN_OR_RETURN(
        *planned.plan.mutable_prediction(),
        evaluation::PredictionFor(command.prediction, planned.plan, planned.model, command.inputs.cluster,
                                  planned.outcome.prediction, command.planner_name));
  }
  return planned;
}

bool IsUsageError(const absl::Status& status) { return status.GetPayload(kUsagePayload).has_value(); }

}  // namespace hetsim::planning
