// HAPT's inter-op search (Sec. 5.2): for a fixed t_max, a dynamic program over the planner's layer
// sequence minimises sum_i (t_i + 2 c_i) (Eq. 14-21) under t_i <= t_max, c_i <= t_max and the memory
// constraint of Eq. 24 with the stage's warm-up launch count K (Eq. 23); the outer search over t_max
// minimises T(t_max) = min F + (B - 1) t_max (Eq. 22 / 13).
//
// State. The paper's F(s, k, d_A, d_B) keeps the free GPUs of every island, which explodes with the
// number of islands (d_1 x ... x d_C). Here a pipeline keeps the stages of one island contiguous (a
// pipeline that leaves an island and comes back crosses the slow inter-island links twice more), so a
// suffix of the pipeline is described by
//   (k = first planner layer, j = island of the suffix's first stage, mask = islands the suffix has
//    already filled, u = GPUs of island j the suffix uses),
// L x C x 2^C x (G_j + 1) states for any number C of islands, instead of L x S x prod_j (G_j + 1).
// The number of stages is not part of the state (H-1F1B needs the successor's launch count, not the
// stage index). Every state holds the Pareto set of (cost, launch count N of its first stage), so the
// recurrence is exact even when the memory constraint binds (the paper keeps one N per state).
// All GPUs of every island are used (F(s, 0, N_A M_A, N_B M_B) in Eq. 22).
//
// Outer search (Sec. 5.2.2): t_max candidates are the profiled stage times and boundary times, sorted
// and deduplicated; the smallest feasible t_S is found by a k-ary search (k = threads), the upper bound
// t_E = ceil(T(t_S) / B) prunes the rest, and the remaining candidates are evaluated in fixed batches
// over std::threads, the bound tightening after every batch. Batches do not depend on the thread
// count, so neither does the result. The DP visits only the sparse index of feasible (stage, mesh)
// pairs: for each (island, shape, first layer) the end layers whose stage fits in memory, in order of
// time, cut at t_max.
#ifndef HETSIM_PLANNER_HAPT_SEARCH_INTERNAL_H_
#define HETSIM_PLANNER_HAPT_SEARCH_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "base/spec/plan.h"
#include "base/time.h"
#include "planner/layers_internal.h"
#include "planner/profile.h"
#include "planner/shared_links.h"

namespace hetsim::planner {

struct SearchOptions {
  spec::ScheduleKind schedule = spec::ScheduleKind::kH1F1B;  // decides the launch counts K
  double epsilon = spec::kDefaultH1f1bEpsilon;               // H-1F1B Eq. 2
  bool communication_aware = true;                           // false: C(i) = 0 everywhere (Alpa's DP)
  int threads = 1;
  int batch = 8;                      // t_max candidates per parallel batch
  double t_max_relative_gap = 0;      // > 0: skip candidates within this ratio of the last one kept
  bool bidirectional_pruning = true;  // false: evaluate every candidate (for tests)
};

// One replica group of a mixed stage (Stage.replica_groups, planner/mixed_replicas.h): `data_parallel`
// replicas of `tensor_parallel` GPUs on a placed mesh of one island, each computing `share` samples of
// every microbatch, priced alone (its own GPU type, TP and share; ZeRO over all the stage's replicas).
struct SearchedGroup {
  int island = 0;
  MeshShape shape;
  int first_node = 0, first_gpu = 0;
  int tensor_parallel = 1, data_parallel = 1;
  uint64_t share = 0;
  // MoE: the group's own expert layout over its GPUs (ReplicaGroup.expert_parallel, _tensor_parallel);
  // 0 = the stage's. PriceMixedStage writes both.
  int expert_parallel = 0, expert_tensor_parallel = 0;
  StageOption option;
  // An interleaved stage's chunks (SearchedStage::chunks): each one's activations on this group's GPUs.
  std::vector<int64_t> chunk_activation_bytes;
};

// One stage of a searched pipeline: its model layers (spec::LayerRange) and where and how it runs.
struct SearchedStage : spec::LayerRange {
  int first_group = 0, last_group = 0;  // planner layers, inclusive
  int island = 0;
  MeshShape shape;
  StageOption option;
  Time comm_out = 0;  // c_i: boundary to the next stage (0 for the last)
  int warmup = 1;     // N_i
  // An interleaved plan's chunks priced one by one (plan reader), in chunk order; empty from the search.
  struct Chunk {
    Time forward = 0, backward = 0;
    int64_t activation_bytes = 0;
  };
  std::vector<Chunk> chunks;
  // A mixed stage's replica groups (empty for a stage on one mesh): `island`, `shape` and `option` are
  // then its first group's place and the stage's figures (the slowest group's passes, the gradient
  // synchronisation over every replica).
  std::vector<SearchedGroup> groups;
  // A mixed stage's synchronisation as flows from 0 (MixedSyncFlows; each ring's own pace under key -1):
  // Predict shares the NICs they cross with the other mixed stages' that overlap them in time.
  std::vector<SharedFlow> grad_sync_flows;
};

struct SearchStats {
  int64_t candidates = 0;  // distinct t_max values
  int64_t candidates_evaluated = 0;
  int64_t dp_runs = 0;
  int64_t index_entries = 0;    // feasible (stage, mesh) pairs in the sparse index
  int64_t transitions = 0;      // summed over DP runs
  int64_t pareto_overflow = 0;  // entries dropped because a state's Pareto set was full
  Time t_start = 0, t_end = 0;

  // The counts of another search added; its time bounds are its own.
  SearchStats& operator+=(const SearchStats& o) {
    candidates += o.candidates;
    candidates_evaluated += o.candidates_evaluated;
    dp_runs += o.dp_runs;
    transitions += o.transitions;
    index_entries += o.index_entries;
    pareto_overflow += o.pareto_overflow;
    return *this;
  }
};

struct SearchResult {
  bool feasible = false;
  std::vector<SearchedStage> stages;
  Time t_max = 0;         // max_i t_i of the plan
  Time cycle = 0;         // max(t_max, max_i c_i): the steady-state period
  Time objective = 0;     // sum_i (t_i + 2 c_i) + (B - 1) cycle  (Eq. 13)
  Time candidate = 0;     // the t_max candidate whose DP produced the plan
  Time search_value = 0;  // T(candidate) = F + (B - 1) candidate (Eq. 22), what the search minimised
  SearchStats stats;
};

// A scored plan of the DP at one t_max (used for top-k lists).
struct CandidatePlan {
  Time objective = 0;
  std::vector<SearchedStage> stages;
};

class CandidateRuns;  // hapt_search.cc: the DP at each t_max candidate, run once, in parallel batches

class HaptSearch {
 public:
  HaptSearch(Profiler& profiler, std::vector<LayerGroup> layers, int64_t num_microbatches, SearchOptions options);

  SearchResult Run();
  // The DP at one t_max: the best plan or none. `scratch` holds the DP table, allocated on first use
  // and emptied for each later call (a search reuses one per thread).
  struct DpTable;
  std::optional<CandidatePlan> Solve(Time t_max, SearchStats* stats, std::unique_ptr<DpTable>& scratch) const;
  // Best plans of distinct t_max candidates, best first (after Run()).
  const std::vector<CandidatePlan>& evaluated() const { return evaluated_; }
  const std::vector<Time>& candidates() const { return candidates_; }

 private:
  struct IndexEntry {
    int end;  // last planner layer of the stage
    Time fastest;
    const std::vector<StageOption>* options;
  };
  void BuildIndex();
  void FillTable(Time t_max, DpTable& table) const;
  std::optional<CandidatePlan> BestPlan(const DpTable& table, Time t_max) const;
  int Delta(Time comm, Time t_max) const;
  // Run's phases: the smallest feasible candidate (k-ary search from above, then upwards), and the
  // best candidate from there (batches up to where (B - 1) t_max alone exceeds the best so far).
  int FirstFeasible(CandidateRuns& runs) const;
  int BestFrom(CandidateRuns& runs, int start, SearchStats& stats) const;
  Time Score(const std::vector<SearchedStage>& stages) const;

  Profiler& profiler_;
  std::vector<LayerGroup> layers_;
  int64_t microbatches_;
  SearchOptions options_;
  int num_islands_ = 0;
  std::vector<int> unit_;        // per island: GPUs per u step (gcd of its shapes)
  std::vector<int> full_units_;  // per island
  int max_units_ = 0;
  // index_[(island * max_shapes + shape) * L + k]
  int max_shapes_ = 0;
  std::vector<std::vector<IndexEntry>> index_;
  std::vector<double> boundary_bytes_;  // after planner layer i
  std::vector<Time> candidates_;
  std::vector<CandidatePlan> evaluated_;
};

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_HAPT_SEARCH_INTERNAL_H_
