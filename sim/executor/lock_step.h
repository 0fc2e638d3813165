// A mixed stage's ZeRO-3 passes in stock FSDP's lock-step (Plan.zero3_lock_step; the recurrence is
// sim/workload/gather_lock_step.h): every replica group gathers each layer in the same collective, so the
// slowest group paces every layer, not only every pass. docs/heterogeneous.md, "Stock FSDP's lock-step".
#ifndef HETSIM_SIM_EXECUTOR_LOCK_STEP_H_
#define HETSIM_SIM_EXECUTOR_LOCK_STEP_H_

#include "sim/executor/setup.h"

namespace hetsim::executor {

// A mixed stage at ZeRO-3 (its replica_groups costed, CombineReplicaGroups done): makes each pass at least
// as long as its groups' lock-step (each group's pass without its exposed gathers cut into its layers by
// their compute times, equal parts without per-layer times; every group gathers the same layers over the
// stage's shard groups), through the stage's waits.
void LockStepReplicaGroups(VirtualStageCost& vs, bool prefetch);

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_LOCK_STEP_H_
