// Mixed replica groups in a stage (Stage.replica_groups; docs/cost-model.md, "Mixed replica groups"):
// data-parallel replicas of one stage on different GPU types, each group with its own TP degree and
// its own share of every microbatch. All replicas run every microbatch in lockstep, so the DAG keeps
// one node per stage and pass: a pass lasts as long as its slowest group's (compute + its TP
// collectives), the faster groups idle the difference. Gradients reduce per shard of the finest TP
// split over every replica of the stage; ZeRO shards over all of them.
#ifndef HETSIM_SIM_EXECUTOR_REPLICA_GROUPS_H_
#define HETSIM_SIM_EXECUTOR_REPLICA_GROUPS_H_

#include <cstdint>
#include <vector>

#include "base/time.h"
#include "sim/executor/setup.h"
#include "sim/workload/stage_cost.h"

namespace hetsim::executor {

// The layout of a mixed stage from its groups' layouts (each with its micro_batch_share set).
StageLayout MixedLayout(std::vector<StageLayout> groups);

// The group whose passes (forward + backward) take longest, and the group of the largest TP.
int SlowestGroup(const std::vector<VirtualStageCost>& groups);
int FinestGroup(const StageLayout& mixed);
// MoE: the group of the finest expert split (the largest ETP x EP, whose EP and ETP every group's divide).
int FinestExpertGroup(const StageLayout& mixed);
struct FinestGroups {
  int dense = 0;    // FinestGroup
  int experts = 0;  // FinestExpertGroup
};

// The stage's cost from its groups': the slowest group's, with the gradient and parameter bytes of the
// finest TP shard and of the finest expert shard (what each of the stage's gradient reduction groups
// carries) and the boundary bytes of the whole microbatch.
workload::StageCost MixedStageCost(const std::vector<const workload::StageCost*>& groups, int slowest,
                                   FinestGroups finest, int64_t boundary_bytes_per_microbatch);

// Fills a mixed virtual stage's fields from its replica_groups (already costed, collectives included):
// the slowest group's figures, every group's link loads, and the waits that make each pass last as long
// as the slowest group's. `finest`: the groups of the largest TP and of the finest expert split.
void CombineReplicaGroups(VirtualStageCost& vs, FinestGroups finest, int64_t boundary_bytes_per_microbatch);

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_REPLICA_GROUPS_H_
