// The command's wall-clock limit (base/wall_limit.h) and the work estimate checked before setup
// (sim/executor/flow_estimate.h, driver::CheckWorkEstimate): issue 42, "work bounded before it starts".
#include <chrono>
#include <cmath>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "base/wall_limit.h"
#include "proto/inputs.h"
#include "proto/resolve.h"
#include "proto/resolve_cluster.h"
#include "service/driver/build_setup.h"
#include "service/driver/cluster_topology.h"
#include "service/driver/simulate.h"
#include "sim/executor/flow_estimate.h"
#include "topology/device_graph.h"

namespace hetsim::testing {
namespace {

TEST_CASE("wall limit: no limit never passes and a passed one is a run limit naming what ran", "[limits]") {
  const WallLimit none;
  CHECK_FALSE(none.limited());
  CHECK(none.Check("anything").ok());
  const WallLimit past(1e-9, WallLimit::Clock::now() - std::chrono::seconds(1));
  CHECK(past.Passed());
  const absl::Status s = past.Check("routing a collective's transfers");
  CHECK(s.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(IsRunLimit(s));
  CHECK_THAT(std::string(s.message()),
             Catch::StartsWith("routing a collective's transfers ran past the --max-wall-seconds limit (1e-09 s") &&
                 Catch::Contains("raise it with --max-wall-seconds S (0 = no limit)"));
  CHECK(ValidateMaxWallSeconds(0, "x").ok());
  CHECK_FALSE(ValidateMaxWallSeconds(-1, "x").ok());
  CHECK_FALSE(ValidateMaxWallSeconds(std::nan(""), "x").ok());
}

TEST_CASE("wall limit: a scope installs the thread's limit and nested scopes restore the outer", "[limits]") {
  CHECK_FALSE(CurrentWallLimit().limited());
  const WallLimit past(1e-9, WallLimit::Clock::now() - std::chrono::seconds(1));
  {
    const WallLimitScope outer(past);
    CHECK(WallLimitPassedNow());
    // Polled: the clock is read once every 1,024 calls, and then it stays passed.
    bool passed = false;
    for (int i = 0; i < 1024 && !passed; ++i) passed = WallLimitPassed();
    CHECK(passed);
    const WallLimit later(3600);
    {
      const WallLimitScope inner(later);
      CHECK_FALSE(WallLimitPassedNow());
    }
    CHECK(&CurrentWallLimit() == &past);
  }
  CHECK_FALSE(CurrentWallLimit().limited());
  CHECK_FALSE(WallLimitPassedNow());
}

TEST_CASE("wall limit: a topology's build stops at the limit and is refused, never used", "[limits]") {
  // 16,384 GPUs: 0.1 s to build, the same code that takes seconds at 800,000.
  const std::string path = std::string(HETSIM_SOURCE_DIR) + "/examples/cluster-16k-h100.pbtxt";
  absl::StatusOr<v1::Cluster> cluster = proto::LoadCluster(proto::Source::File(path));
  REQUIRE(cluster.ok());
  absl::StatusOr<spec::ClusterSpec> resolved = proto::ResolveCluster(*cluster, path);
  REQUIRE(resolved.ok());
  const topology::Topology whole = topology::Topology::Build(*resolved);
  CHECK(whole.CheckComplete().ok());
  const WallLimit past(1e-9, WallLimit::Clock::now() - std::chrono::seconds(1));
  const WallLimitScope scope(past);
  const topology::Topology cut = topology::Topology::Build(*resolved);
  CHECK(cut.devices().size() < whole.devices().size());
  const absl::Status s = cut.CheckComplete();
  CHECK(IsRunLimit(s));
  CHECK_THAT(std::string(s.message()), Catch::StartsWith("building the cluster's topology ran past the "
                                                         "--max-wall-seconds limit"));
  absl::StatusOr<std::unique_ptr<topology::Topology>> built = driver::BuildTopology(*cluster, path);
  REQUIRE_FALSE(built.ok());
  CHECK(IsRunLimit(built.status()));
}

TEST_CASE("work estimate: lower bounds from the plan, checked before setup", "[limits]") {
  const std::string examples = std::string(HETSIM_SOURCE_DIR) + "/examples/";
  const std::string plan_path = examples + "plan-hapt-case.pbtxt";
  absl::StatusOr<proto::PlanInputs> in = proto::LoadPlanInputs(plan_path, examples + "cluster-hapt-case.pbtxt");
  REQUIRE(in.ok());
  const spec::PlanSpec plan = proto::ResolvePlan(in->plan, plan_path);
  const int64_t gpus = driver::ClusterGpus(in->cluster);
  CHECK(gpus == 6);  // 2 A100 nodes of 2 and 1 V100 node of 2
  const executor::WorkEstimate e = executor::EstimateWork(plan, gpus);
  // 128 microbatches x 3 stages x 2 passes; every stage has DP 1, so no synchronisation ring.
  CHECK(e.pipeline_tasks == 768);
  CHECK(e.min_events == 768);
  CHECK(e.grad_sync_ranks == 0);
  CHECK(e.min_memory_bytes == 768 * executor::kMinBytesPerPipelineTask + 6 * executor::kMinBytesPerClusterGpu);

  CHECK(driver::CheckWorkEstimate(plan, gpus, {.max_events = 768, .max_memory_bytes = 0}).ok());
  const absl::Status events = driver::CheckWorkEstimate(plan, gpus, {.max_events = 767, .max_memory_bytes = 0});
  CHECK(IsRunLimit(events));
  CHECK_THAT(std::string(events.message()), Catch::Contains("needs at least 768 events"));
  const absl::Status memory = driver::CheckWorkEstimate(plan, gpus, {.max_events = 0, .max_memory_bytes = 1000});
  CHECK(IsRunLimit(memory));
  CHECK_THAT(std::string(memory.message()), Catch::Contains("over the --max-memory limit"));

  // The whole run: refused before anything is built, and the iteration's true event count passes.
  driver::SimulateOptions small;
  small.max_memory_bytes = 1000;
  CHECK(IsRunLimit(driver::SimulatePlan(*in, small).status()));
  absl::StatusOr<driver::Simulation> full = driver::SimulatePlan(*in, {});
  REQUIRE(full.ok());
  CHECK(full->result.events >= e.min_events);
}

}  // namespace
}  // namespace hetsim::testing
