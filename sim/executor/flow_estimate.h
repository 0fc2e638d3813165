// How many flows the exact simulation of a setup would start, estimated without running it: what
// `hetsim run` weighs to decide whether the exact simulation is affordable (service/driver/fidelity.h).
// Boundary transfers count their flows per microbatch; gradient synchronisation counts a stepped ring
// per group (2 n (n - 1) flows for an all-reduce of n ranks, n (n - 1) for the others) up to
// kMaxSteppedRingRanks ranks, and one flow per rank and phase above (those rings aggregate anyway).
#ifndef HETSIM_SIM_EXECUTOR_FLOW_ESTIMATE_H_
#define HETSIM_SIM_EXECUTOR_FLOW_ESTIMATE_H_

#include <cstdint>

#include "base/spec/plan.h"
#include "sim/executor/setup.h"

namespace hetsim::executor {

struct FlowEstimate {
  int64_t boundary_flows = 0;   // every microbatch's boundary transfers, both directions
  int64_t grad_sync_flows = 0;  // every stage's buckets and parameter gathers, every group
  int64_t total() const { return boundary_flows + grad_sync_flows; }
};

FlowEstimate EstimateExactFlows(const ExecutionSetup& setup);

// What a plan will cost at least, from its inputs alone, before anything is set up: the figures
// `hetsim run` checks against --max-events and --max-memory so that a plan far over them is refused in
// milliseconds instead of after minutes of setup (docs/reliability.md, "Work bounded before it
// starts"). Lower bounds, so that a run they let through may still stop at a limit, but a run they
// refuse could never have fitted.
struct WorkEstimate {
  int64_t pipeline_tasks = 0;     // forward and backward passes: microbatches x stages x virtual stages x 2
  int64_t grad_sync_ranks = 0;    // ranks of every data-parallel synchronisation group (stages with DP > 1)
  int64_t cluster_gpus = 0;       // GPUs of the cluster (its topology is built once for all of them,
                                  // shared by a plan's pipelines)
  uint64_t min_events = 0;        // each pass ends with one event
  uint64_t min_memory_bytes = 0;  // the DAG, the synchronisation rings' routes and the cluster's topology
};

// Measured lower bounds of the memory each item costs (Release, docs/reliability.md): the DAG 430 bytes
// per task (1.29 GB for 3 x 10^6), a data-parallel ring 14 KB per rank (1.42 GB at DP 100,000 and
// 11.2 GB at DP 800,000, routes and transfer graphs of its channels), a GPU of the cluster 1.8 KB (its
// topology and router: 1.47 GB for 800,000 GPUs).
inline constexpr uint64_t kMinBytesPerPipelineTask = 400;
inline constexpr uint64_t kMinBytesPerGradSyncRank = 8 * 1024;
inline constexpr uint64_t kMinBytesPerClusterGpu = 1024;

// From the resolved plan and the cluster's GPU count alone: checked before the topology is built
// (800,000 GPUs take seconds).
WorkEstimate EstimateWork(const spec::PlanSpec& plan, int64_t cluster_gpus);

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_FLOW_ESTIMATE_H_
