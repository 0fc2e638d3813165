// Run limits (--max-events, --max-wall-seconds): the executor stops exactly at the event limit with a
// marked status, `hetsim run` exits 2 naming the limit and writes nothing, `hetsim sweep` records the
// point as "limit" and goes on.
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "app/cli/cli.h"
#include "proto/inputs.h"
#include "service/driver/build_setup.h"
#include "service/sweep/row.h"
#include "sim/executor/executor.h"
#include "sim/executor/run_limit.h"
#include "sim/executor/setup.h"
#include "tests/service/sweep/sweep_test_util.h"

namespace hetsim::testing {
namespace {

std::unique_ptr<executor::ExecutionSetup> HaptCaseSetup() {
  const std::string examples = std::string(HETSIM_SOURCE_DIR) + "/examples/";
  absl::StatusOr<proto::PlanInputs> inputs =
      proto::LoadPlanInputs(examples + "plan-hapt-case.pbtxt", examples + "cluster-hapt-case.pbtxt");
  REQUIRE(inputs.ok());
  auto setup = driver::BuildSetup(*inputs, network::NetworkMode::kMaxMinFair);
  REQUIRE(setup.ok());
  return *std::move(setup);
}

TEST_CASE("limits: the iteration passes with max-events equal to its event count and stops one below", "[limits]") {
  const auto setup = HaptCaseSetup();
  absl::StatusOr<executor::ExecutionResult> full = executor::Execute(*setup, {});
  REQUIRE(full.ok());
  const uint64_t events = full->events;
  REQUIRE(events > 10);

  executor::ExecutorOptions exact;
  exact.max_events = events;
  absl::StatusOr<executor::ExecutionResult> same = executor::Execute(*setup, exact);
  REQUIRE(same.ok());
  CHECK(same->iteration_time == full->iteration_time);

  executor::ExecutorOptions short_by_one;
  short_by_one.max_events = events - 1;
  absl::StatusOr<executor::ExecutionResult> cut = executor::Execute(*setup, short_by_one);
  REQUIRE_FALSE(cut.ok());
  CHECK(cut.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(executor::IsRunLimit(cut.status()));
  CHECK(cli::ExitCodeFor(cut.status()) == cli::kExitBadInput);
  CHECK_THAT(std::string(cut.status().message()),
             Catch::Contains(absl::StrCat("--max-events limit (", events - 1, " events)")) &&
                 Catch::Contains("raise it with --max-events N"));
  // Deterministic: the same simulated time in the message on a second run.
  absl::StatusOr<executor::ExecutionResult> again = executor::Execute(*setup, short_by_one);
  CHECK(again.status() == cut.status());

  // Other failures are not limits.
  CHECK_FALSE(executor::IsRunLimit(absl::ResourceExhaustedError("no plan fits")));
  CHECK(cli::ExitCodeFor(absl::ResourceExhaustedError("x")) == cli::kExitInternal);
  CHECK(sweep::PointStatusName(absl::StatusOr<hetsim::v1::Report>(cut.status())) == "limit");
  CHECK(sweep::PointStatusName(absl::StatusOr<hetsim::v1::Report>(absl::ResourceExhaustedError("x"))) == "infeasible");
}

TEST_CASE("limits: hetsim run exits 2 naming the limit and writes no report or trace", "[limits][cli]") {
  const std::string dir = SweepFolder("limits");
  const std::string plan = dir + "/plan-hapt-case.pbtxt", cluster = dir + "/cluster-hapt-case.pbtxt";
  const Ran events = Hetsim(dir, absl::StrCat("run ", plan, " --cluster ", cluster, " --max-events 10 --report ", dir,
                                              "/r.json --trace ", dir, "/t.json"));
  CHECK(events.exit_code == 2);
  // Refused before setup: 128 microbatches x 3 stages x 2 passes end with 768 events at least.
  CHECK_THAT(events.err, Catch::StartsWith("hetsim run: " + plan + ": the iteration needs at least 768 events") &&
                             Catch::Contains("over the --max-events limit (10 events); raise it with --max-events N") &&
                             !Catch::Contains("internal error"));
  CHECK_FALSE(std::filesystem::exists(dir + "/r.json"));
  CHECK_FALSE(std::filesystem::exists(dir + "/t.json"));

  // The wall clock is checked every 1,024 events: the 512-GPU iteration has far more.
  const Ran wall = Hetsim(dir, absl::StrCat("run ", dir, "/plan-512gpu.pbtxt --cluster ", dir,
                                            "/cluster-512gpu.pbtxt --max-wall-seconds 1e-9 --report ", dir, "/w.json"));
  CHECK(wall.exit_code == 2);
  CHECK_THAT(wall.err, Catch::Contains("--max-wall-seconds limit (1e-09 s)") &&
                           Catch::Contains("raise it with --max-wall-seconds S"));
  CHECK_FALSE(std::filesystem::exists(dir + "/w.json"));

  CHECK(Hetsim(dir, absl::StrCat("run ", plan, " --cluster ", cluster, " --max-wall-seconds -1")).exit_code == 2);
  CHECK(Hetsim(dir, absl::StrCat("run ", plan, " --cluster ", cluster, " --max-events 0 -q")).exit_code == 0);
}

TEST_CASE("limits: a sweep point that reaches a limit is recorded as limit and the sweep goes on", "[limits][cli]") {
  const std::string dir = SweepFolder("limits");
  const std::string sweep = WriteFile(dir, "sweep.pbtxt", kBandwidthScheduleSweep);
  REQUIRE(Hetsim(dir, absl::StrCat("sweep ", sweep, " -o ", dir, "/cut.csv -j 2 --max-events 10")).exit_code == 0);
  const std::string rows = ReadFile(dir + "/cut.csv");
  CHECK(std::count(rows.begin(), rows.end(), '\n') == 25);
  CHECK(rows.find(",ok,") == std::string::npos);
  CHECK_THAT(rows, Catch::Contains(",limit,\"") && Catch::Contains("the iteration needs at least 768 events") &&
                       Catch::Contains("over the --max-events limit (10 events)"));
  // Deterministic rows, whatever --jobs.
  REQUIRE(Hetsim(dir, absl::StrCat("sweep ", sweep, " -o ", dir, "/cut1.csv -j 1 --max-events 10")).exit_code == 0);
  CHECK(ReadFile(dir + "/cut1.csv") == rows);
  // A limit no point reaches changes nothing.
  REQUIRE(Hetsim(dir, absl::StrCat("sweep ", sweep, " -o ", dir, "/free.csv -j 2")).exit_code == 0);
  REQUIRE(Hetsim(dir, absl::StrCat("sweep ", sweep, " -o ", dir, "/high.csv -j 2 --max-events 100000000")).exit_code ==
          0);
  CHECK(ReadFile(dir + "/high.csv") == ReadFile(dir + "/free.csv"));
  CHECK(Hetsim(dir, absl::StrCat("sweep ", sweep, " --max-wall-seconds -2")).exit_code == 2);
}

}  // namespace
}  // namespace hetsim::testing
