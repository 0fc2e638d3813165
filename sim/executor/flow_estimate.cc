#include "sim/executor/flow_estimate.h"

#include <algorithm>
#include <vector>

#include "sim/collectives/collective.h"

namespace hetsim::executor {
namespace {

// Flows of one ring collective of `n` ranks as the exact run starts them (see the header).
int64_t RingFlows(CollectiveOp op, int64_t n) {
  if (n <= 1) return 0;
  const int64_t phases = op == CollectiveOp::kAllReduce ? 2 : 1;
  if (n > collectives::kMaxSteppedRingRanks) return phases * n;
  return phases * n * (n - 1);
}

int64_t StageSyncFlows(const StageSetup& stage) {
  std::vector<GradSyncStep> steps = stage.grad_buckets;
  if (stage.param_gather) steps.push_back(*stage.param_gather);
  steps.insert(steps.end(), stage.early_param_gathers.begin(), stage.early_param_gathers.end());
  int64_t flows = 0;
  for (const bool experts : {false, true}) {
    const std::vector<std::vector<GpuId>> groups = SyncGroupsOf(stage.layout, experts);
    for (const GradSyncStep& step : steps) {
      if (step.BytesOf(experts) <= 0) continue;
      for (const std::vector<GpuId>& g : groups) flows += RingFlows(step.op, static_cast<int64_t>(g.size()));
    }
  }
  return flows;
}

}  // namespace

FlowEstimate EstimateExactFlows(const ExecutionSetup& setup) {
  FlowEstimate e;
  for (const BoundaryTransfer& b : setup.boundaries) {
    e.boundary_flows += setup.microbatches * static_cast<int64_t>(b.forward_flows.size() + b.backward_flows.size());
  }
  for (const StageSetup& s : setup.stages) e.grad_sync_flows += StageSyncFlows(s);
  return e;
}

WorkEstimate EstimateWork(const spec::PlanSpec& plan, int64_t cluster_gpus) {
  WorkEstimate e;
  const auto stages = static_cast<int64_t>(plan.stages.size());
  e.pipeline_tasks = plan.microbatches * stages * std::max(1, plan.virtual_stages) * 2;
  for (const spec::StageSpec& s : plan.stages) {
    int64_t replicas = 0, gpus = 0;
    for (const spec::ReplicaGroupSpec& g : s.ReplicaGroups(plan.micro_batch_size)) {
      replicas += g.data_parallel;
      gpus += static_cast<int64_t>(g.data_parallel) * g.tensor_parallel;
    }
    if (replicas > 1) e.grad_sync_ranks += gpus * std::max(1, plan.context_parallel);
  }
  // A plan of pipelines: each pipeline's passes, and every GPU of them in its layer ranges' all-reduces.
  for (const spec::PipelineSpec& pl : plan.pipelines) {
    const auto microbatches = static_cast<int64_t>(pl.micro_batch_size > 0 ? pl.batch_share / pl.micro_batch_size : 0);
    e.pipeline_tasks += microbatches * static_cast<int64_t>(pl.stages.size()) * std::max(1, plan.virtual_stages) * 2;
    for (const spec::StageSpec& s : pl.stages) {
      if (plan.pipelines.size() > 1 || s.data_parallel * pl.context_parallel > 1) {
        e.grad_sync_ranks += static_cast<int64_t>(s.tensor_parallel) * s.data_parallel * pl.context_parallel;
      }
    }
  }
  e.cluster_gpus = cluster_gpus;
  e.min_events = static_cast<uint64_t>(e.pipeline_tasks);
  e.min_memory_bytes = static_cast<uint64_t>(e.pipeline_tasks) * kMinBytesPerPipelineTask +
                       static_cast<uint64_t>(e.grad_sync_ranks) * kMinBytesPerGradSyncRank +
                       static_cast<uint64_t>(e.cluster_gpus) * kMinBytesPerClusterGpu;
  return e;
}

}  // namespace hetsim::executor
