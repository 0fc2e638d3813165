// HAPT's "pipelines of different shapes" family (Plan.pipelines, issue 39): on a cluster of several GPU
// types, one data-parallel pipeline per GPU type, each with its own stage split found by HAPT's DP on
// that type's islands alone, the global batch split among them in proportion to their predicted
// throughput (HexiScale/FlashFlex, Metis and Cephalo split the batch by measured speed), rounded to
// whole micro-batches. One DP run per type: at a first split by the types' peak FLOP/s, whose
// predicted pipeline times give the throughputs of the final split (each pipeline then predicted
// again at its final share, same stages). The plan's iteration adds the gradient all-reduce of every layer range over
// the stages that hold it (the cut points of all pipelines split the layers; sim/executor/layer_range_sync.h runs
// them): a range starts when its last holder has run its last backward, its ring is priced as a mixed stage's
// (MixedRingTime), and each stage steps its optimizer once its ranges are reduced. ZeRO-1 per range is tried on
// the family's best plan (WithZeroOne); a type whose pipelines do not fit without ZeRO, or whose memory
// bounds a stage, is also planned with ZeRO 1-2 per range (its states sharded over the fewest GPUs its
// ranges can have, ProfilerOptions::range_copies), every stage of the plan then at one zero_stage, and
// where ZeRO-2 still bounds it at ZeRO-3 (each pass gathering its layers over its ranges' GPUs). Each
// type's pipelines take their own CP degree (Pipeline.context_parallel) among those HAPT's rule allows,
// and for an MoE model their own expert layout (EP, ETP) on every stage (PipelinesContext::expert_layouts,
// the holders of a layer at layouts that nest, as the simulator takes them). Replica groups are left out;
// PriceLayerRanges prices ZeRO-1/2 with the tied sync (the matrix sharded over its copies), bucketed and
// overlapped reduction and the gathers at the start (RangeOptions) for `validate`; the family itself
// plans none of them (its plans are written without those settings).
// MakePlan keeps such a plan only when it predicts faster than the single-pipeline and mixed-replica candidates.
#ifndef HETSIM_PLANNER_PIPELINES_H_
#define HETSIM_PLANNER_PIPELINES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "base/spec/cluster.h"
#include "base/spec/plan.h"
#include "base/time.h"
#include "planner/candidates_internal.h"
#include "planner/cluster_model.h"
#include "planner/layer_ranges.h"
#include "planner/prediction.h"

namespace hetsim::planner {

// The cluster of the islands of `cluster` whose GPU is `gpu_type`, their links and networks kept (island
// indices renumbered); nullopt when no island has that GPU.
std::optional<spec::ClusterSpec> ClusterOfGpuType(const spec::ClusterSpec& cluster, const std::string& gpu_type);

// The global batch split among pipelines of predicted throughputs `samples_per_s`, in whole
// micro-batches of `micro_batch_size`, at least one each (largest remainders first); empty when the
// batch has fewer micro-batches than pipelines. `ideal` receives the unrounded shares.
std::vector<uint64_t> ThroughputShares(const std::vector<double>& samples_per_s, uint64_t global_batch_size,
                                       uint64_t micro_batch_size, std::vector<double>* ideal = nullptr);

// Where one copy of a type's pipeline sits in an island of the type: its group's nodes or GPUs.
struct MeshOffset {
  uint32_t first_node = 0;
  uint32_t first_gpu = 0;
};

// One GPU type's islands cut into `copies` equal groups, each a cluster of its own (islands of the
// same names): whole nodes when every island's node count divides by `copies`, else equal parts of
// every node when `copies` is a multiple of every island's node count and the parts divide its GPUs.
// offsets[j]: per island name, where group j starts. nullopt when no such cut exists.
struct TypeGroups {
  spec::ClusterSpec group;
  std::vector<std::map<std::string, MeshOffset>> offsets;
};
std::optional<TypeGroups> CutTypeIntoGroups(const spec::ClusterSpec& type_cluster, int copies);

// ThroughputShares with a micro-batch size per pipeline: each share whole micro-batches of its own
// size, at least one, the rest of the batch going a micro-batch at a time to the largest remainder
// whose micro-batch still fits; empty when the sizes cannot add up to the batch. Equal sizes:
// ThroughputShares. `ideal` receives the unrounded shares (samples).
std::vector<uint64_t> ThroughputSharesOfSizes(const std::vector<double>& samples_per_s, uint64_t global_batch_size,
                                              const std::vector<uint64_t>& micro_batch_sizes,
                                              std::vector<double>* ideal = nullptr);

// A pipeline at its own point (spec::MicroBatchPoint: its micro-batch size and its CP degree).
struct PipelineOfType : spec::MicroBatchPoint {
  std::string gpu_type;
  std::string name;  // "<gpu type>", or "<gpu type>-<copy>" when the type runs several copies
  std::shared_ptr<const ClusterModel> cluster;  // one group of the type's islands (CutTypeIntoGroups)
  std::map<std::string, MeshOffset> offset;     // where this copy's group sits, per island name
  PipelineCandidate candidate;                  // searched on `cluster` at the pipeline's batch share
  uint64_t batch_share = 0;
  double ideal_share = 0;  // before rounding to whole micro-batches
  Prediction prediction;   // of the pipeline alone, without gradient synchronisation
  // Planned with ZeRO per layer range (ProfilerOptions::range_copies): why, e.g. "a6000 fits only with
  // it"; empty when planned without ZeRO.
  std::string zero_why;
  // Its type's CP degree when more than one was searched: why, e.g. "rtx4090 at CP 2: 3.1 samples/s
  // against 2.2 at CP 1"; empty otherwise.
  std::string cp_why;
};

// An MoE model's expert layout (EP, ETP) per GPU type (types not named: ProfilerOptions::expert_layout).
using TypeExpertLayouts = std::map<std::string, std::pair<int, int>>;

// The plans of one GPU type's pipelines already made by HAPT's DP in one request (PlanTypeCopies), keyed
// by what they depend on (the type, micro-batch, first share, copies, CP, ZeRO search, the other
// pipelines counted and the expert layout): a type's plan does not depend on the other types' expert
// layouts, so the family's search of layouts per type runs each type's DP once per layout of its own.
struct TypePlans {
  std::map<std::string, std::optional<std::vector<PipelineOfType>>> plans;
  int64_t hits = 0;  // plans taken from here instead of planned
};

// The family's plan at a point (spec::MicroBatchPoint: the smallest of its pipelines' micro-batch sizes).
struct PipelinesCandidate : spec::MicroBatchPoint {
  std::vector<PipelineOfType> pipelines;
  int ranges = 0;         // layer ranges whose gradients all-reduce across pipelines
  Time slowest_ring = 0;  // the longest of their rings
  Time iteration = 0;     // the slowest pipeline's end after its ranges' all-reduces and optimizer steps
  SearchStats search;     // every pass's DP runs
  // When some type runs several copies: the iteration priced with one pipeline per type (none fitted: 0).
  std::optional<Time> one_per_type;
  // Every stage's: 1 when the distributed optimizer per range won (WithZeroOne); 1 or 2 when a type's
  // pipeline was planned with ZeRO (PipelineOfType::zero_why), every stage then at the highest.
  int zero_stage = 0;
  std::optional<Time> zero_free;  // with zero_stage 1: the iteration of the same plan without it
  // With zero_stage 3: the iteration of the plan of the same search at ZeRO 2 at most (nullopt: a type
  // fits only at ZeRO-3), which it beat.
  std::optional<Time> below_zero_three;
  // An MoE model: each GPU type's (EP, ETP) on every stage of its pipelines (PipelinesContext::
  // expert_layouts) and why they won, e.g. "EP 4 x ETP 1 on every stage, 812.3 ms at EP 2"; empty for a
  // dense model.
  TypeExpertLayouts expert_layouts;
  std::string expert_why;
  // At ZeRO every type is planned again at the plan's own range groups (ReplanOverPlanGroups in
  // pipelines.cc); when that won, the iteration of the plan it replaced.
  std::optional<Time> before_replan;
  // MixMicroBatchSizes: the best plan at one size for every type (its micro-batch size and iteration),
  // and why each type runs at its own, e.g. "rtx4090 at 4: 1.2 samples/s against 1.1 at 1"
  // (docs/heterogeneous.md).
  uint64_t one_size_micro_batch = 0;
  std::optional<Time> one_size;
  std::string mix_why;
};

struct PipelinesContext {
  const workload::ModelCost* model;
  const spec::ClusterSpec* cluster;
  const ClusterModel* cluster_model;  // of `cluster`
  ProfilerOptions options;            // the framework's settings (the DP runs price no ZeRO)
  uint64_t global_batch_size;
  spec::MicroBatchPoint point;  // the micro-batch size searched (its CP unused: context_parallel_degrees)
  double epsilon;
  int threads;
  // ZeRO-free profiles already priced (ProfilerOptions::zero_free_cache of the main search), read and
  // added to; nullptr: every type's islands priced anew.
  ProfileCache* profiles = nullptr;
  // The other families' best predicted iteration: copies are searched only when one pipeline per type
  // prices within 25% of it (0: always).
  Time to_beat = 0;
  // The CP degrees each GPU type's pipelines may take (HAPT's rule, the request's: the one asked for,
  // or the powers of two the sequence splits into), ascending; each type keeps the one with the most
  // samples per second, searched while a larger degree adds throughput.
  std::vector<int> context_parallel_degrees = {1};
  // An MoE model: each GPU type's expert layout on every stage of its pipelines (the profiler's
  // expert_layout of its DP runs); a type not named takes options.expert_layout.
  TypeExpertLayouts expert_layouts;
  // The type plans of earlier calls of the same request, read and added to; nullptr: every type planned.
  TypePlans* type_plans = nullptr;
};

// The family's plan at one micro-batch size; nullopt when the cluster has one GPU type, a type's
// islands cannot be planned alone, or the batch is too small. A type whose pipeline is memory-bound at
// ZeRO-2 (or does not fit) is also planned at ZeRO-3 per layer range, kept when it runs more samples per
// second and the plan, its ranges' gathers priced (RangeGathersOfZeroThree), beats the one at ZeRO-2. Each type runs k
// identical pipelines (k = 1, 2, 4, ... while its islands cut into k groups and a pipeline still fits one group):
// HAPT's DP plans one on one group at the type's first share over k, and the k with the most samples per second is
// kept, then copied onto the other groups; the plan of those copies is kept only when its priced iteration beats one
// pipeline per type. Copies are searched only when one pipeline per type prices within 25% of `ctx.to_beat`.
std::optional<PipelinesCandidate> PlanPipelinesOfTypes(const PipelinesContext& ctx);

// A micro-batch size per GPU type, searched jointly with the split: from the family's plans at
// several sizes (`by_size`, each PlanPipelinesOfTypes at its ctx), every choice of one size per type
// (that type's pipelines from the plan at that size) whose sizes differ, the batch split again by
// throughput in whole micro-batches of each pipeline's own size (ThroughputSharesOfSizes) and the
// layer ranges priced; the fastest by priced iteration. No DP run of its own. Each type's sizes are cut
// to its fastest (by samples per second) so that at most 64 choices are priced. nullopt when `by_size`
// has one size or no choice splits the batch. `ctx`: any of theirs (its micro-batch size unused).
std::optional<PipelinesCandidate> MixMicroBatchSizes(const PipelinesContext& ctx,
                                                     const std::vector<PipelinesCandidate>& by_size);

// `c` (priced without ZeRO) with every stage at ZeRO stage 1, Megatron's distributed optimizer per
// layer range as the simulator runs it (sim/executor/layer_range_sync.h): the same stages and shares,
// the ranges priced again (each reduce-scatters and all-gathers over its ring, each stage's states
// and optimizer step shard per range over the range's GPUs, PriceLayerRanges); no DP run. nullopt
// when `c` cannot take it (a stage whose options are not its own ZeRO-free pricing). ZeRO-2 moves
// the same bytes and steps the same shards: it only saves memory, which a plan that fits without
// ZeRO does not need, so it is not tried.
std::optional<PipelinesCandidate> WithZeroOne(const PipelinesContext& ctx, PipelinesCandidate c);

// The plan's pipelines (named "<gpu type>", stages placed on their islands) in `shape`'s settings.
absl::StatusOr<spec::PlanSpec> WritePipelinesPlan(const PipelinesCandidate& c, const spec::PlanSpec& shape);

// The pipelines' predictions as one (what the plan table, the notes, `plan --prediction` and `validate`
// read): every pipeline's stages in turn, each pipeline's figures (Prediction::pipelines), the longest
// pipeline, `iteration`, and the iteration's figures: throughput over `iteration`, the bubble over the
// longest pipeline, and HAPT's eta (Eq. 25) over every GPU of every pipeline, each busy for its own
// pipeline's microbatches, so a pipeline whose share is too small shows as the others' idle time.
Prediction CombinePipelines(const std::vector<PricedPipeline>& pipelines, Time iteration,
                            const pipeline::IterationWork& work);

// CombinePipelines of the candidate's pipelines.
Prediction PipelinesPrediction(const PipelinesCandidate& c, const pipeline::IterationWork& work);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_PIPELINES_H_
