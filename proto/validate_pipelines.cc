#include "proto/validate_pipelines.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "proto/layer_count.h"
#include "proto/limits.h"
#include "proto/pipeline_plans.h"
#include "proto/plan_meshes_internal.h"
#include "proto/validate_plan.h"
#include "proto/validate_prediction.h"
#include "proto/validate_problems.h"

namespace hetsim::proto {
namespace {

using hetsim::v1::Pipeline;
using hetsim::v1::Plan;
using hetsim::v1::Stage;

// The plan-wide settings the per-layer-range reduction does not model.
void CheckPlanSettings(Problems& p, const Plan& plan, const hetsim::v1::Model& model) {
  if (!plan.stages().empty()) p.Add("stages", "set beside pipelines: a plan has stages or pipelines, not both");
  // overlap_param_gather is modelled under ZeRO-1/2 (validate_plan.cc requires it): every range gathers
  // at the start and each stage's first forward waits for its ranges'.
  // overlap_grad_reduce and grad_bucket_bytes are modelled: a range reduces in buckets, each once its
  // holders' last backwards are done with its layers (sim/executor/layer_range_sync.h).
  // tied_embedding_grad_sync is modelled: the tied matrix all-reduces over every pipeline's first and
  // last stage (sim/executor/layer_range_sync.h), a 1-stage pipeline's stage holding one copy.
  // context_parallel (the plan's or a pipeline's) and MoE experts are modelled: each pipeline's stages
  // exchange K/V in their own CP groups and run their expert all-to-alls on their own GPUs; a range
  // reduces over every holder's DP x CP ranks, its experts over their expert-data-parallel groups
  // (CheckExpertSplits).
  // zero3_lock_step is not: its per-layer calls would pair holders whose schedules run the range's layers
  // in different orders (docs/heterogeneous.md, "Stock FSDP's lock-step").
  if (plan.zero3_lock_step()) {
    p.Add("zero3_lock_step",
          "not modelled with pipelines (a range's holders run their own schedules; each layer's gather in "
          "lock-step is modelled for one pipeline's stages)");
  }
  // zero_reduce_per_rank is not: a range's buckets reduce over every holder (layer_range_sync.h), not per stage.
  if (plan.zero_reduce_per_rank()) {
    p.Add("zero_reduce_per_rank", "not modelled with pipelines (the per-rank reduce calls are priced per stage)");
  }
  if (plan.tied_embedding_grad_sync() && !(model.has_transformer() && model.transformer().tied_embeddings())) {
    p.Add("tied_embedding_grad_sync", "needs a model with tied_embeddings (no tied copy to sync)");
  }
  // reference_policy is not: a range's states are re-sharded over its holders (layer_range_shards.h), which
  // would drop the reference's weights and its swap, priced per stage.
  if (plan.has_reference_policy()) {
    p.Add("reference_policy",
          "not modelled with pipelines (the reference model's weights and their swap are priced per stage of "
          "one pipeline)");
  }
}

// Names, shares and micro-batch sizes; the shares add up to the global batch.
void CheckShares(Problems& p, const Plan& plan) {
  absl::flat_hash_set<std::string> names;
  uint64_t total = 0;
  bool sum_meaningless = false;
  for (int i = 0; i < plan.pipelines_size(); ++i) {
    const Pipeline& pl = plan.pipelines(i);
    const std::string at = absl::StrFormat("pipelines[%d].", i);
    if (pl.name().empty()) p.Add(at + "name", "required (the report names each pipeline)");
    if (!pl.name().empty() && !names.insert(pl.name()).second) p.Add(at + "name", "\"%s\" twice", pl.name());
    if (pl.stages().empty()) p.Add(at + "stages", "required: at least one stage");
    const uint64_t micro = PipelineMicroBatchSize(plan, pl);
    if (pl.batch_share() == 0) {
      p.Add(at + "batch_share", "required (samples of the global batch, >= 1)");
    } else if (pl.batch_share() > plan.global_batch_size()) {
      // Checked before the sum: shares near 2^64 wrapped it to any total, 128 as well.
      p.Add(at + "batch_share", "%d is more than global_batch_size %d", pl.batch_share(), plan.global_batch_size());
      sum_meaningless = true;
    } else if (micro > 0 && pl.batch_share() % micro != 0) {
      p.Add(at + "batch_share", "%d is not a multiple of the micro-batch size %d", pl.batch_share(), micro);
    }
    sum_meaningless |= __builtin_add_overflow(total, pl.batch_share(), &total);
  }
  if (!sum_meaningless && total != plan.global_batch_size()) {
    p.Add("pipelines", "batch shares add up to %d samples, but global_batch_size is %d", total,
          plan.global_batch_size());
  }
}

// The pipelines' DAGs together: kMaxPipelineTasks bounds the plan, not each pipeline (16 pipelines of
// 10^6 microbatches passed one by one and exhausted the memory, session 33). After each pipeline's checks.
void CheckTasks(Problems& p, const Plan& plan) {
  uint64_t tasks = 0;
  for (const Pipeline& pl : plan.pipelines()) {
    const uint64_t micro = PipelineMicroBatchSize(plan, pl);
    if (micro == 0 || pl.batch_share() % micro != 0 || pl.batch_share() / micro > limits::kMaxMicrobatches ||
        plan.virtual_stages() > limits::kMaxVirtualStages || pl.stages_size() > limits::kMaxStages) {
      return;  // each pipeline's own check reports it
    }
    tasks += pl.batch_share() / micro * pl.stages_size() * VirtualStages(plan);
    if (tasks > limits::kMaxPipelineTasks) break;
  }
  if (tasks > limits::kMaxPipelineTasks) {
    p.Add("pipelines",
          "the pipelines hold more than %d pipeline tasks in all (microbatches x stages x virtual "
          "stages, summed over the pipelines)",
          limits::kMaxPipelineTasks);
  }
}

// What the pipelines' stages may not use. ZeRO-1/2 shard each layer range's states over all its
// holders (reduce-scatter, step, all-gather per range; with the tied sync the tied matrix as a range of
// its own over every copy), ZeRO-3 its parameters too, gathered before every pass over the range's
// holders at any microbatch counts and with the tied sync (sim/executor/layer_range_sync.h), so every
// stage takes the same zero_stage.
void CheckStages(Problems& p, const Plan& plan) {
  const uint32_t zero =
      plan.pipelines().empty() || plan.pipelines(0).stages().empty() ? 0 : plan.pipelines(0).stages(0).zero_stage();
  for (int i = 0; i < plan.pipelines_size(); ++i) {
    for (int s = 0; s < plan.pipelines(i).stages_size(); ++s) {
      const Stage& st = plan.pipelines(i).stages(s);
      const std::string at = absl::StrFormat("pipelines[%d].stages[%d].", i, s);
      // A mixed stage (replica_groups) under ZeRO: each group keeps its ranges' shards at its own TP
      // (executor::ShardStatesOverRanges).
      if (st.zero_stage() > 3) {
        // Out of range: compared with the first stage's, it blamed the stages that agree (session 33).
        p.Add(at + "zero_stage", "%d is outside [0, 3]", st.zero_stage());
        continue;
      }
      if (zero > 3) continue;  // pipelines[0].stages[0]'s own problem, reported there
      if (st.zero_stage() != zero) {
        p.Add(at + "zero_stage",
              "%d, but pipelines[0].stages[0] has %d: every stage of a plan of pipelines takes one zero_stage (a layer "
              "range's states shard over all the stages that hold it)",
              st.zero_stage(), zero);
      }
    }
  }
}

// No GPU in two pipelines (each pipeline's stages are disjoint: ValidatePlan passed, every mesh inside its
// island).
void CheckDisjoint(Problems& p, const Plan& plan) {
  GpuClaims claims;
  for (int i = 0; i < plan.pipelines_size(); ++i) {
    for (int s = 0; s < plan.pipelines(i).stages_size(); ++s) {
      const Stage& b = plan.pipelines(i).stages(s);
      const std::string field = b.replica_groups().empty() ? "mesh" : "replica_groups";
      for (const auto& [mesh, unused] : StageMeshes(b, s)) {
        const std::optional<GpuClaims::Owner> other = claims.Claim(*mesh, {.pipeline = i, .stage = s});
        if (!other.has_value() || other->pipeline == i) continue;
        p.Add(absl::StrFormat("pipelines[%d].stages[%d].%s", i, s, field),
              "shares GPUs of island \"%s\" with pipelines[%d].stages[%d] (no GPU may be in two pipelines)",
              mesh->island(), other->pipeline, other->stage);
        break;
      }
    }
  }
}

// A stage's tensor-parallel degrees: its own, or each of a mixed stage's groups'.
std::vector<uint32_t> TensorParallelsOf(const Stage& s) {
  if (s.replica_groups().empty()) return {TensorParallel(s)};
  std::vector<uint32_t> out;
  for (const hetsim::v1::ReplicaGroup& g : s.replica_groups()) out.push_back(spec::DegreeOrOne(g.tensor_parallel()));
  return out;
}

// The index of the stage of pipeline `pl` that holds `layer`, or -1.
int Holding(const Pipeline& pl, int layer) {
  for (int i = 0; i < pl.stages_size(); ++i) {
    const Stage& s = pl.stages(i);
    if (layer >= int64_t{s.first_layer()} && layer < int64_t{s.first_layer()} + s.num_layers()) return i;
  }
  return -1;
}

// Every TP degree holding a layer divides the finest one: a GPU then holds whole gradient shards.
void CheckShardSplits(Problems& p, const Plan& plan, int layer_count) {
  absl::flat_hash_set<std::string> reported;
  for (int layer = 0; layer < layer_count; ++layer) {
    uint32_t finest = 1;
    for (const Pipeline& pl : plan.pipelines()) {
      const int s = Holding(pl, layer);
      if (s < 0) continue;
      for (const uint32_t tp : TensorParallelsOf(pl.stages(s))) finest = std::max(finest, tp);
    }
    for (int i = 0; i < plan.pipelines_size(); ++i) {
      const int s = Holding(plan.pipelines(i), layer);
      if (s < 0) continue;
      const Stage& st = plan.pipelines(i).stages(s);
      const std::vector<uint32_t> tps = TensorParallelsOf(st);
      for (size_t g = 0; g < tps.size(); ++g) {
        const std::string at =
            st.replica_groups().empty()
                ? absl::StrFormat("pipelines[%d].stages[%d].tensor_parallel", i, s)
                : absl::StrFormat("pipelines[%d].stages[%d].replica_groups[%d].tensor_parallel", i, s, g);
        if (finest % tps[g] == 0 || !reported.insert(at).second) continue;
        p.Add(at,
              "%d does not divide %d, another pipeline's tensor_parallel at layer %d (gradients reduce per "
              "shard of the finest split)",
              tps[g], finest, layer);
      }
    }
  }
}

// Every expert layout (EP, ETP) a stage holds its experts at: its own, or each of a mixed stage's groups', with
// the field path of the message that sets it.
std::vector<std::pair<std::pair<uint32_t, uint32_t>, std::string>> ExpertLayoutsOf(const Stage& st,
                                                                                   const std::string& at) {
  std::vector<std::pair<std::pair<uint32_t, uint32_t>, std::string>> out;
  if (st.replica_groups().empty()) out.push_back({FinestExperts(st), at});
  for (int g = 0; g < st.replica_groups_size(); ++g) {
    const hetsim::v1::ReplicaGroup& rg = st.replica_groups(g);
    out.push_back({{GroupExpertParallel(st, rg), GroupExpertTensorParallel(st, rg)},
                   absl::StrFormat("%sreplica_groups[%d].", at, g)});
  }
  return out;
}

// MoE: a layer range's experts reduce per shard of the finest expert split among its holders (the largest
// ETP x EP of every holder and every mixed holder's groups; sim/executor/layer_range_sync.h, as a mixed
// stage's groups do, StageLayout::ExpertShardGroup), so every holder's EP and ETP divide the finest's: a GPU
// then holds whole finest shards (ETP defaults to the stage's TP; a mixed stage's, its largest).
void CheckExpertSplits(Problems& p, const Plan& plan, const hetsim::v1::Model& model, int layer_count) {
  if (!model.has_transformer() || model.transformer().num_experts() <= 1) return;
  absl::flat_hash_set<std::string> reported;
  for (int layer = 0; layer < layer_count; ++layer) {
    std::pair<uint32_t, uint32_t> finest = {1, 1};
    int finest_pipeline = 0;
    for (int i = 0; i < plan.pipelines_size(); ++i) {
      const int s = Holding(plan.pipelines(i), layer);
      if (s < 0) continue;
      const std::pair<uint32_t, uint32_t> mine = FinestExperts(plan.pipelines(i).stages(s));
      if (uint64_t{mine.first} * mine.second <= uint64_t{finest.first} * finest.second) continue;
      finest = mine;
      finest_pipeline = i;
    }
    for (int i = 0; i < plan.pipelines_size(); ++i) {
      const int s = Holding(plan.pipelines(i), layer);
      if (s < 0) continue;
      const std::string at = absl::StrFormat("pipelines[%d].stages[%d].", i, s);
      for (const auto& [layout, message] : ExpertLayoutsOf(plan.pipelines(i).stages(s), at)) {
        if (finest.first % layout.first == 0 && finest.second % layout.second == 0) continue;
        const std::string field =
            message + (finest.first % layout.first != 0 ? "expert_parallel" : "expert_tensor_parallel");
        if (!reported.insert(field).second) continue;
        p.Add(field,
              "EP %d x ETP %d does not divide EP %d x ETP %d, the finest expert split of layer %d (pipelines[%d]): the "
              "experts' gradients reduce per shard of the finest split over every pipeline holding the layer, so "
              "each holder's expert_parallel and expert_tensor_parallel divide the finest's "
              "(expert_tensor_parallel defaults to the stage's tensor_parallel)",
              layout.first, layout.second, finest.first, finest.second, layer, finest_pipeline);
      }
    }
  }
}

}  // namespace

absl::Status ValidatePipelines(const Plan& plan, const hetsim::v1::Cluster& cluster, const hetsim::v1::Model& model,
                               absl::string_view plan_file) {
  Problems p(plan_file);
  CheckPlanSettings(p, plan, model);
  CheckShares(p, plan);
  CheckStages(p, plan);
  HETSIM_RETURN_IF_ERROR(p.ToStatus());
  HETSIM_RETURN_IF_ERROR(p.ToStatus());
  for (int i = 0; i < plan.pipelines_size(); ++i) {
    // The tied sync is the pipelines' (checked above), so a 1-stage pipeline may take it.
    Plan one = PipelinePlan(plan, i);
    one.set_tied_embedding_grad_sync(false);
    HETSIM_RETURN_IF_ERROR(ValidatePlan(one, cluster, model, plan_file, i, plan.pipelines(i).context_parallel() > 0));
  }
  CheckTasks(p, plan);
  CheckDisjoint(p, plan);
  CheckShardSplits(p, plan, LayerCount(model));
  CheckExpertSplits(p, plan, model, LayerCount(model));
  CheckPrediction(p, plan);  // a stage per stage of every pipeline in turn (PipelinePlan drops it)
  return p.ToStatus();
}

}  // namespace hetsim::proto
