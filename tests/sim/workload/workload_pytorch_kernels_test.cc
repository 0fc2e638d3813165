// PyTorch's kernels and recipes as torchtitan runs them (Plan.eager_kernels, op_selective_recompute,
// fp8_dynamic_casts, pytorch_async_tp, dtensor_sequence_copies; docs/cost-model.md, "PyTorch-native
// kernels") against their closed forms: the eager ops' bytes, the per-op policy's recomputed matmuls, the
// FP8 casts' traffic, PyTorch's async TP chunks and DTensor's sequence-dim copies.
#include <catch2/catch.hpp>

#include <string_view>
#include <utility>
#include <vector>

#include "base/spec/framework.h"
#include "proto/gpu_presets.h"
#include "sim/workload/context_parallel_ring.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/base/time_io.h"

namespace {

using namespace hetsim::workload;

constexpr double kPtS = 2048, kPtH = 1024, kPtF = 3584, kPtHeads = 8, kPtKv = 2;

hetsim::v1::Model PtLlama(hetsim::v1::DType dtype) {
  hetsim::v1::Model m;
  m.set_dtype(dtype);
  auto* t = m.mutable_transformer();
  t->set_num_layers(2);
  t->set_hidden_size(static_cast<uint64_t>(kPtH));
  t->set_ffn_hidden_size(static_cast<uint64_t>(kPtF));
  t->set_num_attention_heads(static_cast<uint32_t>(kPtHeads));
  t->set_num_kv_heads(static_cast<uint32_t>(kPtKv));
  t->set_seq_length(static_cast<uint64_t>(kPtS));
  t->set_vocab_size(32000);
  t->set_gated_mlp(true);
  t->set_granularity(hetsim::v1::BLOCK);
  t->set_attention(hetsim::v1::ATTENTION_FLASH);
  return m;
}

ModelCost PtModel(hetsim::v1::DType dtype) {
  auto model = hetsim::testing::ModelCostOf(PtLlama(dtype), "model.pbtxt");
  REQUIRE(model.ok());
  return *std::move(model);
}

GpuCompute PtH100(hetsim::v1::DType dtype) { return hetsim::testing::PresetComputeOk("H100-SXM", dtype); }

// Block 1 alone, two samples, on one GPU.
StageConfig PtBlock() { return hetsim::testing::OneLayerStage(1); }

StageCost PtCost(const ModelCost& model, const GpuCompute& gpu, const StageConfig& c) {
  return hetsim::testing::StageCostOk(model, c, gpu);
}

// The cost of `c` with `flag` off, then on.
std::pair<StageCost, StageCost> PtToggle(const ModelCost& model, const GpuCompute& gpu, StageConfig c,
                                         bool StageConfig::*flag) {
  const StageCost off = PtCost(model, gpu, c);
  c.*flag = true;
  return {off, PtCost(model, gpu, c)};
}

}  // namespace

TEST_CASE("pytorch kernels: the eager ops of a Llama block, byte by byte", "[pytorch_kernels]") {
  const ModelCost model = PtModel(hetsim::v1::BF16);
  const LayerCost& block = model.layer(1);
  const double B = 2, d = kPtH / kPtHeads;
  // Two RMSNorms through FP32: 28 + 2B bytes an element more than the fused kernel.
  CHECK(block.eager_bytes_replicated_per_sample == Approx(2 * (28 + 2 * B) * kPtS * kPtH));
  // RoPE on Q and K (16 + 2B an element), SiLU apart from the product (2B an element of the FFN).
  CHECK(block.eager_bytes_sharded_per_sample ==
        Approx((16 + 2 * B) * kPtS * d * (kPtHeads + kPtKv) + 2 * B * kPtS * kPtF));
  CHECK(block.eager_kernels == 7 + 6 + 7 + 1);
  // The embedding and the head: torchtitan compiles the blocks only, so nothing changes there.
  CHECK(model.layer(0).eager_bytes_replicated_per_sample == 0);
  CHECK(model.layer(model.num_layers() - 1).eager_kernels == 0);
}

TEST_CASE("pytorch kernels: eager ops add their traffic at HBM bandwidth to every pass", "[pytorch_kernels]") {
  const ModelCost model = PtModel(hetsim::v1::BF16);
  const GpuCompute gpu = PtH100(hetsim::v1::BF16);
  const auto [fused, eager] = PtToggle(model, gpu, PtBlock(), &StageConfig::eager_kernels);
  const LayerCost& block = model.layer(1);
  const double b = 2;
  const double bytes = (block.memory_bytes_replicated_per_sample + block.eager_bytes_replicated_per_sample +
                        block.memory_bytes_sharded_per_sample + block.eager_bytes_sharded_per_sample) *
                       b;
  const double fused_bytes = (block.memory_bytes_replicated_per_sample + block.memory_bytes_sharded_per_sample) * b;
  const double extra = gpu.MemorySeconds(bytes, block.memory_kernels + block.eager_kernels) -
                       gpu.MemorySeconds(fused_bytes, block.memory_kernels);
  REQUIRE(extra > 0);
  CHECK(hetsim::TimeToSeconds(eager.forward_time - fused.forward_time) == Approx(extra).epsilon(1e-6));
  CHECK(hetsim::TimeToSeconds(eager.backward_time - fused.backward_time) == Approx(2 * extra).epsilon(1e-6));
  CHECK(eager.forward_flop_per_gpu == fused.forward_flop_per_gpu);
}

TEST_CASE("pytorch kernels: the per-op policy recomputes wk, wo and w3 and the elementwise ops", "[pytorch_kernels]") {
  const ModelCost model = PtModel(hetsim::v1::BF16);
  const GpuCompute gpu = PtH100(hetsim::v1::BF16);
  const LayerCost& block = model.layer(1);
  double recomputed_flop = 0;
  for (const Gemm& g : block.gemms) recomputed_flop += g.op_sac_recomputed * g.forward_flop_per_sample;
  const double d = kPtH / kPtHeads;
  // wk (h x kv d), wo (h x h), w3 (h x f): 2 s (h kv d + h h + h f) a sample.
  CHECK(recomputed_flop == Approx(2 * kPtS * (kPtH * kPtKv * d + kPtH * kPtH + kPtH * kPtF)));

  StageConfig c = PtBlock();
  const StageCost none = PtCost(model, gpu, c);
  c.recompute = hetsim::spec::Recompute::kSelective;
  c.op_selective_recompute = true;
  const StageCost op = PtCost(model, gpu, c);
  CHECK(op.backward_flop_per_gpu - none.backward_flop_per_gpu == Approx(2 * recomputed_flop));
  CHECK(op.forward_time == none.forward_time);
  CHECK(op.backward_time > none.backward_time);
  // The policy's recompute is neither full recompute nor Megatron's (the attention core alone).
  c.op_selective_recompute = false;
  const StageCost megatron = PtCost(model, gpu, c);
  CHECK(megatron.backward_time < op.backward_time);
  c.recompute = hetsim::spec::Recompute::kFull;
  CHECK(PtCost(model, gpu, c).backward_time > op.backward_time);
}

TEST_CASE("pytorch kernels: torchao's dynamic FP8 casts in closed form", "[pytorch_kernels]") {
  // Three linears (wq, wk, wv) on an input of 100 elements, 40 weight elements, 60 output elements.
  const Fp8Casts c = DynamicFp8Casts(3, 100, 40, 60);
  CHECK(c.forward_amax_bytes == 2 * (300 + 40));
  CHECK(c.forward_cast_bytes == 3 * (300 + 40));
  CHECK(c.forward_kernels == 8);
  CHECK(c.backward_bytes == 3 * (300 + 40) + 8 * 60);
  CHECK(c.backward_kernels == 13);
}

TEST_CASE("pytorch kernels: FP8 casts cost an FP8 model's linears, not a BF16 model's", "[pytorch_kernels]") {
  const ModelCost fp8 = PtModel(hetsim::v1::FP8);
  const GpuCompute gpu = PtH100(hetsim::v1::FP8);
  const auto [plain, cast] = PtToggle(fp8, gpu, PtBlock(), &StageConfig::fp8_dynamic_casts);
  // The block's linears on two samples: inputs x (wq, wk, wv, w1, w3), the attention output (wo), the
  // SwiGLU output (w2); their weights; their outputs.
  const double b = 2, d = kPtH / kPtHeads, qkv = d * (kPtHeads + 2 * kPtKv);
  const double inputs = b * kPtS * (5 * kPtH + kPtH + kPtF);
  const double weights = kPtH * qkv + kPtH * kPtH + 3 * kPtH * kPtF;
  const double outputs = b * kPtS * (qkv + kPtH + 2 * kPtF + kPtH);
  const double forward = gpu.MemorySeconds(2 * (inputs + weights), 8 / 2.0 + 4 / 2.0 + 6 / 2.0 + 4 / 2.0) +
                         gpu.MemorySeconds(3 * (inputs + weights), 8 / 2.0 + 4 / 2.0 + 6 / 2.0 + 4 / 2.0);
  const double backward = gpu.MemorySeconds(3 * (inputs + weights) + 8 * outputs, 13 + 5 + 9 + 5);
  CHECK(hetsim::TimeToSeconds(cast.forward_time - plain.forward_time) == Approx(forward).epsilon(1e-6));
  CHECK(hetsim::TimeToSeconds(cast.backward_time - plain.backward_time) == Approx(backward).epsilon(1e-6));

  const ModelCost bf16 = PtModel(hetsim::v1::BF16);
  const GpuCompute bf16_gpu = PtH100(hetsim::v1::BF16);
  const auto [bf16_plain, bf16_cast] = PtToggle(bf16, bf16_gpu, PtBlock(), &StageConfig::fp8_dynamic_casts);
  CHECK(bf16_cast.forward_time == bf16_plain.forward_time);
}

TEST_CASE("pytorch kernels: async TP chunks the forward per TP rank and holds no SMs", "[pytorch_kernels]") {
  StageConfig c;
  c.tensor_parallel = 8;
  c.sequence_parallel = true;
  c.tp_comm_overlap = true;
  c.pytorch_async_tp = true;
  for (TeLinear role : {TeLinear::kQkv, TeLinear::kProj, TeLinear::kFc1, TeLinear::kFc2}) {
    Gemm g{"linear", 1};
    g.m = g.n = g.k = 1024;
    g.te_linear = role;
    const UserbufferOverlap o = UserbufferOverlapOf(g, c);
    CHECK(o.forward == 8);
    CHECK_FALSE(o.forward_cuts_columns);
    CHECK(o.input_grad == 1);
    CHECK(o.forward_sm_margin + o.input_grad_sm_margin + o.weight_grad_sm_margin == 0);
  }
  Gemm core{"flash_attn", 1};
  CHECK(UserbufferOverlapOf(core, c).forward == 1);
}

TEST_CASE("pytorch kernels: the torchtitan profile runs them, Megatron's profiles do not", "[pytorch_kernels]") {
  using hetsim::spec::DType;
  using hetsim::spec::Framework;
  const auto on = [](Framework f, const char* field, DType dtype) {
    for (const auto& [name, value] : hetsim::spec::ProfileOf(f).Behaviours()) {
      if (std::string_view(name) == field) {
        return hetsim::spec::ProfileTurnsOn(name, value, hetsim::spec::ProfileContextFor(dtype, false));
      }
    }
    FAIL("no behaviour " << field);
    return false;
  };
  for (const char* field : {"eager_kernels", "op_selective_recompute", "pytorch_async_tp", "dtensor_sequence_copies"}) {
    CHECK(on(Framework::kFsdp2Torchtitan, field, DType::kBf16));
    CHECK_FALSE(on(Framework::kMegatronCore, field, DType::kBf16));
  }
  CHECK(on(Framework::kFsdp2Torchtitan, "fp8_dynamic_casts", DType::kFp8));
  CHECK_FALSE(on(Framework::kFsdp2Torchtitan, "fp8_dynamic_casts", DType::kBf16));
  CHECK_FALSE(on(Framework::kMegatronCore, "fp8_dynamic_casts", DType::kFp8));
}

TEST_CASE("pytorch kernels: repeated K and V are copied and exchanged for every query head", "[pytorch_kernels]") {
  const ModelCost model = PtModel(hetsim::v1::BF16);
  const GpuCompute gpu = PtH100(hetsim::v1::BF16);
  const LayerCost& block = model.layer(1);
  const double B = 2, d = kPtH / kPtHeads;
  CHECK(block.kv_bytes_per_sample == Approx(B * kPtS * 2 * kPtKv * d));
  CHECK(block.repeated_kv_bytes_per_sample == Approx(B * kPtS * 2 * kPtHeads * d));
  StageConfig c = PtBlock();
  c.context_parallel = 2;
  const StageCost gqa = PtCost(model, gpu, c);
  c.attention_repeats_kv = true;
  const StageCost repeated = PtCost(model, gpu, c);
  REQUIRE(gqa.cp_attention.size() == 1);
  REQUIRE(repeated.cp_attention.size() == 1);
  // Two samples, half of each sequence's tokens on this GPU: the step is the GPU's K and V, repeated.
  CHECK(repeated.cp_attention[0].step_bytes == gqa.cp_attention[0].step_bytes * kPtHeads / kPtKv);
  // The copy reads K and V and writes the copies, in two kernels, and the backward moves twice that.
  const double b_tokens = 2.0 / 2;  // samples' worth of tokens on this GPU (CP 2)
  const double copy = (block.kv_bytes_per_sample + block.repeated_kv_bytes_per_sample) * b_tokens;
  const double base = (block.memory_bytes_replicated_per_sample + block.memory_bytes_sharded_per_sample) * b_tokens;
  const double extra =
      gpu.MemorySeconds(base + copy, block.memory_kernels + 2) - gpu.MemorySeconds(base, block.memory_kernels);
  CHECK(hetsim::TimeToSeconds(repeated.forward_time - gqa.forward_time) == Approx(extra).epsilon(1e-6));
}

TEST_CASE("pytorch kernels: the per-op policy gathers a TP block's inputs again in the backward", "[pytorch_kernels]") {
  const ModelCost model = PtModel(hetsim::v1::BF16);
  const GpuCompute gpu = PtH100(hetsim::v1::BF16);
  StageConfig c = PtBlock();
  c.tensor_parallel = 2;
  c.sequence_parallel = true;
  c.recompute = hetsim::spec::Recompute::kSelective;
  const auto gathers = [](const std::vector<StageCollective>& list) {
    int64_t bytes = 0;
    for (const StageCollective& sc : list) {
      if (sc.op == hetsim::CollectiveOp::kAllGather) bytes += sc.bytes * sc.count;
    }
    return bytes;
  };
  const StageCost megatron = PtCost(model, gpu, c);
  c.op_selective_recompute = true;
  const StageCost op = PtCost(model, gpu, c);
  // The forward's two gathers (attention and MLP inputs) run again in the backward; the
  // reduce-scatters' outputs are saved.
  CHECK(gathers(op.forward_collectives) == gathers(megatron.forward_collectives));
  CHECK(gathers(op.backward_collectives) - gathers(megatron.backward_collectives) == gathers(op.forward_collectives));
  CHECK(op.backward_collectives.size() > megatron.backward_collectives.size());
}

TEST_CASE("pytorch kernels: PyTorch's all-gather rotater hides the gather behind the first step", "[pytorch_kernels]") {
  ContextParallelAttention a;
  a.core_forward_s = 8e-3;  // 1 ms a step at CP 8
  a.core_backward_s = 16e-3;
  const hetsim::Time ms = hetsim::SecondsToTime(1e-3);
  // The gather: 7 steps of 0.5 ms; the FP32 dK/dV, 3 ms a step.
  const ContextParallelSteps steps{.kv = ms / 2, .kv_grad = 3 * ms};
  for (const bool recomputed : {false, true}) {
    a.recomputed = recomputed;
    ContextParallelTime t;
    AddAttentionExchange(a, 8, hetsim::spec::ContextParallelComm::kAllGather, steps, t, /*pytorch=*/true);
    CHECK(t.forward_exchange == 7 * ms / 2);
    CHECK(t.forward_exposed == 7 * ms / 2 - ms);  // hidden behind the first step's 1 ms
    // Backward: the gather behind the first step's 2 ms, each dK/dV hop behind the next step's 2 ms,
    // the last hop alone.
    const hetsim::Time backward = (7 * ms / 2 - 2 * ms) + 7 * (3 * ms - 2 * ms) + 3 * ms;
    CHECK(t.backward_exposed == backward + (recomputed ? 7 * ms / 2 - ms : 0));
    CHECK(t.backward_exchange == 7 * ms / 2 + 8 * 3 * ms + (recomputed ? 7 * ms / 2 : 0));
  }
  // Without `pytorch` the same steps are Transformer Engine's exposed all-gathers.
  ContextParallelTime te;
  a.recomputed = false;
  AddAttentionExchange(a, 8, hetsim::spec::ContextParallelComm::kAllGather, steps, te);
  CHECK(te.forward_exposed == 7 * ms / 2);
}

TEST_CASE("pytorch kernels: SDPA's FlashAttention-2 backward takes 2.87 times its forward", "[pytorch_kernels]") {
  CHECK(kFlashAttention2BackwardRatio == Approx(2.5 * 370 / 322));
  const ModelCost model = PtModel(hetsim::v1::BF16);
  const GpuCompute gpu = PtH100(hetsim::v1::BF16);
  StageConfig c = PtBlock();
  c.context_parallel = 2;  // the cost reports the attention core's times with context parallelism
  const auto [te, flash2] = PtToggle(model, gpu, c, &StageConfig::flash_attention_2);
  REQUIRE(te.cp_attention.size() == 1);
  REQUIRE(flash2.cp_attention.size() == 1);
  // The forward is the same kernel's; the backward is its published multiple, not two GEMMs' worth.
  CHECK(flash2.cp_attention[0].core_forward_s == te.cp_attention[0].core_forward_s);
  CHECK(flash2.cp_attention[0].core_backward_s ==
        Approx(kFlashAttention2BackwardRatio * flash2.cp_attention[0].core_forward_s));
  CHECK(te.cp_attention[0].core_backward_s < flash2.cp_attention[0].core_backward_s);
  CHECK(hetsim::TimeToSeconds(flash2.backward_time - te.backward_time) ==
        Approx(flash2.cp_attention[0].core_backward_s - te.cp_attention[0].core_backward_s).epsilon(1e-6));
  CHECK(flash2.forward_time == te.forward_time);
}

TEST_CASE("pytorch kernels: the FP32 merges of PyTorch's ring attention, byte by byte", "[pytorch_kernels]") {
  const ModelCost model = PtModel(hetsim::v1::BF16);
  const GpuCompute gpu = PtH100(hetsim::v1::BF16);
  const LayerCost& block = model.layer(1);
  StageConfig c = PtBlock();
  c.context_parallel = 4;
  c.attention_repeats_kv = true;
  const auto [te, torch] = PtToggle(model, gpu, c, &StageConfig::pytorch_context_parallel);
  // Two samples, a quarter of each sequence's tokens on this GPU; K and V repeated to every head.
  const double share = 2.0 / 4, n = 3;
  const double o = block.context_bytes_per_sample * share, q = block.query_bytes_per_sample * share;
  const double kv = block.repeated_kv_bytes_per_sample * share;
  const double forward = 6 * o + n * (16.25 * o + 2 * kv);
  const double backward = 10 * q + 14 * kv + n * (11.75 * kv + 5.75 * q);
  CHECK(hetsim::TimeToSeconds(torch.forward_time - te.forward_time) ==
        Approx(gpu.MemorySeconds(forward, 3 + 10 * n)).epsilon(1e-6));
  CHECK(hetsim::TimeToSeconds(torch.backward_time - te.backward_time) ==
        Approx(gpu.MemorySeconds(backward, 13 + 6 * n)).epsilon(1e-6));
  // Without context parallelism there is no ring, and nothing to merge.
  c.context_parallel = 1;
  const auto [plain, still_plain] = PtToggle(model, gpu, c, &StageConfig::pytorch_context_parallel);
  CHECK(plain.forward_time == still_plain.forward_time);
  CHECK(plain.backward_time == still_plain.backward_time);
}

TEST_CASE("pytorch kernels: DTensor's sequence-dim collectives copy their buffer, not where async TP fuses them",
          "[pytorch_kernels]") {
  const ModelCost model = PtModel(hetsim::v1::BF16);
  const GpuCompute gpu = PtH100(hetsim::v1::BF16);
  StageConfig c = PtBlock();
  c.tensor_parallel = 2;
  c.sequence_parallel = true;
  // The block's TP collectives: the attention's and the MLP's input gathers and output reduce-scatters,
  // each of the two samples' whole activations, B s h a sample.
  const double buffer = 2 * 2 * kPtS * kPtH;
  const auto calls = [](const std::vector<StageCollective>& list) {
    int calls = 0;
    for (const StageCollective& sc : list) {
      const bool gather_or_scatter =
          sc.op == hetsim::CollectiveOp::kAllGather || sc.op == hetsim::CollectiveOp::kReduceScatter;
      if (gather_or_scatter && sc.group == CollectiveGroup::kTensor) calls += sc.count;
    }
    return calls;
  };
  // Each call reads and writes its buffer once more (torch.cat of torch.chunk), one kernel.
  const auto copies = [&](int n) { return gpu.MemorySeconds(2 * buffer * n, n); };
  const auto delta = [](hetsim::Time with, hetsim::Time without) { return hetsim::TimeToSeconds(with - without); };

  const auto [plain, copied] = PtToggle(model, gpu, c, &StageConfig::dtensor_sequence_copies);
  REQUIRE(calls(plain.forward_collectives) == 4);
  REQUIRE(calls(plain.backward_collectives) == 4);
  CHECK(delta(copied.forward_time, plain.forward_time) == Approx(copies(4)).epsilon(1e-6));
  CHECK(delta(copied.backward_time, plain.backward_time) == Approx(copies(4)).epsilon(1e-6));

  // A full recomputation reruns the forward's gathers and reduce-scatters, copies included.
  StageConfig full = c;
  full.recompute = hetsim::spec::Recompute::kFull;
  const auto [full_plain, full_copied] = PtToggle(model, gpu, full, &StageConfig::dtensor_sequence_copies);
  CHECK(delta(full_copied.backward_time, full_plain.backward_time) == Approx(copies(8)).epsilon(1e-6));

  // Async TP fuses the forward's (and the recomputation's): only the backward's own copy.
  full.tp_comm_overlap = true;
  full.pytorch_async_tp = true;
  const auto [async_plain, async_copied] = PtToggle(model, gpu, full, &StageConfig::dtensor_sequence_copies);
  CHECK(async_copied.forward_time == async_plain.forward_time);
  CHECK(delta(async_copied.backward_time, async_plain.backward_time) == Approx(copies(4)).epsilon(1e-6));

  // No TP, nothing to copy.
  const auto [alone, alone_copied] = PtToggle(model, gpu, PtBlock(), &StageConfig::dtensor_sequence_copies);
  CHECK(alone_copied.forward_time == alone.forward_time);
  CHECK(alone_copied.backward_time == alone.backward_time);
}
