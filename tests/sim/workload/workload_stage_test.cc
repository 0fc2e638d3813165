// Stage-level cost: activation memory against Korthikanti et al. 2022, ZeRO sharding against
// Rajbhandari et al. 2020, GPU time from peak and efficiency, TP collectives, measured overrides.
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <string>

#include "proto/gpu_presets.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/base/time_io.h"
#include "tests/proto/model_shapes.h"

namespace {

using hetsim::testing::Bf16ComputeOk;

using hetsim::Time;
using namespace hetsim::workload;
using hetsim::CollectiveOp;

constexpr double kS = 2048, kH = 12288, kA = 96, kV = 51200;

ModelCost Gpt3(hetsim::v1::LayerGranularity granularity = hetsim::v1::BLOCK) {
  hetsim::v1::Model m;
  auto* t = m.mutable_transformer();
  hetsim::testing::SetGpt3Shape(t);
  t->set_tied_embeddings(true);
  t->set_granularity(granularity);
  auto cost = hetsim::testing::ModelCostOf(m, "model.pbtxt");
  REQUIRE(cost.ok());
  return *std::move(cost);
}

hetsim::v1::GpuType Gpu(double bf16_tflops, double max_eff, double half_gflop) {
  hetsim::v1::GpuType g;
  g.set_name("test");
  g.set_peak_tflops_bf16(bf16_tflops);
  g.set_hbm_gib(80);
  g.set_hbm_bandwidth_gbytes_per_s(2000);
  g.mutable_efficiency()->set_max_efficiency(max_eff);
  g.mutable_efficiency()->set_half_efficiency_gflop(half_gflop);
  return g;
}

// Two blocks of hidden 1024, 16 heads, sequence 1024.
hetsim::v1::Model SmallGpt() {
  hetsim::v1::Model m;
  hetsim::testing::SetTransformer(m, {.layers = 2, .hidden = 1024, .heads = 16, .seq = 1024, .vocab = 32000});
  return m;
}

// SmallGpt with 8 experts, 2 per token.
std::optional<ModelCost> SmallMoe(bool grouped_gemm = false,
                                  hetsim::v1::MoeTokenDispatcher dispatcher = hetsim::v1::MOE_DISPATCHER_ALL_TO_ALL) {
  hetsim::v1::Model m = SmallGpt();
  auto* t = m.mutable_transformer();
  t->set_num_experts(8);
  t->set_moe_top_k(2);
  t->set_moe_grouped_gemm(grouped_gemm);
  t->set_moe_token_dispatcher(dispatcher);
  auto cost = hetsim::testing::ModelCostOf(m, "model.pbtxt");
  REQUIRE(cost.ok());
  return *std::move(cost);
}

StageCost Cost(const ModelCost& model, const StageConfig& cfg, const GpuCompute& gpu) {
  auto cost = ComputeStageCost(model, cfg, gpu, "plan.pbtxt: stages[0]");
  REQUIRE(cost.ok());
  return *std::move(cost);
}

StageConfig Layers(int first, int count, uint64_t b, int tp = 1, int dp = 1) {
  StageConfig c;
  c.first_layer = first;
  c.num_layers = count;
  c.micro_batch_size = b;
  c.tensor_parallel = tp;
  c.data_parallel = dp;
  return c;
}

StageConfig OneBlock(int tp, bool sp, hetsim::spec::Recompute recompute, uint64_t b = 1) {
  StageConfig c = Layers(1, 1, b, tp);
  c.sequence_parallel = sp;
  c.recompute = recompute;
  return c;
}

}  // namespace

TEST_CASE("activation bytes per block follow Korthikanti et al. 2022 Table 2", "[workload][stage][memory]") {
  const ModelCost gpt3 = Gpt3();
  const GpuCompute gpu = Bf16ComputeOk(Gpu(312, 1, 0));
  const double b = 2, t = 8;
  const double sbh = kS * b * kH, as_h = kA * kS / kH;
  auto act = [&](int tp, bool sp, hetsim::spec::Recompute r) {
    return static_cast<double>(Cost(gpt3, OneBlock(tp, sp, r, 2), gpu).memory.activation_bytes_per_microbatch);
  };
  CHECK(act(1, false, hetsim::spec::Recompute::kNone) == sbh * (34 + 5 * as_h));
  CHECK(act(8, false, hetsim::spec::Recompute::kNone) == sbh * (10 + 24 / t + 5 * as_h / t));
  CHECK(act(8, true, hetsim::spec::Recompute::kNone) == sbh / t * (34 + 5 * as_h));
  CHECK(act(8, false, hetsim::spec::Recompute::kSelective) == sbh * (10 + 24 / t));
  CHECK(act(8, true, hetsim::spec::Recompute::kSelective) == sbh * 34 / t);
  CHECK(act(8, false, hetsim::spec::Recompute::kFull) == 2 * sbh);  // only the block's input
  CHECK(act(8, true, hetsim::spec::Recompute::kFull) == 2 * sbh / t);
  // Full recompute rebuilds one block's activations during its backward.
  CHECK(static_cast<double>(
            Cost(gpt3, OneBlock(8, true, hetsim::spec::Recompute::kFull, 2), gpu).memory.recompute_working_bytes) ==
        sbh / t * (34 + 5 * as_h));

  // Embedding dropout mask sbh/t and output layer 4sbh(1 + v/h)/t with SP (Sec. 4.3).
  StageConfig ends = Layers(0, 1, 2, 8);
  ends.sequence_parallel = true;
  CHECK(static_cast<double>(Cost(gpt3, ends, gpu).memory.activation_bytes_per_microbatch) == sbh / t);
  ends.first_layer = 97;
  CHECK(static_cast<double>(Cost(gpt3, ends, gpu).memory.activation_bytes_per_microbatch) ==
        4 * sbh * (1 + kV / kH) / t);
}

TEST_CASE("ZeRO sharding of mixed-precision Adam (Rajbhandari et al. 2020, Fig. 1)", "[workload][stage][memory]") {
  const double psi = 7.5e9;
  const int nd = 64;
  auto total = [&](int stage) {
    return static_cast<double>(ZeroShardedModelStates(psi, hetsim::spec::DType::kBf16, stage, nd).ModelStateBytes());
  };
  CHECK(total(0) == 16 * psi);                 // 120 GB
  CHECK(total(1) == 4 * psi + 12 * psi / nd);  // 31.4 GB
  CHECK(total(2) == 2 * psi + 14 * psi / nd);  // 16.6 GB
  CHECK(total(3) == 16 * psi / nd);            // 1.9 GB
  const StageMemory fp32 = ZeroShardedModelStates(1000, hetsim::spec::DType::kFp32, 0, 1);
  CHECK(fp32.param_bytes == 4000);
  CHECK(fp32.grad_bytes == 4000);
  CHECK(fp32.optimizer_bytes == 8000);
}

TEST_CASE("FP32 gradients: Megatron-LM's bytes per parameter for BF16 runs (18, 6 + 12/d distributed)",
          "[workload][stage][memory]") {
  // Megatron-LM's distributed-optimizer guide: "bf16 param, fp32 grads" take 18 bytes per parameter
  // with the plain optimizer, 6 + 12/d with the distributed one (ZeRO-1 over d ranks).
  const double psi = 1e9;
  const int d = 16;
  auto total = [&](int stage) {
    return static_cast<double>(
        ZeroShardedModelStates(psi, hetsim::spec::DType::kBf16, stage, d, /*fp32_gradients=*/true).ModelStateBytes());
  };
  CHECK(total(0) == 18 * psi);
  CHECK(total(1) == 6 * psi + 12 * psi / d);
  CHECK(total(2) == 2 * psi + 16 * psi / d);
  CHECK(ZeroShardedModelStates(psi, hetsim::spec::DType::kBf16, 1, d, true).grad_bytes == 4 * psi);
  // An FP32 model's gradients are 4 bytes either way.
  CHECK(ZeroShardedModelStates(psi, hetsim::spec::DType::kFp32, 1, d, true).ModelStateBytes() ==
        ZeroShardedModelStates(psi, hetsim::spec::DType::kFp32, 1, d, false).ModelStateBytes());
}

TEST_CASE("stage memory: TP split, ZeRO over DP, tied head copy, peak with in-flight microbatches",
          "[workload][stage][memory]") {
  const ModelCost gpt3 = Gpt3();
  const GpuCompute gpu = Bf16ComputeOk(Gpu(312, 1, 0));
  StageConfig c = Layers(1, 12, 4, 8, 4);
  c.zero_stage = 1;
  const StageCost cost = Cost(gpt3, c, gpu);
  const double per_gpu = 12 * (12 * kH * kH + 13 * kH) / 8;
  CHECK(static_cast<double>(cost.memory.param_bytes) == 2 * per_gpu);
  CHECK(static_cast<double>(cost.memory.grad_bytes) == 2 * per_gpu);
  CHECK(static_cast<double>(cost.memory.optimizer_bytes) == 12 * per_gpu / 4);
  CHECK(static_cast<double>(cost.grad_sync_bytes) == 2 * per_gpu);
  CHECK(static_cast<double>(cost.param_sync_bytes) == 2 * per_gpu);
  CHECK(cost.memory.PeakBytes(3) == cost.memory.ModelStateBytes() + 3 * cost.memory.activation_bytes_per_microbatch);
  // Plan.grad_reduce_in_fp32: the gradient buffers and their reduction in FP32, the gathers in BF16.
  StageConfig fp32 = c;
  fp32.grad_reduce_in_fp32 = true;
  const StageCost wide = Cost(gpt3, fp32, gpu);
  CHECK(static_cast<double>(wide.memory.grad_bytes) == 4 * per_gpu);
  CHECK(static_cast<double>(wide.grad_sync_bytes) == 4 * per_gpu);
  CHECK(wide.param_sync_bytes == cost.param_sync_bytes);
  CHECK(wide.memory.param_bytes == cost.memory.param_bytes);
  CHECK(wide.memory.optimizer_bytes == cost.memory.optimizer_bytes);
  // The distributed optimizer steps this rank's quarter of everything (DP 4); without ZeRO all of it.
  CHECK(static_cast<double>(cost.optimizer_shard.grad_bytes) == 2 * per_gpu / 4);
  CHECK(static_cast<double>(cost.optimizer_shard.param_bytes) == 2 * per_gpu / 4);
  CHECK(cost.optimizer_shard.optimizer_bytes == cost.memory.optimizer_bytes);
  StageConfig plain = c;
  plain.zero_stage = 0;
  const StageCost replicated = Cost(gpt3, plain, gpu);
  CHECK(replicated.optimizer_shard.ModelStateBytes() == replicated.memory.ModelStateBytes());
  // Each replica takes b / DP = 1 sample: boundary b/DP * s * h * 2 bytes.
  CHECK(static_cast<double>(cost.boundary_bytes_per_replica) == kS * kH * 2);
  CHECK(static_cast<double>(cost.boundary_bytes_per_microbatch) == 4 * kS * kH * 2);

  // The last stage holds its own copy of the tied vocabulary matrix.
  StageConfig last = c;
  last.first_layer = 97;
  last.num_layers = 1;
  last.zero_stage = 0;
  CHECK(static_cast<double>(Cost(gpt3, last, gpu).memory.param_bytes) == 2 * (kV * kH + 2 * kH) / 8);
}

TEST_CASE("GPU time = FLOPs / (peak x efficiency(g)) + memory traffic / HBM bandwidth", "[workload][stage][time]") {
  const ModelCost gpt3 = Gpt3();
  const double peak = 400e12, max_eff = 0.5, half = 20, hbm = 2000e9;
  const GpuCompute gpu = Bf16ComputeOk(Gpu(400, max_eff, half));
  CHECK(gpu.Efficiency(20e9) == Approx(0.25));
  CHECK(gpu.GemmSeconds(60e9) == Approx(60e9 / (peak * max_eff * 60.0 / 80.0)));

  const double b = 2, t = 4, s = kS, h = kH, a = kA, B = 2;
  // Six GEMMs per block, each of (flop * b / t); efficiency adds half_efficiency_gflop's worth each.
  const double flop = (24 * s * h * h + 4 * s * s * h) * b / t;
  const double gemm_s = (flop + 6 * half * 1e9) / (peak * max_eff);
  // Memory-bound traffic of a block: LayerNorm (r+w) and the fused bias-dropout-add (two reads, a
  // write and the mask) on the full width twice (replicated without SP), softmax and attention dropout
  // on the scores and GeLU on the hidden width (sharded).
  const double replicated = 2 * (5 * B + 1) * s * h * b;
  const double sharded = ((4 * B + 1) * a * s * s + 2 * B * s * 4 * h) * b / t;
  const double memory_s = (replicated + sharded) / hbm;
  const StageCost none = Cost(gpt3, OneBlock(4, false, hetsim::spec::Recompute::kNone, 2), gpu);
  // Within a picosecond: the model sums per-GEMM times, the test the closed form.
  CHECK(AbsTime(none.forward_time - hetsim::SecondsToTime(gemm_s + memory_s)) <= 1_ps);
  CHECK(AbsTime(none.backward_time - 2 * none.forward_time) <= 1_ps);
  CHECK(none.forward_flop_per_gpu == Approx(flop));
  CHECK(none.model_flop_per_gpu == Approx(3 * flop));

  const StageCost full = Cost(gpt3, OneBlock(4, false, hetsim::spec::Recompute::kFull, 2), gpu);
  CHECK(full.forward_time == none.forward_time);
  CHECK(AbsTime(full.backward_time - 3 * none.forward_time) <= 1_ps);
  CHECK(full.backward_flop_per_gpu == Approx(3 * flop));

  // Selective: the two attention-core GEMMs and the softmax/dropout traffic run again.
  const double core_s =
      (4 * s * s * h * b / t + 2 * half * 1e9) / (peak * max_eff) + (4 * B + 1) * a * s * s * b / t / hbm;
  const StageCost selective = Cost(gpt3, OneBlock(4, false, hetsim::spec::Recompute::kSelective, 2), gpu);
  CHECK(AbsTime(selective.backward_time - hetsim::SecondsToTime(2 * (gemm_s + memory_s) + core_s)) <= 1_ps);

  // Sequence parallelism also splits the replicated traffic over TP.
  const StageCost sp = Cost(gpt3, OneBlock(4, true, hetsim::spec::Recompute::kNone, 2), gpu);
  CHECK(AbsTime(sp.forward_time - hetsim::SecondsToTime(gemm_s + (replicated / t + sharded) / hbm)) <= 1_ps);
}

TEST_CASE("measured times replace the model", "[workload][stage][time]") {
  const ModelCost gpt3 = Gpt3();
  const GpuCompute gpu = Bf16ComputeOk(Gpu(312, 0.8, 1));
  StageConfig c = OneBlock(1, false, hetsim::spec::Recompute::kNone);
  c.measured_forward_ms = 12.5;
  c.measured_backward_ms = 30;
  const StageCost cost = Cost(gpt3, c, gpu);
  CHECK(cost.forward_time == 12'500'000'000_ps);
  CHECK(cost.backward_time == 30'000'000'000_ps);
  CHECK(cost.forward_measured);
  CHECK(cost.backward_measured);
}

TEST_CASE("TP collectives: two all-reduces per block and pass, or AG + RS with SP", "[workload][stage][comm]") {
  const GpuCompute gpu = Bf16ComputeOk(Gpu(312, 1, 0));
  const int64_t bytes = static_cast<int64_t>(2 * kS * kH * 2);  // b = 2 samples of s*h BF16
  const ModelCost gpt3 = Gpt3();
  const StageCost plain = Cost(gpt3, OneBlock(8, false, hetsim::spec::Recompute::kNone, 2), gpu);
  REQUIRE(plain.forward_collectives.size() == 1);
  CHECK(plain.forward_collectives[0].op == CollectiveOp::kAllReduce);
  CHECK(plain.forward_collectives[0].group == CollectiveGroup::kTensor);
  CHECK(plain.forward_collectives[0].bytes == bytes);
  CHECK(plain.forward_collectives[0].count == 2);
  REQUIRE(plain.backward_collectives.size() == 1);
  CHECK(plain.backward_collectives[0].count == 2);

  const StageCost sp = Cost(gpt3, OneBlock(8, true, hetsim::spec::Recompute::kNone, 2), gpu);
  REQUIRE(sp.forward_collectives.size() == 2);
  CHECK(sp.forward_collectives[0].op == CollectiveOp::kAllGather);
  CHECK(sp.forward_collectives[0].count == 2);
  CHECK(sp.forward_collectives[1].op == CollectiveOp::kReduceScatter);
  CHECK(sp.forward_collectives[1].count == 2);
  CHECK(sp.forward_collectives[1].bytes == bytes);

  // SUBLAYER: one per sublayer and pass; no TP, no collectives.
  const ModelCost sub = Gpt3(hetsim::v1::SUBLAYER);
  const StageCost attention = Cost(sub, OneBlock(8, false, hetsim::spec::Recompute::kNone, 2), gpu);
  REQUIRE(attention.forward_collectives.size() == 1);
  CHECK(attention.forward_collectives[0].count == 1);
  CHECK(Cost(gpt3, OneBlock(1, false, hetsim::spec::Recompute::kNone, 2), gpu).forward_collectives.empty());
}

TEST_CASE("MoE stage: expert parallel splits experts, all-to-all per microbatch", "[workload][stage][comm]") {
  const auto model = SmallMoe();
  const GpuCompute gpu = Bf16ComputeOk(Gpu(312, 1, 0));
  StageConfig c = Layers(1, 1, 8, 1, 4);
  c.expert_parallel = 4;
  const StageCost cost = Cost(*model, c, gpu);
  REQUIRE(cost.forward_collectives.size() == 1);
  CHECK(cost.forward_collectives[0].op == CollectiveOp::kAllToAll);
  CHECK(cost.forward_collectives[0].group == CollectiveGroup::kExpert);
  CHECK(cost.forward_collectives[0].bytes == 2 * 2 * 1024 * 1024 * 2);  // b/DP=2, top-2, BF16
  CHECK(cost.forward_collectives[0].count == 2);
  const double expert = 8.0 * (2 * 1024 * 4096 + 4096 + 1024) / 4;
  CHECK(static_cast<double>(cost.expert_grad_sync_bytes) == 2 * expert);

  // Megatron's all-gather dispatcher: each rank gathers the 4 ranks' tokens (b/DP = 2 samples of 1024
  // tokens, BF16, hidden 1024) and reduce-scatters the outputs, whatever top-k; the same way back.
  const StageCost gathered = Cost(*SmallMoe(false, hetsim::v1::MOE_DISPATCHER_ALL_GATHER), c, gpu);
  REQUIRE(gathered.forward_collectives.size() == 2);
  REQUIRE(gathered.backward_collectives.size() == 2);
  for (const auto& collectives : {gathered.forward_collectives, gathered.backward_collectives}) {
    // One all-gather and one reduce-scatter a pass (the backward lists them in its own order).
    CHECK(collectives[0].op != collectives[1].op);
    for (const auto& coll : collectives) {
      CHECK((coll.op == CollectiveOp::kAllGather || coll.op == CollectiveOp::kReduceScatter));
      CHECK(coll.group == CollectiveGroup::kExpertAndTensor);  // ETP (TP 1) x EP 4 GPUs
      CHECK(coll.bytes == 4 * 2 * 1024 * 1024 * 2);            // EP x b/DP x s x h x 2 bytes: the gathered buffer
      CHECK(coll.count == 1);
    }
  }
  CHECK(gathered.forward_flop_per_gpu == cost.forward_flop_per_gpu);  // the experts compute the same tokens
}

TEST_CASE("MoE parallel folding: experts over ETP x EP of the stage's TP x DP GPUs", "[workload][stage][comm]") {
  // SmallMoe's block: hidden 1024, sequence 1024, 8 experts of FFN 4096, top-2, BF16; 4 samples over
  // TP 2 x DP 4 = 8 GPUs with sequence parallelism (each GPU's attention holds 512 of a sample's tokens).
  const auto model = SmallMoe();
  const GpuCompute gpu = Bf16ComputeOk(Gpu(312, 1, 0));
  StageConfig c = Layers(1, 1, 4, 2, 4);
  c.sequence_parallel = true;
  c.zero_stage = 1;
  auto of = [&](CollectiveGroup group, const std::vector<StageCollective>& list) {
    std::vector<StageCollective> out;
    for (const StageCollective& s : list) {
      if (s.group == group) out.push_back(s);
    }
    return out;
  };
  const double bsh = 1024.0 * 1024 * 2;                 // one sample's hidden states, BF16
  const double expert = 2 * 1024 * 4096 + 4096 + 1024;  // one expert's weights and biases

  // ETP = TP = 2, EP 4: each GPU dispatches its own 512 tokens' 2 copies over EP, then the TP pair
  // gathers what both received (and reduce-scatters the outputs); no all-gather over TP before it.
  c.expert_parallel = 4;
  const StageCost tp_experts = Cost(*model, c, gpu);
  const auto a2a = of(CollectiveGroup::kExpert, tp_experts.forward_collectives);
  REQUIRE(a2a.size() == 1);
  CHECK(a2a[0].op == CollectiveOp::kAllToAll);
  CHECK(a2a[0].bytes == 2 * bsh / 2);  // top-2 x b/DP = 1 sample / TP 2
  CHECK(a2a[0].count == 2);            // dispatch and combine
  const auto inner = of(CollectiveGroup::kExpertTensor, tp_experts.forward_collectives);
  REQUIRE(inner.size() == 2);
  CHECK(inner[0].op == CollectiveOp::kAllGather);
  CHECK(inner[1].op == CollectiveOp::kReduceScatter);
  CHECK(inner[0].bytes == 2 * bsh);  // both GPUs' dispatched tokens
  CHECK(inner[1].bytes == 2 * bsh);
  CHECK(of(CollectiveGroup::kExpertTensor, tp_experts.backward_collectives).size() == 2);
  // The attention keeps its TP gather and reduce-scatter; the routed MLP has none over TP.
  CHECK(of(CollectiveGroup::kTensor, tp_experts.forward_collectives).size() == 2);
  // 8 experts over ETP 2 x EP 4: 2 experts on each GPU, half of each.
  CHECK(static_cast<double>(tp_experts.expert_grad_sync_bytes) == Approx(2 * 8 * expert / 8).margin(1));

  // ETP 1, EP 8: one expert whole on each GPU, the EP group all 8 GPUs (TP folded into it).
  c.expert_tensor_parallel = 1;
  c.expert_parallel = 8;
  const StageCost folded = Cost(*model, c, gpu);
  const auto folded_a2a = of(CollectiveGroup::kExpert, folded.forward_collectives);
  REQUIRE(folded_a2a.size() == 1);
  CHECK(folded_a2a[0].bytes == 2 * bsh / 2);
  CHECK(of(CollectiveGroup::kExpertTensor, folded.forward_collectives).empty());  // ETP 1: nothing to gather
  CHECK(static_cast<double>(folded.expert_grad_sync_bytes) == Approx(2 * expert).margin(1));
  // Every GPU of the stage computes an equal share of the routed tokens either way.
  CHECK(folded.forward_flop_per_gpu == Approx(tp_experts.forward_flop_per_gpu));
  // A GPU keeps the dispatched tokens its expert-TP group gathered: its own 512 tokens' 2 copies with
  // ETP 1, both GPUs' with ETP 2 (BF16, hidden 1024), so ETP 2 keeps one GPU's more; the experts'
  // hidden activations are the same.
  CHECK(tp_experts.memory.activation_bytes_per_microbatch - folded.memory.activation_bytes_per_microbatch ==
        512 * 2 * 1024 * 2);
  // ZeRO-1 shards an expert's optimizer states over the GPUs that hold the same shard, TP x DP / (ETP x
  // EP) of them: EP 2 keeps 4 experts on each GPU, in 4 copies over the stage, so its states take what
  // EP 8's one expert's do; without ZeRO they take 4 times as much (Adam: 12 bytes a BF16 parameter).
  c.expert_parallel = 2;
  const StageCost copies = Cost(*model, c, gpu);
  CHECK(static_cast<double>(copies.expert_grad_sync_bytes) == Approx(2 * 4 * expert).margin(1));
  CHECK(static_cast<double>(copies.memory.optimizer_bytes - folded.memory.optimizer_bytes) == Approx(0).margin(2));
  c.zero_stage = 0;
  const StageCost copies_whole = Cost(*model, c, gpu);
  // Without TP the expert-TP group still gathers: TP 1 x DP 8, ETP 2 x EP 4, each GPU's 1 sample.
  StageConfig no_tp = Layers(1, 1, 8, 1, 8);
  no_tp.expert_parallel = 4;
  no_tp.expert_tensor_parallel = 2;
  const StageCost etp2 = Cost(*model, no_tp, gpu);
  const auto etp2_inner = of(CollectiveGroup::kExpertTensor, etp2.forward_collectives);
  REQUIRE(etp2_inner.size() == 2);
  CHECK(etp2_inner[0].bytes == 2 * 2 * bsh);  // top-2 x 1 sample x ETP 2
  CHECK(of(CollectiveGroup::kExpert, etp2.forward_collectives).front().bytes == 2 * bsh);
  c.expert_parallel = 8;
  const StageCost folded_whole = Cost(*model, c, gpu);
  CHECK(static_cast<double>(copies_whole.memory.optimizer_bytes - folded_whole.memory.optimizer_bytes) ==
        Approx(12 * 3 * expert).margin(2));
}

TEST_CASE("bad stages and GPU types are reported with the field path", "[workload][stage]") {
  const ModelCost gpt3 = Gpt3();
  const GpuCompute gpu = Bf16ComputeOk(Gpu(312, 1, 0));
  auto error = [&](const StageConfig& c) {
    auto cost = ComputeStageCost(gpt3, c, gpu, "plan.pbtxt: stages[2]");
    REQUIRE_FALSE(cost.ok());
    return std::string(cost.status().message());
  };
  StageConfig c = OneBlock(5, false, hetsim::spec::Recompute::kNone);
  CHECK(error(c) == "plan.pbtxt: stages[2].tensor_parallel: 5 does not divide num_attention_heads 96");
  c = OneBlock(1, false, hetsim::spec::Recompute::kNone, 6);
  c.data_parallel = 4;
  CHECK(error(c) ==
        "plan.pbtxt: stages[2].data_parallel: 4 does not divide micro_batch_size 6 (each replica gets an equal share)");
  c = OneBlock(1, false, hetsim::spec::Recompute::kNone);
  c.first_layer = 90;
  c.num_layers = 10;
  CHECK(error(c) == "plan.pbtxt: stages[2].num_layers: layers [90, 100) go beyond the model's 98 layers");
  c = OneBlock(1, false, hetsim::spec::Recompute::kNone);
  c.expert_parallel = 2;
  CHECK(error(c) == "plan.pbtxt: stages[2].expert_parallel: 2 needs a mixture-of-experts model (num_experts > 1)");

  hetsim::v1::GpuType g = Gpu(0, 1, 0);
  g.set_name("V100");
  auto bad = hetsim::testing::GpuComputeOf(g, hetsim::v1::BF16, "cluster.pbtxt: gpu_types[1]");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()) ==
        "cluster.pbtxt: gpu_types[1].peak_tflops_bf16: 0 is not a positive number (GPU type \"V100\", "
        "needed for the model's dtype)");
}

TEST_CASE("FP8 runs the blocks' linear layers at the FP8 peak, attention core and LM head stay 16-bit",
          "[workload][stage][fp8]") {
  // A GPT-3-shaped model, one block plus the head, on ideal hardware (GEMMs at peak): between BF16
  // and FP8 only the FP8 GEMMs change, by their FLOPs x (1 / BF16 peak - 1 / FP8 peak).
  hetsim::v1::GpuType gpu = Gpu(989, 1, 0);
  gpu.set_peak_tflops_fp8(1979);
  const GpuCompute bf16 = Bf16ComputeOk(gpu, /*ideal=*/true);
  auto fp8 = hetsim::testing::GpuComputeOf(gpu, hetsim::v1::FP8, "cluster.pbtxt: gpu_types[0]", true);
  REQUIRE(fp8.ok());
  CHECK(fp8->SixteenBit().peak_flop_per_s() == 989e12);
  CHECK(&bf16.SixteenBit() == &bf16);
  const ModelCost gpt3 = Gpt3();
  const int head = gpt3.num_layers() - 1;
  const double b = 2;
  // Per sample: QKV, projection and the two MLP GEMMs, 2 s (3h^2 + h^2 + 8h^2) forward, twice that backward.
  const double linear = 2 * kS * 12 * kH * kH * b;
  const double saved = linear * 3 * (1 / 989e12 - 1 / 1979e12);
  const StageCost block16 = Cost(gpt3, Layers(1, 1, 2), bf16), block8 = Cost(gpt3, Layers(1, 1, 2), *fp8);
  CHECK(hetsim::TimeToSeconds(block16.forward_time + block16.backward_time - block8.forward_time -
                              block8.backward_time) == Approx(saved).epsilon(1e-6));
  // The head (Megatron's own output layer) and the attention core take as long as in BF16.
  const StageCost head16 = Cost(gpt3, Layers(head, 1, 2), bf16), head8 = Cost(gpt3, Layers(head, 1, 2), *fp8);
  CHECK(head8.forward_time == head16.forward_time);
  CHECK(head8.backward_time == head16.backward_time);
}

TEST_CASE("weight gradients of column-parallel linears: the (k x n/TP) output over the tokens, per layer",
          "[workload][stage][tp]") {
  // A100 preset (shape-aware kernels): a GPT-3 block at TP 8, 2 samples; dW = X^T dY is a
  // (h x tokens) @ (tokens x n/TP) GEMM for QKV (n = 3h) and FC1 (n = 4h).
  hetsim::v1::GpuType a100;
  a100.set_name("a100");
  a100.set_preset("A100-80GB");
  REQUIRE(hetsim::proto::ApplyGpuPreset(&a100, "c", "gpu").ok());
  const GpuCompute gpu = Bf16ComputeOk(a100);
  REQUIRE(gpu.shape_aware());
  const double tokens = 2 * kS;
  const double expected =
      gpu.GemmSeconds(GemmShape{kH, 3 * kH / 8, tokens}) + gpu.GemmSeconds(GemmShape{kH, 4 * kH / 8, tokens});
  const StageCost cost = Cost(Gpt3(), Layers(1, 2, 2, 8), gpu);
  REQUIRE(cost.layer_column_weight_grad_s.size() == 2);
  CHECK(cost.layer_column_weight_grad_s[0] == Approx(expected).epsilon(1e-12));
  CHECK(cost.layer_column_weight_grad_s[1] == Approx(expected).epsilon(1e-12));
  // A measured backward scales them with it.
  StageConfig measured = Layers(1, 2, 2, 8);
  const StageCost modelled = cost;
  measured.measured_backward_ms = hetsim::TimeToSeconds(modelled.backward_time) * 1e3 / 2;
  const StageCost halved = Cost(Gpt3(), measured, gpu);
  CHECK(halved.layer_column_weight_grad_s[0] == Approx(expected / 2).epsilon(1e-3));
}

TEST_CASE("asynchronous backward reductions: dense sublayers and the head, not MoE sublayers",
          "[workload][stage][tp]") {
  const auto moe = SmallMoe();
  const GpuCompute gpu = Bf16ComputeOk(Gpu(312, 1, 0), /*ideal=*/true);
  const int head = moe->num_layers() - 1;
  StageConfig c = Layers(1, head, 1, 2);
  c.expert_parallel = 2;
  c.data_parallel = 2;
  c.micro_batch_size = 2;
  c.sequence_parallel = true;  // Megatron runs MoE with TP only under sequence parallelism
  const StageCost cost = Cost(*moe, c, gpu);
  // Per block, the attention's input gradient only (the MoE MLP's goes through the dispatcher); the head's.
  int async = 0;
  for (const StageCollective& sc : cost.backward_collectives) async += sc.async_backward ? sc.count : 0;
  CHECK(async == 2 + 1);
  // A block's column-parallel weight gradients: QKV only, the experts' FC1 excluded (1 local sample).
  const double qkv = 2 * 1024.0 * 1024 * 3 * 1024 / 2 / 312e12;
  CHECK(cost.layer_column_weight_grad_s[0] == Approx(qkv).epsilon(1e-9));
}

TEST_CASE("partial full recompute (Megatron's block method): only the first N blocks recompute",
          "[workload][stage][recompute]") {
  const GpuCompute gpu = Bf16ComputeOk(Gpu(312, 1, 0));
  const double b = 2, t = 8;
  const double sbh = kS * b * kH, as_h = kA * kS / kH;
  for (const auto granularity : {hetsim::v1::BLOCK, hetsim::v1::SUBLAYER}) {
    CAPTURE(static_cast<int>(granularity));
    const ModelCost gpt3 = Gpt3(granularity);
    const int per_block = granularity == hetsim::v1::BLOCK ? 1 : 2;
    // Five blocks after the embedding, N = 2 of them recomputed.
    StageConfig cfg = Layers(1, 5 * per_block, 2, 8);
    cfg.recompute = hetsim::spec::Recompute::kFull;
    cfg.recompute_num_layers = 2;
    const StageCost partial = Cost(gpt3, cfg, gpu);
    cfg.recompute = hetsim::spec::Recompute::kNone;
    cfg.recompute_num_layers = 0;
    const StageCost none = Cost(gpt3, cfg, gpu);
    const Time one_block_forward = none.forward_time / 5;  // five identical blocks (pass overhead 0 here)
    CHECK(partial.forward_time == none.forward_time);
    CHECK(AbsTime(partial.backward_time - (none.backward_time + 2 * one_block_forward)) <= 4_ps);
    CHECK(partial.backward_flop_per_gpu == Approx(none.backward_flop_per_gpu + 2.0 / 5 * none.forward_flop_per_gpu));
    CHECK(partial.model_flop_per_gpu == Approx(none.model_flop_per_gpu));
    // N at least the blocks of the range: every block recomputes, as with N = 0.
    cfg.recompute = hetsim::spec::Recompute::kFull;
    cfg.recompute_num_layers = 5;
    const StageCost all = Cost(gpt3, cfg, gpu);
    cfg.recompute_num_layers = 0;
    const StageCost full = Cost(gpt3, cfg, gpu);
    CHECK(all.backward_time == full.backward_time);
    CHECK(all.memory.activation_bytes_per_microbatch == full.memory.activation_bytes_per_microbatch);
    // Two blocks' worth of full recompute's memory, three of none's; the same rebuilt working set.
    const auto kept = [](const StageCost& c) { return static_cast<double>(c.memory.activation_bytes_per_microbatch); };
    CHECK(kept(partial) == Approx(kept(full) * 2 / 5 + kept(none) * 3 / 5));
    CHECK(partial.memory.recompute_working_bytes == full.memory.recompute_working_bytes);
    if (granularity == hetsim::v1::BLOCK) {  // Korthikanti et al. Table 2 without SP
      CHECK(kept(partial) == Approx(2 * 2 * sbh + 3 * sbh * (10 + 24 / t + 5 * as_h / t)));
      CHECK(static_cast<double>(partial.memory.recompute_working_bytes) == Approx(sbh * (10 + 24 / t + 5 * as_h / t)));
    }
  }
}

TEST_CASE("recompute_num_layers needs full recompute", "[workload][stage][recompute]") {
  const ModelCost gpt3 = Gpt3();
  const GpuCompute gpu = Bf16ComputeOk(Gpu(312, 1, 0));
  StageConfig cfg = OneBlock(1, false, hetsim::spec::Recompute::kSelective);
  cfg.recompute_num_layers = 1;
  auto cost = ComputeStageCost(gpt3, cfg, gpu, "plan.pbtxt: stages[0]");
  REQUIRE_FALSE(cost.ok());
  CHECK(std::string(cost.status().message()) ==
        "plan.pbtxt: stages[0].recompute_num_layers: only full recompute (RECOMPUTE_FULL) counts layers");
}

TEST_CASE("grouped expert GEMMs: one kernel whose waves hold every local expert's tiles", "[workload][stage][time]") {
  const GpuCompute gpu = hetsim::testing::PresetComputeOk("H100-SXM", hetsim::v1::BF16);
  const std::optional<ModelCost> sequential = SmallMoe(false);
  const std::optional<ModelCost> grouped = SmallMoe(true);
  StageConfig c = Layers(1, 1, 4, 1, 4);  // one block, one sample per replica
  c.expert_parallel = 4;                  // 2 of the 8 experts on each GPU
  const StageCost one_by_one = Cost(*sequential, c, gpu);
  const StageCost together = Cost(*grouped, c, gpu);
  // Written out: each expert projection (m = 1024 of the 4 x 1024 x 2 token visits, over 8 experts,
  // times EP 4) as one kernel of 2 batched GEMMs instead of 2 kernels; forward, input and weight grads.
  double forward = 0, backward = 0;
  for (const Gemm& g : grouped->layer(1).gemms) {
    if (!g.per_expert) continue;
    REQUIRE(g.grouped);
    const double m = g.m * 4 / 8;
    const GemmShape f{m, g.n, g.k, 2}, dgrad{m, g.k, g.n, 2}, wgrad{g.k, g.n, m, 2};
    auto one = [](GemmShape s) { return GemmShape{s.m, s.n, s.k, 1}; };
    forward += gpu.GemmSeconds(f) - 2 * gpu.GemmSeconds(one(f));
    backward += gpu.GemmSeconds(dgrad) - 2 * gpu.GemmSeconds(one(dgrad)) + gpu.GemmSeconds(wgrad) -
                2 * gpu.GemmSeconds(one(wgrad));
  }
  CHECK(forward < 0);  // one launch and shared waves: never slower here
  CHECK(TimeToPicosecondsDouble(together.forward_time - one_by_one.forward_time) == Approx(forward * 1e12).margin(2));
  CHECK(TimeToPicosecondsDouble(together.backward_time - one_by_one.backward_time) ==
        Approx(backward * 1e12).margin(2));
}

TEST_CASE("multi-token prediction blocks in the head recompute their attention core selectively",
          "[workload][stage][memory]") {
  // SmallGpt with one MTP module in its head.
  hetsim::v1::Model m = SmallGpt();
  m.mutable_transformer()->set_tied_embeddings(true);
  m.mutable_transformer()->set_mtp_num_layers(1);
  auto model = hetsim::testing::ModelCostOf(m, "model.pbtxt");
  REQUIRE(model.ok());
  const GpuCompute gpu = Bf16ComputeOk(Gpu(312, 1, 0));
  StageConfig head = Layers(3, 1, 1);  // the head layer alone
  const StageCost none = Cost(*model, head, gpu);
  head.recompute = hetsim::spec::Recompute::kSelective;
  const StageCost selective = Cost(*model, head, gpu);
  // The module's block drops its 5 a s^2 scores (2-byte softmax and dropout output, 1-byte mask) and
  // runs its attention core again in the backward; the head's own parts are untouched.
  const double scores = 5.0 * 16 * 1024 * 1024;
  CHECK(static_cast<double>(none.memory.activation_bytes_per_microbatch -
                            selective.memory.activation_bytes_per_microbatch) == scores);
  const double core_flop = 2 * 2.0 * 1024 * 1024 * 1024;  // Q K^T and P V: 2 s^2 h each
  CHECK(selective.backward_flop_per_gpu - none.backward_flop_per_gpu == Approx(core_flop).epsilon(1e-12));
  // Full recompute leaves the head, and with it the module, as it is (Megatron recomputes the module
  // with the uniform method: docs/cost-model.md).
  head.recompute = hetsim::spec::Recompute::kFull;
  CHECK(Cost(*model, head, gpu).memory.activation_bytes_per_microbatch == none.memory.activation_bytes_per_microbatch);
}

TEST_CASE("the all-to-all dispatcher sorts the tokens it received by local expert, and back",
          "[workload][stage][time]") {
  // SmallMoe's block (hidden 1024, sequence 1024, 8 experts, top-2, BF16, grouped GEMMs), 8 GPUs, one
  // sample per replica. Megatron's sort_chunks_by_idxs reads and writes the received copies before the
  // experts and after them when a GPU holds several experts: 4 x 2 bytes x top-2 x 1024 x 1024 a
  // sample, two kernels; its gradient is the inverse sort, the same traffic again (not twice).
  const GpuCompute gpu = Bf16ComputeOk(Gpu(312, 1, 0));
  const double sort_bytes = 4 * 2 * 2 * 1024.0 * 1024;
  auto stage = [&](hetsim::v1::MoeTokenDispatcher dispatcher, int tp, int ep, int etp) {
    StageConfig c = Layers(1, 1, 8 / tp, tp, 8 / tp);
    c.sequence_parallel = tp > 1;
    c.expert_parallel = ep;
    c.expert_tensor_parallel = etp;
    return Cost(*SmallMoe(/*grouped_gemm=*/true, dispatcher), c, gpu);
  };
  auto sort_time = [&](double bytes) { return hetsim::SecondsToTime(gpu.MemorySeconds(bytes, 2)); };
  const auto a2a = hetsim::v1::MOE_DISPATCHER_ALL_TO_ALL;
  const StageCost one_expert = stage(a2a, 1, 8, 1);  // 8 experts over EP 8: nothing to sort
  const StageCost two_experts = stage(a2a, 1, 4, 1);
  CHECK(sort_time(sort_bytes) > 0);
  CHECK(AbsTime(two_experts.forward_time - one_expert.forward_time - sort_time(sort_bytes)) <= 1_ps);
  CHECK(AbsTime(two_experts.backward_time - one_expert.backward_time - sort_time(sort_bytes)) <= 1_ps);
  // The all-gather dispatcher has no such sort.
  const auto gather = hetsim::v1::MOE_DISPATCHER_ALL_GATHER;
  CHECK(stage(gather, 1, 4, 1).forward_time == stage(gather, 1, 8, 1).forward_time);
  // TP 2 with SP: each GPU dispatches its own 512 tokens. With ETP 1 it sorts what it received (half a
  // sample's copies); with ETP 2 the pair gathers first and each GPU sorts both GPUs' copies.
  const StageCost tp_one_expert = stage(a2a, 2, 8, 1);
  CHECK(AbsTime(stage(a2a, 2, 4, 1).forward_time - tp_one_expert.forward_time - sort_time(sort_bytes / 2)) <= 1_ps);
  CHECK(AbsTime(stage(a2a, 2, 4, 2).forward_time - tp_one_expert.forward_time - sort_time(sort_bytes)) <= 1_ps);
}
