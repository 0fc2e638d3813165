// Triton FlashAttention (Transformer.attention ATTENTION_FLASH_TRITON, docs/cost-model.md): FlashAttention's
// fused kernel built from Ampere's mma.sync, priced at the GPU's ComputeEfficiency.mma_sync_speed
// (docs/hardware.md, "Kernels of Ampere's instruction on Hopper"): its forward + backward the same as
// ATTENTION_FLASH's where the speed is 1 (A100), slower on Hopper by the presets' published ratio, and split
// between the two passes at a Triton kernel's published ratio (kTritonFlashAttentionBackwardRatio).
#include <catch2/catch.hpp>

#include <utility>

#include "proto/gpu_presets.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/base/time_io.h"
#include "tests/proto/model_shapes.h"

namespace {

using namespace hetsim::workload;

ModelCost MptBlock(hetsim::v1::AttentionKernel kernel) {
  hetsim::v1::Model m;
  auto* t = hetsim::testing::SetTransformer(m, {.layers = 2, .hidden = 2048, .heads = 16, .seq = 8192, .vocab = 50368});
  t->set_attention(kernel);
  auto model = hetsim::testing::ModelCostOf(m, "model.pbtxt");
  REQUIRE(model.ok());
  return *std::move(model);
}

// Block 1 with the FlashAttention-2 backward ratio (as the PyTorch profile runs it) at CP 2, so that the
// cost reports the attention core's own times; the ATTENTION_FLASH cost, then the Triton one.
std::pair<StageCost, StageCost> FlashThenTriton(const char* preset) {
  const GpuCompute gpu = hetsim::testing::PresetComputeOk(preset, hetsim::v1::BF16);
  StageConfig c = hetsim::testing::OneLayerStage(1);
  c.flash_attention_2 = true;
  c.context_parallel = 2;
  return {hetsim::testing::StageCostOk(MptBlock(hetsim::v1::ATTENTION_FLASH), c, gpu),
          hetsim::testing::StageCostOk(MptBlock(hetsim::v1::ATTENTION_FLASH_TRITON), c, gpu)};
}

}  // namespace

TEST_CASE("flash triton: the presets' mma.sync speed is FlashAttention-2's H100-over-A100 ratio over the GEMM model's",
          "[flash_triton]") {
  const hetsim::proto::GpuPreset* h100 = hetsim::proto::FindGpuPreset("H100-SXM");
  const hetsim::proto::GpuPreset* a100 = hetsim::proto::FindGpuPreset("A100-80GB");
  REQUIRE(h100 != nullptr);
  REQUIRE(a100 != nullptr);
  // Dao 2023, Figs. 4(d) and 7(d): 163/99 ... 328/189 TFLOP/s, mean 1.69; the GEMM model 989.5 x 0.65
  // against 312 x 0.72.
  const double model_ratio =
      h100->peak_tflops_bf16 * h100->max_efficiency / (a100->peak_tflops_bf16 * a100->max_efficiency);
  CHECK(model_ratio == Approx(2.863).epsilon(1e-3));
  CHECK(h100->mma_sync_speed == Approx(1.69 / model_ratio).epsilon(1e-12));
  CHECK(h100->mma_sync_speed == Approx(0.590).epsilon(1e-3));
  for (const char* hopper : {"H100-NVL", "H800", "H200"}) {
    CHECK(hetsim::proto::FindGpuPreset(hopper)->mma_sync_speed == h100->mma_sync_speed);
  }
  for (const char* native : {"A100-80GB", "A100-40GB", "A10G", "L40S", "RTX-4090", "H20", "B200"}) {
    CHECK(hetsim::proto::FindGpuPreset(native)->mma_sync_speed == 0);
    CHECK(hetsim::testing::PresetComputeOk(native, hetsim::v1::BF16).mma_sync_speed() == 1);
  }
  CHECK(hetsim::testing::PresetComputeOk("H100-SXM", hetsim::v1::BF16).mma_sync_speed() == h100->mma_sync_speed);
}

TEST_CASE("flash triton: Triton's published forward and backward rates give its backward-to-forward ratio",
          "[flash_triton]") {
  // Triton's A100 regression reference (test_performance.py at 174f121c1, causal, 4,096 tokens, head
  // dimension 64): forward 0.37, backward 0.25 of the peak, the backward counted at 2.5 forwards' FLOPs.
  CHECK(kTritonFlashAttentionBackwardRatio == Approx(3.7).epsilon(1e-12));
  CHECK(kTritonFlashAttentionBackwardRatio > kFlashAttention2BackwardRatio);  // 2.87
}

TEST_CASE("flash triton: on an A100 its forward + backward is FlashAttention's, split at Triton's ratio",
          "[flash_triton]") {
  const auto [flash, triton] = FlashThenTriton("A100-80GB");
  REQUIRE(flash.cp_attention.size() == 1);
  REQUIRE(triton.cp_attention.size() == 1);
  const ContextParallelAttention& f = flash.cp_attention[0];
  const ContextParallelAttention& t = triton.cp_attention[0];
  // A fused core writes no scores, so its times are the kernel's: FlashAttention's F and 2.87 F, the
  // Triton kernel's 3.87 F / 4.70 and 3.70 times that.
  REQUIRE(f.core_backward_s == Approx(kFlashAttention2BackwardRatio * f.core_forward_s).epsilon(1e-12));
  const double split = (1 + kFlashAttention2BackwardRatio) / (1 + kTritonFlashAttentionBackwardRatio);
  CHECK(t.core_forward_s == Approx(f.core_forward_s * split).epsilon(1e-12));
  CHECK(t.core_backward_s == Approx(kTritonFlashAttentionBackwardRatio * t.core_forward_s).epsilon(1e-12));
  // Together the same: a stage without recomputation takes as long.
  CHECK(t.core_forward_s + t.core_backward_s == Approx(f.core_forward_s + f.core_backward_s).epsilon(1e-12));
  CHECK(hetsim::TimeToSeconds(triton.forward_time + triton.backward_time) ==
        Approx(hetsim::TimeToSeconds(flash.forward_time + flash.backward_time)).epsilon(1e-9));
  CHECK(triton.forward_flop_per_gpu == flash.forward_flop_per_gpu);
}

TEST_CASE("flash triton: a fully recomputed block reruns the Triton kernel's cheaper forward", "[flash_triton]") {
  const GpuCompute gpu = hetsim::testing::PresetComputeOk("A100-80GB", hetsim::v1::BF16);
  StageConfig c = hetsim::testing::OneLayerStage(1);  // no CP: no ring to hide behind the core
  c.flash_attention_2 = true;
  const StageCost flash = hetsim::testing::StageCostOk(MptBlock(hetsim::v1::ATTENTION_FLASH), c, gpu);
  const StageCost triton = hetsim::testing::StageCostOk(MptBlock(hetsim::v1::ATTENTION_FLASH_TRITON), c, gpu);
  c.recompute = hetsim::spec::Recompute::kFull;
  const StageCost flash_full = hetsim::testing::StageCostOk(MptBlock(hetsim::v1::ATTENTION_FLASH), c, gpu);
  const StageCost triton_full = hetsim::testing::StageCostOk(MptBlock(hetsim::v1::ATTENTION_FLASH_TRITON), c, gpu);
  // The recomputation adds one forward to the backward: the Triton stage's saving is its forward's.
  const double saved_forward_s = hetsim::TimeToSeconds(flash.forward_time - triton.forward_time);
  REQUIRE(saved_forward_s > 0);
  CHECK(hetsim::TimeToSeconds((flash_full.forward_time + flash_full.backward_time) -
                              (triton_full.forward_time + triton_full.backward_time)) ==
        Approx(saved_forward_s).epsilon(1e-6));
}

TEST_CASE("flash triton: on an H100 its attention core alone runs at the mma.sync speed", "[flash_triton]") {
  const double speed = hetsim::proto::FindGpuPreset("H100-SXM")->mma_sync_speed;
  const auto [flash, triton] = FlashThenTriton("H100-SXM");
  REQUIRE(flash.cp_attention.size() == 1);
  REQUIRE(triton.cp_attention.size() == 1);
  const ContextParallelAttention& f = flash.cp_attention[0];
  const ContextParallelAttention& t = triton.cp_attention[0];
  // Forward + backward at the mma.sync speed, split at Triton's ratio.
  CHECK(t.core_forward_s + t.core_backward_s == Approx((f.core_forward_s + f.core_backward_s) / speed).epsilon(1e-12));
  CHECK(t.core_backward_s == Approx(kTritonFlashAttentionBackwardRatio * t.core_forward_s).epsilon(1e-12));
  // Everything else (linears, memory-bound passes) is unchanged: the stage grows by the core's growth.
  CHECK(hetsim::TimeToSeconds(triton.forward_time - flash.forward_time) ==
        Approx(t.core_forward_s - f.core_forward_s).epsilon(1e-6));
  CHECK(hetsim::TimeToSeconds(triton.backward_time - flash.backward_time) ==
        Approx(t.core_backward_s - f.core_backward_s).epsilon(1e-6));
  CHECK(triton.forward_flop_per_gpu == flash.forward_flop_per_gpu);
}
