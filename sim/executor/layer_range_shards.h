// ZeRO-1/2 (the distributed optimizer) and ZeRO-3 (FSDP) in a plan of pipelines of different shapes: a layer range's
// model states shard over the GPUs that reduce it (every holder's replicas, one shard group per shard
// of the finest TP split; layer_range_sync.h), not over the replicas of one pipeline's stage. A stage's
// setup priced its states sharded over its own replicas; this re-prices them, and its optimizer step,
// range by range: a range of P parameters per GPU over a group of n GPUs keeps P/n of the optimizer
// states (and, ZeRO-2, of the gradients), and the step passes over P/n. With the tied sync the tied
// matrix is a range of its own over every copy (each pipeline's first and last stage), and the ranges
// holding the embedding or the head count their parameters without it.
#ifndef HETSIM_SIM_EXECUTOR_LAYER_RANGE_SHARDS_H_
#define HETSIM_SIM_EXECUTOR_LAYER_RANGE_SHARDS_H_

#include <vector>

#include "absl/status/status.h"
#include "sim/executor/layer_range_sync.h"
#include "sim/executor/setup.h"
#include "sim/workload/stage_cost.h"

namespace hetsim::executor {

// What one GPU of a `tp`-way holder keeps of `group`'s model states under ZeRO stage `zero_stage`
// (its parameters over its tp, the rest over the group's shard-group size; an MoE range's experts over
// the GPU's own `expert_block` = ETP x EP, the rest over the copies of the experts, the size of a group of
// the range's finest expert split).
workload::StageMemory RangeModelStates(const workload::ModelCost& model, const LayerRangeGroup& group, int tp,
                                       int expert_block, int zero_stage, bool fp32_gradients);

// Every ZeRO stage (1, 2 or 3: ZeRO-3 shards the parameters too) of `setups` (pipeline p's is setups[p]) re-priced from
// `groups` (LayerRangeGroups of the same setups): its model-state memory and optimizer step. Errors: a GPU compute
// model that cannot be built (as the setup's own).
absl::Status ShardStatesOverRanges(const std::vector<ExecutionSetup*>& setups,
                                   const std::vector<LayerRangeGroup>& groups);

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_LAYER_RANGE_SHARDS_H_
