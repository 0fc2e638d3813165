// Plan.block_forward_passes (the AMP artifact's GPT-2, whose pipeline layer runs each block's forward
// twice): a block's forward time, hardware FLOPs and forward TP collectives repeat, its backward, its
// model FLOPs, its activations and the embedding's and head's passes do not.
#include <catch2/catch.hpp>

#include <utility>

#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/proto/model_shapes.h"

namespace {

using namespace hetsim::workload;

// GPT-2 345M as the AMP runs train it: 2 blocks here, with the embedding and the tied head.
hetsim::v1::Model Gpt2TwoBlocks() { return hetsim::testing::AmpGpt2(2); }

using Gpt2OnT4 = hetsim::testing::ModelOnGpu;

Gpt2OnT4 MakeGpt2OnT4() { return hetsim::testing::ModelOnPresetOk(Gpt2TwoBlocks(), "T4", hetsim::v1::FP16); }

// Layers [first, first + count) of the model (0 the embedding, 1-2 the blocks, 3 the head) at TP 2.
StageCost CostWith(const Gpt2OnT4& m, int first, int count, int passes) {
  auto cost = ComputeStageCost(m.model, hetsim::testing::AmpStageConfig(first, count, passes), m.gpu, "plan");
  REQUIRE(cost.ok());
  return *std::move(cost);
}

}  // namespace

TEST_CASE("block_forward_passes: a block's forward, its FLOPs and its forward TP collectives run again",
          "[workload][amp]") {
  const Gpt2OnT4 m = MakeGpt2OnT4();
  const StageCost once = CostWith(m, 1, 2, 1);
  const StageCost twice = CostWith(m, 1, 2, 2);
  REQUIRE(once.layer_forward_s.size() == 2);
  for (size_t i = 0; i < 2; ++i) CHECK(twice.layer_forward_s[i] == Approx(2 * once.layer_forward_s[i]));
  CHECK(twice.backward_time == once.backward_time);
  CHECK(twice.forward_flop_per_gpu == Approx(2 * once.forward_flop_per_gpu));
  CHECK(twice.model_flop_per_gpu == Approx(once.model_flop_per_gpu));
  CHECK(twice.memory.activation_bytes_per_microbatch == once.memory.activation_bytes_per_microbatch);
  // Megatron-LM v1.1.5's blocks all-reduce twice a forward at TP 2 (the attention's and the MLP's
  // row-parallel outputs); the second pass does it again. The backward's collectives are the same.
  CHECK(hetsim::testing::ForwardCollectiveCalls(once) == 4);
  CHECK(hetsim::testing::ForwardCollectiveCalls(twice) == 8);
  CHECK(twice.backward_collectives.size() == once.backward_collectives.size());
}

TEST_CASE("block_forward_passes: the embedding and the head run their forward once", "[workload][amp]") {
  const Gpt2OnT4 m = MakeGpt2OnT4();
  for (const int first : {0, 3}) {
    const StageCost once = CostWith(m, first, 1, 1);
    const StageCost twice = CostWith(m, first, 1, 2);
    CHECK(twice.forward_time == once.forward_time);
    CHECK(hetsim::testing::ForwardCollectiveCalls(twice) == hetsim::testing::ForwardCollectiveCalls(once));
  }
}
