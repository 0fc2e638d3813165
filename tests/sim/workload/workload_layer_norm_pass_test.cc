// Plan.layer_norm_weight_grad_pass: apex's FusedLayerNormAffineFunction and PyTorch's native layer_norm compute
// the scale and bias gradients in a kernel of their own, reading the output gradient and the input once more:
// a norm's backward moves 5 passes of its input (docs/cost-model.md, "LayerNorm's weight-gradient pass") where
// twice the forward's read and write counts 4. One more pass of each norm's input, at the HBM rate, in the
// backward; the forward and the FLOPs are unchanged.
#include <catch2/catch.hpp>

#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/proto/model_shapes.h"

namespace {

using namespace hetsim::workload;

// The V100 preset's achieved HBM rate: 900 GB/s x 0.85.
constexpr double kNormPassHbmBytesPerS = 900e9 * 0.85;
// GPT-2 medium's norm input per sample: 1024 tokens x 1024 channels x 2 bytes (FP16).
constexpr double kNormInputBytes = 1024.0 * 1024 * 2;

StageCost NormPassCostOf(const ModelCost& model, int first, int count, bool pass, int micro_batch = 1,
                         bool sequence_parallel = false) {
  StageConfig c = hetsim::testing::AmpStageConfig(first, count, 1);  // TP 2
  c.micro_batch_size = micro_batch;
  c.sequence_parallel = sequence_parallel;
  c.layer_norm_weight_grad_pass = pass;
  return hetsim::testing::StageCostOk(model, c, hetsim::testing::PresetComputeOk("V100-16GB", hetsim::v1::FP16));
}

}  // namespace

TEST_CASE("layer_norm_weight_grad_pass: a block's backward reads its two norms' inputs once more",
          "[workload][layer_norm]") {
  const auto model = hetsim::testing::ModelCostOf(hetsim::testing::AmpGpt2(2), "model.pbtxt");
  REQUIRE(model.ok());
  // Two LayerNorms a block, each input whole on both TP ranks without sequence parallelism: 2 x 2 MiB.
  const StageCost with = NormPassCostOf(*model, 1, 2, true);
  const StageCost without = NormPassCostOf(*model, 1, 2, false);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(with.layer_forward_s[i] == without.layer_forward_s[i]);
    CHECK(with.layer_backward_s[i] ==
          Approx(without.layer_backward_s[i] + 2 * kNormInputBytes / kNormPassHbmBytesPerS).epsilon(1e-12));
  }
  CHECK(with.forward_time == without.forward_time);
  CHECK(with.backward_flop_per_gpu == without.backward_flop_per_gpu);
  // Micro-batch 4 under sequence parallelism: four samples, the norms' inputs split over TP 2's ranks.
  const StageCost sp = NormPassCostOf(*model, 1, 1, true, 4, true);
  CHECK(sp.layer_backward_s[0] == Approx(NormPassCostOf(*model, 1, 1, false, 4, true).layer_backward_s[0] +
                                         2 * 4 * kNormInputBytes / 2 / kNormPassHbmBytesPerS)
                                      .epsilon(1e-12));
}

TEST_CASE("layer_norm_weight_grad_pass: the head's final norm once, the embedding none", "[workload][layer_norm]") {
  const auto model = hetsim::testing::ModelCostOf(hetsim::testing::AmpGpt2(2), "model.pbtxt");
  REQUIRE(model.ok());
  CHECK(NormPassCostOf(*model, 3, 1, true).layer_backward_s[0] ==
        Approx(NormPassCostOf(*model, 3, 1, false).layer_backward_s[0] + kNormInputBytes / kNormPassHbmBytesPerS)
            .epsilon(1e-12));
  CHECK(NormPassCostOf(*model, 0, 1, true).layer_backward_s[0] ==
        NormPassCostOf(*model, 0, 1, false).layer_backward_s[0]);
}
