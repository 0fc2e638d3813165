#include "proto/validate_replica_groups.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/spec/defaults.h"
#include "base/spec/stage_rules.h"
#include "proto/gpu_presets.h"
#include "proto/limits.h"
#include "proto/validate_plan.h"

namespace hetsim::proto {
namespace {

using namespace hetsim::v1;  // NOLINT: the schema's message names read best unqualified here

// A mixed stage leaves its own mesh and degrees to its groups, and holds what mixed groups support.
void CheckMixedStageFields(Problems& p, const Plan& plan, const Stage& s, const std::string& at) {
  if (s.has_mesh() || s.tensor_parallel() != 0 || s.data_parallel() != 0) {
    p.Add(at + (s.has_mesh()               ? "mesh"
                : s.tensor_parallel() != 0 ? "tensor_parallel"
                                           : "data_parallel"),
          "a stage with replica_groups leaves mesh, tensor_parallel and data_parallel unset (each group has its own)");
  }
  if (s.measured_forward_ms() > 0 || s.measured_backward_ms() > 0) {
    p.Add(at + (s.measured_forward_ms() > 0 ? "measured_forward_ms" : "measured_backward_ms"),
          "a stage with replica_groups is modelled per group (its GPU type, TP and share), not measured");
  }
  if (ContextParallel(plan) > 1) {
    p.Add(at + "replica_groups", "mixed replica groups do not take context_parallel %d yet (it must be 1)",
          ContextParallel(plan));
  }
}

// MoE: each group lays the experts out over its own GPUs at its own EP and ETP (ReplicaGroup's, else the
// stage's), ETP x EP of them holding one copy, so ETP x EP divides the group's GPUs; the experts'
// gradients reduce per shard of the finest split (the largest ETP x EP) over every copy in every group
// (sim/executor/setup.h, StageLayout::ExpertDataGroup), so every group's EP and ETP divide the finest
// group's, as every TP divides the largest; the rest are a plain stage's rules (base/spec/stage_rules.cc),
// ETP defaulting to the largest TP (ExpertTensorParallel).
void CheckGroupExperts(Problems& p, const Transformer& t, const Stage& s, const std::string& at) {
  const uint32_t experts = t.num_experts();
  const uint64_t ffn = ExpertFfnHiddenSize(t);
  const auto [finest_ep, finest_etp] = FinestExperts(s);
  bool sequence_parallel_named = false;
  for (int i = 0; i < s.replica_groups_size(); ++i) {
    const ReplicaGroup& g = s.replica_groups(i);
    const std::string group_at = absl::StrFormat("%sreplica_groups[%d].", at, i);
    const uint32_t ep = GroupExpertParallel(s, g), etp = GroupExpertTensorParallel(s, g);
    // An ETP nobody wrote is named as the default it is.
    const std::string etp_origin =
        g.expert_tensor_parallel() > 0 || s.expert_tensor_parallel() > 0
            ? ""
            : absl::StrFormat(
                  ", and expert_tensor_parallel %d is the default, the stage's largest tensor_parallel, as "
                  "Megatron-LM's --expert-tensor-parallel-size defaults to the TP",
                  etp);
    if (g.expert_parallel() > 0 && experts % ep != 0) {
      p.Add(group_at + "expert_parallel", "%d does not divide num_experts %d", ep, experts);
    }
    if (g.expert_tensor_parallel() > 0 && ffn != 0 && ffn % etp != 0) {
      p.Add(group_at + "expert_tensor_parallel", "%d does not divide expert_ffn_hidden_size %d", etp, ffn);
    }
    const uint64_t tp = spec::DegreeOrOne(g.tensor_parallel()), gpus = tp * spec::DegreeOrOne(g.data_parallel());
    if (gpus % (uint64_t{ep} * etp) != 0) {
      p.Add(group_at + "data_parallel",
            "the group's tensor_parallel x data_parallel %d GPUs are not a multiple of expert_parallel %d x "
            "expert_tensor_parallel %d (each replica group lays the experts out over its own GPUs%s)",
            gpus, ep, etp, etp_origin);
    } else if (finest_ep % ep != 0 || finest_etp % etp != 0) {
      p.Add(group_at + (finest_ep % ep != 0 ? "expert_parallel" : "expert_tensor_parallel"),
            "EP %d x ETP %d does not divide the finest group's EP %d x ETP %d (the experts' gradients reduce per "
            "shard of the finest split, so every group's EP and ETP divide the finest's%s)",
            ep, etp, finest_ep, finest_etp, etp_origin);
    }
    if (tp > 1 && !s.sequence_parallel() && !sequence_parallel_named) {
      sequence_parallel_named = true;
      p.Add(at + "sequence_parallel",
            "an MoE model with tensor_parallel %d (replica_groups[%d]) needs it (Megatron-LM's MoE layer refuses "
            "tensor parallelism without sequence parallelism)",
            tp, i);
    }
  }
}

void CheckMixedExperts(Problems& p, const Model& model, const Stage& s, const std::string& at) {
  const uint32_t ep = ExpertParallel(s), etp = ExpertTensorParallel(s);
  bool ok = CheckDegreeRanges(p, at,
                              {{"expert_parallel", ep, limits::kMaxDegree},
                               {"expert_tensor_parallel", s.expert_tensor_parallel(), limits::kMaxDegree}});
  for (int i = 0; i < s.replica_groups_size(); ++i) {
    const ReplicaGroup& g = s.replica_groups(i);
    ok &= CheckDegreeRanges(p, absl::StrFormat("%sreplica_groups[%d].", at, i),
                            {{"expert_parallel", g.expert_parallel(), limits::kMaxDegree},
                             {"expert_tensor_parallel", g.expert_tensor_parallel(), limits::kMaxDegree}});
  }
  if (!ok) return;
  const uint32_t experts = model.has_transformer() ? model.transformer().num_experts() : 0;
  if (experts <= 1) {
    if (ep > 1) p.Add(at + "expert_parallel", "%d needs a mixture-of-experts model (num_experts > 1)", ep);
    if (s.expert_tensor_parallel() != 0) {
      p.Add(at + "expert_tensor_parallel", "%d needs a mixture-of-experts model (num_experts > 1)",
            s.expert_tensor_parallel());
    }
    for (int i = 0; i < s.replica_groups_size(); ++i) {
      const ReplicaGroup& g = s.replica_groups(i);
      if (g.expert_parallel() == 0 && g.expert_tensor_parallel() == 0) continue;
      p.Add(absl::StrFormat("%sreplica_groups[%d].%s", at, i,
                            g.expert_parallel() != 0 ? "expert_parallel" : "expert_tensor_parallel"),
            "set, but the model is not a mixture of experts (num_experts <= 1)");
    }
    return;
  }
  if (experts % ep != 0) p.Add(at + "expert_parallel", "%d does not divide num_experts %d", ep, experts);
  if (const uint64_t ffn = ExpertFfnHiddenSize(model.transformer()); ffn != 0 && ffn % etp != 0) {
    p.Add(at + "expert_tensor_parallel", "%d does not divide expert_ffn_hidden_size %d", etp, ffn);
  }
  CheckGroupExperts(p, model.transformer(), s, at);
}

// One group's degrees against its mesh and the stage rules (ZeRO shards over all `replicas` of the stage).
void CheckGroupDegrees(Problems& p, const Model& model, const Stage& s, const ReplicaGroup& g, uint64_t replicas,
                       uint64_t micro_batch_size, const std::string& stage_at, const std::string& at) {
  const uint32_t tp = spec::DegreeOrOne(g.tensor_parallel()), dp = spec::DegreeOrOne(g.data_parallel());
  CheckMeshDegrees(p, g.mesh(), tp, 1, dp, at);
  if (g.micro_batch_share() == 0) {
    p.Add(at + "micro_batch_share", "required (samples of each microbatch each replica computes, >= 1)");
    return;
  }
  // Refused before the stage rules narrow them to int (the stage's replicas: its groups' data_parallel summed).
  const bool own_ok = CheckDegreeRanges(
      p, at, {{"tensor_parallel", tp, limits::kMaxDegree}, {"data_parallel", dp, limits::kMaxDegree}});
  if (!own_ok || !CheckDegreeRanges(p, stage_at, {{"zero_stage", s.zero_stage(), 3}})) return;
  if (replicas > limits::kMaxDegree) {
    p.Add(stage_at + "replica_groups", "the groups' data_parallel add up to %d replicas, more than %d", replicas,
          limits::kMaxDegree);
    return;
  }
  // Bounded before the shares are multiplied and added (a share of 2^64 - 1 wrapped the sum).
  if (g.micro_batch_share() > micro_batch_size) {
    p.Add(at + "micro_batch_share", "%d is more than micro_batch_size %d", g.micro_batch_share(), micro_batch_size);
    return;
  }
  const spec::StageParallelism group{.tensor_parallel = static_cast<int>(tp),
                                     .data_parallel = static_cast<int>(replicas),
                                     .zero_stage = static_cast<int>(s.zero_stage()),
                                     // Megatron-LM turns sequence parallelism off at TP 1 ("Disabling sequence
                                     // parallelism because tensor model parallelism is disabled",
                                     // megatron/training/arguments.py): a mixed stage's TP-1 groups run without it.
                                     .sequence_parallel = s.sequence_parallel() && tp > 1};
  spec::StageRuleModel rules;
  if (model.has_transformer()) {
    const Transformer& t = model.transformer();
    rules.num_attention_heads = t.num_attention_heads();
    rules.num_kv_heads = t.num_kv_heads();
    rules.ffn_hidden_size = FfnHiddenSize(t);
  }
  for (const spec::StageRuleProblem& r : spec::StageRuleProblems(group, 1, g.micro_batch_share() * replicas, rules)) {
    const bool own = r.field == "tensor_parallel" || r.field == "data_parallel";
    p.Add((own ? at : stage_at) + r.field, r.problem);
  }
}

// The shares add up to the micro-batch, every TP degree divides the largest, and replicas on more than
// one node can reach each other (a node without a NIC has no route out of it).
void CheckGroupsTogether(Problems& p, const Plan& plan, const Stage& s, const std::string& at,
                         const IslandIndex& islands) {
  uint64_t samples = 0;
  uint32_t max_tp = 1;
  bool wraps = false;  // a share times its replicas past 2^64: CheckGroupDegrees named the share
  for (const ReplicaGroup& g : s.replica_groups()) {
    uint64_t group_samples = 0;
    wraps |=
        __builtin_mul_overflow(g.micro_batch_share(), uint64_t{spec::DegreeOrOne(g.data_parallel())}, &group_samples) ||
        __builtin_add_overflow(samples, group_samples, &samples);
    max_tp = std::max(max_tp, spec::DegreeOrOne(g.tensor_parallel()));
  }
  if (!wraps && samples != plan.micro_batch_size()) {
    p.Add(at + "replica_groups",
          "the groups' data_parallel x micro_batch_share add up to %d samples, but micro_batch_size is %d", samples,
          plan.micro_batch_size());
  }
  for (int i = 0; i < s.replica_groups_size(); ++i) {
    const uint32_t tp = spec::DegreeOrOne(s.replica_groups(i).tensor_parallel());
    if (max_tp % tp != 0) {
      p.Add(absl::StrFormat("%sreplica_groups[%d].tensor_parallel", at, i),
            "%d does not divide %d, the largest of the stage's groups (gradients reduce per shard of the finest "
            "split)",
            tp, max_tp);
    }
  }
  const bool one_node = s.replica_groups_size() == 1 && s.replica_groups(0).mesh().node_count() == 1;
  if (one_node) return;
  for (int i = 0; i < s.replica_groups_size(); ++i) {
    const Mesh& m = s.replica_groups(i).mesh();
    const IslandInfo& island = islands.at(m.island());
    if (island.island->nics_per_node() == 0) {
      p.Add(absl::StrFormat("%sreplica_groups[%d].mesh.island", at, i),
            "island \"%s\" has no NIC (nics_per_node 0): no route joins this group's replicas to the stage's other "
            "replicas",
            m.island());
    }
  }
}

}  // namespace

bool CheckReplicaGroups(Problems& p, const Plan& plan, const Model& model, int index, const IslandIndex& islands) {
  const Stage& s = plan.stages(index);
  const std::string at = absl::StrFormat("stages[%d].", index);
  CheckMixedStageFields(p, plan, s, at);
  CheckMixedExperts(p, model, s, at);
  uint64_t replicas = 0;  // a sum of uint32s: wide enough for any count of groups the file can hold
  for (const ReplicaGroup& g : s.replica_groups()) replicas += spec::DegreeOrOne(g.data_parallel());
  const DType dtype = EffectiveDType(model);
  const bool measured = s.measured_forward_ms() > 0 && s.measured_backward_ms() > 0;
  bool meshes_ok = true;
  for (int i = 0; i < s.replica_groups_size(); ++i) {
    const ReplicaGroup& g = s.replica_groups(i);
    const std::string group_at = absl::StrFormat("%sreplica_groups[%d].", at, i);
    if (!CheckMesh(p, g.mesh(), group_at + "mesh.", islands)) {
      meshes_ok = false;
      continue;
    }
    CheckGroupDegrees(p, model, s, g, replicas, plan.micro_batch_size(), at, group_at);
    CheckIslandGpu(p, islands.at(g.mesh().island()), group_at + "mesh.island", dtype, measured);
  }
  if (meshes_ok) CheckGroupsTogether(p, plan, s, at, islands);
  return meshes_ok;
}

}  // namespace hetsim::proto
