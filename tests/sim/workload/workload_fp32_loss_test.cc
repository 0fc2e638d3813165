// Plan.fp32_logits_cross_entropy (GPT2ModelPipe's FP32 cast of the logits and Megatron-LM v1.1.5's
// _VocabParallelCrossEntropy, the AMP artifact's runs) against its closed form: 38 s V bytes forward
// and 14 backward on the vocabulary shard in place of the fused loss's 8 and 16, at HBM bandwidth.
#include <catch2/catch.hpp>

#include <utility>

#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"

namespace hetsim::workload {
namespace {

constexpr double kLossS = 1024, kLossVocab = 52256;

ModelCost LossGpt2() {
  v1::Model m;
  m.set_dtype(v1::FP16);
  auto* t = m.mutable_transformer();
  t->set_num_layers(2);
  t->set_hidden_size(1024);
  t->set_num_attention_heads(16);
  t->set_seq_length(static_cast<uint64_t>(kLossS));
  t->set_vocab_size(static_cast<uint64_t>(kLossVocab));
  t->set_granularity(v1::BLOCK);
  auto model = testing::ModelCostOf(m, "model.pbtxt");
  REQUIRE(model.ok());
  return *std::move(model);
}

StageCost HeadCost(const ModelCost& model, const GpuCompute& gpu, bool fp32_loss, int tp) {
  StageConfig c = hetsim::testing::OneLayerStage(model.num_layers() - 1, tp);
  c.fp32_logits_cross_entropy = fp32_loss;
  return hetsim::testing::StageCostOk(model, c, gpu);
}

TEST_CASE("fp32 logits loss: the cast and the cross-entropy's passes of the head, byte by byte", "[fp32-loss]") {
  const ModelCost model = LossGpt2();
  const LayerCost& head = model.layer(model.num_layers() - 1);
  const double sv = kLossS * kLossVocab;
  CHECK(head.fp32_loss_forward_bytes_per_sample == Approx(38 * sv));   // cast 6; max 4, sub_ 8, exp 8, sum 4, div_ 8
  CHECK(head.fp32_loss_backward_bytes_per_sample == Approx(14 * sv));  // mul_ 8; the cast back 6
  CHECK(head.memory_bytes_sharded_per_sample == Approx(8 * sv));       // the fused loss, switched off
  CHECK(head.fp32_loss_kernels == 1);
  CHECK(model.layer(0).fp32_loss_kernels == 0);  // the embedding and the blocks have no loss
  CHECK(model.layer(1).fp32_loss_forward_bytes_per_sample == 0);
}

TEST_CASE("fp32 logits loss: the head's passes change by their bytes at HBM bandwidth", "[fp32-loss]") {
  const ModelCost model = LossGpt2();
  const GpuCompute gpu = testing::PresetComputeOk("T4", v1::FP16);
  const double per_byte = gpu.MemorySeconds(1e9) / 1e9;
  const double launch = gpu.MemorySeconds(1e9, 1) - gpu.MemorySeconds(1e9);
  for (const int tp : {1, 2}) {
    const StageCost fused = HeadCost(model, gpu, false, tp);
    const StageCost fp32 = HeadCost(model, gpu, true, tp);
    const double sv = 2 * kLossS * kLossVocab / tp;  // two samples, the vocabulary shard
    // Forward 38 where the fused loss moves 8; backward 14 where it moves 16; one cast kernel in each.
    CHECK(TimeToSeconds(fp32.forward_time - fused.forward_time) == Approx(30 * sv * per_byte + launch).epsilon(1e-6));
    CHECK(TimeToSeconds(fp32.backward_time - fused.backward_time) == Approx(-2 * sv * per_byte + launch).epsilon(1e-6));
    CHECK(fp32.forward_flop_per_gpu == fused.forward_flop_per_gpu);
  }
}

}  // namespace
}  // namespace hetsim::workload
