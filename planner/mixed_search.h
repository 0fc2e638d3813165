// HAPT's mixed-replicas family (planner/mixed_replicas.h, "Search"; docs/planner.md) beyond ETP 1, ZeRO 0-2
// and 1F1B (session 40, issue 39): what each stage of the family's pipelines may now take, priced as
// `validate` prices a mixed stage (planner/plan_reader.h):
// - ETP > 1 per group (`ExpertLayoutsOfGroup`): an MoE model's groups at every EP of the profiler's
//   ExpertLayouts and every ETP a power of two inside the group's node dividing the experts' FFN, EP x ETP
//   dividing the group's GPUs and aligned with its nodes, the groups' layouts nesting (every group's EP and
//   ETP dividing the finest's, proto/validate_replica_groups.cc).
// - ZeRO-3 with prefetch when memory needs it: a stage whose best at ZeRO 0-2 does not fit, or fits only
//   by recomputing, is searched again at ZeRO-3, its passes with its layers' parameter gathers over the
//   stage's shard groups (MixedLayerGathers) hidden behind the layer before (AddMixedStageGathers, as
//   Plan.zero3_prefetch runs them); the plan then has zero3_prefetch on (DeepSpeed's and FSDP's default).
// - Interleaving: each 1F1B pipeline of S >= 2 stages whose microbatches divide by S is priced again as
//   INTERLEAVED_1F1B with v = 2..kMaxMixedChunks chunks a stage, where every stage's blocks divide by v
//   (Megatron-LM's rule, proto/validate_plan.cc CheckChunks), its stages' choices kept, with
//   planner::PredictPlan (chunk by chunk, each group's memory over its chunks in the schedule's order),
//   and kept when it predicts faster and fits.
#ifndef HETSIM_PLANNER_MIXED_SEARCH_H_
#define HETSIM_PLANNER_MIXED_SEARCH_H_

#include <utility>
#include <vector>

#include "planner/hapt_search_internal.h"
#include "planner/profile.h"

namespace hetsim::planner {

// The most chunks a stage of the family's interleaved pipelines takes.
inline constexpr int kMaxMixedChunks = 4;

// `gather` (per layer, MixedLayerGathers) added to each group of mixed stage `s` (AddZeroThreeGathers),
// the stage's passes then its slowest group's, as the simulator combines them; with `lock_step`
// (Plan.zero3_lock_step) at least the groups' lock-step (sim/workload/gather_lock_step.h), each group's
// layers equal parts of its pass.
void AddMixedStageGathers(const std::vector<Time>& gather, bool prefetch, bool lock_step, SearchedStage& s);

// The expert layouts (EP, ETP) a group on `shape` may take (see above); {} for a dense model.
std::vector<std::pair<int, int>> ExpertLayoutsOfGroup(const Profiler& prof, MeshShape shape);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_MIXED_SEARCH_H_
