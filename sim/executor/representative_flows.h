// The opt-in approximation `run --boundary-flows representative`: a boundary transfer moves one flow
// per (data-parallel replica, TP piece, CP rank), 1,024 flows per transfer at 16K GPUs, and those
// flows dominate a frontier-scale run's max-min work. Flows in the same role in different replicas
// (the same bytes, between the same local GPU positions of their nodes) are grouped, and one of them
// is simulated for the group: the member whose route is the most loaded (the one the transfer waits
// for), as a weighted flow (Network::StartWeightedFlow) that on each link of its route stands for
// the transfer's flows crossing that link, shared among the representatives crossing it. On a
// symmetric fabric every member sees the representative's contention and the result is exact; ECMP
// collisions the representative does not see are what it can miss (the error is measured in
// docs/performance.md and bounded by tests/sim/executor/executor_representative_flows_test.cc).
#ifndef HETSIM_SIM_EXECUTOR_REPRESENTATIVE_FLOWS_H_
#define HETSIM_SIM_EXECUTOR_REPRESENTATIVE_FLOWS_H_

#include <cstdint>
#include <vector>

#include "sim/executor/point_flows.h"
#include "topology/device_graph.h"

namespace hetsim::executor {

struct RepresentativeFlow {
  int32_t flow = 0;              // index of the representative in the transfer's flows
  std::vector<double> weights;   // per hop of its route (>= 1)
  std::vector<int32_t> members;  // the flows it stands for, itself included, ascending
};

// The representatives of one transfer's flows (routed), ordered by their first member. A flow
// without a route (a GPU to itself) or without bytes stands for itself alone, with no weights.
std::vector<RepresentativeFlow> RepresentativeFlows(const topology::Topology& topology,
                                                    const std::vector<BoundaryFlow>& flows);

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_REPRESENTATIVE_FLOWS_H_
