// Fused attention by head dimension (docs/cost-model.md): below head dimension 128 the fused kernel
// (ATTENTION_FLASH, ATTENTION_FLASH_TRITON) runs at the GEMM model's rate for head dimension 128 times
// FlashAttention-2's published rate at d over 128 (FusedAttentionHeadDimSpeed), not at the tile model's
// k = 2 d; from 128 up the GEMM model's as before.
#include <catch2/catch.hpp>

#include <string>

#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/proto/model_shapes.h"

namespace {

using namespace hetsim::workload;

// Two blocks of hidden 2048 at 8K tokens with `heads` heads: the attention core's FLOPs do not depend on
// the head count (2 s^2 x 2 d x heads), only its head dimension does.
ModelCost Blocks(int heads, hetsim::v1::AttentionKernel kernel) {
  hetsim::v1::Model m;
  auto* t =
      hetsim::testing::SetTransformer(m, {.layers = 2, .hidden = 2048, .heads = heads, .seq = 8192, .vocab = 50368});
  t->set_attention(kernel);
  auto model = hetsim::testing::ModelCostOf(m, "model.pbtxt");
  REQUIRE(model.ok());
  return *std::move(model);
}

// The attention core of block 1 on `preset` (CP 2, so that the cost reports the core's own times), with
// the FlashAttention-2 backward ratio when `flash2` (the PyTorch profile) and as two GEMMs otherwise.
ContextParallelAttention Core(const char* preset, int heads, bool flash2,
                              hetsim::v1::AttentionKernel kernel = hetsim::v1::ATTENTION_FLASH) {
  const GpuCompute gpu = hetsim::testing::PresetComputeOk(preset, hetsim::v1::BF16);
  StageConfig c = hetsim::testing::OneLayerStage(1);
  c.flash_attention_2 = flash2;
  c.context_parallel = 2;
  const StageCost cost = hetsim::testing::StageCostOk(Blocks(heads, kernel), c, gpu);
  REQUIRE(cost.cp_attention.size() == 1);
  return cost.cp_attention[0];
}

}  // namespace

TEST_CASE("flash head dim: FlashAttention-2's published rate at head dimension 64 over 128", "[flash_head_dim]") {
  // Dao 2023, Figs. 4(c),(d) (A100 80GB) and 7(c),(d) (H100 SXM5): causal, forward + backward, 16K tokens.
  CHECK(FusedAttentionHeadDimSpeed(64, 80) == Approx(171.0 / 189.0).epsilon(1e-12));
  CHECK(FusedAttentionHeadDimSpeed(64, 90) == Approx(284.0 / 328.0).epsilon(1e-12));
  // Every GPU but Hopper takes the A100 figure (the kernels are Ampere code); no preset: the same.
  for (const int other : {0, 70, 86, 89, 100})
    CHECK(FusedAttentionHeadDimSpeed(64, other) == FusedAttentionHeadDimSpeed(64, 80));
  // From the reference up, the GEMM model's (no published rate above 128 on the A100).
  for (const double d : {128.0, 160.0, 256.0}) {
    CHECK(FusedAttentionHeadDimSpeed(d, 80) == 1);
    CHECK(FusedAttentionHeadDimSpeed(d, 90) == 1);
  }
  // d / (d + c) in between, rising with d; below 64 the same form, slower still.
  const double at_80 = FusedAttentionHeadDimSpeed(80, 80), at_96 = FusedAttentionHeadDimSpeed(96, 80);
  CHECK(FusedAttentionHeadDimSpeed(64, 80) < at_80);
  CHECK(at_80 < at_96);
  CHECK(at_96 < 1);
  CHECK(FusedAttentionHeadDimSpeed(32, 80) < FusedAttentionHeadDimSpeed(64, 80));
  // The form's c solved from the 64-over-128 ratio: about 15 on the A100, 23 on the H100.
  const double c = 128 * (1 - 171.0 / 189.0) / (2 * 171.0 / 189.0 - 1);
  CHECK(c == Approx(15.06).epsilon(1e-3));
  CHECK(at_96 == Approx(96 / (96 + c) / (128 / (128 + c))).epsilon(1e-12));
}

TEST_CASE("flash head dim: the core at head dimension 64 takes its FLOPs at the published fraction of 128's rate",
          "[flash_head_dim]") {
  for (const char* preset : {"A100-80GB", "H100-SXM"}) {
    const int capability = std::string(preset) == "H100-SXM" ? 90 : 80;
    for (const bool flash2 : {true, false}) {
      // hidden 2048: 32 heads of 64 against 16 of 128, the same attention FLOPs.
      const ContextParallelAttention d64 = Core(preset, 32, flash2);
      const ContextParallelAttention d128 = Core(preset, 16, flash2);
      const double speed = FusedAttentionHeadDimSpeed(64, capability);
      // Twice the heads in the reference shape: the same tiles, to one wave in several hundred.
      CHECK(d128.core_forward_s / d64.core_forward_s == Approx(speed).epsilon(5e-3));
      // The backward as two GEMMs (k = s) runs in 10 to 20 waves here: their rounding, to 6%.
      CHECK(d128.core_backward_s / d64.core_backward_s == Approx(speed).epsilon(flash2 ? 5e-3 : 6e-2));
      // Not the tile model's k = 2 d (128 / 192 against 256 / 320 of a tile's peak: 0.83).
      CHECK(d128.core_forward_s / d64.core_forward_s > 0.86);
    }
  }
}

TEST_CASE("flash head dim: a Triton kernel's published rate at head dimension 64 over 128", "[flash_head_dim]") {
  // Dao 2023, Fig. 4(c),(d), the "FlashAttention Triton" bars (A100 80GB, causal, forward + backward, 16K
  // tokens): 80 and 80 TFLOP/s, so c = 0 and the rate per FLOP is 128's at every head dimension below it.
  using hetsim::workload::FusedAttentionCode;
  for (const int capability : {0, 80, 90})
    for (const double d : {32.0, 64.0, 96.0, 128.0})
      CHECK(FusedAttentionHeadDimSpeed(d, capability, FusedAttentionCode::kTriton) == 1);
  // FlashAttention-2's code keeps its own term (the default).
  CHECK(FusedAttentionHeadDimSpeed(64, 80, FusedAttentionCode::kFlashAttention2) == FusedAttentionHeadDimSpeed(64, 80));
}

TEST_CASE("flash head dim: the Triton kernel takes its own term, at its mma.sync speed on Hopper", "[flash_head_dim]") {
  for (const char* preset : {"A100-80GB", "H100-SXM"}) {
    const double mma = hetsim::testing::PresetComputeOk(preset, hetsim::v1::BF16).mma_sync_speed();
    // At head dimension 128 the two kernels' forward + backward differ by the mma.sync speed alone (1 on the
    // A100); the Triton kernel's forward is its share at Triton's split: (1 + 2.87) / (1 + 3.70) of
    // FlashAttention-2's.
    const ContextParallelAttention flash128 = Core(preset, 16, true);
    const ContextParallelAttention triton128 = Core(preset, 16, true, hetsim::v1::ATTENTION_FLASH_TRITON);
    const double split = (1 + kFlashAttention2BackwardRatio) / (1 + kTritonFlashAttentionBackwardRatio);
    CHECK(triton128.core_forward_s == Approx(flash128.core_forward_s * split / mma).epsilon(1e-12));
    // At 64 (32 heads of 64 against 16 of 128: the same FLOPs) the Triton kernel takes them at 128's rate,
    // where FlashAttention-2 takes them at 171 / 189 (A100) or 284 / 328 (H100) of it.
    const ContextParallelAttention triton64 = Core(preset, 32, true, hetsim::v1::ATTENTION_FLASH_TRITON);
    CHECK(triton128.core_forward_s / triton64.core_forward_s == Approx(1).epsilon(5e-3));
    CHECK(triton128.core_backward_s / triton64.core_backward_s == Approx(1).epsilon(5e-3));
    const ContextParallelAttention flash64 = Core(preset, 32, true);
    const double fa2 = std::string(preset) == "H100-SXM" ? 284.0 / 328.0 : 171.0 / 189.0;
    CHECK(triton64.core_forward_s == Approx(flash64.core_forward_s * fa2 * split / mma).epsilon(5e-3));
  }
}
