// Gradient synchronisation across data-parallel pipelines of different shapes (Plan.pipelines;
// docs/cost-model.md, "Pipelines of different shapes"), as HexiScale/FlashFlex, Metis and Cephalo run
// them: every pipeline holds every layer, but the pipelines cut the layers into stages differently, so
// the gradients reduce per layer range. The cut points of all pipelines split the layers into ranges;
// each range lies inside one stage of every pipeline, and its gradients all-reduce over the GPUs of
// those stages (every replica of each), one group per shard of the finest tensor-parallel split among
// them (a GPU of TP t holds shard j x t / T of the finest T, so it joins T / t groups, as mixed replica
// groups do, replica_groups.h).
//
// Every pipeline and every range's all-reduce run at once on one engine and one network
// (ExecuteOnOneNetwork with the ranges as its SharedGradSync), as DDP reduces per bucket: a range's
// all-reduce starts when every stage that holds it has run the backward of its layers in its last
// microbatch (the end of that backward; with Plan.overlap_grad_reduce the point in it where the
// range's layers are done, layers running last to first), so it overlaps the other pipelines' tails
// and shares links with their boundary transfers. With Plan.grad_bucket_bytes a range reduces bucket by
// bucket (RangeBuckets), each bucket once every holder's backward is done with its part of the range
// (with overlap_grad_reduce; else at the last holder's last backward's end) and the bucket before it
// has been reduced. A stage steps its optimizer once all its ranges are
// reduced; the iteration ends with the last stage of the slowest pipeline. Under ZeRO-1/2 a range
// reduce-scatters, and all-gathers its parameters once every holder has stepped; a stage ends when all
// its ranges are gathered. The tied group (Plan.tied_embedding_grad_sync) does the same over its own
// holders, every copy of the matrix: the matrix's states shard over them (layer_range_shards.h).
//
// Context parallelism (Pipeline.context_parallel, Plan.context_parallel): every CP rank of a holder's
// replica holds its TP shard whole, so a shard group holds every holder's DP x CP ranks of it, as one
// pipeline's data-parallel group does (StageLayout::DataGroup; Megatron-LM's DDP reduces its dense
// buffers over get_data_parallel_group(with_context_parallel=True)). MoE: a range's experts reduce apart
// from its dense parameters, over expert-data-parallel groups (Megatron-LM's DDP allocates the experts'
// buffers of their own over get_expert_data_parallel_group(), the GPUs holding the same expert shard;
// megatron/core/distributed/distributed_data_parallel.py, _allocate_buffers_for_parameters):
// shard e (< ETP x EP) of the finest expert split among the holders, held by expert rank e of each holder at
// that split and by the GPUs of coarser holders whose experts contain it (each holder's EP and ETP divide the
// finest's: the plan check; StageLayout::ExpertShardGroup, as a mixed stage's groups); the
// range's expert buckets follow its dense ones, one at a time over the range's communicators, as one
// stage's do (setup.cc AppendBuckets).
#ifndef HETSIM_SIM_EXECUTOR_LAYER_RANGE_SYNC_H_
#define HETSIM_SIM_EXECUTOR_LAYER_RANGE_SYNC_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/ids.h"
#include "base/spec/grad_buckets.h"
#include "base/spec/plan.h"
#include "base/time.h"
#include "sim/collectives/collective.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"

namespace hetsim::executor {

struct LayerRangeHolder {
  int pipeline = 0;
  int stage = 0;
};

// The all-reduce of one layer range (spec::LayerRange); or, with `tied`, of the tied embedding's gradient.
struct LayerRangeGroup : spec::LayerRange {
  // Plan.tied_embedding_grad_sync (Megatron's embedding group, over every pipeline): the V x h matrix
  // that the embedding (first stage) and a tied head (last stage) share all-reduces over every stage
  // that holds a copy, the first and the last of each pipeline (a 1-stage pipeline's once); layers
  // 0 .. the head, and the ranges holding the embedding or the head reduce without it.
  bool tied = false;
  // With the tied group: this range's gradients, parameters and states without the tied matrix (when
  // it holds the embedding or the head, workload::DenseParamsWithoutTied).
  bool without_tied = false;
  std::vector<LayerRangeHolder> holders;  // one stage per pipeline, in pipeline order (tied: up to two)
  int shards = 1;                         // the finest TP among the holders
  // Per shard: the GPUs that hold it, holder after holder, each holder's replicas in order.
  std::vector<std::vector<GpuId>> groups;
  int64_t bytes = 0;  // per GPU of a shard group: the range's dense gradients over `shards`
  // MoE (a range holding experts): the finest expert split among its holders (EP x ETP, the largest ETP x EP;
  // every holder's EP and ETP divide its: the plan check), its ETP x EP shards, and per shard the GPUs that
  // hold it (every holder's StageLayout::ExpertShardGroup of that shard, holder after holder: expert rank e
  // of each copy of a holder at the finest layout, a GPU of a coarser holder in (ETP x EP) / its own of these
  // groups) with the experts' gradients per GPU of one (ExpertGradSyncBytes at the finest split) and, under
  // ZeRO-1/2, their parameters. Empty groups and 0 bytes for a dense range.
  int expert_shards = 1;
  int expert_parallel = 1, expert_tensor_parallel = 1;
  std::vector<std::vector<GpuId>> expert_groups;
  int64_t expert_bytes = 0;
  int64_t expert_param_bytes = 0;
  // Plan.grad_bucket_bytes (0: the range is one bucket): the range's `bytes` reduce in buckets of at
  // most this many, in backward order (bucket 0 holds the range's last layers), one at a time over the
  // range's communicators, as Megatron's DDP reduces a group's buckets on one stream. The tied group
  // is one bucket whatever its size (Megatron's _does_param_require_new_bucket).
  int64_t bucket_bytes = 0;
  Time start = kNoTime;             // when its first bucket's reduction started
  Time finish = kNoTime;            // when its last bucket's ended
  std::vector<Time> bucket_start;   // per bucket (RangeBuckets), when its reduction started
  std::vector<Time> bucket_finish;  // and ended
  // ZeRO-3 (FSDP): the gradients reduce-scatter as under ZeRO-1/2, and nothing gathers after the step:
  // the parameters stay sharded over the range's GPUs and each pass gathers its layers' (`param_bytes`
  // per GPU of a shard group; RangeGathersOf, ExecutionSetup::range_gathers).
  // ZeRO-1/2 (the holders' zero_stage, Megatron's distributed optimizer): the gradients reduce-scatter
  // instead (each GPU of a shard group keeps 1/n of `bytes`), every holder steps its shard, and once
  // all have, the updated parameters all-gather: `param_bytes` per GPU of a shard group (the range's
  // parameters over `shards`, of which each GPU held 1/n). The tied group too, over its own holders.
  int zero_stage = 0;
  int64_t param_bytes = 0;
  // Plan.overlap_param_gather: the step before's gather runs at the iteration's start instead, and each
  // holder's first forward waits for all its ranges' (the stage ends at its step).
  bool gather_at_start = false;
  Time gather_start = kNoTime;  // when the last holder had stepped (at the start: 0)
  Time gather_finish = kNoTime;
};

// The bytes of `group`'s buckets, per GPU of a shard group, in the order they reduce: `bytes` cut
// into pieces of `bucket_bytes` (the last the remainder), or one bucket.
std::vector<int64_t> RangeBuckets(const LayerRangeGroup& group);
// Its experts' buckets, per GPU of an expert-data-parallel group, reduced after RangeBuckets: `expert_bytes`
// cut the same way; none when the range holds no experts or they have no copies to reduce with.
std::vector<int64_t> ExpertBuckets(const LayerRangeGroup& group);

// The most buckets all ranges may hold together (each bucket is an event per holder and a collective
// per shard group): as many as a pipeline's microbatches (proto/limits.h kMaxMicrobatches).
inline constexpr int64_t kMaxRangeBuckets = spec::kMaxGradBuckets;

// `groups`' buckets counted before any is made; more than kMaxRangeBuckets, or more than
// spec::kMaxGradBucketEvents buckets x their ranges' holders: an error naming `where` (the plan file) and
// Plan.grad_bucket_bytes.
absl::Status CheckRangeBuckets(const std::vector<LayerRangeGroup>& groups, std::string_view where);

// The ranges of the pipelines' layers (each pipeline's stages cover every layer once, in order) and
// their groups; setups[p] is pipeline p's. Bytes from the model's parameters (DenseGradSyncBytes).
// With Plan.tied_embedding_grad_sync and a tied head, a last group `tied` (TiedGradSyncBytes) and the
// ranges without the matrix (RangeGradSyncBytesWithoutTied).
std::vector<LayerRangeGroup> LayerRangeGroups(const std::vector<const ExecutionSetup*>& setups);

struct PipelinesSyncResult {
  std::vector<LayerRangeGroup> groups;           // with start and finish (-1: not reached, a failure first)
  std::vector<std::vector<Time>> grad_sync_end;  // [pipeline][stage]: its ranges reduced (scattered)
  std::vector<std::vector<Time>> stage_end;      // [pipeline][stage]: after its optimizer step
  std::vector<Time> pipeline_end;                // the last stage_end of each pipeline
  Time iteration_time = 0;                       // the slowest pipeline's end (a failure's time)
  // The one fault runtime's transitions and effects, for every pipeline (each pipeline's result says
  // only whether and when a failure stopped it); empty without faults.
  faults::FaultOutcome faults;
};

struct PipelinesResult {
  // Per pipeline: its iteration with its stages' range reductions (grad_syncs: step = the range's
  // index) and steps; the shared network's events, flows and link counters (the ranges' too) are the
  // first's.
  std::vector<ExecutionResult> results;
  PipelinesSyncResult sync;
};

// ZeRO-3 (every holder's zero_stage 3): the ranges' parameter gathers each pipeline's passes run
// (ExecutionSetup::range_gathers), one per range of `groups` (LayerRangeGroups), over its shard groups,
// `param_bytes` each; empty when the ranges are not at ZeRO-3.
std::vector<RangeGather> RangeGathersOf(const std::vector<LayerRangeGroup>& groups);

// Runs every pipeline (setups[p] is pipeline p's, its own buckets dropped, DropStageGradientSync) and
// every range's all-reduce on one engine and one network over the first setup's topology (the
// pipelines share the cluster); options[p] is pipeline p's (faults: as ExecuteOnOneNetwork). Errors:
// a group without a route, the options' limits.
absl::StatusOr<PipelinesResult> ExecutePipelines(const std::vector<const ExecutionSetup*>& setups,
                                                 std::span<const ExecutorOptions> options,
                                                 collectives::RingSteps ring_steps);

// Leaves the data-parallel reduction of a pipeline's stages to the ranges: its buckets and their
// readiness cleared, and its own tied-embedding all-reduce (the ranges' tied group replaces it).
void DropStageGradientSync(ExecutionSetup& setup);

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_LAYER_RANGE_SYNC_H_
