// The times of context parallelism's exchange for one attention layer, given how long its
// collectives take on the fabric: the arithmetic the simulator (sim/executor/cp_ring.cc, from routed
// flows) and the planner (planner/context_parallel_cost_internal.cc, from link figures) share.
//
// With n = CP - 1, T(B) a ring step of the layer's K/V block of B bytes, A(X) an all-to-all of X bytes
// per GPU over the CP ranks and core the layer's attention-core compute:
// - ring (p2p):
//     forward:  exchange n T(B),  exposed n max(0, T(B) - core_forward / CP)
//     backward: exchange n T(2B), exposed n max(0, T(2B) - core_backward / CP) (K, V and gradients)
// - all-gather: NCCL's ring all-gather and reduce-scatter are the same n steps to the next CP rank,
//   K and V one collective each (T(B) below is then 2 T(B/2)), and nothing runs beside them:
//     forward:  exchange = exposed = n T(B)  (K and V gathered)
//     backward: exchange = exposed = 2 n T(B) (K and V gathered again, their gradients reduce-scattered)
// - all-to-all (Ulysses), Q the queries' and O the output's bytes, nothing beside them either:
//     forward:  exchange = exposed = A(Q + B) + A(O)
//     backward: exchange = exposed = A(O) + A(Q + B)  (the output's gradient, then Q's, K's and V's)
// - PyTorch's ring attention with its all-gather rotater (`pytorch`, with all-gather; torch's
//   context_parallel): K and V concatenated and gathered as one collective, waited for after the first
//   (local) attention step; the backward gathers them again the same way and passes the FP32 dK/dV
//   (2B) to the next rank after every step, each hidden behind the next step, the last one not:
//     forward:  exchange n T(B),  exposed max(0, n T(B) - core_forward / CP)
//     backward: exchange n T(B) + CP T(2B),
//               exposed max(0, n T(B) - core_backward / CP) + n max(0, T(2B) - core_backward / CP) + T(2B)
// Recompute adds the forward's exchange to the backward.
#ifndef HETSIM_SIM_WORKLOAD_CONTEXT_PARALLEL_RING_H_
#define HETSIM_SIM_WORKLOAD_CONTEXT_PARALLEL_RING_H_

#include "base/spec/plan.h"
#include "base/time.h"
#include "sim/workload/stage_cost.h"

namespace hetsim::workload {

struct ContextParallelTime {
  Time forward_exposed = 0;   // per microbatch, added to the stage's forward
  Time backward_exposed = 0;  // per microbatch, added to the stage's backward
  Time forward_exchange = 0;  // the exchange's collectives on the fabric, hidden or not
  Time backward_exchange = 0;
};

// One layer's collectives on the fabric; only those of the plan's exchange need be set.
struct ContextParallelSteps {
  Time kv = 0;           // T(B): ring, PyTorch's gather; all-gather: 2 T(B/2), K and V a collective each
  Time kv_grad = 0;      // T(2B): ring, PyTorch's FP32 dK/dV
  Time qkv_a2a = 0;      // A(Q + B): all-to-all
  Time context_a2a = 0;  // A(O): all-to-all
};

// Adds layer `a`'s exchange to `out`; context_parallel > 1. `pytorch`: Plan.pytorch_context_parallel.
void AddAttentionExchange(const ContextParallelAttention& a, int context_parallel, spec::ContextParallelComm comm,
                          const ContextParallelSteps& steps, ContextParallelTime& out, bool pytorch = false);

}  // namespace hetsim::workload

#endif  // HETSIM_SIM_WORKLOAD_CONTEXT_PARALLEL_RING_H_
