// How many flows the exact simulation of a setup would start, estimated without running it: what
// `hetsim run` weighs to decide whether the exact simulation is affordable (service/driver/fidelity.h).
// Boundary transfers count their flows per microbatch; gradient synchronisation counts a stepped ring
// per group (2 n (n - 1) flows for an all-reduce of n ranks, n (n - 1) for the others) up to
// kMaxSteppedRingRanks ranks, and one flow per rank and phase above (those rings aggregate anyway).
#ifndef HETSIM_SIM_EXECUTOR_FLOW_ESTIMATE_H_
#define HETSIM_SIM_EXECUTOR_FLOW_ESTIMATE_H_

#include <cstdint>

#include "sim/executor/setup.h"

namespace hetsim::sim::executor {

struct FlowEstimate {
  int64_t boundary_flows = 0;   // every microbatch's boundary transfers, both directions
  int64_t grad_sync_flows = 0;  // every stage's buckets and parameter gathers, every group
  int64_t total() const { return boundary_flows + grad_sync_flows; }
};

FlowEstimate EstimateExactFlows(const ExecutionSetup& setup);

}  // namespace hetsim::sim::executor

#endif  // HETSIM_SIM_EXECUTOR_FLOW_ESTIMATE_H_
