// Plan.reference_policy (DPO's frozen reference model; docs/cost-model.md, "The reference model of preference
// training"): every layer's forward runs once more a microbatch, its forward TP collectives too, with nothing
// kept for a backward; the reference's weights stay on the GPU beside the policy's, or, with NeMo-Aligner's
// cpu_weight_swap, cross the host link three times a step (the policy's out, the reference's in, the
// policy's back) at the GPU type's pinned copy rate.
#include <catch2/catch.hpp>

#include <utility>

#include "base/time.h"
#include "proto/gpu_presets.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/proto/model_shapes.h"

namespace {

using namespace hetsim::workload;

// A V100 whose host link copies pinned memory at 25 GB/s each way (or, with `rate` false, does not price it).
GpuCompute SwapV100(bool rate) {
  return hetsim::testing::PresetComputeWith("V100-16GB", hetsim::v1::FP16, [&](hetsim::v1::ComputeEfficiency& e) {
    if (rate) e.set_pinned_copy_gbytes_per_s(25);
  });
}

// GPT-2 345M's shapes in 2 blocks (layers: 0 embedding, 1-2 blocks, 3 the tied head), FP16.
ModelCost Gpt2() {
  auto model = hetsim::testing::ModelCostOf(hetsim::testing::AmpGpt2(2), "model.pbtxt");
  REQUIRE(model.ok());
  return *std::move(model);
}

StageCost CostOf(const ModelCost& model, int first, int count, int tp, bool reference, bool swap, bool rate = true) {
  StageConfig c = hetsim::testing::AmpStageConfig(first, count, 1);  // micro-batch 1
  c.tensor_parallel = tp;
  c.reference_forward = reference;
  c.reference_weight_swap = swap;
  auto cost = ComputeStageCost(model, c, SwapV100(rate), "plan");
  REQUIRE(cost.ok());
  return *std::move(cost);
}

// One GPT-2 block at h = 1024 holds 12 h^2 + 13 h parameters: QKV 3h^2 + 3h, the projection h^2 + h, FC1
// 4h^2 + 4h, FC2 4h^2 + h, two LayerNorms 2 x 2h; in FP16, 2 bytes each.
constexpr double kHidden = 1024;
constexpr double kBlockWeightBytes = 2 * (12 * kHidden * kHidden + 13 * kHidden);

}  // namespace

TEST_CASE("reference_policy: every layer's forward and its forward TP collectives run once more",
          "[workload][reference_policy]") {
  const ModelCost model = Gpt2();
  const StageCost policy = CostOf(model, 0, 4, 2, false, false);
  const StageCost dpo = CostOf(model, 0, 4, 2, true, false);
  REQUIRE(policy.layer_forward_s.size() == 4);
  // The embedding and the head too: the reference's log-probabilities need its logits.
  for (size_t i = 0; i < 4; ++i) CHECK(dpo.layer_forward_s[i] == Approx(2 * policy.layer_forward_s[i]));
  for (size_t i = 0; i < 4; ++i) CHECK(dpo.layer_backward_s[i] == Approx(policy.layer_backward_s[i]));
  CHECK(dpo.backward_time == policy.backward_time);
  CHECK(dpo.forward_flop_per_gpu == Approx(2 * policy.forward_flop_per_gpu));
  CHECK(dpo.model_flop_per_gpu == Approx(policy.model_flop_per_gpu));  // the policy's training, as MFU counts it
  CHECK(dpo.memory.activation_bytes_per_microbatch == policy.memory.activation_bytes_per_microbatch);
  CHECK(hetsim::testing::ForwardCollectiveCalls(dpo) == 2 * hetsim::testing::ForwardCollectiveCalls(policy));
  CHECK(dpo.backward_collectives.size() == policy.backward_collectives.size());
}

TEST_CASE("reference_policy: resident weights are the policy's again, with no gradients and no optimizer states",
          "[workload][reference_policy]") {
  const ModelCost model = Gpt2();
  const StageCost policy = CostOf(model, 1, 2, 1, false, false);
  const StageCost dpo = CostOf(model, 1, 2, 1, true, false);
  CHECK(policy.memory.param_bytes == 2 * kBlockWeightBytes);
  CHECK(dpo.memory.reference_param_bytes == 2 * kBlockWeightBytes);
  CHECK(dpo.memory.ModelStateBytes() - policy.memory.ModelStateBytes() == 2 * kBlockWeightBytes);
  CHECK(dpo.memory.grad_bytes == policy.memory.grad_bytes);
  CHECK(dpo.memory.optimizer_bytes == policy.memory.optimizer_bytes);
  CHECK(dpo.reference_swap_time == 0);
  // At TP 2 the reference is split as the policy is.
  const StageCost dpo_tp2 = CostOf(model, 1, 2, 2, true, false);
  CHECK(dpo_tp2.memory.reference_param_bytes == dpo_tp2.memory.param_bytes);
}

TEST_CASE("reference_policy: the CPU weight swap copies the GPU's weights three times a step and keeps none",
          "[workload][reference_policy]") {
  const ModelCost model = Gpt2();
  const StageCost policy = CostOf(model, 1, 2, 1, false, false);
  const StageCost swapped = CostOf(model, 1, 2, 1, true, true);
  CHECK(swapped.memory.reference_param_bytes == 0);
  CHECK(swapped.memory.ModelStateBytes() == policy.memory.ModelStateBytes());
  // 3 x 50,384,896 bytes at 25 GB/s: 6046.19 us.
  CHECK(hetsim::TimeToSeconds(swapped.reference_swap_time) == Approx(3 * 2 * kBlockWeightBytes / 25e9));
  CHECK(ReferenceSwapSeconds(1e9, SwapV100(true)) == Approx(0.12));  // 3 GB at 25 GB/s
  // Without the GPU type's pinned rate the swap is not priced.
  CHECK(CostOf(model, 1, 2, 1, true, true, false).reference_swap_time == 0);
  CHECK(ReferenceSwapSeconds(1e9, SwapV100(false)) == 0);
}
