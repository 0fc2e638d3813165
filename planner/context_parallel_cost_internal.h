// The planner's price of context parallelism (Plan.context_parallel): the key/value ring of every
// attention layer, as the simulator runs it (sim/executor/cp_ring.cc), from the island's alpha-beta
// link figures instead of routed flows.
//
// In a mesh laid out TP-innermost, then CP, then DP (StageLayout), every GPU passes its block to the
// GPU tensor_parallel positions further on in each of CP - 1 steps, all GPUs at once. A step takes
//   latency + bytes / rate
// on the slowest edge: inside a node at the intra-node rate; across nodes at the inter-node route's
// rate, shared by the node's edges leaving it at that step (the node's NICs in all). Each step hides
// behind 1/CP of the attention core's compute; what sticks out is on the critical path:
//   exposed = (CP - 1) x max(0, step - core / CP).
// The forward passes K and V; the backward K, V and their gradients (twice the bytes), plus the
// forward's ring again when the attention core is recomputed. The all-gather (Plan.cp_comm_type) runs
// the same steps exposed; an all-to-all of X bytes is priced as one step of (CP - 1) X / CP bytes on
// the same edges, exposed (the simulator routes its flows to every peer).
#ifndef HETSIM_PLANNER_CONTEXT_PARALLEL_COST_INTERNAL_H_
#define HETSIM_PLANNER_CONTEXT_PARALLEL_COST_INTERNAL_H_

#include <vector>

#include "base/time.h"
#include "planner/cluster_model.h"
#include "sim/workload/context_parallel_ring.h"
#include "sim/workload/stage_cost.h"

namespace hetsim::planner {

using workload::ContextParallelTime;

// One ring step of `bytes` per GPU on a `shape` mesh of `island` with the given TP and CP degrees.
Time ContextParallelStepTime(const IslandModel& island, MeshShape shape, int tensor_parallel, int context_parallel,
                             double bytes);

// Every attention layer's exchange of a stage (`comm`: the ring, or the exposed all-gathers) (StageCost::cp_attention);
// zero when context_parallel <= 1.
ContextParallelTime ContextParallelCost(const IslandModel& island, MeshShape shape, int tensor_parallel,
                                        int context_parallel, spec::ContextParallelComm comm,
                                        const std::vector<workload::ContextParallelAttention>& attention);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_CONTEXT_PARALLEL_COST_INTERNAL_H_
