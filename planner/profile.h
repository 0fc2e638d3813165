// HAPT's zero-redundant profiler (Sec. 5.1) on top of the shared cost model.
//
// For a stage (a range of model layers) on a submesh of an island, every intra-stage configuration
// (tensor parallelism inside a node dividing the heads, data parallelism over the rest, ZeRO 0-2,
// recompute none/selective/full) is priced with workload::ComputeStageCost plus the analytical
// collective times of ClusterModel. What the search needs is kept: the configurations not dominated in
// (time, model-state memory, activation memory per in-flight microbatch), fastest first, each with the
// largest number of in-flight microbatches that fits the GPU (HAPT Eq. 24).
//
// Deduplication: a stage's cost depends only on its layer multiset, so stages are keyed by a signature
// (embedding included?, head included?, kind of the first repeated layer, number of repeated layers)
// and priced once per (signature, island, shape). Pricing itself uses the repetition: the cost model
// is a sum over layers, so the cost of n repeated layers is extrapolated exactly from two direct
// evaluations (n0 and n0 + period repeated layers) instead of walking n layers; tests compare the
// extrapolation with direct evaluation. Models given as explicit layer lists are priced per range.
#ifndef HETSIM_PLANNER_PROFILE_H_
#define HETSIM_PLANNER_PROFILE_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/spec/defaults.h"
#include "base/spec/plan.h"
#include "base/time.h"
#include "planner/cluster_model.h"
#include "planner/profile_cache.h"
#include "sim/workload/model_cost.h"

namespace hetsim::planner {

// A candidate stage's configuration is a plan stage's parallelism. Searched: TP, DP, ZeRO, recomputation
// and, for MoE models, EP and ETP (ExpertLayouts). Not searched: recompute_num_layers and the measured
// times (a hand-written plan's), and sequence parallelism (a hand-written plan's, or on for an MoE model
// with TP > 1: Megatron's MoE layer requires it).
using IntraStageConfig = spec::StageParallelism;

// One priced configuration of a stage, per microbatch of `micro_batch_size` samples.
struct StageOption {
  IntraStageConfig config;
  Time forward = 0;                    // compute + tensor-parallel collectives
  Time backward = 0;                   // compute (recompute included) + collectives
  int64_t state_bytes = 0;             // parameters, gradients, optimizer (per GPU)
  int64_t activation_bytes = 0;        // per in-flight microbatch
  int64_t working_bytes = 0;           // full-recompute working set
  int64_t grad_sync_bytes = 0;         // per GPU, per iteration: the bytes of the all-reduce it is priced as
  int64_t expert_grad_sync_bytes = 0;  // the same for the experts, over their expert-data-parallel groups
  Time optimizer_passes = 0;           // the optimizer step's memory-bound passes over this GPU's shard
  Time grad_sync = 0;                  // estimated data-parallel synchronisation and optimizer step
  // ZeRO-3 in the pipelines family (ProfilerOptions::search_zero_three): the gathers of the stage's
  // parameters included in `forward` and in `backward` (the profiler's estimate, replaced by the ranges'
  // own, RangeGathersOfZeroThree, once the plan's pipelines are known); 0 otherwise.
  Time gather_forward = 0;
  Time gather_backward = 0;
  int max_in_flight = 0;  // largest in-flight count that fits the GPU (>= 1)
  Time total() const { return forward + backward; }
  int64_t PeakBytes(int in_flight) const {
    return state_bytes + static_cast<int64_t>(in_flight) * activation_bytes + (in_flight > 0 ? working_bytes : 0);
  }
};

// What follows a stage's last backward, as the simulator runs it (PredictedStage.grad_sync_ms): the
// data-parallel synchronisation of an option on `shape` of `island`, the dense parameters over DP x CP,
// then the experts over their expert-data-parallel groups, and the optimizer step (its passes over the
// shard, then the iteration's host work).
Time SyncTimeOf(const ClusterModel& cluster, int island, MeshShape shape, const StageOption& o);

// The plan-wide switches (spec::CostSwitches) are those of the plan being priced, not searched: with
// tp_comm_overlap a stage's collectives hide behind its compute up to the compute time, with
// tp_backward_overlap the backward's input-gradient reductions behind the column-parallel weight
// gradients, as the simulator runs them.
struct ProfilerOptions : spec::CostSwitches {
  bool search_zero = true;       // ZeRO 1 and 2 when data_parallel > 1 (or range_copies > 0)
  bool search_recompute = true;  // selective and full recompute
  bool extrapolate = true;       // price repeated layers by extrapolation (false: walk every layer)
  int max_tensor_parallel = 0;   // 0 = gpus per node
  // Islands with more nodes than this use whole-node submeshes (n, M) only: a stage on part of one node
  // of a large island is never worth the state it adds to the search (u then counts whole nodes).
  int partial_node_shapes_max_nodes = 8;
  // Profiles shared with other planning runs of the same model (planner/profile_cache.h); not owned.
  // The caller binds it to the model and these options.
  ProfileCache* cache = nullptr;
  // With search_zero: where every pair this profiler prices also leaves its ZeRO-free options (the
  // Pareto set of its ZeRO 0 configurations: what a profiler with search_zero = false prices), keyed as
  // such a profiler with this cache keys them, so that HAPT's pipelines family (planner/pipelines.h)
  // reads its profiles from the main search's instead of pricing them again. Not owned.
  ProfileCache* zero_free_cache = nullptr;
  // HAPT's pipelines family (planner/pipelines.h): a stage's ZeRO states shard over its layer ranges'
  // GPUs, every pipeline's replicas that hold them (sim/executor/layer_range_shards.h), not over its
  // own replicas. With search_zero and range_copies > 0, ZeRO 1 and 2 are searched at every
  // data-parallel degree (DP 1 too), each priced with its model states and optimizer step sharded over
  // DP x range_copies + range_other_pipelines GPUs: what every range's shard group holds at least when
  // the stage's type runs range_copies identical pipelines beside range_other_pipelines others.
  int range_copies = 0;
  int range_other_pipelines = 0;
  // With search_zero and range_copies > 0: ZeRO-3 too, its parameters sharded over the same GPUs and
  // each pass paying its layers' all-gather over them (ZeroThreeGatherEstimate in profile.cc).
  bool search_zero_three = false;
  // An MoE model's one expert layout (EP, ETP) for every stage this profiler prices (the pipelines family:
  // one GPU type's stages, each type at its own; an ETP above 1 only on stages whose TP it divides);
  // (0, 0): every layout of ExpertLayouts.
  std::pair<int, int> expert_layout = {0, 0};
};

// The framework settings of `plan` its stages are priced with (not searched): its CostSwitches.
ProfilerOptions FrameworkOptionsOf(const spec::PlanSpec& plan);

struct ProfilerStats {
  int64_t signatures = 0;          // distinct layer multisets met
  int64_t stage_mesh_pairs = 0;    // (signature, island, shape) pairs priced
  int64_t stage_mesh_lookups = 0;  // lookups answered (cache hits included)
  int64_t infeasible_pairs = 0;    // pairs with no configuration that fits the GPU memory
  int64_t cost_model_calls = 0;    // ComputeStageCost evaluations
  int64_t cache_hits = 0;          // pairs taken from ProfilerOptions::cache instead of priced

  ProfilerStats& operator+=(const ProfilerStats& o) {
    signatures += o.signatures;
    stage_mesh_pairs += o.stage_mesh_pairs;
    stage_mesh_lookups += o.stage_mesh_lookups;
    infeasible_pairs += o.infeasible_pairs;
    cost_model_calls += o.cost_model_calls;
    cache_hits += o.cache_hits;
    return *this;
  }
};

class Profiler {
 public:
  // `context_parallel` is the plan's CP degree (Plan.context_parallel): every stage's mesh holds
  // tensor_parallel x context_parallel x data_parallel GPUs, and stages pay the key/value ring
  // (planner/context_parallel_cost_internal.h).
  Profiler(const workload::ModelCost& model, const ClusterModel& cluster, uint64_t micro_batch_size,
           ProfilerOptions options = {}, int context_parallel = 1);

  uint64_t micro_batch_size() const { return micro_batch_size_; }
  int context_parallel() const { return context_parallel_; }
  // Data-parallel replicas of a `gpus`-GPU stage with this TP degree; 0 when TP x CP does not divide it.
  int DataParallelOf(int gpus, int tensor_parallel) const {
    const int group = tensor_parallel * context_parallel_;
    return gpus % group == 0 ? gpus / group : 0;
  }
  const std::vector<std::vector<MeshShape>>& shapes() const { return shapes_; }  // per island
  const workload::ModelCost& model() const { return model_; }
  // Megatron runs an MoE model with TP only under sequence parallelism (base/spec/stage_rules.h): every
  // candidate with TP > 1 of an MoE model turns it on.
  bool SequenceParallelFor(int tensor_parallel) const { return tensor_parallel > 1 && model_.num_experts() > 1; }
  // The expert layouts the planners try on a stage of `stage_gpus` GPUs, `gpus_per_node` in each node,
  // as (EP, ETP): every expert on every GPU split over TP (1, 0), the only one of a dense model; for an
  // MoE model also MoE parallel folding's ETP 1 with each power-of-two EP that divides the experts and
  // the stage's GPUs (Megatron's advice: EP before expert TP) and whose blocks do not straddle nodes
  // (EP divides the node's GPUs or is a multiple of them).
  std::vector<std::pair<int, int>> ExpertLayouts(int stage_gpus, int gpus_per_node) const;
  const ClusterModel& cluster() const { return cluster_; }
  const ProfilerOptions& options() const { return options_; }

  // Configurations of model layers [first, first + count) on `shape_index` of `island`, fastest
  // first; empty when nothing fits. Thread-compatible (not thread-safe): fill before sharing.
  const std::vector<StageOption>& Options(int island, int shape_index, int first, int count);
  int SignatureOf(int first, int count);

  // Prices one configuration directly (every layer walked); nullopt when the cost model rejects it.
  std::optional<StageOption> PriceDirect(int island, MeshShape shape, const IntraStageConfig& config, int first,
                                         int count);

  // Activation bytes crossing the boundary after model layer `last` for one whole microbatch.
  double BoundaryBytes(int last) const;

  const ProfilerStats& stats() const { return stats_; }

 private:
  struct Signature {
    bool embedding = false, head = false;
    int phase = 0;              // index of the first repeated layer's kind within the period
    int body = 0;               // repeated layers
    int first = -1, count = 0;  // explicit range for models without repeated structure
    bool operator==(const Signature&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Signature& s) {
      return H::combine(std::move(h), s.embedding, s.head, s.phase, s.body, s.first, s.count);
    }
  };
  Signature MakeSignature(int first, int count) const;
  // A model range with signature `s` but `body` repeated layers.
  std::pair<int, int> Representative(const Signature& s, int body) const;
  std::vector<IntraStageConfig> Configs(const IslandModel& island, MeshShape shape) const;
  std::optional<StageOption> Price(int island, MeshShape shape, const IntraStageConfig& config, const Signature& s);
  std::optional<StageOption> PriceRaw(int island, MeshShape shape, const IntraStageConfig& config, int first,
                                      int count);
  std::vector<StageOption> PriceAll(int island, MeshShape shape, const Signature& s);
  // A pair's key in a profile cache whose island keys are `island_keys`.
  std::string PairKey(const std::vector<std::string>& island_keys, int island, MeshShape shape,
                      const Signature& s) const;

  const workload::ModelCost& model_;
  const ClusterModel& cluster_;
  uint64_t micro_batch_size_;
  int context_parallel_ = 1;
  ProfilerOptions options_;
  std::vector<std::vector<MeshShape>> shapes_;
  // Repeated structure of a transformer: body [body_first_, body_end_), period 1 or 2.
  bool structured_ = false;
  int body_first_ = 0, body_end_ = 0, period_ = 1;

  absl::flat_hash_map<Signature, int> signature_ids_;
  std::vector<std::vector<std::unique_ptr<std::vector<StageOption>>>> table_;  // [island*shapes][sig]
  std::vector<int> table_row_;                                                 // first row of each island
  std::vector<std::string> island_keys_;            // per island, what prices depend on (with a cache only)
  std::vector<std::string> zero_free_island_keys_;  // the same without ZeRO (with a zero_free_cache only)
  ProfilerStats stats_;
};

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_PROFILE_H_
