#include "sim/workload/context_parallel_ring.h"

#include <algorithm>
#include <cstdint>

namespace hetsim::sim::workload {

void AddAttentionExchange(const ContextParallelAttention& a, int context_parallel, spec::ContextParallelComm comm,
                          Time kv_step, Time kv_grad_step, ContextParallelTime& out) {
  const int64_t steps = context_parallel - 1;
  if (comm == spec::ContextParallelComm::kAllGather) {
    // Each collective waits on the critical path: the attention needs all of K and V first.
    const int64_t backward_collectives = a.recomputed ? 3 : 2;
    out.forward_exchange += kv_step * steps;
    out.forward_exposed += kv_step * steps;
    out.backward_exchange += kv_step * steps * backward_collectives;
    out.backward_exposed += kv_step * steps * backward_collectives;
    return;
  }
  // Each step hides behind 1/CP of the attention core; what sticks out is on the critical path.
  const auto exposed = [&](Time step, double core_s) {
    return std::max<Time>(0, step - SecondsToTime(core_s / context_parallel)) * steps;
  };
  out.forward_exchange += kv_step * steps;
  out.forward_exposed += exposed(kv_step, a.core_forward_s);
  out.backward_exchange += kv_grad_step * steps;
  out.backward_exposed += exposed(kv_grad_step, a.core_backward_s);
  if (a.recomputed) {
    out.backward_exchange += kv_step * steps;
    out.backward_exposed += exposed(kv_step, a.core_forward_s);
  }
}

}  // namespace hetsim::sim::workload
