// Point-to-point flows the executor times in setup: a stage boundary's resharding transfers and
// context parallelism's ring steps. Each set starts at once on an otherwise idle network.
#ifndef HETSIM_SIM_EXECUTOR_POINT_FLOWS_H_
#define HETSIM_SIM_EXECUTOR_POINT_FLOWS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ids.h"
#include "base/time.h"
#include "sim/executor/collective_load.h"
#include "sim/network/network.h"
#include "topology/device_graph.h"
#include "topology/routing.h"

namespace hetsim::sim::executor {

// One point-to-point flow.
struct BoundaryFlow {
  GpuId src;
  GpuId dst;
  int64_t bytes;
  std::span<const LinkId> route;  // owned by the setup's router
};

// Routes every flow (ECMP key: its index in `flows`); a flow from a GPU to itself keeps no route.
absl::Status RouteFlows(topology::Router& router, std::vector<BoundaryFlow>& flows);

// The flows started together on an idle network: when the last one ends, and (when `load` is given)
// the bytes and busy time of every link they crossed, sorted by link.
absl::StatusOr<Time> FlowsAloneTime(const topology::Topology& topology, const std::vector<BoundaryFlow>& flows,
                                    NetworkMode mode, std::vector<LinkLoad>* load = nullptr);

}  // namespace hetsim::sim::executor

#endif  // HETSIM_SIM_EXECUTOR_POINT_FLOWS_H_
