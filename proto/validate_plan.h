// Validation of a Plan against the Cluster it runs on and the Model it trains.
//
// Plan semantics (docs/file-formats.md):
// - micro_batch_size is the number of samples in one pipeline microbatch; a stage splits it evenly
//   over its data_parallel replicas, so it must be divisible by every stage's data_parallel.
// - The number of microbatches per iteration is global_batch_size / micro_batch_size (exact).
// - Stages cover the model's layer sequence (LayerCount) once and in order: stage 0 starts at layer 0,
//   each next stage starts where the previous one ends, the last one ends at LayerCount.
// - A stage's mesh is a rectangle of one island (nodes x GPUs per node); meshes never share a GPU.
// - tensor_parallel * context_parallel * data_parallel equals the mesh's GPU count; tensor parallelism
//   stays inside a node (it divides the mesh's gpus_per_node) and divides the attention (and KV) heads.
// - context_parallel > 1 needs a transformer whose seq_length is a multiple of 2 * context_parallel
//   (two load-balanced chunks per rank).
// - warmup_forwards are either all 0 (derived from the schedule) or all set: each in
//   [1, microbatches] and non-increasing from the first stage to the last (a later stage that wants
//   more forwards in flight than its predecessor would wait forever).
#ifndef HETSIM_PROTO_VALIDATE_PLAN_H_
#define HETSIM_PROTO_VALIDATE_PLAN_H_

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/check.h"
#include "base/spec/defaults.h"
#include "base/spec/plan.h"
#include "proto/hetsim.pb.h"

namespace hetsim::proto {

// `cluster` with GPU presets applied and already valid; `model` already valid (inline or loaded from
// the plan's model_path). Problems are reported against `plan_file`; `pipeline` >= 0 says that `plan` is
// PipelinePlan(whole, pipeline), whose field paths are reported as the whole plan's (PipelineFieldPath;
// `own_context_parallel`: the pipeline sets its context_parallel). A plan of pipelines: ValidatePipelines.
absl::Status ValidatePlan(const hetsim::v1::Plan& plan, const hetsim::v1::Cluster& cluster,
                          const hetsim::v1::Model& model, absl::string_view plan_file, int pipeline = -1,
                          bool own_context_parallel = false);

// The schema's "0 means" fields read with their defaults (each default's one home is
// base/spec/defaults.h), for code that reads the message rather than the resolved spec.
inline uint32_t TensorParallel(const hetsim::v1::Stage& s) { return spec::DegreeOrOne(s.tensor_parallel()); }
inline uint32_t DataParallel(const hetsim::v1::Stage& s) { return spec::DegreeOrOne(s.data_parallel()); }
inline uint32_t ExpertParallel(const hetsim::v1::Stage& s) { return spec::DegreeOrOne(s.expert_parallel()); }
// A mixed stage's (Stage.replica_groups) defaults to its largest TP, as the resolver's.
inline uint32_t ExpertTensorParallel(const hetsim::v1::Stage& s) {
  uint32_t tp = TensorParallel(s);
  for (const hetsim::v1::ReplicaGroup& g : s.replica_groups())
    tp = std::max(tp, spec::DegreeOrOne(g.tensor_parallel()));
  return spec::ExpertTensorParallelOr(s.expert_tensor_parallel(), tp);
}
// A mixed stage's group's expert layout: its own (ReplicaGroup.expert_parallel, expert_tensor_parallel) or
// the stage's; and the stage's finest, as the resolver's (the group of the largest ETP x EP).
inline uint32_t GroupExpertParallel(const hetsim::v1::Stage& s, const hetsim::v1::ReplicaGroup& g) {
  return g.expert_parallel() > 0 ? g.expert_parallel() : ExpertParallel(s);
}
inline uint32_t GroupExpertTensorParallel(const hetsim::v1::Stage& s, const hetsim::v1::ReplicaGroup& g) {
  return g.expert_tensor_parallel() > 0 ? g.expert_tensor_parallel() : ExpertTensorParallel(s);
}
inline std::pair<uint32_t, uint32_t> FinestExperts(const hetsim::v1::Stage& s) {
  std::pair<uint32_t, uint32_t> out = {ExpertParallel(s), ExpertTensorParallel(s)};
  if (s.replica_groups_size() == 0) return out;
  out = {1, 1};
  for (const hetsim::v1::ReplicaGroup& g : s.replica_groups()) {
    const uint64_t ep = GroupExpertParallel(s, g), etp = GroupExpertTensorParallel(s, g);
    if (ep * etp > uint64_t{out.first} * out.second) out = {static_cast<uint32_t>(ep), static_cast<uint32_t>(etp)};
  }
  return out;
}
inline uint32_t ContextParallel(const hetsim::v1::Plan& p) { return spec::DegreeOrOne(p.context_parallel()); }
inline hetsim::v1::ContextParallelComm ContextParallelCommProto(spec::ContextParallelComm c) {
  switch (c) {
    case spec::ContextParallelComm::kAllGather: return hetsim::v1::CP_COMM_ALL_GATHER;
    case spec::ContextParallelComm::kAllToAll: return hetsim::v1::CP_COMM_ALL_TO_ALL;
    case spec::ContextParallelComm::kRing: break;
  }
  return hetsim::v1::CP_COMM_P2P;
}
inline spec::ContextParallelComm ContextParallelCommOf(hetsim::v1::ContextParallelComm c) {
  switch (c) {
    case hetsim::v1::CP_COMM_ALL_GATHER: return spec::ContextParallelComm::kAllGather;
    case hetsim::v1::CP_COMM_ALL_TO_ALL: return spec::ContextParallelComm::kAllToAll;
    case hetsim::v1::CP_COMM_P2P: return spec::ContextParallelComm::kRing;
    case hetsim::v1::ContextParallelComm_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case hetsim::v1::ContextParallelComm_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  HETSIM_CHECK(false, "a ContextParallelComm number outside the schema (proto::Load refuses them)");
  return spec::ContextParallelComm::kRing;
}
inline spec::ContextParallelComm ContextParallelCommOf(const hetsim::v1::Plan& p) {
  return ContextParallelCommOf(p.cp_comm_type());
}
inline uint64_t FfnHiddenSize(const hetsim::v1::Transformer& t) {
  return spec::FfnHiddenSizeOr(t.ffn_hidden_size(), t.hidden_size());
}
inline uint64_t ExpertFfnHiddenSize(const hetsim::v1::Transformer& t) {
  return spec::ExpertFfnHiddenSizeOr(t.expert_ffn_hidden_size(), FfnHiddenSize(t));
}
inline uint32_t KvHeads(const hetsim::v1::Transformer& t) {
  return spec::KvHeadsOr(t.num_kv_heads(), t.num_attention_heads());
}
inline uint32_t HeadDim(const hetsim::v1::Transformer& t) {
  return spec::HeadDimOr(t.head_dim(), t.hidden_size(), t.num_attention_heads());
}
// Whether some stage shards its optimizer states (ZeRO-1/2), whose parameter all-gather
// Plan.overlap_param_gather overlaps.
inline bool ShardsOptimizer(const hetsim::v1::Plan& p) {
  for (const hetsim::v1::Stage& s : p.stages()) {
    if (s.zero_stage() == 1 || s.zero_stage() == 2) return true;
  }
  for (const hetsim::v1::Pipeline& pl : p.pipelines()) {  // one zero_stage for all (validate_pipelines.cc)
    for (const hetsim::v1::Stage& s : pl.stages()) {
      if (s.zero_stage() == 1 || s.zero_stage() == 2) return true;
    }
  }
  return false;
}
inline int64_t MeshGpuCount(const hetsim::v1::Mesh& m) { return int64_t{m.node_count()} * m.gpus_per_node(); }
// H-1F1B's epsilon (HAPT Eq. 2) when the plan leaves it at 0 (why 0.01: base/spec/defaults.h).
inline constexpr double kDefaultH1f1bEpsilon = spec::kDefaultH1f1bEpsilon;
inline double H1f1bEpsilon(const hetsim::v1::Plan& p) { return spec::H1f1bEpsilonOr(p.h1f1b_epsilon()); }
inline uint32_t VirtualStages(const hetsim::v1::Plan& p) { return spec::DegreeOrOne(p.virtual_stages()); }
// global_batch_size / micro_batch_size; 0 when micro_batch_size is 0.
inline int64_t MicrobatchCount(const hetsim::v1::Plan& p) {
  return spec::MicrobatchCount(p.global_batch_size(), p.micro_batch_size());
}

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_VALIDATE_PLAN_H_
