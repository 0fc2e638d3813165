// The times of context parallelism's key/value exchange for one attention layer, given how long one
// ring step takes on the fabric: the arithmetic the simulator (sim/executor/cp_ring.cc, steps from
// routed flows) and the planner (planner/context_parallel_cost.cc, steps from link figures) share.
//
// With n = CP - 1 steps, T(B) a step of the layer's B bytes and core its attention-core compute:
// - ring (p2p):
//     forward:  exchange n T(B),  exposed n max(0, T(B) - core_forward / CP)
//     backward: exchange n T(2B), exposed n max(0, T(2B) - core_backward / CP) (K, V and gradients)
// - all-gather: NCCL's ring all-gather and reduce-scatter are the same n steps of B to the next CP
//   rank, and nothing runs beside them:
//     forward:  exchange = exposed = n T(B)  (K and V gathered)
//     backward: exchange = exposed = 2 n T(B) (K and V gathered again, their gradients reduce-scattered)
// Recompute adds the forward's exchange to the backward.
#ifndef HETSIM_SIM_WORKLOAD_CONTEXT_PARALLEL_RING_H_
#define HETSIM_SIM_WORKLOAD_CONTEXT_PARALLEL_RING_H_

#include "base/time.h"
#include "sim/workload/stage_cost.h"
#include "spec/plan.h"

namespace hetsim::sim::workload {

struct ContextParallelTime {
  Time forward_exposed = 0;   // per microbatch, added to the stage's forward
  Time backward_exposed = 0;  // per microbatch, added to the stage's backward
  Time forward_exchange = 0;  // the exchange's steps on the fabric, hidden or not
  Time backward_exchange = 0;
};

// Adds layer `a`'s exchange to `out`: `kv_step` is T(B), `kv_grad_step` T(2B) (unused by the
// all-gather); context_parallel > 1.
void AddAttentionExchange(const ContextParallelAttention& a, int context_parallel, spec::ContextParallelComm comm,
                          Time kv_step, Time kv_grad_step, ContextParallelTime& out);

}  // namespace hetsim::sim::workload

#endif  // HETSIM_SIM_WORKLOAD_CONTEXT_PARALLEL_RING_H_
