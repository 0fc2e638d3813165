#include "sim/workload/context_parallel_ring.h"

#include <algorithm>
#include <cstdint>

namespace hetsim::workload {

namespace {

// PyTorch's ring attention with the all-gather rotater (context_parallel_ring.h).
void AddPyTorchAllGather(const ContextParallelAttention& a, int context_parallel, const ContextParallelSteps& steps,
                         ContextParallelTime& out) {
  const int64_t n = context_parallel - 1;
  const auto hidden_by = [&](Time t, double core_s) {
    return std::max<Time>(0, t - SecondsToTime(core_s / context_parallel));
  };
  const Time gather = steps.kv * n;
  out.forward_exchange += gather;
  out.forward_exposed += hidden_by(gather, a.core_forward_s);
  out.backward_exchange += gather + steps.kv_grad * context_parallel;
  out.backward_exposed +=
      hidden_by(gather, a.core_backward_s) + n * hidden_by(steps.kv_grad, a.core_backward_s) + steps.kv_grad;
  if (a.recomputed) {
    out.backward_exchange += gather;
    out.backward_exposed += hidden_by(gather, a.core_forward_s);
  }
}

}  // namespace

void AddAttentionExchange(const ContextParallelAttention& a, int context_parallel, spec::ContextParallelComm comm,
                          const ContextParallelSteps& steps, ContextParallelTime& out, bool pytorch) {
  if (pytorch && comm == spec::ContextParallelComm::kAllGather) {
    AddPyTorchAllGather(a, context_parallel, steps, out);
    return;
  }
  const int64_t n = context_parallel - 1;
  // The collective exchanges wait on the critical path: the attention needs their result first.
  const auto exposed_pass = [&](Time forward, Time backward) {
    if (a.recomputed) backward += forward;
    out.forward_exchange += forward;
    out.forward_exposed += forward;
    out.backward_exchange += backward;
    out.backward_exposed += backward;
  };
  switch (comm) {
    case spec::ContextParallelComm::kAllGather: exposed_pass(steps.kv * n, 2 * steps.kv * n); return;
    case spec::ContextParallelComm::kAllToAll: {
      const Time pass = steps.qkv_a2a + steps.context_a2a;
      exposed_pass(pass, pass);
      return;
    }
    case spec::ContextParallelComm::kRing: break;
  }
  // Each step hides behind 1/CP of the attention core; what sticks out is on the critical path.
  const auto exposed = [&](Time step, double core_s) {
    return std::max<Time>(0, step - SecondsToTime(core_s / context_parallel)) * n;
  };
  out.forward_exchange += steps.kv * n;
  out.forward_exposed += exposed(steps.kv, a.core_forward_s);
  out.backward_exchange += steps.kv_grad * n;
  out.backward_exposed += exposed(steps.kv_grad, a.core_backward_s);
  if (a.recomputed) {
    out.backward_exchange += steps.kv * n;
    out.backward_exposed += exposed(steps.kv, a.core_forward_s);
  }
}

}  // namespace hetsim::workload
