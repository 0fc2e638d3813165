// The all-gather that reassembles a scattered boundary tensor over the receiving stage's TP ranks
// (Megatron's scatter/gather of pipeline sends) runs only without sequence parallelism: with it, a
// stage's blocks take their input, and their output gradient, as the [s/TP, b, h] shards the TP ranks
// received, and Megatron gathers nothing.
#include <catch2/catch.hpp>

#include "sim/executor/setup.h"
#include "tests/base/time_io.h"
#include "tests/sim/executor/executor_test_util.h"

namespace hetsim::testing {
namespace {

// Two stages of a layer-list model (no collectives of its own), each TP 2 on GPUs 0-1 of one fast node,
// 1 MB of activations per sample across the boundary.
v1::Plan TwoTensorParallelStages(bool sequence_parallel) {
  v1::Plan plan = MakePlan({{"fast", 0, 0, 2, 2, 1, 1.0, 2.0, 1}, {"fast", 1, 0, 2, 2, 1, 1.0, 2.0, 1}}, 4,
                           v1::ONE_F_ONE_B, 1000000);
  for (v1::Stage& st : *plan.mutable_stages()) st.set_sequence_parallel(sequence_parallel);
  return plan;
}

TEST_CASE("boundary: the receiving stage's TP ranks re-gather the scattered tensor, unless it runs SP",
          "[executor][boundary]") {
  const v1::Cluster cluster = TwoIslandCluster(2, 2, 10, 0);
  const auto scattered = MakeSetup(MakeInputs(cluster, TwoTensorParallelStages(false)), NetworkMode::kMaxMinFair);
  const auto sharded = MakeSetup(MakeInputs(cluster, TwoTensorParallelStages(true)), NetworkMode::kMaxMinFair);
  // Without SP: stage 1 gathers its input forward, stage 0 its output gradient backward; nothing else.
  CHECK(scattered->virtual_stages[0].forward_collective_time == 0);
  CHECK(scattered->virtual_stages[0].backward_collective_time > 0);
  CHECK(scattered->virtual_stages[1].forward_collective_time > 0);
  CHECK(scattered->virtual_stages[1].backward_collective_time == 0);
  // With SP the shards are what the blocks take: no collective at all.
  for (const auto& vs : sharded->virtual_stages) {
    CHECK(vs.forward_collective_time == 0);
    CHECK(vs.backward_collective_time == 0);
    CHECK(vs.forward_link_load.empty());
    CHECK(vs.backward_link_load.empty());
  }
}

}  // namespace

}  // namespace hetsim::testing
