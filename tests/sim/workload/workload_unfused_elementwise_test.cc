// Plan.unfused_elementwise (Megatron-LM v1 without its fusion flags, the AMP artifact's runs) and
// Plan.unfused_kernels (today's --no-...-fusion flags, kernel by kernel) against their closed form: the
// bias adds, the residual adds apart from dropout and the causal mask's masked_fill_, each a pass over
// its tensor at HBM bandwidth, in every forward and twice in the backward.
#include <catch2/catch.hpp>

#include <utility>

#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"

namespace hetsim::workload {
namespace {

constexpr double kUnfusedS = 1024, kUnfusedH = 1024, kUnfusedHeads = 16;

// GPT-2 345M's block as the AMP runs have it: FP16, GeLU (ffn 4h), unfused attention.
v1::Model UnfusedGpt2(v1::AttentionKernel attention) {
  v1::Model m;
  m.set_dtype(v1::FP16);
  auto* t = m.mutable_transformer();
  t->set_num_layers(2);
  t->set_hidden_size(static_cast<uint64_t>(kUnfusedH));
  t->set_num_attention_heads(static_cast<uint32_t>(kUnfusedHeads));
  t->set_seq_length(static_cast<uint64_t>(kUnfusedS));
  t->set_vocab_size(52256);
  t->set_granularity(v1::BLOCK);
  t->set_attention(attention);
  return m;
}

ModelCost UnfusedModel(v1::AttentionKernel attention) {
  auto model = testing::ModelCostOf(UnfusedGpt2(attention), "model.pbtxt");
  REQUIRE(model.ok());
  return *std::move(model);
}

constexpr spec::UnfusedKernels kAllUnfused{.bias_activation = true, .bias_dropout_add = true, .masked_softmax = true};

StageCost UnfusedCost(const ModelCost& model, const GpuCompute& gpu, spec::UnfusedKernels unfused, int tp) {
  StageConfig c = hetsim::testing::OneLayerStage(1, tp);
  c.unfused = unfused;
  return hetsim::testing::StageCostOk(model, c, gpu);
}

TEST_CASE("unfused elementwise: Megatron-LM v1's extra passes of a GPT-2 block, byte by byte", "[unfused]") {
  const ModelCost model = UnfusedModel(v1::ATTENTION_UNFUSED);
  const LayerCost& block = model.layer(1);
  const double B = 2, s = kUnfusedS, h = kUnfusedH, f = 4 * kUnfusedH, a = kUnfusedHeads;
  const UnfusedTraffic all = block.unfused.Of(kAllUnfused);
  // Per sublayer the bias add before dropout and the dropout output's write and read back (the fused
  // kernel keeps both in registers), on the full width.
  CHECK(all.bytes_replicated_per_sample == Approx(2 * 4 * B * s * h));
  // masked_fill_ on the scores (read, write) and the bias add before GeLU, on the TP shard.
  CHECK(all.bytes_sharded_per_sample == Approx(2 * B * a * s * s + 2 * B * s * f));
  // The mask; per sublayer the bias add and the residual add; the bias add before GeLU.
  CHECK(all.kernels == 1 + 2 + 1 + 2);
  // Kernel by kernel (--no-masked-softmax-fusion, --no-bias-gelu-fusion, --no-bias-dropout-fusion).
  CHECK(block.unfused.masked_softmax.bytes_sharded_per_sample == Approx(2 * B * a * s * s));
  CHECK(block.unfused.masked_softmax.kernels == 1);
  CHECK(block.unfused.bias_activation.bytes_sharded_per_sample == Approx(2 * B * s * f));
  CHECK(block.unfused.bias_activation.kernels == 1);
  CHECK(block.unfused.bias_dropout_add.bytes_replicated_per_sample == Approx(2 * 4 * B * s * h));
  CHECK(block.unfused.bias_dropout_add.bytes_sharded_per_sample == 0);
  CHECK(block.unfused.bias_dropout_add.kernels == 4);
  // The embedding and the head run no bias-dropout-add.
  CHECK(model.layer(0).unfused.Of(kAllUnfused).kernels == 0);
  CHECK(model.layer(model.num_layers() - 1).unfused.Of(kAllUnfused).bytes_replicated_per_sample == 0);
  // FlashAttention never writes the scores: no mask pass.
  const ModelCost flash = UnfusedModel(v1::ATTENTION_FLASH);
  CHECK(flash.layer(1).unfused.Of(kAllUnfused).bytes_sharded_per_sample == Approx(2 * B * s * f));
  CHECK(flash.layer(1).unfused.Of(kAllUnfused).kernels == 5);
  CHECK(flash.layer(1).unfused.masked_softmax.kernels == 0);
}

TEST_CASE("unfused elementwise: the passes cost their bytes at HBM bandwidth, twice in the backward", "[unfused]") {
  const ModelCost model = UnfusedModel(v1::ATTENTION_UNFUSED);
  const GpuCompute gpu = testing::PresetComputeOk("T4", v1::FP16);
  const LayerCost& block = model.layer(1);
  const double b = 2;
  // All three (unfused_elementwise), then each alone (unfused_kernels): each adds its own passes.
  const spec::UnfusedKernels cases[] = {
      kAllUnfused, {.bias_activation = true}, {.bias_dropout_add = true}, {.masked_softmax = true}};
  for (const auto& [tp, kernels] : {std::pair{1, cases[0]}, std::pair{2, cases[0]}, std::pair{2, cases[1]},
                                    std::pair{2, cases[2]}, std::pair{1, cases[3]}}) {
    const StageCost fused = UnfusedCost(model, gpu, {}, tp);
    const StageCost unfused = UnfusedCost(model, gpu, kernels, tp);
    const UnfusedTraffic added = block.unfused.Of(kernels);
    // Replicated traffic runs whole on every TP rank (no sequence parallelism); sharded traffic 1/TP.
    const double fused_bytes =
        b * (block.memory_bytes_replicated_per_sample + block.memory_bytes_sharded_per_sample / tp);
    const double extra_bytes = b * (added.bytes_replicated_per_sample + added.bytes_sharded_per_sample / tp);
    const double extra = gpu.MemorySeconds(fused_bytes + extra_bytes, block.memory_kernels + added.kernels) -
                         gpu.MemorySeconds(fused_bytes, block.memory_kernels);
    REQUIRE(extra > 0);
    CHECK(TimeToSeconds(unfused.forward_time - fused.forward_time) == Approx(extra).epsilon(1e-6));
    CHECK(TimeToSeconds(unfused.backward_time - fused.backward_time) == Approx(2 * extra).epsilon(1e-6));
    CHECK(unfused.forward_flop_per_gpu == fused.forward_flop_per_gpu);
  }
}

}  // namespace
}  // namespace hetsim::workload
