// What the Sailor fork's FP32 OPT block runs beyond Megatron's FP16 one (session 38): the causal mask's
// masked_fill_ in place on a view of the scores (UnfusedKernels.masked_fill_on_view: autograd's CopySlices
// and AsStridedBackward0, 13 backward passes over the scores in 7 kernels where the 2x rule gives 4 in 2)
// and an attention core without dropout (Transformer.no_attention_dropout), against their closed forms.
#include <catch2/catch.hpp>

#include <utility>

#include "proto/gpu_presets.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"

namespace hetsim::workload {
namespace {

constexpr double kOptS = 2048, kOptH = 1024, kOptHeads = 16;

// OPT-350M's block as the Sailor runs have it: FP32 storage, unfused attention.
ModelCost OptModel(bool no_attention_dropout, v1::AttentionKernel attention = v1::ATTENTION_UNFUSED) {
  v1::Model m;
  m.set_dtype(v1::TF32);
  auto* t = m.mutable_transformer();
  t->set_num_layers(2);
  t->set_hidden_size(static_cast<uint64_t>(kOptH));
  t->set_num_attention_heads(static_cast<uint32_t>(kOptHeads));
  t->set_seq_length(static_cast<uint64_t>(kOptS));
  t->set_vocab_size(50688);
  t->set_granularity(v1::BLOCK);
  t->set_attention(attention);
  t->set_no_attention_dropout(no_attention_dropout);
  auto model = testing::ModelCostOf(m, "model.pbtxt");
  REQUIRE(model.ok());
  return *std::move(model);
}

constexpr spec::UnfusedKernels kMask{.masked_softmax = true};
constexpr spec::UnfusedKernels kMaskOnView{.masked_softmax = true, .masked_fill_on_view = true};

TEST_CASE("masked_fill_ on a view: CopySlices and as_strided_backward, backward only", "[unfused]") {
  const ModelCost model = OptModel(true);
  const LayerCost& block = model.layer(1);
  const double B = 4, s = kOptS, a = kOptHeads, scores = B * a * s * s;
  // CopySlices: copy into the new base, clone of the slice, masked_fill's clone and masked_fill_, copy
  // back (10 passes, 5 kernels); as_strided_backward: new_zeros and copy_ (3 passes, 2 kernels); less the
  // 4 passes in 2 kernels the 2x rule already gives the mask.
  const UnfusedTraffic view = block.unfused.Of(kMaskOnView);
  const UnfusedTraffic plain = block.unfused.Of(kMask);
  CHECK(view.backward_bytes_sharded_per_sample == Approx(9 * scores));
  CHECK(view.backward_kernels == 5);
  CHECK(view.bytes_sharded_per_sample == plain.bytes_sharded_per_sample);
  CHECK(view.kernels == plain.kernels);
  CHECK(plain.backward_bytes_sharded_per_sample == 0);
  // Without the mask there is no masked_fill_ to run on a view.
  CHECK(block.unfused.Of({.masked_fill_on_view = true}).backward_bytes_sharded_per_sample == 0);
  // FlashAttention never writes the scores.
  const ModelCost flash = OptModel(true, v1::ATTENTION_FLASH);
  CHECK(flash.layer(1).unfused.Of(kMaskOnView).backward_kernels == 0);

  const GpuCompute gpu = testing::PresetComputeOk("H100-SXM", v1::TF32);
  const double b = 2;
  for (const int tp : {1, 2}) {
    StageConfig c = hetsim::testing::OneLayerStage(1, tp);
    c.unfused = kMask;
    const StageCost masked = hetsim::testing::StageCostOk(model, c, gpu);
    c.unfused = kMaskOnView;
    const StageCost on_view = hetsim::testing::StageCostOk(model, c, gpu);
    CHECK(on_view.forward_time == masked.forward_time);
    const double extra = gpu.MemorySeconds(9 * scores * b / tp, 5);
    REQUIRE(extra > 0);
    CHECK(TimeToSeconds(on_view.backward_time - masked.backward_time) == Approx(extra).epsilon(1e-6));
  }
}

TEST_CASE("no attention dropout: the unfused core moves and keeps the softmax's tensor alone", "[unfused]") {
  const ModelCost with = OptModel(false), without = OptModel(true);
  const double B = 4, s = kOptS, a = kOptHeads;
  const LayerCost& dropped = with.layer(1);
  const LayerCost& plain = without.layer(1);
  // Softmax (read, write) and dropout (read, write, one-byte mask), against the softmax alone.
  CHECK(dropped.memory_bytes_attention_core_per_sample == Approx((4 * B + 1) * a * s * s));
  CHECK(plain.memory_bytes_attention_core_per_sample == Approx(2 * B * a * s * s));
  CHECK(dropped.memory_bytes_sharded_per_sample - plain.memory_bytes_sharded_per_sample ==
        Approx((2 * B + 1) * a * s * s));
  CHECK(dropped.memory_kernels - plain.memory_kernels == 1);
  // Kept for the backward: probabilities, mask and dropped-out probabilities, against the probabilities.
  CHECK(dropped.activation.attention_core == Approx((2 * B + 1) * a * s * s));
  CHECK(plain.activation.attention_core == Approx(B * a * s * s));
  // FlashAttention's dropout is inside its kernel: the field changes nothing there.
  const ModelCost flash_model_with = OptModel(false, v1::ATTENTION_FLASH);
  const ModelCost flash_model_without = OptModel(true, v1::ATTENTION_FLASH);
  const LayerCost& flash_with = flash_model_with.layer(1);
  const LayerCost& flash_without = flash_model_without.layer(1);
  CHECK(flash_with.memory_bytes_sharded_per_sample == flash_without.memory_bytes_sharded_per_sample);
  CHECK(flash_with.memory_kernels == flash_without.memory_kernels);
  CHECK(flash_with.activation.attention_core == flash_without.activation.attention_core);
}

// The GPU's unfused_softmax_speed (ComputeEfficiency, session 40): the unfused softmax region's four passes over
// the scores (masked_fill_'s two, the softmax's two) at that fraction of the memory-bound rate, twice in the
// backward; nothing else moves, nor a plan that runs the fused softmax, nor an ideal GPU.
TEST_CASE("unfused_softmax_speed: the masked softmax's passes slower, the rest as before", "[unfused]") {
  const ModelCost model = OptModel(true);
  const double s = kOptS, a = kOptHeads, scores = 4 * a * s * s;  // FP32 scores of one sample, one pass
  v1::GpuType g;
  g.set_preset("H100-SXM");
  REQUIRE(proto::ApplyGpuPreset(&g, "c", "gpu").ok());
  const GpuCompute plain = hetsim::testing::GpuComputeOf(g, v1::TF32, "c").value();
  g.mutable_efficiency()->set_unfused_softmax_speed(0.6);
  const GpuCompute slow = hetsim::testing::GpuComputeOf(g, v1::TF32, "c").value();
  const GpuCompute ideal = hetsim::testing::GpuComputeOf(g, v1::TF32, "c", /*ideal=*/true).value();
  CHECK(plain.UnfusedSoftmaxExtraSeconds(1e9) == 0);
  CHECK(ideal.UnfusedSoftmaxExtraSeconds(1e9) == 0);
  CHECK(slow.UnfusedSoftmaxExtraSeconds(1e9) == Approx(plain.MemorySeconds(1e9) * (1 / 0.6 - 1)));
  const double b = 2;
  for (const int tp : {1, 4}) {
    StageConfig c = hetsim::testing::OneLayerStage(1, tp);
    c.unfused = kMaskOnView;
    const StageCost before = hetsim::testing::StageCostOk(model, c, plain);
    const StageCost after = hetsim::testing::StageCostOk(model, c, slow);
    const double extra = plain.MemorySeconds(4 * scores * b / tp) * (1 / 0.6 - 1);
    REQUIRE(extra > 0);
    CHECK(TimeToSeconds(after.forward_time - before.forward_time) == Approx(extra).epsilon(1e-6));
    CHECK(TimeToSeconds(after.backward_time - before.backward_time) == Approx(2 * extra).epsilon(1e-6));
    c.unfused = {};  // the fused kernel: not the region the speed was measured on
    CHECK(hetsim::testing::StageCostOk(model, c, slow).forward_time ==
          hetsim::testing::StageCostOk(model, c, plain).forward_time);
  }
}

}  // namespace
}  // namespace hetsim::workload
