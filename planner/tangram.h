// Tangram (seed 000): GPU islands by Algorithm 1 (topology/gpu_islands.h), one model slice per island,
// an inner homogeneous planner per (slice, island) and the composition DP of Eq. 11-13, with the four
// pruning rules and two improvements from the review:
//  - the inner planner searches the pipeline depth inside the island (sub-stages with equal GPU counts,
//    each a submesh of one of the island's member sub-clusters), TP inside a node, DP, ZeRO 0-2 and
//    recompute with the cost model; its memory check uses the 1F1B in-flight count of each sub-stage
//    in the whole pipeline (the composition runs from the last island to the first so it is known);
//  - Rule 1 (dedup): inner plans are cached by the slice's layer multiset (profile.h signatures);
//    Rule 2 (balance): the paper skips a slice whose layer share differs from the island's compute
//    share by more than a factor beta = 2; on random instances that removes the optimum (4 of 16 in
//    planner_case_test), so by default the rule is a bound instead: a slice is skipped when its island,
//    or the islands before it (which must run the earlier layers), would need a per-microbatch time
//    tau with (n - 1) tau at least the known plan's cycle even at peak FLOP/s on every GPU
//    (`beta` > 0 adds the paper's fixed tolerance);
//    Rule 3 (memory): a slice whose weights, gradients and Adam states alone, spread over every GPU of
//    the island, exceed their memory is skipped (a lower bound, so it never removes a feasible slice);
//    Rule 4 (interface): a boundary whose transfer alone, paid by every microbatch, is at least the
//    cycle time of a known plan (the compute-proportional split) is skipped;
//  - cycle time (Eq. 7): (n - 1) tau_max + sum_k tau_k with tau_k = compute + transfer out; with
//    improvement B tau_k = max(compute, transfer) (Eq. 14); improvement C (the microbatch count chosen
//    jointly) is MakePlan's loop over micro-batch sizes.
// Islands are tried in every order (K! compositions; K is small).
#ifndef HETSIM_PLANNER_TANGRAM_H_
#define HETSIM_PLANNER_TANGRAM_H_

#include <cstdint>
#include <vector>

#include "planner/hapt_search_internal.h"
#include "planner/profile.h"

namespace hetsim::planner {

struct TangramOptions {
  bool overlap_aware = true;
  bool rule_dedup = true;
  bool rule_balance = true;
  bool rule_memory = true;
  bool rule_interface = true;
  double beta = 0;           // > 0: also the paper's fixed balance tolerance (2 in the paper)
  int max_island_depth = 8;  // largest pipeline depth inside one island
};

struct TangramStats {
  int64_t islands = 0;
  int64_t pairs = 0;  // (slice, island, position) pairs considered
  int64_t pruned_balance = 0;
  int64_t pruned_memory = 0;
  int64_t pruned_interface = 0;
  int64_t inner_calls = 0;  // inner planner invocations (after dedup)
  int64_t dedup_hits = 0;
};

struct TangramResult {
  bool feasible = false;
  std::vector<SearchedStage> stages;
  Time cycle = 0;  // the composition's objective (Eq. 7 or 14)
  TangramStats stats;
};

TangramResult RunTangram(Profiler& profiler, int64_t microbatches, const TangramOptions& options);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_TANGRAM_H_
