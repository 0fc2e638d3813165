#include "sim/workload/stage_cost.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "proto/stage_rules.h"

namespace hetsim::sim::workload {

StageConfig StageConfigFromProto(const hetsim::v1::Stage& stage, uint64_t micro_batch_size,
                                 uint32_t context_parallel) {
  StageConfig c;
  c.context_parallel = context_parallel == 0 ? 1 : static_cast<int>(context_parallel);
  c.first_layer = static_cast<int>(stage.first_layer());
  c.num_layers = static_cast<int>(stage.num_layers());
  c.tensor_parallel = stage.tensor_parallel() == 0 ? 1 : static_cast<int>(stage.tensor_parallel());
  c.data_parallel = stage.data_parallel() == 0 ? 1 : static_cast<int>(stage.data_parallel());
  c.expert_parallel = stage.expert_parallel() == 0 ? 1 : static_cast<int>(stage.expert_parallel());
  c.zero_stage = static_cast<int>(stage.zero_stage());
  c.recompute = stage.recompute();
  c.sequence_parallel = stage.sequence_parallel();
  c.micro_batch_size = micro_batch_size;
  c.measured_forward_ms = stage.measured_forward_ms();
  c.measured_backward_ms = stage.measured_backward_ms();
  return c;
}

StageMemory ZeroShardedModelStates(double param_count, hetsim::v1::DType dtype, int zero_stage,
                                   int data_parallel) {
  const double element = ElementBytes(dtype);
  const double dp = std::max(1, data_parallel);
  double params = param_count * element;
  double grads = param_count * element;
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
  if (c.context_parallel < 1) return Invalid(where, "context_parallel", "must be >= 1");
  if (c.context_parallel > 1 && !model.is_transformer()) {
    return Invalid(where, "context_parallel", "needs a transformer model");
  }
  if (c.micro_batch_size == 0) return Invalid(where, "micro_batch_size", "must be > 0");
  if (!(c.measured_forward_ms >= 0) || !std::isfinite(c.measured_forward_ms)) {
    return Invalid(where, "measured_forward_ms", "must be a finite number >= 0");
  }
  if (!(c.measured_backward_ms >= 0) || !std::isfinite(c.measured_backward_ms)) {
    return Invalid(where, "measured_backward_ms", "must be a finite number >= 0");
  }
  // The parallelism rules a plan file's stages are validated with (proto/stage_rules.h).
  const std::vector<proto::StageRuleProblem> problems = proto::StageRuleProblems(
      {.tensor_parallel = static_cast<uint32_t>(c.tensor_parallel),
       .data_parallel = static_cast<uint32_t>(c.data_parallel),
       .expert_parallel = static_cast<uint32_t>(c.expert_parallel),
       .zero_stage = c.zero_stage,
       .sequence_parallel = c.sequence_parallel,
       .micro_batch_size = c.micro_batch_size,
       .num_attention_heads = model.num_attention_heads(),
       .num_kv_heads = model.num_kv_heads(),
       .ffn_hidden_size = model.ffn_hidden_size(),
       .num_experts = model.num_experts()});
  if (!problems.empty()) return Invalid(where, problems.front().field, problems.front().problem);
  return absl::OkStatus();
}

int64_t RoundUpBytes(double bytes) { return static_cast<int64_t>(std::ceil(bytes)); }

struct GemmTimes {
  double forward_s = 0, backward_s = 0;
  double flop = 0;  // forward FLOPs on this GPU
};

// One forward GEMM of a layer on one GPU of the stage, and its two backward GEMMs (input gradient
// (m x n) @ (n x k), weight gradient (k x m) @ (m x n)), for `b` local samples of which this GPU
// holds 1/CP of the tokens (an attention core: its queries against all keys).
GemmTimes TimeGemm(const Gemm& g, double b, const StageConfig& c, double experts, double backward_ratio,
                   const GpuCompute& gpu) {
  const double tp = c.tensor_parallel;
  // Experts: this GPU holds experts / EP of them and computes the tokens routed to them from the
  // whole EP group, on average b s k EP / experts per expert.
  const double kernels = g.per_expert ? experts / c.expert_parallel : 1;
  GemmTimes t;
  const double cp = c.context_parallel;
  t.flop = g.forward_flop_per_sample * b / tp / cp;
  if (!gpu.shape_aware() || g.m <= 0) {
    t.forward_s = gpu.GemmSeconds(t.flop / kernels, kernels);
    t.backward_s = backward_ratio * t.forward_s;
    return t;
  }
  GemmShape f{g.m, g.n, g.k, g.batch};
  if (g.attention_core) {
    f.batch *= b;  // one matrix per sample and head
    f.m /= cp;     // this rank's queries
  } else {
    f.m *= b / cp;  // samples (this rank's tokens of them) stack along the rows
  }
  if (g.per_expert) f.m *= c.expert_parallel / experts;
  switch (g.split) {
    case TpSplit::kColumns: f.n /= tp; break;
    case TpSplit::kRows: f.k /= tp; break;
    case TpSplit::kBatch: f.batch /= tp; break;
    case TpSplit::kNone: break;
  }
  t.forward_s = kernels * gpu.GemmSeconds(f);
  t.backward_s = kernels * (gpu.GemmSeconds(GemmShape{f.m, f.k, f.n, f.batch}) +
                            gpu.GemmSeconds(GemmShape{f.k, f.n, f.m, f.batch}));
  return t;
}

}  // namespace

absl::StatusOr<StageCost> ComputeStageCost(const ModelCost& model, const StageConfig& c,
                                           const GpuCompute& gpu, absl::string_view where) {
  if (absl::Status st = Validate(model, c, where); !st.ok()) return st;

  const double tp = c.tensor_parallel;
  const double ep = c.expert_parallel;
  const double experts = model.num_experts();
  const double b = static_cast<double>(c.micro_batch_size) / c.data_parallel;  // local samples
  // Samples' worth of tokens on this GPU: context parallelism keeps 1/CP of each sample's tokens,
  // and with them 1/CP of every activation, memory-bound pass and TP collective.
  const double bt = b / c.context_parallel;
  // Sequence parallelism shards the TP-replicated parts; it means nothing without TP.
  const bool sp = c.sequence_parallel && c.tensor_parallel > 1;
  const double replicated_split = sp ? tp : 1;

  StageCost cost;
  double forward_s = 0, backward_s = 0;
  double dense_params = 0, expert_params = 0;
  double activation = 0, working = 0;
  bool has_embedding = false;

  for (int i = c.first_layer; i < c.first_layer + c.num_layers; ++i) {
    const LayerCost& layer = model.layer(i);
    if (layer.kind == LayerKind::kEmbedding) has_embedding = true;
    const bool full = layer.recomputable && c.recompute == hetsim::v1::RECOMPUTE_FULL;
    const bool selective = layer.recomputable && c.recompute == hetsim::v1::RECOMPUTE_SELECTIVE;

    const double backward_ratio = layer.forward_flop_per_sample > 0
                                      ? layer.backward_flop_per_sample / layer.forward_flop_per_sample
                                      : 0;
    double gemm_s = 0, gemm_bwd_s = 0, core_gemm_s = 0, flop = 0, core_flop = 0;
    for (const Gemm& g : layer.gemms) {
      const GemmTimes t = TimeGemm(g, b, c, experts, backward_ratio, gpu);
      gemm_s += t.forward_s;
      gemm_bwd_s += t.backward_s;
      flop += t.flop;
      if (g.attention_core) {
        core_gemm_s += t.forward_s;
        core_flop += t.flop;
      }
    }
    const double memory_fwd_s =
        gpu.MemorySeconds(layer.memory_bytes_replicated_per_sample * bt / replicated_split +
                              layer.memory_bytes_sharded_per_sample * bt / tp,
                          layer.memory_kernels);
    const double core_bytes = layer.memory_bytes_attention_core_per_sample * bt / tp;
    const double core_memory_s = gpu.MemorySeconds(core_bytes, core_bytes > 0 ? 2 : 0);
    const double layer_fwd_s = gemm_s + memory_fwd_s;
    double layer_bwd_s = gemm_bwd_s + 2 * memory_fwd_s;
    double layer_bwd_flop = backward_ratio * flop;
    if (layer.forward_flop_per_sample <= 0 && layer.backward_flop_per_sample > 0) {
      const double bwd = layer.backward_flop_per_sample * bt / tp;
      layer_bwd_s += gpu.GemmSeconds(bwd);
      layer_bwd_flop += bwd;
    }
    cost.model_flop_per_gpu += flop + layer_bwd_flop;
    if (full) {
      layer_bwd_s += layer_fwd_s;
      layer_bwd_flop += flop;
    } else if (selective) {
      layer_bwd_s += core_gemm_s + core_memory_s;
      layer_bwd_flop += core_flop;
    }
    forward_s += layer_fwd_s;
    backward_s += layer_bwd_s;
    cost.layer_forward_s.push_back(layer_fwd_s);
    cost.layer_backward_s.push_back(layer_bwd_s);
    if (c.context_parallel > 1 && layer.kv_bytes_per_sample > 0) {
      double core_bwd_s = 2 * core_memory_s;
      for (const Gemm& g : layer.gemms) {
        if (g.attention_core) core_bwd_s += TimeGemm(g, b, c, experts, backward_ratio, gpu).backward_s;
      }
      cost.cp_attention.push_back({i, RoundUpBytes(layer.kv_bytes_per_sample * bt / tp), core_gemm_s + core_memory_s,
                                   core_bwd_s, full || selective});
    }
    cost.forward_flop_per_gpu += flop;
    cost.backward_flop_per_gpu += layer_bwd_flop;

    // Parameters on this GPU: everything split over TP (vocabulary-parallel embedding and head,
    // column/row-parallel GEMMs); experts also over EP.
    expert_params += static_cast<double>(layer.expert_param_count) / (tp * ep);
    dense_params += static_cast<double>(layer.param_count - layer.expert_param_count) / tp;

    // Activations kept for the backward pass (Korthikanti et al. 2022).
    const ActivationBytes& a = layer.activation;
    const double kept_all = a.tp_replicated * bt / replicated_split + (a.tp_sharded + a.attention_core) * bt / tp;
    if (full) {
      activation += std::min(kept_all, a.layer_input * bt / replicated_split);
      working = std::max(working, kept_all);
    } else if (selective) {
      activation += a.tp_replicated * bt / replicated_split + a.tp_sharded * bt / tp;
    } else {
      activation += kept_all;
    }

    // Collectives, with absolute per-rank bytes for the local microbatch.
    for (const LayerCollective& lc : sp ? layer.collectives_seq_par : layer.collectives) {
      if (lc.group == CollectiveGroup::kTensor && c.tensor_parallel <= 1) continue;
      if (lc.group == CollectiveGroup::kExpert && c.expert_parallel <= 1) continue;
      const int64_t bytes = RoundUpBytes(lc.bytes_per_sample * bt);
      if (lc.forward_count > 0) {
        cost.forward_collectives.push_back({lc.op, lc.group, bytes, lc.forward_count, i});
      }
      if (lc.backward_count > 0) {
        cost.backward_collectives.push_back({lc.op, lc.group, bytes, lc.backward_count, i});
      }
    }
  }
  // The backward visits the layers last to first, and so do its collectives.
  std::reverse(cost.backward_collectives.begin(), cost.backward_collectives.end());

  // A tied LM head on a stage without the embedding keeps its own copy of the vocabulary matrix.
  const LayerCost& last = model.layer(c.first_layer + c.num_layers - 1);
  if (last.tied_with_embedding && !has_embedding) {
    dense_params += static_cast<double>(last.tied_param_count) / tp;
  }

  // The host's work around each pass (schedule step, pipeline send/receive set-up).
  cost.forward_time = SecondsToTime(forward_s + gpu.pass_overhead_s());
  cost.backward_time = SecondsToTime(backward_s + gpu.pass_overhead_s());
  if (c.measured_forward_ms > 0) {
    cost.forward_time = SecondsToTime(c.measured_forward_ms * 1e-3);
    cost.forward_measured = true;
  }
  if (c.measured_backward_ms > 0) {
    cost.backward_time = SecondsToTime(c.measured_backward_ms * 1e-3);
    cost.backward_measured = true;
  }

  cost.boundary_bytes_per_replica = RoundUpBytes(last.output_bytes_per_sample * b);
  cost.boundary_bytes_per_microbatch =
      RoundUpBytes(last.output_bytes_per_sample * static_cast<double>(c.micro_batch_size));

  const int element = model.element_bytes();
  cost.grad_sync_bytes = RoundUpBytes(dense_params * element);
  cost.expert_grad_sync_bytes = RoundUpBytes(expert_params * element);

  // ZeRO shards dense states over the DP group (DP x CP ranks: Megatron's distributed optimizer) and
  // expert states over the DP replicas that hold the same experts (DP / EP of them).
  const StageMemory dense = ZeroShardedModelStates(dense_params, model.dtype(), c.zero_stage,
                                                   c.data_parallel * c.context_parallel);
  const StageMemory expert = ZeroShardedModelStates(expert_params, model.dtype(), c.zero_stage,
                                                    c.data_parallel / c.expert_parallel * c.context_parallel);
  cost.memory.param_bytes = dense.param_bytes + expert.param_bytes;
  cost.memory.grad_bytes = dense.grad_bytes + expert.grad_bytes;
  cost.memory.optimizer_bytes = dense.optimizer_bytes + expert.optimizer_bytes;
  cost.memory.activation_bytes_per_microbatch = RoundUpBytes(activation);
  cost.memory.recompute_working_bytes = RoundUpBytes(working);
  return cost;
}

}  // namespace hetsim::sim::workload
