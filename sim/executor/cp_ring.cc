#include "sim/executor/cp_ring.h"

#include <algorithm>

#include "base/status_macros.h"
#include "sim/workload/context_parallel_ring.h"

namespace hetsim::executor {

std::vector<BoundaryFlow> CpRingStepFlows(const StageLayout& l, int64_t bytes) {
  std::vector<BoundaryFlow> flows;
  if (l.context_parallel <= 1) return flows;
  flows.reserve(static_cast<size_t>(l.data_parallel) * l.context_parallel * l.tensor_parallel);
  for (int r = 0; r < l.data_parallel; ++r) {
    for (int c = 0; c < l.context_parallel; ++c) {
      for (int t = 0; t < l.tensor_parallel; ++t) {
        flows.push_back({l.Gpu(r, t, c), l.Gpu(r, t, (c + 1) % l.context_parallel), bytes, {}});
      }
    }
  }
  return flows;
}

std::vector<BoundaryFlow> CpAllToAllFlows(const StageLayout& l, int64_t bytes) {
  std::vector<BoundaryFlow> flows;
  const int cp = l.context_parallel;
  if (cp <= 1) return flows;
  const int64_t part = bytes / cp;
  flows.reserve(static_cast<size_t>(l.data_parallel) * l.tensor_parallel * cp * (cp - 1));
  for (int r = 0; r < l.data_parallel; ++r) {
    for (int t = 0; t < l.tensor_parallel; ++t) {
      for (int c = 0; c < cp; ++c) {
        for (int d = 1; d < cp; ++d) flows.push_back({l.Gpu(r, t, c), l.Gpu(r, t, (c + d) % cp), part, {}});
      }
    }
  }
  return flows;
}

absl::StatusOr<const CpRingTimer::Step*> CpRingTimer::StepOf(const StageLayout& layout, int64_t bytes) {
  return Timed(layout, bytes, /*all_to_all=*/false);
}

absl::StatusOr<const CpRingTimer::Step*> CpRingTimer::AllToAllOf(const StageLayout& layout, int64_t bytes) {
  return Timed(layout, bytes, /*all_to_all=*/true);
}

absl::StatusOr<const CpRingTimer::Step*> CpRingTimer::Timed(const StageLayout& layout, int64_t bytes, bool all_to_all) {
  const auto key = std::make_tuple(&layout, bytes, all_to_all);
  if (auto it = cache_.find(key); it != cache_.end()) return &it->second;
  std::vector<BoundaryFlow> flows = all_to_all ? CpAllToAllFlows(layout, bytes) : CpRingStepFlows(layout, bytes);
  if (auto s = RouteFlows(router_, flows); !s.ok()) return s;
  Step step;
  absl::StatusOr<Time> t = flows_.AloneTime(flows, &step.load);
  if (!t.ok()) return t.status();
  step.time = *t;
  return &cache_.emplace(key, std::move(step)).first->second;
}

// One layer's all-to-alls (Q with K and V, then the output), their time and their load.
absl::Status AddAllToAlls(CpRingTimer& timer, const StageLayout& layout, const workload::ContextParallelAttention& a,
                          workload::ContextParallelSteps& steps, VirtualStageCost& vs) {
  absl::StatusOr<const CpRingTimer::Step*> qkv = timer.AllToAllOf(layout, a.query_bytes + a.step_bytes);
  if (!qkv.ok()) return qkv.status();
  absl::StatusOr<const CpRingTimer::Step*> context = timer.AllToAllOf(layout, a.context_bytes);
  if (!context.ok()) return context.status();
  steps.qkv_a2a = (*qkv)->time;
  steps.context_a2a = (*context)->time;
  const int64_t passes = a.recomputed ? 2 : 1;  // the recomputed forward's all-to-alls run in the backward
  for (const std::vector<LinkLoad>* load : {&(*qkv)->load, &(*context)->load}) {
    AddLoad(vs.forward_link_load, *load, 1);
    AddLoad(vs.backward_link_load, *load, passes);
  }
  const int cp = layout.context_parallel;
  vs.cp_bytes += (passes + 1) * (cp - 1) * ((a.query_bytes + a.step_bytes) / cp + a.context_bytes / cp);
  return absl::OkStatus();
}

// One layer's all-gathers. Transformer Engine gathers K and V (and reduce-scatters their gradients) as
// a collective each, B/2 bytes per GPU: one "step" of the exchange is two ring steps of B/2.
absl::Status AddAllGathers(CpRingTimer& timer, const StageLayout& layout, const workload::ContextParallelAttention& a,
                           workload::ContextParallelSteps& steps, VirtualStageCost& vs) {
  const int64_t half = a.step_bytes / 2;
  absl::StatusOr<const CpRingTimer::Step*> ring_step = timer.StepOf(layout, half);
  if (!ring_step.ok()) return ring_step.status();
  steps.kv = 2 * (*ring_step)->time;
  const int64_t n = layout.context_parallel - 1;
  const int64_t backward = a.recomputed ? 3 : 2;  // gathered again, gradients reduce-scattered [, recompute]
  AddLoad(vs.forward_link_load, (*ring_step)->load, 2 * n);
  AddLoad(vs.backward_link_load, (*ring_step)->load, 2 * n * backward);
  vs.cp_bytes += (1 + backward) * n * 2 * half;
  return absl::OkStatus();
}

// The ring steps of a layer's K/V block (B bytes) and of twice it (2B), their times set in `steps`.
struct KvRingSteps {
  const CpRingTimer::Step* kv = nullptr;
  const CpRingTimer::Step* kv_grad = nullptr;
};
absl::StatusOr<KvRingSteps> TimeKvSteps(CpRingTimer& timer, const StageLayout& layout, int64_t bytes,
                                        workload::ContextParallelSteps& steps) {
  KvRingSteps ring;
  HETSIM_ASSIGN_OR_RETURN(ring.kv, timer.StepOf(layout, bytes));
  HETSIM_ASSIGN_OR_RETURN(ring.kv_grad, timer.StepOf(layout, 2 * bytes));
  steps.kv = ring.kv->time;
  steps.kv_grad = ring.kv_grad->time;
  return ring;
}

// One layer's ring: CP - 1 steps of K/V forward, of K/V and their gradients (2B) backward, the
// forward's again under recompute.
absl::Status AddRingSteps(CpRingTimer& timer, const StageLayout& layout, const workload::ContextParallelAttention& a,
                          workload::ContextParallelSteps& steps, VirtualStageCost& vs) {
  HETSIM_ASSIGN_OR_RETURN(const KvRingSteps ring, TimeKvSteps(timer, layout, a.step_bytes, steps));
  const int64_t n = layout.context_parallel - 1;
  AddLoad(vs.forward_link_load, ring.kv->load, n);
  AddLoad(vs.backward_link_load, ring.kv_grad->load, n);
  vs.cp_bytes += 3 * n * a.step_bytes;
  if (a.recomputed) {
    AddLoad(vs.backward_link_load, ring.kv->load, n);
    vs.cp_bytes += n * a.step_bytes;
  }
  return absl::OkStatus();
}

// PyTorch's all-gather rotater: K and V as one all-gather (CP - 1 ring steps of B) in the forward and
// again in the backward, the FP32 dK/dV (2B) passed to the next rank after each of the CP steps.
absl::Status AddPyTorchGathers(CpRingTimer& timer, const StageLayout& layout,
                               const workload::ContextParallelAttention& a, workload::ContextParallelSteps& steps,
                               VirtualStageCost& vs) {
  HETSIM_ASSIGN_OR_RETURN(const KvRingSteps ring, TimeKvSteps(timer, layout, a.step_bytes, steps));
  const int64_t cp = layout.context_parallel, n = cp - 1, gathers = a.recomputed ? 2 : 1;
  AddLoad(vs.forward_link_load, ring.kv->load, n);
  AddLoad(vs.backward_link_load, ring.kv->load, n * gathers);
  AddLoad(vs.backward_link_load, ring.kv_grad->load, cp);
  vs.cp_bytes += (1 + gathers) * n * a.step_bytes + cp * 2 * a.step_bytes;
  return absl::OkStatus();
}

absl::Status AddContextParallelExchange(CpRingTimer& timer, const StageLayout& layout, spec::ContextParallelComm comm,
                                        VirtualStageCost& vs, bool pytorch) {
  const int cp = layout.context_parallel;
  if (cp <= 1) return absl::OkStatus();
  workload::ContextParallelTime t;
  for (const workload::ContextParallelAttention& a : vs.cost.cp_attention) {
    workload::ContextParallelSteps steps;
    switch (comm) {
      case spec::ContextParallelComm::kRing: HETSIM_RETURN_IF_ERROR(AddRingSteps(timer, layout, a, steps, vs)); break;
      case spec::ContextParallelComm::kAllGather:
        HETSIM_RETURN_IF_ERROR(pytorch ? AddPyTorchGathers(timer, layout, a, steps, vs)
                                       : AddAllGathers(timer, layout, a, steps, vs));
        break;
      case spec::ContextParallelComm::kAllToAll:
        HETSIM_RETURN_IF_ERROR(AddAllToAlls(timer, layout, a, steps, vs));
        break;
    }
    workload::AddAttentionExchange(a, cp, comm, steps, t, pytorch);
  }
  vs.cp_forward_exchange_time += t.forward_exchange;
  vs.cp_forward_exposed_time += t.forward_exposed;
  vs.cp_backward_exchange_time += t.backward_exchange;
  vs.cp_backward_exposed_time += t.backward_exposed;
  return absl::OkStatus();
}

}  // namespace hetsim::executor
