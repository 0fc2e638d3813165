// The layer ranges of a plan of pipelines (Plan.pipelines, issue 39): the cut points of every pipeline
// split the model's layers into ranges, and each range's gradients synchronise over the stages that
// hold it. Prices those rings as NCCL runs them on the links they cross (ring or double tree, buckets,
// overlap, ZeRO-1/2 reduce-scatter and gathers, the tied matrix), the states each holder keeps, and
// ZeRO-3's per-layer gathers with every pass waiting for its holders' same call, as the simulator's
// sim/executor/layer_range_sync.h and gather_calls.h run them. The family (pipelines.h) and
// `validate` (plan_reader.h) both price through it.
#ifndef HETSIM_PLANNER_LAYER_RANGES_H_
#define HETSIM_PLANNER_LAYER_RANGES_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "base/time.h"
#include "planner/candidates_internal.h"
#include "planner/cluster_model.h"
#include "planner/prediction.h"

namespace hetsim::planner {

// One pipeline of a plan of pipelines as priced: its stages (islands of `cluster`, matched by name to
// the whole cluster's) and their prediction at its batch share.
struct PricedPipeline {
  const ClusterModel* cluster;
  const std::vector<SearchedStage>* stages;
  const Prediction* prediction;
  // Per stage: the first node of its mesh in its island (the plan's Mesh.first_node), which tells the
  // ranges whose holders all sit on one node (their rings then stay on its links); empty: not placed.
  std::vector<int> first_node;
  // Per stage: the first GPU of its mesh in each node (Mesh.first_gpu): with first_node, the GPUs of a
  // range's shard groups, whose collectives NCCL's model prices as the simulator does (RangeNccl).
  std::vector<int> first_gpu;
  // Its stages' context parallelism (spec::PipelineSpec::context_parallel): every CP rank of a replica
  // holds its TP shard whole and joins the shard's ring.
  int context_parallel = 1;
};

struct LayerRangesPrice {
  int ranges = 0;         // layer ranges whose gradients all-reduce across pipelines
  Time slowest_ring = 0;  // the longest of their rings
  Time iteration = 0;     // the slowest pipeline's end after its ranges' all-reduces and optimizer steps
  // [pipeline][stage]: what the stage waits for its ranges after its last backward, plus its optimizer
  // step (as the simulator's report counts a stage's grad_sync_ms + optimizer_ms).
  std::vector<std::vector<Time>> grad_sync;
  // [pipeline][stage]: ZeRO-1/2's model states sharded per range over the range's ring, less the
  // stage's own pricing of them (sharded over its replicas); 0 without ZeRO and for a mixed stage.
  std::vector<std::vector<int64_t>> state_delta;
  // [pipeline][stage][group]: the same for each replica group of a mixed stage (its GPUs at the group's
  // TP, against the group's own pricing); empty for a stage on one mesh, whose state_delta it is.
  std::vector<std::vector<std::vector<int64_t>>> group_state_delta;
  std::vector<Time> end;  // per pipeline: its last stage's end
  // Per range (in layer order, the tied ring last), per bucket: when its reduction begins (its holders
  // ready and the bucket before ended) and ends (latencies included).
  struct Range {
    int first_layer = 0, end_layer = 0;
    bool tied = false;
    std::vector<Time> bucket_start, bucket_end;
  };
  std::vector<Range> range_times;
};

struct RangeOptions {
  bool grad_reduce_in_fp32 = false;
  // Plan.tied_embedding_grad_sync: the tied embedding's matrix all-reduces in a ring of its own over
  // every pipeline's first and last stage (a 1-stage pipeline's once), ready when they all have run
  // their last backward; the ranges holding the embedding or the head reduce without it.
  bool tied_embedding_grad_sync = false;
  // Plan.overlap_grad_reduce with one model chunk per stage: a holder is ready for a range (a bucket of
  // it) where its last backward is done with the range's layers (each layer an equal part of that
  // backward, last to first), not at its end (sim/executor/layer_range_sync.cc, ReadyAt).
  bool overlap_grad_reduce = false;
  // Plan.grad_bucket_bytes (0: one bucket per range): a range reduces in buckets of this many bytes per
  // GPU of a shard group, its last layers' first, one at a time over its ring, each once every holder
  // is ready for it and the one before has ended; each pays its own latencies (executor::RangeBuckets).
  int64_t grad_bucket_bytes = 0;
  // Plan.overlap_param_gather under ZeRO-1/2: the ranges' all-gathers run at the iteration's start
  // (EarlyGathers; the caller predicts each pipeline with its stages' first forwards released there),
  // so after the backward a range only reduce-scatters and a stage ends at its optimizer step.
  bool overlap_param_gather = false;
};

// Every layer range's all-reduce over the stages that hold it, on `cluster` (the whole cluster): a
// range starts when its last holder has run its last backward, its ring priced as a mixed stage's
// (MixedRingOf), the ranges whose times overlap sharing the links they have in common (each holding
// stage's NIC share, each crossing between two islands; ShareLinks, max-min), and each stage steps its
// optimizer once its ranges are reduced. ZeRO-1/2 (the holders' zero_stage): a range reduce-scatters its
// gradients and all-gathers its parameters over the ring (priced as one all-reduce of their mean; in
// buckets, the buckets' reduce-scatters and the last with the all-gather; with overlap_param_gather
// the reduce-scatters alone), and a stage's states and step shard per range over the range's GPUs;
// with the tied sync the tied ring does the same with the matrix over every copy, and the ranges beside
// it shard theirs without it. Buckets and overlapped reduction: RangeOptions.
LayerRangesPrice PriceLayerRanges(const workload::ModelCost& model, const ClusterModel& cluster,
                                  const RangeOptions& options, const std::vector<PricedPipeline>& pipelines);

// The buckets PriceLayerRanges would cut every range's gradients (and its experts') into, counted before
// any is cut: more than spec::kMaxGradBuckets, or more than spec::kMaxGradBucketEvents buckets x their
// rings' holders, is InvalidArgument naming `where` (the plan file) and Plan.grad_bucket_bytes, as the
// simulator refuses them (executor::CheckRangeBuckets).
absl::Status CheckRangeBucketCount(const workload::ModelCost& model, const ClusterModel& cluster,
                                   const RangeOptions& options, const std::vector<PricedPipeline>& pipelines,
                                   std::string_view where);

// Plan.overlap_param_gather under ZeRO-1/2 (options.overlap_param_gather and the holders' zero_stage):
// [pipeline][stage] when the all-gathers of the step before's parameters of every range it holds have
// ended, every range's ring started at once at the iteration's start, sharing the links they have in
// common as PriceLayerRanges' rings do; what the stage's first forward waits for. Empty otherwise.
std::vector<std::vector<Time>> EarlyGathers(const workload::ModelCost& model, const ClusterModel& cluster,
                                            const RangeOptions& options, const std::vector<PricedPipeline>& pipelines);

// ZeRO-3: `bytes` (a layer range's or a stage's parameters per GPU of a shard group) split over layers
// [first, end) by weight, each layer's dense parameters and the tied matrix with the layer that holds it,
// rounded cumulatively so that they add up to `bytes` (the simulator's LayerGatherBytes and GatherWeight,
// sim/executor/setup.cc); all 0 when the layers weigh nothing.
std::vector<int64_t> LayerGatherBytes(const workload::ModelCost& model, int first, int end, int64_t bytes);

// ZeRO-3 in a plan of pipelines (every range's holders at zero_stage 3), as the simulator runs it
// (sim/executor/setup.cc, RangeGathers): each layer's parameters are all-gathered before its forward
// and again before its backward over the shard groups of the range holding it, every GPU of every
// pipeline that holds the range, its share of the range's parameter bytes by dense parameter count,
// each gather alone on the links as NCCL runs it (RangeFlow); exposed, or with `prefetch`
// (Plan.zero3_prefetch) hidden up to the compute of the layer before it in pass order (each layer an
// equal part of the stage's pass). [pipeline][stage]: a forward's and a backward's exposed gathers;
// empty when the ranges are not at ZeRO-3.
struct ZeroThreeGathers {
  std::vector<std::vector<Time>> forward, backward;
  // [pipeline][stage]: per range it holds, where in a forward and in a backward pass the range's first
  // layer (in pass order) comes: the time of the layers before it, each an equal part of the stage's pass
  // without its gathers and its exposed gather (the simulator's executor::GatherCallOffset).
  struct Offset {
    int first_layer = 0;
    Time forward = 0, backward = 0;
  };
  std::vector<std::vector<std::vector<Offset>>> offsets;
};
ZeroThreeGathers RangeGathersOfZeroThree(const workload::ModelCost& model, const ClusterModel& cluster, bool prefetch,
                                         const std::vector<PricedPipeline>& pipelines);

// ZeRO-3 in a plan of pipelines, each range's gathers matched per call across its holders (the simulator's
// sim/executor/gather_calls.h): per range whose shard groups hold more than one GPU and that more than one
// stage holds, its holders (pipeline, stage) and where in each holder's forward and backward passes the
// range's first layer comes (`gathers`' offsets), the tied matrix's aside; none when the ranges are not at
// ZeRO-3.
struct ZeroThreeCallRange {
  std::vector<std::pair<size_t, size_t>> holders;
  std::vector<Time> forward_offset, backward_offset;  // per holder
};
std::vector<ZeroThreeCallRange> ZeroThreeCallRanges(const workload::ModelCost& model, const ClusterModel& cluster,
                                                    const std::vector<PricedPipeline>& pipelines,
                                                    const ZeroThreeGathers& gathers);

// [pipeline][DAG node]: the earliest each pass may start so that it waits, as the simulator's GatherCalls,
// for every holder of each range in `ranges` (ZeroThreeCallRanges) to make the same-numbered call: holder
// h's k-th pass over a range reaches the range's first layer (its offset into the pass) once the holders'
// k-th passes are all ready (their DAG predecessors ended; a pass calls all its ranges' gathers then), a
// holder with fewer passes counting from its last one's end (it joins the rest). A pass held at a later
// range's layer mid-way ends as if it had started that much later, as here: the simulator starts it
// earlier and holds it there, the end is the same. `passes` is each pipeline's prediction with the
// releases before; the fixed point is reached by calling this until it returns what it was given
// (`release`, updated in place, only ever raised: returns whether it changed).
bool ZeroThreeCallReleases(const std::vector<ZeroThreeCallRange>& ranges, const std::vector<PredictedPasses>& passes,
                           std::vector<std::vector<Time>>& release);

// ZeRO-3 across pipelines: the `n` pipelines predicted again and again (`predict(p, release, passes)`:
// pipeline p with its passes starting no earlier than `release`, recording them in `passes`), each pass
// waiting for its ranges' other holders' same call (ZeroThreeCallReleases), until no pass moves. The
// releases only grow, each bounded by the iteration, so this ends; a bound on the rounds guards it. Used
// by the family's pricing (pipelines.cc) and `validate`'s (plan_reader.cc) alike.
absl::Status IterateGatherCalls(
    const std::vector<ZeroThreeCallRange>& ranges, size_t n,
    absl::FunctionRef<absl::Status(size_t p, const std::vector<Time>& release, PredictedPasses& passes)> predict);

// Pipeline `p`'s prediction with its stages' grad_sync (their early gather waits added, as the report
// counts them) and its iteration (its end) from `price`.
void ApplyLayerRanges(const LayerRangesPrice& price, size_t p, Prediction& prediction);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_LAYER_RANGES_H_
