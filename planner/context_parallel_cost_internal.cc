#include "planner/context_parallel_cost_internal.h"

#include <algorithm>
#include <numeric>

#include "base/units.h"

namespace hetsim::planner {
namespace {

// The most ring edges that leave one node at a step. The layout repeats every lcm(gpus per node,
// TP x CP) mesh positions, so one period of nodes covers every case.
int MaxEdgesLeavingANode(MeshShape shape, int tensor_parallel, int context_parallel) {
  const int gpn = shape.gpus_per_node;
  const int group = tensor_parallel * context_parallel;
  const int period = std::min(shape.gpus(), std::lcm(gpn, group));
  int most = 0;
  for (int node_first = 0; node_first < period; node_first += gpn) {
    int leaving = 0;
    for (int i = node_first; i < node_first + gpn; ++i) {
      const int cp_rank = (i / tensor_parallel) % context_parallel;
      const int next =
          cp_rank + 1 < context_parallel ? i + tensor_parallel : i - (context_parallel - 1) * tensor_parallel;
      if (next / gpn != i / gpn) ++leaving;
    }
    most = std::max(most, leaving);
  }
  return most;
}

}  // namespace

Time ContextParallelStepTime(const IslandModel& island, MeshShape shape, int tensor_parallel, int context_parallel,
                             double bytes) {
  if (context_parallel <= 1 || bytes <= 0) return 0;
  const int leaving = shape.nodes > 1 ? MaxEdgesLeavingANode(shape, tensor_parallel, context_parallel) : 0;
  if (leaving == 0)
    return island.intra_node.latency + TransferTime(Bytes(bytes), Bandwidth(island.intra_node.bytes_per_s));
  const double rate = std::min(island.inter_node.bytes_per_s, island.node_nic_bytes_per_s / leaving);
  return island.inter_node.latency + TransferTime(Bytes(bytes), Bandwidth(rate));
}

ContextParallelTime ContextParallelCost(const IslandModel& island, MeshShape shape, int tensor_parallel,
                                        int context_parallel, spec::ContextParallelComm comm,
                                        const std::vector<workload::ContextParallelAttention>& attention) {
  ContextParallelTime out;
  if (context_parallel <= 1) return out;
  const auto step = [&](double bytes) {
    return ContextParallelStepTime(island, shape, tensor_parallel, context_parallel, bytes);
  };
  // An all-to-all sends (CP - 1) / CP of its bytes from every GPU at once, over the same edges a ring
  // step uses: priced as one step of that many bytes.
  const double a2a_share = static_cast<double>(context_parallel - 1) / context_parallel;
  for (const workload::ContextParallelAttention& a : attention) {
    const double bytes = static_cast<double>(a.step_bytes);
    workload::ContextParallelSteps steps;
    // The all-gather's K and V are a collective each (Transformer Engine): two steps of B/2.
    steps.kv = comm == spec::ContextParallelComm::kAllGather ? 2 * step(bytes / 2) : step(bytes);
    steps.kv_grad = step(2.0 * bytes);
    steps.qkv_a2a = step(a2a_share * static_cast<double>(a.query_bytes + a.step_bytes));
    steps.context_a2a = step(a2a_share * static_cast<double>(a.context_bytes));
    workload::AddAttentionExchange(a, context_parallel, comm, steps, out);
  }
  return out;
}

}  // namespace hetsim::planner
