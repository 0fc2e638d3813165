// A mixed stage's ZeRO-3 passes in lock-step (Plan.zero3_lock_step, sim/executor/lock_step.h), against the
// closed forms of tests/sim/workload/workload_gather_lock_step_test.cc.
#include <catch2/catch.hpp>

#include <algorithm>

#include "base/time.h"
#include "sim/executor/lock_step.h"
#include "sim/executor/setup.h"
#include "tests/base/time_io.h"
#include "tests/sim/executor/executor_test_util.h"

namespace hetsim::testing {
namespace {

TEST_CASE("A mixed stage whose groups are slower by one ratio on every layer costs the same in lock-step",
          "[executor][zero][lock_step][replicas]") {
  // One stage of 2 layers at ZeRO-3 with prefetch, its replicas an A100 at 1 sample and a V100 (half its
  // peak) at 2: per layer a = f / 2 and b = 2 f on the ideal cluster, each gather G over both. The slow
  // group paces every layer either way (the workload test's closed forms: its lock-step end is its pass alone), so
  // the stage's passes, which last as long as the slower group's, do not change.
  v1::Cluster cluster = TwoIslandCluster(1, 2, 10, 0);
  cluster.mutable_gpu_types(0)->set_peak_tflops_fp16(250);
  const auto plan_with = [&](bool lock_step) {
    v1::Plan plan = MakePlan({{"fast", 0, 0, 1, 1, 1, 1.0, 2.0, 2}}, 4, v1::ONE_F_ONE_B, 1000, 3);
    v1::Stage* st = plan.mutable_stages(0);
    st->clear_measured_forward_ms();
    st->clear_measured_backward_ms();
    st->set_zero_stage(3);
    SetReplicaGroups(*st, {{"fast", 0, 1, 1, 1, 1}, {"slow", 0, 1, 1, 1, 2}});
    plan.set_zero3_prefetch(true);
    plan.set_zero3_lock_step(lock_step);
    return plan;
  };
  const auto per_pass = MakeSetup(MakeInputs(cluster, plan_with(false)), network::NetworkMode::kMaxMinFair);
  const auto lock_step = MakeSetup(MakeInputs(cluster, plan_with(true)), network::NetworkMode::kMaxMinFair);
  const executor::VirtualStageCost& vs = lock_step->virtual_stages[0];
  REQUIRE(vs.replica_groups.size() == 2);
  REQUIRE(vs.replica_groups[1].layer_gather_time.size() == 2);
  const Time G = vs.replica_groups[1].layer_gather_time[1];
  CHECK(G > 0);
  // b = 1.6 ms of compute a layer against a gather of 1 MB over the 10 Gb/s link (0.8 ms): G < b, so the
  // forward is G + max(b, G) + b = G + the slow group's compute.
  const Time compute = vs.replica_groups[1].cost.forward_time;
  REQUIRE(G < compute / 2);
  CHECK(vs.forward_time() == per_pass->virtual_stages[0].forward_time());
  CHECK(vs.backward_time() == per_pass->virtual_stages[0].backward_time());
  CHECK(vs.forward_time() == G + compute);
  CHECK(MakeRun(*lock_step).pipeline_end == MakeRun(*per_pass).pipeline_end);
}

}  // namespace
}  // namespace hetsim::testing
