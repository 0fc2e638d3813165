// ZeRO-3 gathers in lock-step (Plan.zero3_lock_step), as stock PyTorch FSDP and DeepSpeed ZeRO-3 issue
// them: every rank issues each layer's all-gather when it reaches the layer (with Plan.zero3_prefetch when
// it starts the layer before: FSDP's forward/backward prefetch of one unit, DeepSpeed's prefetch
// coordinator), in the same order on every rank and on one stream per rank; an NCCL collective starts
// when its last member has issued it, and a rank's next gather waits for its previous one. A layer runs
// once its gather has ended and the rank is done with the layer before. So ranks of different speed
// advance layer by layer at the slowest's pace: a faster rank waits at every layer, not once a pass.
// Shared by the simulator (sim/executor/lock_step.h) and the planner's price of a mixed stage.
// docs/heterogeneous.md, "Stock FSDP's lock-step".
#ifndef HETSIM_SIM_WORKLOAD_GATHER_LOCK_STEP_H_
#define HETSIM_SIM_WORKLOAD_GATHER_LOCK_STEP_H_

#include <cstddef>
#include <vector>

#include "base/time.h"

namespace hetsim::workload {

// One pass of ranks that start together: `layers[r][i]` is rank r's time in layer i (pass order) without
// its gather, `gathers[i]` layer i's all-gather (0: the layer gathers nothing and waits for nobody).
// Returns each rank's end of the pass, from its common start.
std::vector<Time> LockStepPassEnds(const std::vector<std::vector<Time>>& layers, const std::vector<Time>& gathers,
                                   bool prefetch);

// `total` cut into `n` parts by `weights` (equal parts when they are absent, of another size or all 0),
// rounded cumulatively so that the parts add up to `total`.
std::vector<Time> CutByWeights(Time total, const std::vector<double>& weights, size_t n);

// The longest of LockStepPassEnds.
Time LockStepPass(const std::vector<std::vector<Time>>& layers, const std::vector<Time>& gathers, bool prefetch);

}  // namespace hetsim::workload

#endif  // HETSIM_SIM_WORKLOAD_GATHER_LOCK_STEP_H_
