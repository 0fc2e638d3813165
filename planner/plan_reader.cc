#include "planner/plan_reader.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/spec/model.h"
#include "base/status_macros.h"
#include "planner/mixed_replicas.h"
#include "planner/pipelines.h"
#include "sim/pipeline/schedule.h"
#include "sim/workload/stage_cost.h"

namespace hetsim::planner {

namespace {

// A stage's option as the sum of its chunks' prices (interleaved plans: the chunks' layers are not
// contiguous); one chunk is the plan's own range. Per-GPU state and working set add up over chunks as
// the memory model does; the in-flight limit is the whole stage's.
std::optional<StageOption> PriceChunks(Profiler& profiler, int island, MeshShape shape, const IntraStageConfig& cfg,
                                       const std::vector<pipeline::LayerRange>& chunks,
                                       std::vector<SearchedStage::Chunk>& priced) {
  std::optional<StageOption> sum;
  for (const pipeline::LayerRange& r : chunks) {
    std::optional<StageOption> o = profiler.PriceDirect(island, shape, cfg, r.first_layer, r.num_layers);
    if (!o) return std::nullopt;
    if (chunks.size() > 1) priced.push_back({o->forward, o->backward, o->activation_bytes});
    if (!sum) {
      sum = o;
      continue;
    }
    sum->forward += o->forward;
    sum->backward += o->backward;
    sum->state_bytes += o->state_bytes;
    sum->activation_bytes += o->activation_bytes;
    sum->working_bytes = std::max(sum->working_bytes, o->working_bytes);
    sum->grad_sync_bytes += o->grad_sync_bytes;
    sum->expert_grad_sync_bytes += o->expert_grad_sync_bytes;
    sum->optimizer_passes += o->optimizer_passes;
  }
  if (sum && chunks.size() > 1) sum->grad_sync = SyncTimeOf(profiler.cluster(), island, shape, *sum);
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

// Stage `index` of a plan, mixed (Stage.replica_groups): each group priced on its own mesh and share
// (planner/mixed_replicas.h). Interleaved mixed stages are not priced.
absl::StatusOr<SearchedStage> PriceMixedStageOfPlan(GroupProfilers& profilers, const spec::StageSpec& st, size_t chunks,
                                                    int index) {
  if (chunks > 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "plan: stages[%d].replica_groups: the planner's cost model does not price an interleaved mixed stage", index));
  }
  std::vector<SearchedGroup> groups;
  for (const spec::ReplicaGroupSpec& rg : st.replica_groups) {
    absl::StatusOr<int32_t> island = profilers.base().cluster().topology().IslandIndex(rg.mesh.island);
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
  std::optional<SearchedStage> s = PriceMixedStage(profilers, static_cast<const spec::StageParallelism&>(st),
                                                   std::move(groups), st.first_layer, st.num_layers);
  if (!s) {
    return absl::InvalidArgumentError(
        absl::StrFormat("plan: stages[%d]: the cost model rejects a replica group of this stage", index));
  }
  s->warmup = st.warmup_forwards;
  return *std::move(s);
}

}  // namespace

Profiler PlanProfiler(const workload::ModelCost& model, const ClusterModel& cluster, const spec::PlanSpec& plan) {
  return Profiler(model, cluster, plan.micro_batch_size, FrameworkOptionsOf(plan), plan.context_parallel);
}

absl::StatusOr<std::vector<SearchedStage>> StagesOfPlan(Profiler& profiler, const spec::PlanSpec& plan) {
  const ClusterModel& cluster = profiler.cluster();
  const std::vector<std::vector<pipeline::LayerRange>> chunks = ChunksOf(profiler, plan);
  std::vector<SearchedStage> stages;
  GroupProfilers group_profilers(profiler);
  for (int i = 0; i < static_cast<int>(plan.stages.size()); ++i) {
    const spec::StageSpec& st = plan.stages[i];
    if (st.mixed()) {
      HETSIM_ASSIGN_OR_RETURN(SearchedStage mixed, PriceMixedStageOfPlan(group_profilers, st, chunks[i].size(), i));
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
    std::optional<StageOption> o = PriceChunks(profiler, s.island, s.shape, st, chunks[i], s.chunks);
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
    HETSIM_ASSIGN_OR_RETURN(stages[p], StagesOfPlan(profiler, one));
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
