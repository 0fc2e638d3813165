// Triton FlashAttention (Transformer.attention ATTENTION_FLASH_TRITON, docs/cost-model.md): FlashAttention's
// fused kernel built from Ampere's mma.sync, priced at the GPU's ComputeEfficiency.mma_sync_speed
// (docs/hardware.md, "Kernels of Ampere's instruction on Hopper"): the same as ATTENTION_FLASH where the
// speed is 1 (A100), its attention core alone slower on Hopper, by the presets' published ratio.
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

TEST_CASE("flash triton: on an A100 it is FlashAttention to the byte", "[flash_triton]") {
  const auto [flash, triton] = FlashThenTriton("A100-80GB");
  CHECK(triton.forward_time == flash.forward_time);
  CHECK(triton.backward_time == flash.backward_time);
  REQUIRE(triton.cp_attention.size() == 1);
  CHECK(triton.cp_attention[0].core_forward_s == flash.cp_attention[0].core_forward_s);
  CHECK(triton.cp_attention[0].core_backward_s == flash.cp_attention[0].core_backward_s);
  CHECK(triton.forward_flop_per_gpu == flash.forward_flop_per_gpu);
}

TEST_CASE("flash triton: on an H100 its attention core alone runs at the mma.sync speed", "[flash_triton]") {
  const double speed = hetsim::proto::FindGpuPreset("H100-SXM")->mma_sync_speed;
  const auto [flash, triton] = FlashThenTriton("H100-SXM");
  REQUIRE(flash.cp_attention.size() == 1);
  REQUIRE(triton.cp_attention.size() == 1);
  const ContextParallelAttention& f = flash.cp_attention[0];
  const ContextParallelAttention& t = triton.cp_attention[0];
  CHECK(t.core_forward_s == Approx(f.core_forward_s / speed).epsilon(1e-12));
  CHECK(t.core_backward_s == Approx(f.core_backward_s / speed).epsilon(1e-12));
  // The FlashAttention-2 backward ratio still holds between the two.
  CHECK(t.core_backward_s == Approx(kFlashAttention2BackwardRatio * t.core_forward_s).epsilon(1e-12));
  // Everything else (linears, memory-bound passes) is unchanged: the stage grows by the core's growth.
  CHECK(hetsim::TimeToSeconds(triton.forward_time - flash.forward_time) ==
        Approx(t.core_forward_s - f.core_forward_s).epsilon(1e-6));
  CHECK(hetsim::TimeToSeconds(triton.backward_time - flash.backward_time) ==
        Approx(t.core_backward_s - f.core_backward_s).epsilon(1e-6));
  CHECK(triton.forward_flop_per_gpu == flash.forward_flop_per_gpu);
}
