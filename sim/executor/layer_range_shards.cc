#include "sim/executor/layer_range_shards.h"

#include "base/status_macros.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/optimizer_step.h"
#include "sim/workload/tied_params.h"

namespace hetsim::executor {
namespace {

workload::StageMemory& operator+=(workload::StageMemory& a, const workload::StageMemory& b) {
  a.param_bytes += b.param_bytes;
  a.grad_bytes += b.grad_bytes;
  a.optimizer_bytes += b.optimizer_bytes;
  return a;
}

// Stage `s` of `setup` (pipeline p) re-priced from its ranges.
absl::Status ShardStage(ExecutionSetup& setup, int p, int s, const std::vector<LayerRangeGroup>& groups) {
  const spec::PlanSpec& plan = setup.spec.plan;
  const spec::StageSpec& st = plan.stages[s];
  StageSetup& stage = setup.stages[s];
  const int tp = stage.layout.tensor_parallel;
  workload::StageMemory held, shard;
  for (const LayerRangeGroup& g : groups) {
    for (const LayerRangeHolder& h : g.holders) {
      if (h.pipeline != p || h.stage != s) continue;
      held += RangeModelStates(*setup.model, g, tp, st.zero_stage, plan.grad_reduce_in_fp32);
      shard += RangeModelStates(*setup.model, g, tp, 3, plan.grad_reduce_in_fp32);  // the step's share
    }
  }
  stage.cost.memory.param_bytes = held.param_bytes;
  stage.cost.memory.grad_bytes = held.grad_bytes;
  stage.cost.memory.optimizer_bytes = held.optimizer_bytes;
  stage.cost.optimizer_shard = shard;
  const spec::IslandSpec& island = setup.spec.cluster.islands[stage.layout.island];
  HETSIM_ASSIGN_OR_RETURN(
      const workload::GpuCompute compute,
      workload::GpuCompute::Create(island.gpu, setup.model->dtype(), island.gpu_where, setup.spec.cluster.ideal));
  stage.optimizer_time = SecondsToTime(
      workload::OptimizerStepSeconds(shard, setup.model->dtype(), compute, workload::StageConfigOf(st, plan)));
  return absl::OkStatus();
}

}  // namespace

workload::StageMemory RangeModelStates(const workload::ModelCost& model, const LayerRangeGroup& group, int tp,
                                       int zero_stage, bool fp32_gradients) {
  const double params = group.tied ? workload::TiedParamsPerGpu(model, tp)
                        : group.without_tied
                            ? workload::DenseParamsWithoutTied(model, group.first_layer, group.num_layers, tp)
                            : workload::DenseParamsOfLayers(model, group.first_layer, group.num_layers, tp);
  const int n = group.groups.empty() ? 1 : static_cast<int>(group.groups.front().size());
  workload::StageMemory out = workload::ZeroShardedModelStates(params, model.dtype(), zero_stage, n, fp32_gradients);
  if (group.expert_groups.empty()) return out;
  // The experts' (ETP x EP of them on each GPU) over their expert-data-parallel group, as one stage
  // shards them (ComputeStageCost).
  const double experts =
      workload::ExpertParamsOfLayers(model, group.first_layer, group.num_layers, group.expert_shards);
  const int ne = static_cast<int>(group.expert_groups.front().size());
  return out += workload::ZeroShardedModelStates(experts, model.dtype(), zero_stage, ne, fp32_gradients);
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
