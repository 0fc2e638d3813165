// service/planning/plan_command: `hetsim plan` as one typed request, the checks in the command line's
// order and wording, usage errors told apart from the planner's.
#include <string>

#include <catch2/catch.hpp>

#include "service/planning/plan_command.h"
#include "tests/proto/validate_test_util.h"

namespace {

using hetsim::planning::CheckPlanCommand;
using hetsim::planning::IsUsageError;
using hetsim::planning::PlanCommand;

PlanCommand HaptCase() {
  PlanCommand command;
  const hetsim::v1::Plan plan = hetsim::testing::Example<hetsim::v1::Plan>("plan-hapt-case");
  command.inputs.model = plan.model();
  command.inputs.cluster = hetsim::testing::ResolvedCluster("cluster-hapt-case");
  command.request.global_batch_size = 128;
  command.request.micro_batch_size = 1;
  command.request.threads = 1;
  return command;
}

}  // namespace

TEST_CASE("plan command: each setting no search can take is a usage error in the CLI's words", "[planning]") {
  PlanCommand command = HaptCase();
  REQUIRE(CheckPlanCommand(command).ok());
  command.request.layers = -1;
  command.alternative = 0;  // both wrong: the first in the command line's order is reported
  absl::Status s = CheckPlanCommand(command);
  CHECK(IsUsageError(s));
  CHECK(s.message() == "--layers: must be >= 0");
  command.request.layers = 0;
  s = CheckPlanCommand(command);
  CHECK(IsUsageError(s));
  CHECK(s.message() == "--alternative: must be >= 1");
  command.alternative = 1;
  command.cp_comm_type = "ring";
  CHECK(IsUsageError(CheckPlanCommand(command)));
  command.cp_comm_type = "p2p";
  command.planner_name = "oracle";
  CHECK(IsUsageError(CheckPlanCommand(command)));
  CHECK_FALSE(IsUsageError(absl::FailedPreconditionError("nothing fits")));
}

TEST_CASE("plan command: plans, keeps an alternative and stores the prediction", "[planning]") {
  PlanCommand command = HaptCase();
  command.prediction = "hetsim";
  absl::StatusOr<hetsim::driver::Planned> best = hetsim::planning::PlanWith(command);
  REQUIRE(best.ok());
  CHECK(best->plan.prediction().planner() == "hetsim hapt planner");
  CHECK(best->plan.prediction().stages_size() == best->plan.stages_size());
  command.alternative = 1000;
  absl::StatusOr<hetsim::driver::Planned> beyond = hetsim::planning::PlanWith(command);
  REQUIRE_FALSE(beyond.ok());
  CHECK(IsUsageError(beyond.status()));
  CHECK_THAT(std::string(beyond.status().message()), Catch::StartsWith("--alternative: the search kept"));
}
