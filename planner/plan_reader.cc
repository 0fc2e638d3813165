#include "planner/plan_reader.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/spec/model.h"
#include "base/status_macros.h"
#include "planner/mixed_replicas.h"
#include "planner/mixed_search.h"
#include "planner/pipelines.h"
#include "sim/pipeline/schedule.h"
#include "sim/workload/stage_cost.h"

namespace hetsim::planner {

namespace {

// Adds chunk `o`'s price to `sum`, a stage's (or a replica group's) chunks priced one by one (interleaved
// plans: the chunks' layers are not contiguous). Per-GPU state and working set add up over chunks as the
// memory model does; the in-flight limit is the first chunk's.
void AddChunkOption(StageOption& sum, const StageOption& o) {
  sum.forward += o.forward;
  sum.backward += o.backward;
  sum.gather_forward += o.gather_forward;
  sum.gather_backward += o.gather_backward;
  sum.state_bytes += o.state_bytes;
  sum.activation_bytes += o.activation_bytes;
  sum.working_bytes = std::max(sum.working_bytes, o.working_bytes);
  sum.grad_sync_bytes += o.grad_sync_bytes;
  sum.expert_grad_sync_bytes += o.expert_grad_sync_bytes;
  sum.optimizer_passes += o.optimizer_passes;
}

// ZeRO-3's parameter gathers of a plan's stage over its own replicas (StagesOfPlan's own_gathers), chunk by
// chunk: off unless the stage is at ZeRO-3.
struct OwnGathers {
  bool on = false;
  bool prefetch = false;   // Plan.zero3_prefetch
  bool lock_step = false;  // Plan.zero3_lock_step
  RangeNccl* nccl = nullptr;
  // Layers `r`'s gathers over `places`' shard groups (MixedLayerGathers), empty when off.
  std::vector<Time> Of(const Profiler& profiler, const std::vector<SearchedGroup>& places,
                       const pipeline::LayerRange& r) const {
    if (!on) return {};
    return MixedLayerGathers(profiler.model(), profiler.cluster(), places, r.first_layer, r.num_layers, *nccl);
  }
};

// A stage's option as the sum of its chunks' prices (AddChunkOption); one chunk is the plan's own range.
// With `gathers`, each chunk's passes include its layers' gathers over `place`, the stage's mesh.
std::optional<StageOption> PriceChunks(Profiler& profiler, const SearchedGroup& place, const IntraStageConfig& cfg,
                                       const std::vector<pipeline::LayerRange>& chunks, const OwnGathers& gathers,
                                       std::vector<SearchedStage::Chunk>& priced) {
  std::optional<StageOption> sum;
  for (const pipeline::LayerRange& r : chunks) {
    std::optional<StageOption> o = profiler.PriceDirect(place.island, place.shape, cfg, r.first_layer, r.num_layers);
    if (!o) return std::nullopt;
    AddZeroThreeGathers(gathers.Of(profiler, {place}, r), gathers.prefetch, *o);
    if (chunks.size() > 1) priced.push_back({o->forward, o->backward, o->activation_bytes});
    if (!sum) {
      sum = o;
      continue;
    }
    AddChunkOption(*sum, *o);
  }
  if (sum && chunks.size() > 1) sum->grad_sync = SyncTimeOf(profiler.cluster(), place.island, place.shape, *sum);
  return sum;
}

// Per physical stage, the layer ranges of its chunks (VirtualStageLayers' k = chunk x S + stage).
std::vector<std::vector<pipeline::LayerRange>> ChunksOf(const Profiler& profiler, const spec::PlanSpec& plan) {
  const int S = static_cast<int>(plan.stages.size());
  const int v = plan.virtual_stages;
  std::vector<std::vector<pipeline::LayerRange>> chunks(S);
  if (v == 1) {
    for (int i = 0; i < S; ++i) chunks[i].push_back(static_cast<const spec::LayerRange&>(plan.stages[i]));
    return chunks;
  }
  std::vector<int> counts;
  for (const spec::StageSpec& st : plan.stages) counts.push_back(st.num_layers);
  const spec::EdgeLayers edges = profiler.model().edge_layers();
  const std::vector<pipeline::LayerRange> ranges = plan.virtual_stage_layers.empty()
                                                       ? pipeline::VirtualStageLayers(counts, v, edges)
                                                       : pipeline::DealtVirtualStageLayers(plan.virtual_stage_layers);
  for (size_t k = 0; k < ranges.size(); ++k) chunks[k % S].push_back(ranges[k]);
  return chunks;
}

// The replica groups of mixed stage `st` as the planner places them (their meshes, TP, DP and shares).
absl::StatusOr<std::vector<SearchedGroup>> GroupsOfStage(const ClusterModel& cluster, const spec::StageSpec& st) {
  std::vector<SearchedGroup> groups;
  for (const spec::ReplicaGroupSpec& rg : st.replica_groups) {
    absl::StatusOr<int32_t> island = cluster.topology().IslandIndex(rg.mesh.island);
    if (!island.ok()) return island.status();
    SearchedGroup& g = groups.emplace_back();
    g.island = *island;
    g.shape = {static_cast<int>(rg.mesh.node_count), static_cast<int>(rg.mesh.gpus_per_node)};
    g.first_node = static_cast<int>(rg.mesh.first_node);
    g.first_gpu = static_cast<int>(rg.mesh.first_gpu);
    g.tensor_parallel = rg.tensor_parallel;
    g.data_parallel = rg.data_parallel;
    g.share = rg.micro_batch_share;
    g.expert_parallel = rg.expert_parallel;
    g.expert_tensor_parallel = rg.expert_tensor_parallel;
  }
  return groups;
}

// Chunk `c` (priced alone: its groups' passes, the slowest's the stage's) added to mixed stage `s`: each
// group's option summed over the chunks (AddChunkOption) and its activations per chunk kept for the
// memory of the schedule's order (SearchedGroup::chunk_activation_bytes), the stage's pass the sum of the
// chunks' slowest groups', as the simulator runs each virtual stage of a mixed stage (its groups, then
// CombineReplicaGroups).
void AddMixedChunk(SearchedStage& s, const SearchedStage& c, bool interleaved) {
  if (interleaved) s.chunks.push_back({c.option.forward, c.option.backward, c.option.activation_bytes});
  if (s.groups.empty()) {
    const std::vector<SearchedStage::Chunk> chunks = std::move(s.chunks);
    s = c;
    s.chunks = chunks;
  } else {
    s.option.forward += c.option.forward;
    s.option.backward += c.option.backward;
    for (size_t g = 0; g < s.groups.size(); ++g) AddChunkOption(s.groups[g].option, c.groups[g].option);
  }
  if (!interleaved) return;
  for (size_t g = 0; g < s.groups.size(); ++g)
    s.groups[g].chunk_activation_bytes.push_back(c.groups[g].option.activation_bytes);
}

// Stage `index` of a plan, mixed (Stage.replica_groups): each group priced on its own mesh and share
// (planner/mixed_replicas.h), chunk by chunk when interleaved (AddMixedChunk), then the gradients'
// synchronisation of every chunk's at once over every replica (as one chunk of their sum, as PriceChunks).
absl::StatusOr<SearchedStage> PriceMixedStageOfPlan(GroupProfilers& profilers, const spec::StageSpec& st,
                                                    const std::vector<pipeline::LayerRange>& chunks,
                                                    const OwnGathers& gathers, int index) {
  const Profiler& base = profilers.base();
  HETSIM_ASSIGN_OR_RETURN(const std::vector<SearchedGroup> groups, GroupsOfStage(base.cluster(), st));
  SearchedStage s;
  for (const pipeline::LayerRange& r : chunks) {
    std::optional<SearchedStage> c =
        PriceMixedStage(profilers, static_cast<const spec::StageParallelism&>(st), groups, r.first_layer, r.num_layers);
    if (!c) {
      return absl::InvalidArgumentError(
          absl::StrFormat("plan: stages[%d]: the cost model rejects a replica group of this stage", index));
    }
    AddMixedStageGathers(gathers.Of(base, c->groups, r), gathers.prefetch, gathers.lock_step, *c);
    AddMixedChunk(s, *c, chunks.size() > 1);
  }
  static_cast<spec::LayerRange&>(s) = st;
  s.first_group = s.first_layer;
  s.last_group = s.first_layer + s.num_layers - 1;
  if (chunks.size() > 1) {
    // PriceMixedStage's expert block (its stage-wide ETP x EP; a dense model's groups have no experts' bytes).
    const int expert_block = s.option.config.expert_tensor_parallel * s.option.config.expert_parallel;
    MixedSync sync = MixedGradSync(base.cluster(), s.groups, st.zero_stage, profilers.Nccl(), expert_block);
    s.option.grad_sync = sync.time;
    s.grad_sync_flows = std::move(sync.flows);
  }
  s.warmup = st.warmup_forwards;
  return s;
}

}  // namespace

Profiler PlanProfiler(const workload::ModelCost& model, const ClusterModel& cluster, const spec::PlanSpec& plan) {
  return Profiler(model, cluster, plan.micro_batch_size, FrameworkOptionsOf(plan), plan.context_parallel);
}

absl::StatusOr<std::vector<SearchedStage>> StagesOfPlan(Profiler& profiler, const spec::PlanSpec& plan,
                                                        bool own_gathers) {
  const ClusterModel& cluster = profiler.cluster();
  const std::vector<std::vector<pipeline::LayerRange>> chunks = ChunksOf(profiler, plan);
  std::vector<SearchedStage> stages;
  GroupProfilers group_profilers(profiler);
  for (int i = 0; i < static_cast<int>(plan.stages.size()); ++i) {
    const spec::StageSpec& st = plan.stages[i];
    const OwnGathers gathers{.on = own_gathers && st.zero_stage >= 3,
                             .prefetch = plan.zero3_prefetch,
                             .lock_step = plan.zero3_lock_step,
                             .nccl = &group_profilers.Nccl()};
    if (st.mixed()) {
      HETSIM_ASSIGN_OR_RETURN(SearchedStage mixed, PriceMixedStageOfPlan(group_profilers, st, chunks[i], gathers, i));
      stages.push_back(std::move(mixed));
      continue;
    }
    absl::StatusOr<int32_t> island = cluster.topology().IslandIndex(st.mesh.island);
    if (!island.ok()) return island.status();
    SearchedStage s;
    static_cast<spec::LayerRange&>(s) = st;
    s.first_group = st.first_layer;
    s.last_group = s.first_layer + s.num_layers - 1;
    s.island = *island;
    s.shape = {static_cast<int>(st.mesh.node_count), static_cast<int>(st.mesh.gpus_per_node)};
    // The stage's mesh as one replica group: its shard groups are its DP x CP ranks of each TP rank.
    SearchedGroup place;
    place.island = s.island;
    place.shape = s.shape;
    place.first_node = static_cast<int>(st.mesh.first_node);
    place.first_gpu = static_cast<int>(st.mesh.first_gpu);
    place.tensor_parallel = std::max(1, st.tensor_parallel);
    place.data_parallel = std::max(1, st.data_parallel) * std::max(1, plan.context_parallel);
    std::optional<StageOption> o = PriceChunks(profiler, place, st, chunks[i], gathers, s.chunks);
    if (!o) {
      return absl::InvalidArgumentError(
          absl::StrFormat("plan: stages[%d]: the cost model rejects this stage configuration", i));
    }
    s.option = *o;
    s.warmup = st.warmup_forwards;
    stages.push_back(s);
  }
  // Interleaved: the last stage also sends its chunks' outputs back to the first stage.
  const size_t senders = chunks.front().size() > 1 ? stages.size() : stages.size() - 1;
  for (size_t i = 0; i < senders; ++i) {
    const pipeline::LayerRange& out = chunks[i].front();
    const size_t next = (i + 1) % stages.size();
    if (!stages[i].groups.empty() || !stages[next].groups.empty()) {
      stages[i].comm_out = MixedBoundaryTime(cluster, profiler.BoundaryBytes(out.first_layer + out.num_layers - 1),
                                             plan.micro_batch_size, stages[i], stages[next]);
      continue;
    }
    const PlacedMesh sender{stages[i].shape, static_cast<int>(plan.stages[i].mesh.first_node)};
    const PlacedMesh receiver{stages[next].shape, static_cast<int>(plan.stages[next].mesh.first_node)};
    stages[i].comm_out =
        cluster.PlacedBoundaryTime(stages[i].island, stages[next].island,
                                   profiler.BoundaryBytes(out.first_layer + out.num_layers - 1), sender, receiver);
  }
  return stages;
}

namespace {

// Plan.tied_embedding_grad_sync on a pipeline of a tied model: GPU k of the first stage all-reduces
// its vocabulary shard's gradients (V h / TP of the first stage, in the gradients' type) with GPU k of
// the last, every pair at once (sim/executor/setup.cc, AddTiedEmbeddingSync): a two-GPU ring moves the
// shard once each way in two steps, so the pairs' bytes cross from the first stage's mesh to the last's
// as a boundary transfer does, plus a second step's latency. 0 otherwise (and for mixed stages, whose
// pairs the planner does not place).
Time TiedSyncTime(const Profiler& profiler, const spec::PlanSpec& plan, const std::vector<SearchedStage>& stages) {
  const workload::ModelCost& model = profiler.model();
  if (!plan.tied_embedding_grad_sync || stages.size() < 2) return 0;
  const SearchedStage& first = stages.front();
  const SearchedStage& last = stages.back();
  if (!first.groups.empty() || !last.groups.empty()) return 0;
  const bool fp32 = workload::TiedGradientsInFp32(model.dtype(), plan.grad_reduce_in_fp32);
  const int64_t bytes = workload::TiedGradSyncBytes(model, first.option.config.tensor_parallel, fp32);
  const int pairs = std::min(first.shape.gpus(), last.shape.gpus());
  if (bytes <= 0 || pairs <= 0) return 0;
  const PlacedMesh sender{first.shape, static_cast<int>(plan.stages.front().mesh.first_node)};
  const PlacedMesh receiver{last.shape, static_cast<int>(plan.stages.back().mesh.first_node)};
  const ClusterModel& cluster = profiler.cluster();
  return cluster.PlacedBoundaryTime(first.island, last.island, static_cast<double>(bytes) * pairs, sender, receiver) +
         cluster.BoundaryLink(first.island, last.island).latency;
}

// Predict with the plan's schedule and explicit warm-up counts over its priced `stages` (`release`: each
// stage's first forward's earliest start, Predict's first_forward_release).
absl::StatusOr<Prediction> PredictStagesOfPlan(const Profiler& profiler, const spec::PlanSpec& plan,
                                               const std::vector<SearchedStage>& stages,
                                               const std::vector<Time>& release = {},
                                               const std::vector<Time>& node_release = {},
                                               PredictedPasses* passes = nullptr) {
  std::vector<int> warmups;
  bool any = false;
  for (const SearchedStage& s : stages) {
    warmups.push_back(s.warmup);
    any = any || s.warmup > 0;
  }
  if (!any) warmups.clear();
  return Predict(profiler.cluster(), stages, plan.microbatches, plan.schedule, plan.h1f1b_epsilon, warmups,
                 WorkOf(profiler.model(), plan.global_batch_size), plan.virtual_stages,
                 TiedSyncTime(profiler, plan, stages), release, node_release, passes);
}

// Pipeline p of `plan` as a plan of its own, as the simulator sets it up (proto::PipelinePlan).
spec::PlanSpec PipelineAsPlan(const spec::PlanSpec& plan, size_t p) {
  spec::PlanSpec one = plan;
  one.pipelines.clear();
  one.tied_embedding_grad_sync = false;  // the pipelines' tied ring (PriceLayerRanges) replaces each one's
  one.stages = plan.pipelines[p].stages;
  one.global_batch_size = plan.pipelines[p].batch_share;
  if (plan.pipelines[p].micro_batch_size > 0) one.micro_batch_size = plan.pipelines[p].micro_batch_size;
  one.context_parallel = plan.pipelines[p].context_parallel;
  one.microbatches = static_cast<int64_t>(one.global_batch_size / std::max<uint64_t>(1, one.micro_batch_size));
  return one;
}

}  // namespace

absl::StatusOr<Prediction> PredictPlan(Profiler& profiler, const spec::PlanSpec& plan) {
  HETSIM_ASSIGN_OR_RETURN(std::vector<SearchedStage> stages, StagesOfPlan(profiler, plan));
  return PredictStagesOfPlan(profiler, plan, stages);
}

absl::StatusOr<Prediction> PredictPipelinesPlan(const workload::ModelCost& model, const ClusterModel& cluster,
                                                const spec::PlanSpec& plan, LayerRangesPrice* ranges) {
  const size_t n = plan.pipelines.size();
  if (n == 0) return absl::InvalidArgumentError("planner: a plan of pipelines has none");
  std::vector<spec::PlanSpec> ones;
  ones.reserve(n);
  std::vector<std::vector<SearchedStage>> stages(n);
  std::vector<Prediction> predictions(n);
  std::vector<PricedPipeline> priced;
  for (size_t p = 0; p < n; ++p) {
    const spec::PlanSpec& one = ones.emplace_back(PipelineAsPlan(plan, p));
    Profiler profiler = PlanProfiler(model, cluster, one);
    HETSIM_ASSIGN_OR_RETURN(stages[p], StagesOfPlan(profiler, one, /*own_gathers=*/false));
    HETSIM_ASSIGN_OR_RETURN(predictions[p], PredictStagesOfPlan(profiler, one, stages[p]));
    std::vector<int> first_node, first_gpu;
    for (const spec::StageSpec& st : one.stages) {
      first_node.push_back(static_cast<int>(st.mesh.first_node));
      first_gpu.push_back(static_cast<int>(st.mesh.first_gpu));
    }
    priced.push_back(
        {&cluster, &stages[p], &predictions[p], std::move(first_node), std::move(first_gpu), one.context_parallel});
  }
  // ZeRO-3: every pass gathers its layers over their ranges' shard groups (not over the stage's own
  // replicas, none at DP 1): each pipeline predicted again with its passes longer by the exposed gathers.
  const ZeroThreeGathers gathers = RangeGathersOfZeroThree(model, cluster, plan.zero3_prefetch, priced);
  for (size_t p = 0; p < gathers.forward.size(); ++p) {
    for (size_t i = 0; i < stages[p].size(); ++i) {
      stages[p][i].option.forward += gathers.forward[p][i];
      stages[p][i].option.backward += gathers.backward[p][i];
    }
    Profiler profiler = PlanProfiler(model, cluster, ones[p]);
    HETSIM_ASSIGN_OR_RETURN(predictions[p], PredictStagesOfPlan(profiler, ones[p], stages[p]));
  }
  // ZeRO-3 across pipelines: every pass waits for its ranges' other holders' same call.
  HETSIM_RETURN_IF_ERROR(
      IterateGatherCalls(ZeroThreeCallRanges(model, cluster, priced, gathers), n,
                         [&](size_t p, const std::vector<Time>& release, PredictedPasses& passes) -> absl::Status {
                           const Profiler profiler = PlanProfiler(model, cluster, ones[p]);
                           HETSIM_ASSIGN_OR_RETURN(
                               predictions[p], PredictStagesOfPlan(profiler, ones[p], stages[p], {}, release, &passes));
                           return absl::OkStatus();
                         }));
  // The simulator's overlap (layer_range_sync.cc, ReadyAt) needs one model chunk per stage.
  const RangeOptions options{.grad_reduce_in_fp32 = plan.grad_reduce_in_fp32,
                             .tied_embedding_grad_sync = plan.tied_embedding_grad_sync,
                             .overlap_grad_reduce = plan.overlap_grad_reduce && plan.virtual_stages <= 1,
                             .grad_bucket_bytes = static_cast<int64_t>(plan.grad_bucket_bytes),
                             .overlap_param_gather = plan.overlap_param_gather};
  HETSIM_RETURN_IF_ERROR(CheckRangeBucketCount(model, cluster, options, priced, plan.where));
  // Plan.overlap_param_gather: every pipeline predicted again with its stages' first forwards waiting
  // for their ranges' gathers at the start.
  const std::vector<std::vector<Time>> release = EarlyGathers(model, cluster, options, priced);
  for (size_t p = 0; p < release.size(); ++p) {
    Profiler profiler = PlanProfiler(model, cluster, ones[p]);
    HETSIM_ASSIGN_OR_RETURN(predictions[p], PredictStagesOfPlan(profiler, ones[p], stages[p], release[p]));
  }
  const LayerRangesPrice price = PriceLayerRanges(model, cluster, options, priced);
  for (size_t p = 0; p < n; ++p) ApplyLayerRanges(price, p, predictions[p]);
  if (ranges != nullptr) *ranges = price;
  return CombinePipelines(priced, price.iteration, WorkOf(model, plan.global_batch_size));
}

}  // namespace hetsim::planner
