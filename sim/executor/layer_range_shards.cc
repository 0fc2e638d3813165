#include "sim/executor/layer_range_shards.h"

#include <algorithm>

#include "base/status_macros.h"
#include "sim/executor/replica_groups.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/optimizer_step.h"
#include "sim/workload/tied_params.h"

namespace hetsim::executor {
namespace {

// What one GPU of stage `s` of `setup` (pipeline p) laid out as `layout` (the stage's, or a mixed stage's
// group's: its TP and its own ETP x EP) holds of its ranges' states (`held`) and steps (`shard`, each range's
// 1/n).
void RangeStates(const ExecutionSetup& setup, int p, int s, const StageLayout& layout,
                 const std::vector<LayerRangeGroup>& groups, workload::StageMemory& held,
                 workload::StageMemory& shard) {
  const int tp = layout.tensor_parallel, experts = layout.expert_data_groups();
  const spec::PlanSpec& plan = setup.spec.plan;
  for (const LayerRangeGroup& g : groups) {
    for (const LayerRangeHolder& h : g.holders) {
      if (h.pipeline != p || h.stage != s) continue;
      held.AddModelStates(
          RangeModelStates(*setup.model, g, tp, experts, plan.stages[s].zero_stage, plan.grad_reduce_in_fp32));
      shard.AddModelStates(
          RangeModelStates(*setup.model, g, tp, experts, 3, plan.grad_reduce_in_fp32));  // the step's share
    }
  }
}

// `cost`'s model states and step share set to `held` and `shard`, and its optimizer step on island
// `island`'s GPU.
absl::StatusOr<Time> SetStates(const ExecutionSetup& setup, int s, int32_t island, const workload::StageMemory& held,
                               const workload::StageMemory& shard, workload::StageCost& cost) {
  cost.memory.param_bytes = held.param_bytes;
  cost.memory.grad_bytes = held.grad_bytes;
  cost.memory.optimizer_bytes = held.optimizer_bytes;
  cost.optimizer_shard = shard;
  const spec::IslandSpec& is = setup.spec.cluster.islands[island];
  HETSIM_ASSIGN_OR_RETURN(
      const workload::GpuCompute compute,
      workload::GpuCompute::Create(is.gpu, setup.model->dtype(), is.gpu_where, setup.spec.cluster.ideal));
  return SecondsToTime(workload::OptimizerStepSeconds(
      shard, setup.model->dtype(), compute, workload::StageConfigOf(setup.spec.plan.stages[s], setup.spec.plan)));
}

// Stage `s` of `setup` (pipeline p) re-priced from its ranges. A mixed stage (Stage.replica_groups): each
// group at its own TP on its own GPU type (a GPU of a TP-t replica holds P / t of a range of P parameters
// per GPU and keeps 1/n of that over the range's n replicas), the stage's figures the slowest group's
// (as PriceMixedStage), its step the longest.
absl::Status ShardStage(ExecutionSetup& setup, int p, int s, const std::vector<LayerRangeGroup>& groups) {
  StageSetup& stage = setup.stages[s];
  if (!stage.layout.mixed()) {
    workload::StageMemory held, shard;
    RangeStates(setup, p, s, stage.layout, groups, held, shard);
    HETSIM_ASSIGN_OR_RETURN(stage.optimizer_time, SetStates(setup, s, stage.layout.island, held, shard, stage.cost));
    return absl::OkStatus();
  }
  std::vector<VirtualStageCost> passes;
  stage.optimizer_time = 0;
  for (size_t g = 0; g < stage.replica_groups.size(); ++g) {
    const StageLayout& layout = stage.layout.replica_groups[g];
    ReplicaGroupSetup& group = stage.replica_groups[g];
    workload::StageMemory held, shard;
    RangeStates(setup, p, s, layout, groups, held, shard);
    HETSIM_ASSIGN_OR_RETURN(group.optimizer_time, SetStates(setup, s, layout.island, held, shard, group.cost));
    stage.optimizer_time = std::max(stage.optimizer_time, group.optimizer_time);
    passes.emplace_back().cost = group.cost;
  }
  const workload::StageCost& slowest = stage.replica_groups[SlowestGroup(passes)].cost;
  stage.cost.memory.param_bytes = slowest.memory.param_bytes;
  stage.cost.memory.grad_bytes = slowest.memory.grad_bytes;
  stage.cost.memory.optimizer_bytes = slowest.memory.optimizer_bytes;
  stage.cost.optimizer_shard = slowest.optimizer_shard;
  return absl::OkStatus();
}

}  // namespace

workload::StageMemory RangeModelStates(const workload::ModelCost& model, const LayerRangeGroup& group, int tp,
                                       int expert_block, int zero_stage, bool fp32_gradients) {
  const double params = group.tied ? workload::TiedParamsPerGpu(model, tp)
                        : group.without_tied
                            ? workload::DenseParamsWithoutTied(model, group.first_layer, group.num_layers, tp)
                            : workload::DenseParamsOfLayers(model, group.first_layer, group.num_layers, tp);
  const int n = group.groups.empty() ? 1 : static_cast<int>(group.groups.front().size());
  workload::StageMemory out = workload::ZeroShardedModelStates(params, model.dtype(), zero_stage, n, fp32_gradients);
  if (group.expert_groups.empty()) return out;
  // The experts' (the GPU's own ETP x EP of them: a holder coarser than the range's finest split holds more)
  // over their copies, one GPU of each per group of the finest split, as one stage shards them
  // (ComputeStageCost) and a mixed stage's groups (StageSpec::MixedExpertDataParallel).
  const double experts = workload::ExpertParamsOfLayers(model, group.first_layer, group.num_layers, expert_block);
  const int ne = static_cast<int>(group.expert_groups.front().size());
  return out.AddModelStates(workload::ZeroShardedModelStates(experts, model.dtype(), zero_stage, ne, fp32_gradients));
}

absl::Status ShardStatesOverRanges(const std::vector<ExecutionSetup*>& setups,
                                   const std::vector<LayerRangeGroup>& groups) {
  for (int p = 0; p < static_cast<int>(setups.size()); ++p) {
    for (int s = 0; s < setups[p]->num_stages(); ++s) {
      const int zero = setups[p]->spec.plan.stages[s].zero_stage;
      if (zero >= 1) HETSIM_RETURN_IF_ERROR(ShardStage(*setups[p], p, s, groups));
    }
  }
  return absl::OkStatus();
}

}  // namespace hetsim::executor
