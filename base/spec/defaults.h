// The schema's "0 means" defaults, each written once. proto::ResolvePlan and proto::ResolveModel apply
// them, so the spec the simulator reads holds the values themselves; the input checks
// (proto/validate_*.{h,cc}), the Megatron-LM interop, the reports and the planner's hand-built stage
// configurations, which see a field before (or without) the resolver, call the same functions.
#ifndef HETSIM_BASE_SPEC_DEFAULTS_H_
#define HETSIM_BASE_SPEC_DEFAULTS_H_

#include <cstdint>

namespace hetsim::spec {

// A parallel degree left 0 (a stage's tensor, data and expert parallelism, the plan's context
// parallelism and virtual stages): 1, no split.
template <typename Int>
constexpr Int DegreeOrOne(Int degree) {
  return degree > 0 ? degree : Int{1};
}

// The experts' tensor parallelism left 0: the stage's tensor parallelism, Megatron-LM's default for
// --expert-tensor-parallel-size (MoE parallel folding).
template <typename Int>
constexpr Int ExpertTensorParallelOr(Int expert_tensor_parallel, Int tensor_parallel) {
  return expert_tensor_parallel > 0 ? expert_tensor_parallel : tensor_parallel;
}

// H-1F1B's epsilon (HAPT Eq. 2) when the plan leaves it at 0. Below epsilon * t_max a boundary gets
// no extra warm-up forward, which costs up to epsilon of the steady state (docs/schedules.md); 0.1
// let a 5 Gb/s boundary of the HAPT case fall back to 1F1B (docs/sweeps.md), 0.01 does not.
inline constexpr double kDefaultH1f1bEpsilon = 0.01;
constexpr double H1f1bEpsilonOr(double epsilon) { return epsilon != 0 ? epsilon : kDefaultH1f1bEpsilon; }

// Microbatches per iteration, global_batch_size / micro_batch_size; 0 when the micro-batch size is 0
// (the plan's check reports that, and the planner's searched sizes are never 0).
constexpr int64_t MicrobatchCount(uint64_t global_batch_size, uint64_t micro_batch_size) {
  return micro_batch_size != 0 ? static_cast<int64_t>(global_batch_size / micro_batch_size) : 0;
}

// A transformer's FFN width left 0: 4 x hidden (GPT's; a gated MLP states its own).
constexpr uint64_t FfnHiddenSizeOr(uint64_t ffn_hidden_size, uint64_t hidden_size) {
  return ffn_hidden_size != 0 ? ffn_hidden_size : 4 * hidden_size;
}

// An expert's FFN width left 0: the model's FFN width (only MoE models may set it).
constexpr uint64_t ExpertFfnHiddenSizeOr(uint64_t expert_ffn_hidden_size, uint64_t ffn_hidden_size) {
  return expert_ffn_hidden_size != 0 ? expert_ffn_hidden_size : ffn_hidden_size;
}

// KV heads left 0: as many as the attention heads (no grouped-query attention).
template <typename Count>
constexpr Count KvHeadsOr(Count num_kv_heads, Count num_attention_heads) {
  return num_kv_heads != 0 ? num_kv_heads : num_attention_heads;
}

// Channels of one attention head left 0: hidden / heads (0 without heads, which the model's check
// refuses).
constexpr uint32_t HeadDimOr(uint32_t head_dim, uint64_t hidden_size, uint32_t num_attention_heads) {
  if (head_dim > 0) return head_dim;
  return num_attention_heads > 0 ? static_cast<uint32_t>(hidden_size / num_attention_heads) : 0;
}

// A GPU's efficiency fraction (max_efficiency, hbm_efficiency) left 0: 1, the peak itself.
constexpr double EfficiencyOrOne(double efficiency) { return efficiency == 0 ? 1.0 : efficiency; }

}  // namespace hetsim::spec

#endif  // HETSIM_BASE_SPEC_DEFAULTS_H_
