#include "sim/workload/stage_cost.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/check.h"
#include "base/spec/stage_rules.h"
#include "sim/workload/tied_params.h"

namespace hetsim::workload {

StageConfig StageConfigOf(const spec::StageSpec& stage, uint64_t micro_batch_size, int context_parallel) {
  StageConfig c;
  static_cast<spec::StageParallelism&>(c) = stage;
  static_cast<spec::LayerRange&>(c) = stage;
  c.micro_batch_size = micro_batch_size;
  c.context_parallel = context_parallel;
  return c;
}

StageConfig StageConfigOf(const spec::StageSpec& stage, const spec::PlanSpec& plan) {
  StageConfig c = StageConfigOf(stage, plan.micro_batch_size, plan.context_parallel);
  static_cast<spec::CostSwitches&>(c) = plan;
  return c;
}

namespace {

// PyTorch's async TP (torch._inductor's micro-pipeline pass on torchtitan's compiled blocks): the
// forward's all-gather -> matmul and matmul -> reduce-scatter are decomposed into one matmul per TP
// rank's shard of the tokens while symmetric-memory copies move the next shard on the copy engines
// (no SMs held); the backward's GEMMs run whole.
UserbufferOverlap PyTorchAsyncTpOf(const Gemm& gemm, int tp) {
  UserbufferOverlap o;
  if (gemm.te_linear != TeLinear::kNone) o.forward = tp;
  return o;
}

}  // namespace

UserbufferOverlap UserbufferOverlapOf(const Gemm& gemm, const StageConfig& config) {
  // Megatron-LM enables the userbuffers overlap only with sequence parallelism; it covers Transformer
  // Engine's linear layers of a block, not the experts' grouped GEMMs or Megatron's own output layer.
  const int tp = config.tensor_parallel;
  if (!config.tp_comm_overlap || !config.sequence_parallel || tp <= 1) return {};
  if (config.pytorch_async_tp) return PyTorchAsyncTpOf(gemm, tp);
  const spec::TpCommOverlapSpec& te = config.tp_comm_overlap_config;
  const double ring = config.tp_comm_overlap_aggregate ? (tp + 1) / 2 : tp;
  // The GEMM that feeds a reduce-scatter; its input gradient consumes a ring all-gather (no SMs held).
  auto into_reduce_scatter = [&](spec::TpOverlapMethod method, int margin) {
    const bool pipeline = method == spec::TpOverlapMethod::kPipeline;
    UserbufferOverlap o;
    o.forward = pipeline ? kReduceScatterSplits : tp;  // aggregate pairs only the all-gathers' shards
    o.forward_cuts_columns = pipeline;
    o.forward_sm_margin = margin;
    o.input_grad = ring;
    return o;
  };
  // The GEMM fed by a ring all-gather (no SMs held); its backward GEMMs run beside bulk overlaps.
  auto from_all_gather = [&](int dgrad_margin, int wgrad_margin) {
    UserbufferOverlap o;
    o.forward = ring;
    o.input_grad_sm_margin = dgrad_margin;
    o.weight_grad_sm_margin = wgrad_margin;
    return o;
  };
  switch (gemm.te_linear) {
    case TeLinear::kQkv: return from_all_gather(te.qkv_dgrad_sm_margin, te.qkv_wgrad_sm_margin);
    case TeLinear::kFc1: return from_all_gather(te.fc1_dgrad_sm_margin, te.fc1_wgrad_sm_margin);
    case TeLinear::kProj: return into_reduce_scatter(te.proj_fprop, te.proj_fprop_sm_margin);
    case TeLinear::kFc2: return into_reduce_scatter(te.fc2_fprop, te.fc2_fprop_sm_margin);
    case TeLinear::kNone: return {};
  }
  return {};
}

int GradientBytes(spec::DType dtype, bool fp32_gradients) { return fp32_gradients ? 4 : ElementBytes(dtype); }

int ModelStateBytesPerParam(spec::DType dtype, bool fp32_gradients) {
  return ElementBytes(dtype) + GradientBytes(dtype, fp32_gradients) + OptimizerBytesPerParam(dtype);
}

StageMemory ZeroShardedModelStates(double param_count, spec::DType dtype, int zero_stage, int data_parallel,
                                   bool fp32_gradients) {
  const double element = ElementBytes(dtype);
  const double dp = std::max(1, data_parallel);
  double params = param_count * element;
  double grads = param_count * GradientBytes(dtype, fp32_gradients);
  double optimizer = param_count * OptimizerBytesPerParam(dtype);
  if (zero_stage >= 1) optimizer /= dp;
  if (zero_stage >= 2) grads /= dp;
  if (zero_stage >= 3) params /= dp;
  StageMemory m;
  m.param_bytes = static_cast<int64_t>(std::ceil(params));
  m.grad_bytes = static_cast<int64_t>(std::ceil(grads));
  m.optimizer_bytes = static_cast<int64_t>(std::ceil(optimizer));
  return m;
}

namespace {

absl::Status Invalid(absl::string_view where, absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrFormat("%s.%s: %s", where, field, problem));
}

absl::Status Validate(const ModelCost& model, const StageConfig& c, absl::string_view where) {
  if (c.num_layers <= 0) return Invalid(where, "num_layers", "must be > 0");
  if (c.first_layer < 0 || c.first_layer + c.num_layers > model.num_layers()) {
    return Invalid(where, "num_layers",
                   absl::StrFormat("layers [%d, %d) go beyond the model's %d layers", c.first_layer,
                                   c.first_layer + c.num_layers, model.num_layers()));
  }
  if (c.tensor_parallel < 1) return Invalid(where, "tensor_parallel", "must be >= 1");
  if (c.data_parallel < 1) return Invalid(where, "data_parallel", "must be >= 1");
  if (c.expert_parallel < 1) return Invalid(where, "expert_parallel", "must be >= 1");
  if (c.expert_tensor_parallel < 0) return Invalid(where, "expert_tensor_parallel", "must be >= 0");
  if (c.context_parallel < 1) return Invalid(where, "context_parallel", "must be >= 1");
  if (c.context_parallel > 1 && !model.is_transformer()) {
    return Invalid(where, "context_parallel", "needs a transformer model");
  }
  // Not a check of a hand-built configuration: ValidatePlan requires the plan's micro-batch size and
  // the planner searches sizes from 1 (planner.cc MicroBatchSizes), so 0 is a programming error.
  HETSIM_CHECK(c.micro_batch_size > 0, "%.*s: micro_batch_size 0 reached the cost model",
               static_cast<int>(where.size()), where.data());
  if (c.recompute_num_layers < 0) return Invalid(where, "recompute_num_layers", "must be >= 0");
  if (c.recompute_num_layers > 0 && c.recompute != spec::Recompute::kFull) {
    return Invalid(where, "recompute_num_layers", "only full recompute (RECOMPUTE_FULL) counts layers");
  }
  if (!(c.measured_forward_ms >= 0) || !std::isfinite(c.measured_forward_ms)) {
    return Invalid(where, "measured_forward_ms", "must be a finite number >= 0");
  }
  if (!(c.measured_backward_ms >= 0) || !std::isfinite(c.measured_backward_ms)) {
    return Invalid(where, "measured_backward_ms", "must be a finite number >= 0");
  }
  // The parallelism rules a plan file's stages are validated with (base/spec/stage_rules.h).
  const std::vector<spec::StageRuleProblem> problems =
      spec::StageRuleProblems(c, c.context_parallel, c.micro_batch_size,
                              {.num_attention_heads = model.num_attention_heads(),
                               .num_kv_heads = model.num_kv_heads(),
                               .ffn_hidden_size = model.ffn_hidden_size(),
                               .num_experts = model.num_experts(),
                               .expert_ffn_hidden_size = model.expert_ffn_hidden_size()});
  if (!problems.empty()) return Invalid(where, problems.front().field, problems.front().problem);
  return absl::OkStatus();
}

// The SMs Transformer Engine's overlaps hold must leave the stage's GPU some for the GEMMs.
absl::Status CheckSmMargins(const StageConfig& c, const GpuCompute& gpu, absl::string_view where) {
  if (!gpu.shape_aware() || !c.tp_comm_overlap || !c.sequence_parallel || c.tensor_parallel <= 1) {
    return absl::OkStatus();
  }
  for (const auto& [name, sms] : c.tp_comm_overlap_config.Margins()) {
    if (sms >= gpu.sm_count()) {
      // A plan field, checked against this stage's GPU.
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: tp_comm_overlap_config.%s (a plan field): %d SMs leave none of this stage's GPU's %d "
                          "for the GEMM",
                          where, name, sms, gpu.sm_count()));
    }
  }
  return absl::OkStatus();
}

int64_t RoundUpBytes(double bytes) { return static_cast<int64_t>(std::ceil(bytes)); }

// The stage's calls of a layer's collective: what the layer says of it (its op, group, userbuffers and
// whether torch.distributed issues it directly), with the calls' bytes and count; the caller sets what
// only one pass has (fc2_count, async_backward, recomputed).
StageCollective OfLayerCollective(const LayerCollective& lc, int64_t bytes, int32_t count, int layer) {
  return {.op = lc.op,
          .group = lc.group,
          .bytes = bytes,
          .count = count,
          .layer = layer,
          .userbuffers = lc.userbuffers,
          .direct_call = lc.direct_call};
}

}  // namespace

double FusedAttentionHeadDimSpeed(double head_dim, int compute_capability, FusedAttentionCode code) {
  constexpr double kRef = kFusedAttentionReferenceHeadDim;
  if (head_dim >= kRef) return 1;
  // The forward + backward rate at head dimension 64 over 128 (causal, 16K tokens): FlashAttention-2's, or
  // the FlashAttention Triton bar's of the same A100 figure (80 / 80) for a Triton kernel.
  const double at_64 = code == FusedAttentionCode::kTriton ? 80.0 / 80.0
                       : compute_capability / 10 == 9      ? 284.0 / 328.0
                                                           : 171.0 / 189.0;
  // r = (64 / (64 + c)) / (128 / (128 + c)) solved for the kernel's d-independent work per block, c.
  const double c = kRef * (1 - at_64) / (2 * at_64 - 1);
  return head_dim / (head_dim + c) * (kRef + c) / kRef;
}

Fp8Casts DynamicFp8Casts(double linears, double inputs, double weights, double outputs) {
  Fp8Casts c;
  c.forward_amax_bytes = 2 * (linears * inputs + weights);
  c.forward_cast_bytes = 3 * (linears * inputs + weights);
  c.forward_kernels = 2 * (linears + 1);
  c.forward_amax_kernels = linears + 1;
  c.backward_bytes = 3 * (linears * inputs + weights) + 8 * outputs;
  c.backward_kernels = 4 * linears + 1;
  return c;
}

Fp8Casts TeGroupedFp8Casts(double inputs, double outputs, bool pads_input, bool unpads_output) {
  // Transformer Engine v1.13 grouped_linear.py: fp8_multi_cast_transpose_fused on the inputs in the
  // forward and on the output gradients in the backward; Megatron-Core core_v0.11.0 experts.py
  // (TEGroupedMLP.forward): Fp8Padding / Fp8Unpadding around the experts when the model runs in FP8.
  const double padded = (pads_input ? inputs : 0) + (unpads_output ? outputs : 0);
  const double pad_kernels = (pads_input ? 1 : 0) + (unpads_output ? 1 : 0);
  Fp8Casts c;
  c.forward_cast_bytes = 4 * inputs + 4 * padded;
  c.forward_kernels = 1 + pad_kernels;
  c.backward_bytes = 4 * outputs + 4 * padded;
  c.backward_kernels = 1 + pad_kernels;
  return c;
}

namespace {

struct GemmTimes {
  double forward_s = 0, backward_s = 0;
  double weight_grad_s = 0;  // the weight-gradient GEMM's share of backward_s
  double flop = 0;           // forward FLOPs on this GPU
  Fp8Casts casts;            // StageConfig::fp8_dynamic_casts: what casting its operands to FP8 moves
};

// ATTENTION_FLASH_TRITON's attention core, a Triton kernel built from Ampere's mma.sync: at the GPU's speed for
// it (ComputeEfficiency.mma_sync_speed: below 1 on Hopper, whose wgmma it does not use), its forward and
// backward together at the level it is priced from, split at a Triton kernel's published ratio
// (kTritonFlashAttentionBackwardRatio: its forward cheaper, its backward dearer than FlashAttention-2's).
void AsTritonKernel(const GpuCompute& gpu, GemmTimes& t) {
  const double total = (t.forward_s + t.backward_s) / gpu.mma_sync_speed();
  const double forward = total / (1 + kTritonFlashAttentionBackwardRatio);
  const double backward_scale = t.backward_s > 0 ? (total - forward) / t.backward_s : 0;
  t.forward_s = t.backward_s > 0 ? forward : t.forward_s / gpu.mma_sync_speed();
  t.backward_s *= backward_scale;
  t.weight_grad_s *= backward_scale;
}

// A fused attention kernel (Gemm::fused_attention, k = 2 d) below the reference head dimension: shaped as
// the reference's (k = 256, the same tiles and waves), so that the tile model's per-tile overhead, which is
// a GEMM's, does not price its head dimension; returns what its times take of that shape's: its FLOPs' share
// at FusedAttentionHeadDimSpeed, its code's published rate at d over 128 (FlashAttention-2's or Triton's).
double AtReferenceHeadDim(GemmShape& f, const GpuCompute& gpu, FusedAttentionCode code) {
  const double head_dim = f.k / 2;
  if (head_dim <= 0 || head_dim >= kFusedAttentionReferenceHeadDim) return 1;
  f.k = 2 * kFusedAttentionReferenceHeadDim;
  return head_dim / kFusedAttentionReferenceHeadDim /
         FusedAttentionHeadDimSpeed(head_dim, gpu.compute_capability(), code);
}

void ScaleTimes(double factor, GemmTimes& t) {
  t.forward_s *= factor;
  t.backward_s *= factor;
  t.weight_grad_s *= factor;
}

// One forward GEMM of a layer on one GPU of the stage, and its two backward GEMMs (input gradient
// (m x n) @ (n x k), weight gradient (k x m) @ (m x n)), for `b` local samples of which this GPU
// holds 1/CP of the tokens (an attention core: its queries against all keys).
GemmTimes TimeGemm(const Gemm& g, double b, const StageConfig& c, double experts, double backward_ratio,
                   const GpuCompute& model_gpu) {
  const GpuCompute& gpu = g.fp8 ? model_gpu : model_gpu.SixteenBit();
  // Experts split their weights over ETP instead of TP.
  const double tp = g.per_expert ? c.ExpertTensorParallel() : c.tensor_parallel;
  // Experts: this GPU holds experts / EP of them and computes the tokens routed to them from the
  // whole EP group, on average b s k EP / experts per expert (times ETP / TP: its expert-TP group
  // gathers ETP GPUs' tokens, each GPU's attention holds 1/TP of them).
  const double local_experts = g.per_expert ? experts / c.expert_parallel : 1;
  // A grouped GEMM is one kernel whose tiles are all the local experts' (a batch of them).
  const double kernels = g.grouped ? 1 : local_experts;
  GemmTimes t;
  const double cp = c.context_parallel;
  t.flop = g.forward_flop_per_sample * b / c.tensor_parallel / cp;  // every GPU of the stage an equal share
  const bool flash2 = g.fused_attention && c.flash_attention_2;
  if (!gpu.shape_aware() || g.m <= 0) {
    t.forward_s = gpu.GemmSeconds(t.flop / kernels, kernels);
    t.backward_s = (flash2 ? kFlashAttention2BackwardRatio : backward_ratio) * t.forward_s;
    t.weight_grad_s = t.backward_s / 2;  // input and weight gradients: the same FLOPs
    if (g.mma_sync) AsTritonKernel(gpu, t);
    return t;
  }
  GemmShape f{g.m, g.n, g.k, g.batch};
  if (g.attention_core) {
    f.batch *= b;  // one matrix per sample and head
    f.m /= cp;     // this rank's queries
  } else {
    f.m *= b / cp;  // samples (this rank's tokens of them) stack along the rows
  }
  const FusedAttentionCode code = g.mma_sync ? FusedAttentionCode::kTriton : FusedAttentionCode::kFlashAttention2;
  const double head_dim_scale = g.fused_attention ? AtReferenceHeadDim(f, gpu, code) : 1;
  if (g.per_expert) f.m *= c.expert_parallel / experts * tp / c.tensor_parallel;
  if (g.grouped) f.batch *= local_experts;
  switch (g.split) {
    case TpSplit::kColumns: f.n /= tp; break;
    case TpSplit::kRows: f.k /= tp; break;
    case TpSplit::kBatch: f.batch /= tp; break;
    case TpSplit::kNone:
      // Duplicated on every TP rank (the router, MLA's down projections): under sequence parallelism
      // each rank runs it on its own tokens only.
      if (c.sequence_parallel && tp > 1) f.m /= tp;
      break;
  }
  // Each chunk is priced as its own GEMM, and loses more to its last wave than the whole did; each GEMM
  // runs on the SMs the overlap's communication leaves it.
  const UserbufferOverlap ub = UserbufferOverlapOf(g, c);
  // A ring exchange cuts the tokens; the pipeline into a reduce-scatter cuts the output columns (TE's
  // split_overlap_rs: each chunk is a slice of the weight's outputs, reduce-scattered over the tokens).
  const GemmShape forward_chunk = ub.forward_cuts_columns ? GemmShape{f.m, f.n / ub.forward, f.k, f.batch}
                                                          : GemmShape{f.m / ub.forward, f.n, f.k, f.batch};
  t.forward_s = kernels * ub.forward * gpu.GemmSeconds(forward_chunk, ub.forward_sm_margin);
  t.weight_grad_s = kernels * gpu.GemmSeconds(GemmShape{f.k, f.n, f.m, f.batch}, ub.weight_grad_sm_margin);
  t.backward_s = kernels * ub.input_grad *
                     gpu.GemmSeconds(GemmShape{f.m / ub.input_grad, f.k, f.n, f.batch}, ub.input_grad_sm_margin) +
                 t.weight_grad_s;
  // SDPA's FlashAttention-2: the backward at its published ratio to the forward, not as two GEMMs.
  if (flash2) {
    t.backward_s = kFlashAttention2BackwardRatio * t.forward_s;
    t.weight_grad_s = t.backward_s / 2;
  }
  if (g.mma_sync) AsTritonKernel(gpu, t);
  ScaleTimes(head_dim_scale, t);
  // torchao's Float8Linear casts in BF16 GEMMs' place; an FP8 model's GPU differs from its 16-bit one.
  if (c.fp8_dynamic_casts && g.fp8 && !g.per_expert && &model_gpu.SixteenBit() != &model_gpu) {
    // Under sequence parallelism torchtitan's Float8ColwiseParallel / PrepareFloat8ModuleInput cast a
    // column-parallel input once for its linears, on this GPU's shard of the tokens, before the gather.
    const bool gathered_fp8 = g.split == TpSplit::kColumns && c.sequence_parallel && c.tensor_parallel > 1;
    const double inputs = f.m * f.k * f.batch / (gathered_fp8 ? c.tensor_parallel : 1);
    t.casts = DynamicFp8Casts(gathered_fp8 ? 1 : g.linears, inputs, f.k * f.n * f.batch, f.m * f.n * f.batch);
  } else if (!c.fp8_dynamic_casts && g.fp8 && g.grouped && &model_gpu.SixteenBit() != &model_gpu) {
    // Transformer Engine's grouped linears cast their inputs and output gradients explicitly; the padding
    // to 16 tokens an expert copies FC1's input and FC2's output.
    const bool fc1 = g.split == TpSplit::kColumns;
    t.casts = TeGroupedFp8Casts(f.m * f.k * f.batch, f.m * f.n * f.batch, fc1, !fc1);
  }
  return t;
}

// The per-GPU shares of a microbatch on a stage.
struct StageShares {
  double tp = 1, ep = 1, etp = 1, experts = 0;
  double b = 0;                 // local samples (the microbatch over the data-parallel replicas)
  double bt = 0;                // samples' worth of tokens: context parallelism keeps 1/CP of each sample's tokens,
                                // and with them 1/CP of every activation, memory-bound pass and TP collective
  bool sp = false;              // sequence parallelism (nothing without TP)
  double replicated_split = 1;  // how the TP-replicated parts are split: TP with SP, else not at all
};

StageShares SharesOf(const ModelCost& model, const StageConfig& c) {
  StageShares s;
  s.tp = c.tensor_parallel;
  s.ep = c.expert_parallel;
  s.etp = c.ExpertTensorParallel();
  s.experts = model.num_experts();
  s.b = static_cast<double>(c.micro_batch_size) / c.data_parallel;
  s.bt = s.b / c.context_parallel;
  s.sp = c.sequence_parallel && c.tensor_parallel > 1;
  s.replicated_split = s.sp ? s.tp : 1;
  return s;
}

// The GEMMs of a layer's block linears (Gemm::te_linear) in the layer's order, each beside the
// collective of its own (StageCollective::beside_gemm_s): the column-parallel linears' (QKV, FC1)
// forward and weight-gradient GEMMs, the row-parallel linears' (projection, FC2) forward and
// input-gradient GEMMs.
struct LinearGemms {
  std::vector<double> column_forward_s, column_weight_grad_s, row_forward_s, row_input_grad_s;
  void Add(const Gemm& g, const GemmTimes& t) {
    if (g.te_linear == TeLinear::kQkv || g.te_linear == TeLinear::kFc1) {
      column_forward_s.push_back(t.forward_s);
      column_weight_grad_s.push_back(t.weight_grad_s);
    } else if (g.te_linear == TeLinear::kProj || g.te_linear == TeLinear::kFc2) {
      row_forward_s.push_back(t.forward_s);
      row_input_grad_s.push_back(t.backward_s - t.weight_grad_s);
    }
  }
};

// One layer's forward and backward on one GPU, recomputation included.
struct LayerTimes {
  double forward_s = 0, backward_s = 0;
  double forward_flop = 0, backward_flop = 0;
  double model_flop = 0;      // forward + backward without recomputation (MFU counts these)
  double core_forward_s = 0;  // the attention core's share of the forward (GEMMs and memory passes)
  double core_memory_s = 0;
  double column_weight_grad_s = 0;  // weight-gradient GEMMs of column-parallel linears
  LinearGemms linears;              // what the layer's userbuffers collectives run beside
};

// Whether selective recompute reruns the layer's attention core: a recomputable layer's, or the head's
// multi-token prediction blocks' (LayerCost::attention_core_recomputable).
bool SelectivelyRecomputed(const LayerCost& layer, spec::Recompute recompute) {
  return recompute == spec::Recompute::kSelective && (layer.recomputable || layer.attention_core_recomputable);
}

// PyTorch's ring attention (Plan.pytorch_context_parallel, CP > 1) around its SDPA calls, per GPU: the
// eager ops of _templated_ring_attention and its backward (torch 1963fc8,
// torch/distributed/tensor/experimental/_attention.py), at HBM bandwidth. With O the output's, Q the
// queries' and KV the keys' and values' 16-bit bytes on this GPU and n = CP - 1 later steps:
// - forward: each later step concatenates K and V for the rotater (2 KV) and merges its output into
//   the FP32 running output (_SDPAMerger, convert_to_f32): the output cast to FP32 (3 O), then
//   out - block_out, the sigmoid-weighted product, and the subtraction (16 O in FP32); a step that
//   takes the second half of the queries (load balancing, i > rank: half the ranks' steps) does half
//   of that and copies the whole FP32 output back together (_partial_update's torch.cat, 4 O): 19 O or
//   13.5 O, 16.25 O on average. The first step's cast and the final cast back add 3 O each.
// - backward: FP32 zeros for dQ, dK and dV (2 Q + 2 KV); each of the CP steps adds its dK and dV into
//   the FP32 accumulators (5 KV; a load-balanced half step adds a half and re-concatenates: 6.5 KV,
//   5.75 on average after the first), concatenates them for the next rank (4 KV) and adds dQ (5 Q,
//   5.75 on average after the first); each later step concatenates K and V again (2 KV); the final
//   casts back to 16 bits 3 Q + 3 KV. The logsumexp's terms (a 64th of O at head dimension 128) are left out.
struct RingMergeBytes {
  double forward = 0, backward = 0;
  double forward_kernels = 0, backward_kernels = 0;
};
RingMergeBytes RingAttentionMergeBytes(const LayerCost& layer, const StageConfig& c, const StageShares& s) {
  RingMergeBytes m;
  // An all-to-all (head split) is not a ring, whichever framework runs it.
  if (!c.pytorch_context_parallel || c.cp_comm == spec::ContextParallelComm::kAllToAll || c.context_parallel <= 1 ||
      layer.context_bytes_per_sample <= 0) {
    return m;
  }
  const double n = c.context_parallel - 1;
  const double share = s.bt / s.tp;
  const double o = layer.context_bytes_per_sample * share;
  const double q = layer.query_bytes_per_sample * share;
  const double kv = (c.attention_repeats_kv ? std::max(layer.kv_bytes_per_sample, layer.repeated_kv_bytes_per_sample)
                                            : layer.kv_bytes_per_sample) *
                    share;
  m.forward = 6 * o + n * (16.25 * o + 2 * kv);
  m.backward = 2 * q + 2 * kv + 5 * kv + 4 * kv + 5 * q + 3 * q + 3 * kv + n * (2 * kv + 5.75 * kv + 4 * kv + 5.75 * q);
  // Kernels: a step's concatenation, cast and the merge's four ops on the output and four on the
  // logsumexp; the backward's step adds two accumulations, a concatenation and dQ's addition.
  m.forward_kernels = 3 + 10 * n;
  m.backward_kernels = 3 + 4 + 2 + (n + 1) * 4 + 2 * n;
  return m;
}

// Plan.fp32_logits_cross_entropy: what the head's loss, priced pass by pass (LayerCost::fp32_loss_*), adds
// to the forward and the backward over the fused loss's traffic, for this GPU's `share` of the samples.
std::pair<double, double> Fp32LossSeconds(const LayerCost& layer, double share, const GpuCompute& gpu) {
  if (layer.fp32_loss_kernels <= 0) return {0, 0};
  const double fused = layer.memory_bytes_sharded_per_sample * share;
  return {gpu.MemorySeconds(layer.fp32_loss_forward_bytes_per_sample * share, layer.fp32_loss_kernels) -
              gpu.MemorySeconds(fused),
          gpu.MemorySeconds(layer.fp32_loss_backward_bytes_per_sample * share, layer.fp32_loss_kernels) -
              gpu.MemorySeconds(2 * fused)};
}

// Plan.layer_norm_weight_grad_pass: apex's and PyTorch's LayerNorm backward read the output gradient and the
// input once for the scale and bias gradients and again for the input gradient (writing it): 5 passes of
// each norm's input, where twice the forward's read and write counts 4. One more pass at the HBM rate, no
// kernel more (the rule's two launches; apex's small reduction kernel is left out).
double NormWeightGradPassSeconds(const LayerCost& layer, const StageConfig& c, const StageShares& s,
                                 const GpuCompute& gpu) {
  if (!c.layer_norm_weight_grad_pass) return 0;
  return gpu.MemorySeconds(layer.norm_input_bytes_per_sample * s.bt / s.replicated_split);
}

// The unfused softmax region at the GPU's unfused_softmax_speed (ComputeEfficiency): what two passes over the
// scores take beyond the memory-bound rate. The region makes four, masked_fill_'s two (the unfused traffic) and
// the softmax's own two (the same bytes, counted in the attention core); the backward doubles them.
double SoftmaxPassesExtraSeconds(const LayerCost& layer, const StageConfig& c, const StageShares& s,
                                 const GpuCompute& gpu) {
  if (!c.unfused.masked_softmax) return 0;
  return gpu.UnfusedSoftmaxExtraSeconds(layer.unfused.masked_softmax.bytes_sharded_per_sample * s.bt / s.tp);
}

LayerTimes TimeLayer(const LayerCost& layer, const StageConfig& c, const StageShares& s, const GpuCompute& gpu) {
  const bool full = layer.recomputable && c.recompute == spec::Recompute::kFull;
  const bool selective = SelectivelyRecomputed(layer, c.recompute);
  const double backward_ratio =
      layer.forward_flop_per_sample > 0 ? layer.backward_flop_per_sample / layer.forward_flop_per_sample : 0;
  double gemm_s = 0, gemm_bwd_s = 0, core_gemm_s = 0, flop = 0, core_flop = 0, column_wgrad_s = 0;
  double sac_gemm_s = 0, sac_flop = 0;  // what the per-op policy recomputes of the GEMMs
  Fp8Casts casts;
  LinearGemms linears;
  for (const Gemm& g : layer.gemms) {
    const GemmTimes t = TimeGemm(g, s.b, c, s.experts, backward_ratio, gpu);
    linears.Add(g, t);
    gemm_s += t.forward_s;
    sac_gemm_s += g.op_sac_recomputed * t.forward_s;
    sac_flop += g.op_sac_recomputed * t.flop;
    casts.forward_amax_bytes += t.casts.forward_amax_bytes;
    casts.forward_cast_bytes += t.casts.forward_cast_bytes;
    casts.forward_kernels += t.casts.forward_kernels;
    casts.forward_amax_kernels += t.casts.forward_amax_kernels;
    casts.backward_bytes += t.casts.backward_bytes;
    casts.backward_kernels += t.casts.backward_kernels;
    gemm_bwd_s += t.backward_s;
    if (g.split == TpSplit::kColumns && !g.attention_core && !g.per_expert) column_wgrad_s += t.weight_grad_s;
    flop += t.flop;
    if (g.attention_core) {
      core_gemm_s += t.forward_s;
      core_flop += t.flop;
    }
  }
  // Eager PyTorch adds the unfused ops' traffic and kernels (StageConfig::eager_kernels).
  const double eager = c.eager_kernels ? 1 : 0;
  // Megatron's kernels that run unfused add their passes (StageConfig::unfused).
  const UnfusedTraffic unfused = layer.unfused.Of(c.unfused);
  // repeat_kv copies K and V to every query head (read them, write the copies; the backward sums them).
  const bool repeats = c.attention_repeats_kv && layer.repeated_kv_bytes_per_sample > layer.kv_bytes_per_sample;
  const double repeat_bytes = repeats ? layer.kv_bytes_per_sample + layer.repeated_kv_bytes_per_sample : 0;
  const double softmax_extra_s = SoftmaxPassesExtraSeconds(layer, c, s, gpu);  // x2: masked_fill_'s and softmax's
  const double memory_fwd_s =
      2 * softmax_extra_s +
      gpu.MemorySeconds((layer.memory_bytes_replicated_per_sample + eager * layer.eager_bytes_replicated_per_sample +
                         unfused.bytes_replicated_per_sample) *
                                s.bt / s.replicated_split +
                            (layer.memory_bytes_sharded_per_sample + eager * layer.eager_bytes_sharded_per_sample +
                             unfused.bytes_sharded_per_sample + repeat_bytes) *
                                s.bt / s.tp,
                        layer.memory_kernels + eager * layer.eager_kernels + unfused.kernels + (repeats ? 2 : 0));
  // FP8 casts: the amax reductions and casts of the forward; the backward's casts. The per-op policy
  // saves the amax (torchtitan's _save_list keeps abs and max) and recomputes the casts.
  const double cast_amax_s = gpu.MemorySeconds(casts.forward_amax_bytes, casts.forward_amax_kernels);
  const double cast_fwd_s =
      gpu.MemorySeconds(casts.forward_cast_bytes, casts.forward_kernels - casts.forward_amax_kernels);
  const double cast_bwd_s = gpu.MemorySeconds(casts.backward_bytes, casts.backward_kernels);
  // The dispatched copies a GPU holds: its own tokens' k copies on average, gathered over its expert-TP
  // group. They are sorted only when the GPU holds several experts: two copy kernels, and two in the
  // backward (a sort's gradient is the inverse sort, not twice the traffic).
  const bool sorts_dispatched = layer.memory_bytes_dispatched_per_sample > 0 && s.experts > s.ep;
  const double sort_s =
      sorts_dispatched ? gpu.MemorySeconds(layer.memory_bytes_dispatched_per_sample * s.bt * s.etp / s.tp, 2) : 0;
  const double core_bytes = layer.memory_bytes_attention_core_per_sample * s.bt / s.tp;
  LayerTimes t;
  t.core_memory_s = gpu.MemorySeconds(core_bytes, core_bytes > 0 ? 2 : 0) + softmax_extra_s;
  t.core_forward_s = core_gemm_s + t.core_memory_s;
  t.column_weight_grad_s = column_wgrad_s;
  t.linears = std::move(linears);
  const RingMergeBytes ring = RingAttentionMergeBytes(layer, c, s);
  const double ring_fwd_s = gpu.MemorySeconds(ring.forward, ring.forward_kernels);
  t.forward_s = gemm_s + memory_fwd_s + sort_s + cast_amax_s + cast_fwd_s + ring_fwd_s;
  t.forward_flop = flop;
  // What the unfused kernels' backward moves beyond twice their forward (masked_fill_ on a view).
  const double unfused_bwd_s =
      gpu.MemorySeconds(unfused.backward_bytes_sharded_per_sample * s.bt / s.tp, unfused.backward_kernels);
  t.backward_s = gemm_bwd_s + 2 * memory_fwd_s + unfused_bwd_s + sort_s + cast_bwd_s +
                 gpu.MemorySeconds(ring.backward, ring.backward_kernels);
  t.backward_s += NormWeightGradPassSeconds(layer, c, s, gpu);
  if (c.fp32_logits_cross_entropy) {
    const auto [loss_fwd_s, loss_bwd_s] = Fp32LossSeconds(layer, s.bt / s.tp, gpu);
    t.forward_s += loss_fwd_s;
    t.backward_s += loss_bwd_s;
  }
  t.backward_flop = backward_ratio * flop;
  if (layer.forward_flop_per_sample <= 0 && layer.backward_flop_per_sample > 0) {
    const double bwd = layer.backward_flop_per_sample * s.bt / s.tp;
    t.backward_s += gpu.GemmSeconds(bwd);
    t.backward_flop += bwd;
  }
  t.model_flop = flop + t.backward_flop;
  if (full) {
    t.backward_s += t.forward_s;
    t.backward_flop += flop;
  } else if (selective && c.op_selective_recompute && layer.recomputable) {
    // torchtitan's per-op policy: every second matmul and every elementwise op again, not the attention.
    t.backward_s += sac_gemm_s + memory_fwd_s + cast_fwd_s;
    t.backward_flop += sac_flop;
  } else if (selective) {
    t.backward_s += t.core_forward_s;
    t.backward_flop += core_flop;
  }
  return t;
}

// Context parallelism's key/value ring of layer `i`, hidden behind its attention core.
ContextParallelAttention CpAttentionOf(const LayerCost& layer, int i, const LayerTimes& t, const StageConfig& c,
                                       const StageShares& s, const GpuCompute& gpu) {
  const double backward_ratio =
      layer.forward_flop_per_sample > 0 ? layer.backward_flop_per_sample / layer.forward_flop_per_sample : 0;
  double core_bwd_s = 2 * t.core_memory_s;
  for (const Gemm& g : layer.gemms) {
    if (g.attention_core) core_bwd_s += TimeGemm(g, s.b, c, s.experts, backward_ratio, gpu).backward_s;
  }
  // torchtitan's model repeats K and V before SDPA, so context parallelism exchanges the copies.
  const double kv = c.attention_repeats_kv ? std::max(layer.kv_bytes_per_sample, layer.repeated_kv_bytes_per_sample)
                                           : layer.kv_bytes_per_sample;
  return {i,
          RoundUpBytes(kv * s.bt / s.tp),
          RoundUpBytes(layer.query_bytes_per_sample * s.bt / s.tp),
          RoundUpBytes(layer.context_bytes_per_sample * s.bt / s.tp),
          t.core_forward_s,
          core_bwd_s,
          (layer.recomputable && c.recompute != spec::Recompute::kNone) || SelectivelyRecomputed(layer, c.recompute)};
}

// Whether `layer` begins a transformer block (what Megatron's --recompute-num-layers counts): a whole
// block, the attention half of one, or a recomputable layer of a layer list.
bool StartsBlock(const LayerCost& layer) {
  return layer.recomputable &&
         (layer.kind == LayerKind::kBlock || layer.kind == LayerKind::kAttention || layer.kind == LayerKind::kCustom);
}

// Activations kept for the backward pass (Korthikanti et al. 2022), and the working set a fully
// recomputed layer rebuilds.
struct KeptActivation {
  double kept = 0, working = 0;
};

KeptActivation ActivationOf(const LayerCost& layer, const StageConfig& c, const StageShares& s) {
  const ActivationBytes& a = layer.activation;
  const double sharded = a.tp_sharded * s.bt / s.tp + a.expert_tokens * s.bt / s.tp * s.etp;
  const double kept_all = a.tp_replicated * s.bt / s.replicated_split + sharded + a.attention_core * s.bt / s.tp;
  if (layer.recomputable && c.recompute == spec::Recompute::kFull) {
    return {std::min(kept_all, a.layer_input * s.bt / s.replicated_split), kept_all};
  }
  if (SelectivelyRecomputed(layer, c.recompute)) {
    return {a.tp_replicated * s.bt / s.replicated_split + sharded, 0};
  }
  return {kept_all, 0};
}

int GroupSize(CollectiveGroup group, const StageConfig& c) {
  switch (group) {
    case CollectiveGroup::kTensor: return c.tensor_parallel;
    case CollectiveGroup::kExpert: return c.expert_parallel;
    case CollectiveGroup::kExpertTensor: return c.ExpertTensorParallel();
    case CollectiveGroup::kExpertAndTensor: return c.ExpertTensorParallel() * c.expert_parallel;
    case CollectiveGroup::kStage: return c.tensor_parallel * c.context_parallel * c.data_parallel;
  }
  return 1;
}

// How many times the layer's forward runs (Plan.block_forward_passes): a transformer block's (a recomputable
// layer's) that many times, every other layer's once; and once more, every layer's, for the reference model
// of preference training (Plan.reference_policy: its forward over the same microbatch, nothing kept).
int ForwardPasses(const LayerCost& layer, const StageConfig& c) {
  return (layer.recomputable ? std::max(1, c.block_forward_passes) : 1) + (c.reference_forward ? 1 : 0);
}

// Whether torchtitan's per-op policy recomputes the layer (Plan.op_selective_recompute on a selective stage).
bool OpRecomputesGathers(const LayerCost& layer, const StageConfig& c) {
  return c.op_selective_recompute && c.recompute == spec::Recompute::kSelective && layer.recomputable;
}

// Plan.fp8_current_scaling: Transformer Engine's current scaling all-reduces, over the TP group and on the
// compute stream, the amax of each FP8 tensor its TP ranks gather, before casting it (TE 2.9's
// _customize_quantizers_float8_current_scaling: with sequence parallelism, a column-parallel linear's
// input quantizer and a row-parallel linear's grad_output quantizer get with_amax_reduction and the TP
// group). Those are the tensors of the userbuffers gathers around TE's block linears: each forward
// all-gather of a column-parallel input (QKV, FC1) and, for each forward reduce-scatter of a
// row-parallel output (projection, FC2), the backward's gather of its output gradient. One 4-byte MAX
// all-reduce each, not overlapped (the cast waits for it). A full recomputation reruns the forward's:
// in its second forward phase TE swaps only delayed scaling's saved meta back in (`prepare_forward`,
// transformer_engine/pytorch/module/base.py at d0067d0), and current scaling's quantizers compute and
// reduce each amax again.
constexpr int64_t kAmaxBytes = 4;  // one FP32 amax

void AddAmaxReductions(const LayerCost& layer, int i, int passes, bool full_recompute, const StageShares& s,
                       StageCost* cost) {
  if (!s.sp) return;
  int32_t forward = 0, backward = 0;
  for (const LayerCollective& lc : layer.collectives_seq_par) {
    if (!lc.userbuffers || lc.group != CollectiveGroup::kTensor) continue;
    if (lc.op == CollectiveOp::kAllGather) forward += lc.forward_count;
    if (lc.op == CollectiveOp::kReduceScatter) backward += lc.forward_count;
  }
  if (forward > 0) {
    cost->forward_collectives.push_back(
        {CollectiveOp::kAllReduce, CollectiveGroup::kTensor, kAmaxBytes, passes * forward, i, false, false});
  }
  if (backward > 0) {
    cost->backward_collectives.push_back(
        {CollectiveOp::kAllReduce, CollectiveGroup::kTensor, kAmaxBytes, backward, i, false, false});
  }
  if (full_recompute && forward > 0) {
    cost->backward_collectives.push_back(
        {CollectiveOp::kAllReduce, CollectiveGroup::kTensor, kAmaxBytes, forward, i, false, false, 0, true});
  }
}

// Transformer Engine's delayed scaling (an FP8 model without Plan.fp8_current_scaling or torchao's casts,
// Megatron-LM's default `--fp8-recipe delayed`): a chunk's blocks run in one fp8_autocast
// (TransformerBlock.forward, megatron/core/transformer/transformer_block.py at core_v0.11.0), whose exit
// all-reduces (MAX), in one call, the amaxes the forward's casts recorded, over the amax reduction group,
// every TP x CP x DP GPU of the stage (CollectiveGroup::kStage), before it updates the scales; the
// backward does the same with the gradients' amaxes when its last module's backward ends. TE v1.13
// fp8.py: fp8_autocast_exit -> reduce_and_update_fp8_tensors(forward=True) ->
// reduce_tensor_across_group_op_max (torch.distributed.all_reduce, async_op=False, so on the compute
// stream), and reduce_and_update_fp8_tensors(forward=False) from the backward of linear.py,
// layernorm_linear.py and grouped_linear.py. One all-reduce a pass of the chunk, of one FP32 amax for
// each of the three forward FP8 slots (input, weight, output) and two backward slots (output and input
// gradients) of each FP8 GEMM, every local expert its own. Per microbatch, not per step: the history
// only delays which amaxes set the scale. A latency-bound collective: 32 us over 16 GPUs of two DGX H100
// nodes (`hetsim collective --op all-reduce --bytes 256 --gpus 0-15`).
void AddDelayedScalingAmaxReductions(const ModelCost& model, const StageConfig& c, StageCost* cost) {
  if (model.dtype() != spec::DType::kFp8 || c.fp8_current_scaling || c.fp8_dynamic_casts) return;
  if (c.tensor_parallel * c.context_parallel * c.data_parallel <= 1) return;
  double gemms = 0;
  int first_block = -1, last_block = -1;
  for (int i = c.first_layer; i < c.first_layer + c.num_layers; ++i) {
    for (const Gemm& g : model.layer(i).gemms) {
      if (!g.fp8 || g.attention_core) continue;
      gemms += g.per_expert ? model.num_experts() / c.expert_parallel : 1;
      if (first_block < 0) first_block = i;
      last_block = i;
    }
  }
  if (gemms <= 0) return;
  const auto bytes = [&](int slots) { return RoundUpBytes(gemms * slots * static_cast<double>(kAmaxBytes)); };
  cost->forward_collectives.push_back(
      {CollectiveOp::kAllReduce, CollectiveGroup::kStage, bytes(3), 1, last_block, false, false});
  cost->backward_collectives.push_back(
      {CollectiveOp::kAllReduce, CollectiveGroup::kStage, bytes(2), 1, first_block, false, false});
}

// The next `count` GEMMs of `from` (from `next` on), each `passes` times in a row, for a userbuffers
// collective's calls (StageCollective::beside_gemm_s); fewer when the list runs out.
std::vector<double> BesideGemms(const std::vector<double>& from, size_t& next, int count, int passes) {
  std::vector<double> beside;
  for (int j = 0; j < count && next < from.size(); ++j, ++next) beside.insert(beside.end(), passes, from[next]);
  return beside;
}

// Which of the sequence-parallel all-gathers around the block linears move FP8, one byte an element
// instead of the model's two, in an FP8 model: torchao's Float8ColwiseParallel casts a block linear's
// input before its forward gather (StageConfig::fp8_dynamic_casts); Transformer Engine's userbuffers
// (Plan.tp_comm_overlap) give every all-gather overlap an FP8 buffer, the forward's gathered inputs
// (qkv_fprop, fc1_fprop) and the backward's gathered output gradients (proj_dgrad, fc2_dgrad):
// `initialize_ub` in transformer_engine/pytorch/module/base.py (v2.9) sets `fp8_buf` for every name of
// `layers_all_gather_overlap`, and `add_ub` makes an FP8 run's buffer uint8.
struct Fp8Gathers {
  bool forward = false, backward = false;
};
Fp8Gathers Fp8GathersOf(const spec::DType dtype, const StageConfig& c) {
  if (dtype != spec::DType::kFp8) return {};
  const bool userbuffers = c.tp_comm_overlap && !c.pytorch_async_tp && !c.fp8_dynamic_casts;
  return {c.fp8_dynamic_casts || userbuffers, userbuffers};
}

// The layer's collectives, with absolute per-rank bytes for the local microbatch; `fp8_gathers` halves
// the gathers that move FP8 (Fp8GathersOf). `fp8_amax`: the amax reductions of Transformer Engine's
// current scaling (AddAmaxReductions). `linears`: the GEMMs the userbuffers collectives run beside.
// `layer_recompute` is the layer's own recomputation (Megatron's block method leaves some blocks without).
void AddLayerCollectives(const LayerCost& layer, int i, const StageConfig& c, spec::Recompute layer_recompute,
                         const StageShares& s, Fp8Gathers fp8_gathers, bool fp8_amax, const LinearGemms& linears,
                         StageCost* cost) {
  // A full recomputation reruns the block's forward in the backward, collectives included: Megatron-LM's
  // CheckpointFunction.backward calls the layers' forward again (megatron/mpu/random.py at v2.5), whose
  // row-parallel linears all-reduce (mpu/mappings.py); PyTorch's checkpoint reruns DTensor's collectives, which
  // AOTAutograd's partitioner recomputes inside a user's AC region (force_save_collectives). Each rerun runs
  // beside its recomputed GEMM, as the forward's does.
  const bool full_recompute = layer.recomputable && layer_recompute == spec::Recompute::kFull;
  std::vector<StageCollective> recomputed;
  const int passes = ForwardPasses(layer, c);
  size_t column_forward = 0, row_forward = 0, row_input_grad = 0, column_weight_grad = 0;
  for (const LayerCollective& lc : s.sp ? layer.collectives_seq_par : layer.collectives) {
    const int group_size = GroupSize(lc.group, c);
    if (group_size <= 1) continue;
    double buffer = lc.bytes_per_sample * s.bt;
    if (lc.times_group_size) buffer *= group_size;
    if (lc.sequence_split && s.sp) buffer /= s.tp;
    const int64_t bytes = RoundUpBytes(buffer);
    if (lc.forward_count > 0) {
      const bool fp8 = fp8_gathers.forward && s.sp && lc.op == CollectiveOp::kAllGather && lc.userbuffers;
      const int64_t forward_bytes = fp8 ? RoundUpBytes(buffer / 2) : bytes;
      StageCollective forward = OfLayerCollective(lc, forward_bytes, passes * lc.forward_count, i);
      forward.fc2_count = passes * lc.fc2_forward_count;
      cost->forward_collectives.push_back(std::move(forward));
      if (s.sp && lc.userbuffers && lc.group == CollectiveGroup::kTensor) {
        const bool gather = lc.op == CollectiveOp::kAllGather;
        cost->forward_collectives.back().beside_gemm_s =
            BesideGemms(gather ? linears.column_forward_s : linears.row_forward_s,
                        gather ? column_forward : row_forward, lc.forward_count, passes);
      }
      // torchtitan's per-op policy saves reduce-scatters' outputs, not all-gathers': the backward's
      // recomputation gathers the block's inputs again.
      if (OpRecomputesGathers(layer, c) && lc.op == CollectiveOp::kAllGather && lc.userbuffers) {
        cost->backward_collectives.push_back(OfLayerCollective(lc, forward_bytes, lc.forward_count, i));
      }
      if (full_recompute) {
        StageCollective rerun = OfLayerCollective(lc, forward_bytes, lc.forward_count, i);
        rerun.fc2_count = lc.fc2_forward_count;
        rerun.recomputed = true;
        recomputed.push_back(std::move(rerun));
        // The forward's GEMMs, once each (the forward lists each `passes` times in a row).
        const std::vector<double>& forward = cost->forward_collectives.back().beside_gemm_s;
        for (size_t j = 0; j < forward.size(); j += passes) recomputed.back().beside_gemm_s.push_back(forward[j]);
      }
    }
    if (lc.backward_count > 0) {
      const bool fp8 = fp8_gathers.backward && s.sp && lc.op == CollectiveOp::kAllGather && lc.userbuffers;
      StageCollective backward = OfLayerCollective(lc, fp8 ? RoundUpBytes(buffer / 2) : bytes, lc.backward_count, i);
      backward.async_backward = lc.async_backward;
      cost->backward_collectives.push_back(std::move(backward));
      if (s.sp && lc.userbuffers && lc.group == CollectiveGroup::kTensor) {
        const bool gather = lc.op == CollectiveOp::kAllGather;
        cost->backward_collectives.back().beside_gemm_s =
            BesideGemms(gather ? linears.row_input_grad_s : linears.column_weight_grad_s,
                        gather ? row_input_grad : column_weight_grad, lc.backward_count, 1);
      }
    }
  }
  if (fp8_amax) AddAmaxReductions(layer, i, passes, full_recompute, s, cost);
  // The list is reversed once every layer is in: the recomputation runs before the layer's backward.
  cost->backward_collectives.insert(cost->backward_collectives.end(), recomputed.rbegin(), recomputed.rend());
}

// Plan.dtensor_sequence_copies: DTensor's tensor-parallel collectives on the sequence dim (Shard(1) of
// torchtitan's [batch, sequence, hidden] activations) gather and scatter on dim 0 and rearrange the
// buffer with torch.cat(torch.chunk(...)) (all_gather_tensor / reduce_scatter_tensor in
// torch/distributed/_functional_collectives.py): a read and a write of the whole buffer on the compute
// stream, one kernel, per call of every sequence-parallel all-gather and reduce-scatter around the block
// linears. PyTorch's async TP matches the gather's and the scatter's chunk and cat in its fused
// patterns (find_all_gather_patterns / find_reduce_scatter_patterns in
// torch/_inductor/fx_passes/micro_pipeline_tp.py): no copy where it fuses them, the forward's and a full
// recomputation's reruns (HiddenByTpOverlap); the backward's own and the per-op policy's regathers copy.
// The buffers are the collectives' (AddLayerCollectives): FP8 for the gathers that move FP8.
struct SequenceCopies {
  double forward_bytes = 0, forward_kernels = 0;
  double backward_bytes = 0, backward_kernels = 0;
};
SequenceCopies DTensorSequenceCopies(const LayerCost& layer, const StageConfig& c, spec::Recompute layer_recompute,
                                     const StageShares& s, Fp8Gathers fp8_gathers) {
  SequenceCopies out;
  if (!c.dtensor_sequence_copies || !s.sp || c.tensor_parallel <= 1) return out;
  const bool fused = c.tp_comm_overlap && c.pytorch_async_tp;
  const bool full_recompute = layer.recomputable && layer_recompute == spec::Recompute::kFull;
  for (const LayerCollective& lc : layer.collectives_seq_par) {
    const bool gather = lc.op == CollectiveOp::kAllGather;
    if (!lc.userbuffers || lc.group != CollectiveGroup::kTensor) continue;
    if (!gather && lc.op != CollectiveOp::kReduceScatter) continue;
    double buffer = lc.bytes_per_sample * s.bt;
    if (lc.times_group_size) buffer *= c.tensor_parallel;
    if (lc.sequence_split) buffer /= s.tp;
    const double forward = gather && fp8_gathers.forward ? buffer / 2 : buffer;
    const double backward = gather && fp8_gathers.backward ? buffer / 2 : buffer;
    // Copies in the backward: its own calls, the per-op policy's regathers, an unfused full recomputation's.
    const double regathers = (OpRecomputesGathers(layer, c) && gather ? 1 : 0) + (full_recompute && !fused ? 1 : 0);
    if (!fused) {
      out.forward_bytes += 2 * forward * lc.forward_count;
      out.forward_kernels += lc.forward_count;
    }
    out.backward_bytes += 2 * (backward * lc.backward_count + regathers * forward * lc.forward_count);
    out.backward_kernels += lc.backward_count + regathers * lc.forward_count;
  }
  return out;
}

// Pass times (measured ones win), boundary transfers and model states, once the layers are summed.
void FinishStageCost(const ModelCost& model, const StageConfig& c, const GpuCompute& gpu, const StageShares& s,
                     double forward_s, double backward_s, double dense_params, double expert_params, StageCost* cost) {
  // The host's work around each pass (schedule step, pipeline send/receive set-up).
  cost->forward_time = SecondsToTime(forward_s + gpu.pass_overhead_s());
  cost->backward_time = SecondsToTime(backward_s + gpu.pass_overhead_s());
  if (c.measured_forward_ms > 0) {
    cost->forward_time = MillisecondsToTime(c.measured_forward_ms);
    cost->forward_measured = true;
  }
  if (c.measured_backward_ms > 0) {
    cost->backward_time = MillisecondsToTime(c.measured_backward_ms);
    cost->backward_measured = true;
  }

  const LayerCost& last = model.layer(c.first_layer + c.num_layers - 1);
  cost->boundary_bytes_per_replica = RoundUpBytes(last.output_bytes_per_sample * s.b);
  cost->boundary_bytes_per_microbatch =
      RoundUpBytes(last.output_bytes_per_sample * static_cast<double>(c.micro_batch_size));

  const int element = model.element_bytes();
  const int gradient = GradientBytes(model.dtype(), c.grad_reduce_in_fp32);
  cost->grad_sync_bytes = RoundUpBytes(dense_params * gradient);
  cost->expert_grad_sync_bytes = RoundUpBytes(expert_params * gradient);
  cost->param_sync_bytes = RoundUpBytes(dense_params * element);
  cost->expert_param_sync_bytes = RoundUpBytes(expert_params * element);

  // ZeRO shards dense states over the DP group (DP x CP ranks: Megatron's distributed optimizer) and
  // expert states over the GPUs that hold the same expert shard (TP x CP x DP / (ETP x EP) of them; a
  // mixed stage's every group's GPUs over ETP x EP, StageParallelism::expert_data_parallel).
  const int dense_group = c.data_parallel * c.context_parallel;
  const int expert_group = c.expert_data_parallel > 0 ? c.expert_data_parallel
                                                      : c.tensor_parallel * c.context_parallel * c.data_parallel /
                                                            (c.ExpertTensorParallel() * c.expert_parallel);
  auto states = [&](int zero_stage) {
    const StageMemory dense =
        ZeroShardedModelStates(dense_params, model.dtype(), zero_stage, dense_group, c.grad_reduce_in_fp32);
    const StageMemory expert =
        ZeroShardedModelStates(expert_params, model.dtype(), zero_stage, expert_group, c.grad_reduce_in_fp32);
    StageMemory m;
    m.param_bytes = dense.param_bytes + expert.param_bytes;
    m.grad_bytes = dense.grad_bytes + expert.grad_bytes;
    m.optimizer_bytes = dense.optimizer_bytes + expert.optimizer_bytes;
    return m;
  };
  const StageMemory held = states(c.zero_stage);
  cost->memory.param_bytes = held.param_bytes;
  cost->memory.grad_bytes = held.grad_bytes;
  cost->memory.optimizer_bytes = held.optimizer_bytes;
  // Every ZeRO stage steps a 1/N shard of everything, as ZeRO-3 holds it.
  cost->optimizer_shard = states(c.zero_stage >= 1 ? 3 : 0);
}

}  // namespace

double ReferenceSwapSeconds(double weight_bytes, const GpuCompute& gpu) {
  constexpr int kCopies = 3;  // the policy's weights out, the reference's in, the policy's back in
  return gpu.pinned_copy_bytes_per_s() > 0 ? kCopies * weight_bytes / gpu.pinned_copy_bytes_per_s() : 0;
}

double DenseParamsPerGpu(const LayerCost& layer, double tp) {
  const double replicated = static_cast<double>(layer.tp_replicated_param_count);
  return (static_cast<double>(layer.param_count - layer.expert_param_count) - replicated) / tp + replicated;
}

double DenseParamsOfLayers(const ModelCost& model, int first, int num, int tp) {
  double dense_params = 0;
  bool has_embedding = false;
  for (int i = first; i < first + num; ++i) {
    const LayerCost& layer = model.layer(i);
    if (layer.kind == LayerKind::kEmbedding) has_embedding = true;
    dense_params += DenseParamsPerGpu(layer, tp);
  }
  const LayerCost& last = model.layer(first + num - 1);
  if (last.tied_with_embedding && !has_embedding) dense_params += static_cast<double>(last.tied_param_count) / tp;
  return dense_params;
}

int64_t DenseGradSyncBytes(const ModelCost& model, int first, int num, int tp, bool fp32_gradients) {
  return RoundUpBytes(DenseParamsOfLayers(model, first, num, tp) * GradientBytes(model.dtype(), fp32_gradients));
}

namespace {

// Time a pass spends at one of its layers beyond the layer's own work (host work, idle synchronizations):
// charged to that layer and to the pass, so the layers still sum to the pass.
void ChargeLayer(double seconds, double& layer_s, double& pass_s) {
  layer_s += seconds;
  pass_s += seconds;
}

// Plan.host_bound_blocks: an eager framework's host issues a block's operators one after another and a
// kernel cannot start before it is issued, so each block's pass takes at least its ops x the host's
// time per op (docs/cost-model.md, "Host-bound blocks"): max(GPU time, ops x host_op_s), per block (a
// whole block, or its attention half with the layers after it up to the next block), the excess on
// the block's last layer. A block's extra forward passes issue their ops again; a full recomputation
// issues the forward's in the backward. Plan.cuda_launch_blocking: no launch returns before its kernel
// ends, so the host never runs ahead and the two add: GPU time + ops x host_op_s ("Launch-blocking runs").
void ApplyHostIssueFloor(const ModelCost& model, const StageConfig& c, const GpuCompute& gpu, StageCost* cost,
                         double* forward_s, double* backward_s) {
  const double per_op_s = gpu.host_op_s();
  if (!(c.block_host_ops_forward > 0) || !(per_op_s > 0)) return;
  int blocks_seen = 0;
  for (int i = 0; i < c.num_layers;) {
    const LayerCost& layer = model.layer(c.first_layer + i);
    int end = i + 1;
    if (!StartsBlock(layer)) {
      i = end;
      continue;
    }
    ++blocks_seen;
    while (end < c.num_layers && model.layer(c.first_layer + end).recomputable &&
           !StartsBlock(model.layer(c.first_layer + end))) {
      ++end;
    }
    double gpu_forward_s = 0, gpu_backward_s = 0;
    for (int j = i; j < end; ++j) {
      gpu_forward_s += cost->layer_forward_s[j];
      gpu_backward_s += cost->layer_backward_s[j];
    }
    const bool recomputed =
        c.recompute == spec::Recompute::kFull && !(c.recompute_num_layers > 0 && blocks_seen > c.recompute_num_layers);
    const double host_forward_s = c.block_host_ops_forward * ForwardPasses(layer, c) * per_op_s;
    const double host_backward_s = (c.block_host_ops_backward + (recomputed ? c.block_host_ops_forward : 0)) * per_op_s;
    const double extra_forward_s =
        c.cuda_launch_blocking ? host_forward_s : std::max(0.0, host_forward_s - gpu_forward_s);
    const double extra_backward_s =
        c.cuda_launch_blocking ? host_backward_s : std::max(0.0, host_backward_s - gpu_backward_s);
    ChargeLayer(extra_forward_s, cost->layer_forward_s[end - 1], *forward_s);
    ChargeLayer(extra_backward_s, cost->layer_backward_s[end - 1], *backward_s);
    i = end;
  }
}

// Plan.autograd_grad_accumulation: autograd's AccumulateGrad adds a microbatch's weight gradients into the
// parameters' gradients, `variable_grad += new_grad`: the accumulator read and written and the new gradient
// read, over `params` parameters of this GPU at the HBM rate. A `.grad` has its parameter's type (PyTorch
// refuses any other), so an FP16 run that reduces in FP32 (DeepSpeed's fp32_allreduce casts the bucket at
// the reduction) still accumulates FP16.
double AutogradAccumulationSeconds(double params, spec::DType dtype, const StageConfig& c, const GpuCompute& gpu) {
  if (!c.autograd_grad_accumulation || !(params > 0)) return 0;
  return gpu.MemorySeconds(3 * params * ElementBytes(dtype));
}

// Plan.synchronized_tp_collectives: the AMP artifact's Megatron-LM v1.1.5 times every TP collective of
// mpu/mappings.py (_reduce) with timers('mp allreduce'), whose start and stop call
// torch.cuda.synchronize() (megatron/global_vars.py, _Timer). The first sync drains the GPU's queue, so
// the collective starts only when the host has issued it; the second holds the host until it ends, so
// the next kernel starts only when the host has issued that one: the GPU idles two host round trips a
// call beyond the transfer, 2 x sync_round_trip_s (the GPU type's measured figure, else host_op_s +
// kernel_launch_s; docs/cost-model.md, "Synchronized TP collectives"), added to the layer that issues
// it. `list` is a pass's collectives, `layer_s` its per-layer times.
double SynchronizedCollectivesIdle(const std::vector<StageCollective>& list, const StageConfig& c,
                                   const GpuCompute& gpu, std::vector<double>& layer_s) {
  const double per_call_s = 2 * gpu.sync_round_trip_s();
  double total_s = 0;
  for (const StageCollective& sc : list) {
    if (sc.group != CollectiveGroup::kTensor || sc.direct_call || sc.count <= 0) continue;
    const auto i = static_cast<size_t>(sc.layer - c.first_layer);
    HETSIM_CHECK(i < layer_s.size(), "collective of layer %d outside the stage", sc.layer);
    const double idle_s = sc.count * per_call_s;
    layer_s[i] += idle_s;
    total_s += idle_s;
  }
  return total_s;
}

// Plan.boundary_host_rebuild: the Sailor fork's reconstruct_tensor (its deepspeed/utils.py) builds each tensor a
// stage receives on the host while the GPU idles behind its device synchronizations: torch.zeros(numel,
// dtype=torch.float32) fills `bytes` on one host thread, after the kernel has zeroed the freshly mapped pages
// (glibc maps any allocation above its 32 MiB mmap threshold afresh), so two fills at host_fill_bytes_per_s;
// .cuda() copies them from pageable memory at pageable_h2d_bytes_per_s; and .to('cpu') twice, .cuda() once: 3
// round trips. A rate at 0 leaves its part out.
double BoundaryRebuildSeconds(double bytes, const GpuCompute& gpu) {
  double s = 3 * gpu.sync_round_trip_s();
  if (gpu.host_fill_bytes_per_s() > 0) s += 2 * bytes / gpu.host_fill_bytes_per_s();
  if (gpu.pageable_h2d_bytes_per_s() > 0) s += bytes / gpu.pageable_h2d_bytes_per_s();
  return s;
}

// The host work Plan.boundary_host_rebuild adds to a stage's passes: a stage after the first rebuilds its input
// in the forward, one before the last rebuilds its output gradient in the backward (4 bytes an element, the
// fork's FP32 buffer, for the replica's whole tensor); each tensor it sends costs one round trip (to_meta()'s
// .to(device)). Added to the layer at the pass's start and end, so the layers still sum to the pass.
void AddBoundaryRebuild(const ModelCost& model, const StageConfig& c, const StageShares& s, const GpuCompute& gpu,
                        StageCost* cost, double* forward_s, double* backward_s) {
  if (!c.boundary_host_rebuild || cost->layer_forward_s.empty()) return;
  auto fp32_bytes = [&](int layer) {
    return 4 * model.layer(layer).output_bytes_per_sample / model.element_bytes() * s.bt;
  };
  const bool receives = c.first_layer > 0;
  const bool sends = c.first_layer + c.num_layers < model.num_layers();
  const double round_trip_s = gpu.sync_round_trip_s();
  if (receives) {
    const double rebuild_s = BoundaryRebuildSeconds(fp32_bytes(c.first_layer - 1), gpu);
    ChargeLayer(rebuild_s, cost->layer_forward_s.front(), *forward_s);
    ChargeLayer(round_trip_s, cost->layer_backward_s.front(), *backward_s);
  }
  if (sends) {
    const double rebuild_s = BoundaryRebuildSeconds(fp32_bytes(c.first_layer + c.num_layers - 1), gpu);
    ChargeLayer(rebuild_s, cost->layer_backward_s.back(), *backward_s);
    ChargeLayer(round_trip_s, cost->layer_forward_s.back(), *forward_s);
  }
}

// Plan.deepspeed_timer_syncs: DeepSpeed's wall_clock_breakdown timers call torch.cuda.synchronize() at every
// start and stop (deepspeed/utils/timer.py), and the GPU idles while the host comes back from each and issues
// the next kernel, a round trip (sync_round_trip_s) a sync (docs/cost-model.md, "DeepSpeed's synchronising
// timers"). Per microbatch the first and the last stage load a batch; every stage but the first receives
// activations and sends gradients, every stage but the last sends activations and receives gradients; the
// last stage's backward goes through DeepSpeedEngine.backward, the others' through the pipeline engine's own.
// Returns the syncs of a forward step and of a backward step, the first layer's and the last's positions
// read from the stage's layer range.
std::pair<int, int> TimerSyncsPerMicrobatch(const ModelCost& model, const StageConfig& c) {
  const spec::DeepSpeedTimerSyncs& t = c.timer_syncs;
  const bool first = c.first_layer == 0;
  const bool last = c.first_layer + c.num_layers == model.num_layers();
  const int transfers = (first ? 0 : 1) + (last ? 0 : 1);
  const int forward = (first || last ? t.load_micro_batch : 0) + t.forward_pass + transfers * t.pipe_transfer;
  const int backward = (last ? t.last_backward_pass : t.backward_pass) + transfers * t.pipe_transfer;
  return {forward, backward};
}

}  // namespace

int64_t RangeGradSyncBytesWithoutTied(const ModelCost& model, int first, int num, int tp, bool fp32_gradients) {
  return RoundUpBytes(DenseParamsWithoutTied(model, first, num, tp) * GradientBytes(model.dtype(), fp32_gradients));
}

double ExpertParamsOfLayers(const ModelCost& model, int first, int num, int expert_shards) {
  double params = 0;
  for (int i = first; i < first + num; ++i)
    params += static_cast<double>(model.layer(i).expert_param_count) / expert_shards;
  return params;
}

int64_t ExpertGradSyncBytes(const ModelCost& model, int first, int num, int expert_shards, bool fp32_gradients) {
  return RoundUpBytes(ExpertParamsOfLayers(model, first, num, expert_shards) *
                      GradientBytes(model.dtype(), fp32_gradients));
}

bool TiedGradientsInFp32(spec::DType dtype, bool grad_reduce_in_fp32) {
  return grad_reduce_in_fp32 && dtype != spec::DType::kFp16;
}

int64_t TiedGradSyncBytes(const ModelCost& model, int tp, bool fp32_gradients) {
  return RoundUpBytes(TiedParamsPerGpu(model, tp) * GradientBytes(model.dtype(), fp32_gradients));
}

absl::StatusOr<StageCost> ComputeStageCost(const ModelCost& model, const StageConfig& c, const GpuCompute& gpu,
                                           absl::string_view where) {
  if (absl::Status st = Validate(model, c, where); !st.ok()) return st;
  if (absl::Status st = CheckSmMargins(c, gpu, where); !st.ok()) return st;
  const StageShares s = SharesOf(model, c);

  StageCost cost;
  double forward_s = 0, backward_s = 0;
  double dense_params = 0, expert_params = 0;
  double activation = 0, working = 0;
  bool has_embedding = false;
  // Megatron's block method: the first recompute_num_layers blocks recompute, the rest keep everything.
  StageConfig layer_config = c;
  int blocks_seen = 0;
  for (int i = c.first_layer; i < c.first_layer + c.num_layers; ++i) {
    const LayerCost& layer = model.layer(i);
    if (layer.kind == LayerKind::kEmbedding) has_embedding = true;
    if (StartsBlock(layer)) ++blocks_seen;
    layer_config.recompute =
        c.recompute_num_layers > 0 && blocks_seen > c.recompute_num_layers ? spec::Recompute::kNone : c.recompute;
    LayerTimes t = TimeLayer(layer, layer_config, s, gpu);
    // Parameters on this GPU: split over TP (vocabulary-parallel embedding and head, column/row-parallel
    // GEMMs) but for the duplicated ones (MLA's down projections, the router); experts over ETP x EP.
    const double layer_expert_params =
        static_cast<double>(layer.expert_param_count) / (c.ExpertTensorParallel() * s.ep);
    const double layer_dense_params = DenseParamsPerGpu(layer, s.tp);
    t.backward_s += AutogradAccumulationSeconds(layer_dense_params + layer_expert_params, model.dtype(), c, gpu);
    const SequenceCopies copies =
        DTensorSequenceCopies(layer, c, layer_config.recompute, s, Fp8GathersOf(model.dtype(), c));
    t.forward_s += gpu.MemorySeconds(copies.forward_bytes, copies.forward_kernels);
    t.backward_s += gpu.MemorySeconds(copies.backward_bytes, copies.backward_kernels);
    // The extra forward passes of a block (Plan.block_forward_passes) cost its forward again; the
    // backward, and a full recomputation's forward, run once.
    t.forward_s *= ForwardPasses(layer, c);
    t.forward_flop *= ForwardPasses(layer, c);
    cost.model_flop_per_gpu += t.model_flop;
    cost.forward_flop_per_gpu += t.forward_flop;
    cost.backward_flop_per_gpu += t.backward_flop;
    forward_s += t.forward_s;
    backward_s += t.backward_s;
    cost.layer_forward_s.push_back(t.forward_s);
    cost.layer_backward_s.push_back(t.backward_s);
    cost.layer_column_weight_grad_s.push_back(t.column_weight_grad_s);
    if (c.context_parallel > 1 && layer.kv_bytes_per_sample > 0) {
      cost.cp_attention.push_back(CpAttentionOf(layer, i, t, layer_config, s, gpu));
    }
    expert_params += layer_expert_params;
    dense_params += layer_dense_params;
    const KeptActivation kept = ActivationOf(layer, layer_config, s);
    activation += kept.kept;
    working = std::max(working, kept.working);
    const bool fp8 = model.dtype() == spec::DType::kFp8;
    AddLayerCollectives(layer, i, c, layer_config.recompute, s, Fp8GathersOf(model.dtype(), c),
                        c.fp8_current_scaling && fp8, t.linears, &cost);
  }
  // The backward visits the layers last to first, and so do its collectives.
  std::reverse(cost.backward_collectives.begin(), cost.backward_collectives.end());
  AddDelayedScalingAmaxReductions(model, c, &cost);

  ApplyHostIssueFloor(model, c, gpu, &cost, &forward_s, &backward_s);
  if (c.synchronized_tp_collectives && c.tensor_parallel > 1) {
    forward_s += SynchronizedCollectivesIdle(cost.forward_collectives, c, gpu, cost.layer_forward_s);
    backward_s += SynchronizedCollectivesIdle(cost.backward_collectives, c, gpu, cost.layer_backward_s);
  }
  AddBoundaryRebuild(model, c, s, gpu, &cost, &forward_s, &backward_s);

  const auto [forward_syncs, backward_syncs] = TimerSyncsPerMicrobatch(model, c);
  // The step's receive and load come before its layers, the backward's send after them.
  ChargeLayer(forward_syncs * gpu.sync_round_trip_s(), cost.layer_forward_s.front(), forward_s);
  ChargeLayer(backward_syncs * gpu.sync_round_trip_s(), cost.layer_backward_s.back(), backward_s);

  // A tied LM head on a stage without the embedding keeps its own copy of the vocabulary matrix.
  const LayerCost& last = model.layer(c.first_layer + c.num_layers - 1);
  if (last.tied_with_embedding && !has_embedding) {
    dense_params += static_cast<double>(last.tied_param_count) / s.tp;
    ChargeLayer(AutogradAccumulationSeconds(static_cast<double>(last.tied_param_count) / s.tp, model.dtype(), c, gpu),
                cost.layer_backward_s.back(), backward_s);
  }

  FinishStageCost(model, c, gpu, s, forward_s, backward_s, dense_params, expert_params, &cost);
  if (c.reference_forward) {
    // The reference's weights are the policy's shape, in the model's element type, sharded as the policy's.
    const auto weights = static_cast<double>(cost.memory.param_bytes);
    if (c.reference_weight_swap) {
      cost.reference_swap_time = SecondsToTime(ReferenceSwapSeconds(weights, gpu));
    } else {
      cost.memory.reference_param_bytes = cost.memory.param_bytes;
    }
  }
  cost.memory.activation_bytes_per_microbatch = RoundUpBytes(activation);
  cost.memory.recompute_working_bytes = RoundUpBytes(working);
  // A measured backward stands for the modelled one: its weight gradients scale with it.
  if (cost.backward_measured) {
    const double modelled = backward_s + gpu.pass_overhead_s();
    const double scale = modelled > 0 ? TimeToSeconds(cost.backward_time) / modelled : 0;
    for (double& s : cost.layer_column_weight_grad_s) s *= scale;
  }
  return cost;
}

Time HiddenByAsyncBackward(const StageCost& cost, int first_layer, std::span<const std::pair<int, Time>> reductions) {
  const std::vector<double>& wgrad = cost.layer_column_weight_grad_s;
  std::vector<Time> by_layer(wgrad.size(), 0);
  for (const auto& [layer, time] : reductions) {
    const auto i = static_cast<size_t>(layer - first_layer);
    if (i < by_layer.size()) by_layer[i] += time;
  }
  Time hidden = 0;
  for (size_t i = 0; i < by_layer.size(); ++i) hidden += std::min(by_layer[i], SecondsToTime(wgrad[i]));
  return hidden;
}

Time UserbufferExposed(Time reduce_scatter, Time fc2_reduce_scatter, Time all_gather, int tensor_parallel,
                       bool aggregate, bool forward, const spec::TpCommOverlapSpec& config) {
  auto last_chunk = [&](spec::TpOverlapMethod m) {
    return m == spec::TpOverlapMethod::kPipeline ? kReduceScatterSplits : std::max(1, tensor_parallel);
  };
  const int proj = last_chunk(config.proj_fprop), fc2 = last_chunk(config.fc2_fprop);
  Time exposed = 0;
  if (forward) {
    exposed =
        proj == fc2 ? reduce_scatter / proj : (reduce_scatter - fc2_reduce_scatter) / proj + fc2_reduce_scatter / fc2;
  }
  if (aggregate && tensor_parallel > 1) exposed += all_gather / (tensor_parallel - 1);
  return exposed;
}

Time HiddenByUserbuffers(Time all, Time exposed, Time compute) {
  return std::max<Time>(0, std::min(all - exposed, compute));
}

void UserbufferTimes::Add(const StageCollective& c, Time time) {
  if (!c.userbuffers) return;
  all += time;
  if (c.op == CollectiveOp::kReduceScatter) reduce_scatter += time;
  if (c.op == CollectiveOp::kReduceScatter && c.fc2_count > 0 && c.count > 0) {
    fc2_reduce_scatter += time * c.fc2_count / c.count;
  }
  if (c.op == CollectiveOp::kAllGather) all_gather += time;
  if (c.count <= 0) return;
  const size_t calls = std::min(c.beside_gemm_s.size(), static_cast<size_t>(c.count));
  for (size_t j = 0; j < calls; ++j) {
    const bool fc2 = static_cast<int64_t>(j) >= static_cast<int64_t>(c.count) - c.fc2_count;
    paired.push_back({time / c.count, SecondsToTime(c.beside_gemm_s[j]), c.op, fc2});
  }
}

Time UserbufferOutlasting(std::span<const UserbufferTimes::PairedCall> calls, int tensor_parallel, bool aggregate,
                          bool forward, const spec::TpCommOverlapSpec& config) {
  Time outlasting = 0;
  for (const UserbufferTimes::PairedCall& c : calls) {
    const bool scatter = c.op == CollectiveOp::kReduceScatter, gather = c.op == CollectiveOp::kAllGather;
    const Time exposed = UserbufferExposed(scatter ? c.collective : 0, scatter && c.fc2 ? c.collective : 0,
                                           gather ? c.collective : 0, tensor_parallel, aggregate, forward, config);
    outlasting += std::max<Time>(0, c.collective - exposed - c.gemm);
  }
  return outlasting;
}

Time UserbufferTimes::Hidden(int tensor_parallel, bool aggregate, bool forward, Time compute,
                             const spec::TpCommOverlapSpec& config) const {
  const Time exposed =
      UserbufferExposed(reduce_scatter, fc2_reduce_scatter, all_gather, tensor_parallel, aggregate, forward, config);
  return HiddenByUserbuffers(all, exposed + UserbufferOutlasting(paired, tensor_parallel, aggregate, forward, config),
                             compute);
}

Time HiddenByTpOverlap(const spec::CostSwitches& plan, int tensor_parallel, bool forward, Time compute,
                       const UserbufferTimes& all, const UserbufferTimes& recomputed) {
  if (!plan.tp_comm_overlap) return 0;
  if (!plan.pytorch_async_tp) {
    return all.Hidden(tensor_parallel, plan.tp_comm_overlap_aggregate, forward, compute, plan.tp_comm_overlap_config);
  }
  // Async TP: one chunk per TP rank, the reduce-scatter's last chunk exposed as a ring exchange's; the
  // compiled backward holds a full recomputation's all-gather -> matmul and matmul -> reduce-scatter.
  spec::TpCommOverlapSpec ring;
  ring.proj_fprop = ring.fc2_fprop = spec::TpOverlapMethod::kRingExchange;
  return (forward ? all : recomputed).Hidden(tensor_parallel, false, true, compute, ring);
}

void TpOverlapTimes::Add(const StageCollective& c, Time time) {
  userbuffers.Add(c, time);
  if (c.recomputed) recomputed.Add(c, time);
  if (c.async_backward) async_backward.emplace_back(c.layer, time);
}

Time PassHiddenByTpOverlap(const spec::CostSwitches& plan, int tensor_parallel, bool forward, const StageCost& cost,
                           int first_layer, const TpOverlapTimes& times) {
  if (plan.tp_comm_overlap) {
    return HiddenByTpOverlap(plan, tensor_parallel, forward, forward ? cost.forward_time : cost.backward_time,
                             times.userbuffers, times.recomputed);
  }
  if (plan.tp_backward_overlap && !forward) return HiddenByAsyncBackward(cost, first_layer, times.async_backward);
  return 0;
}

}  // namespace hetsim::workload
