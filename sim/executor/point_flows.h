// Point-to-point flows the executor times in setup: a stage boundary's resharding transfers and
// context parallelism's ring steps. Each set starts at once on an otherwise idle network.
#ifndef HETSIM_SIM_EXECUTOR_POINT_FLOWS_H_
#define HETSIM_SIM_EXECUTOR_POINT_FLOWS_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ids.h"
#include "base/time.h"
#include "sim/engine/simulator.h"
#include "sim/executor/collective_load.h"
#include "sim/network/network.h"
#include "topology/device_graph.h"
#include "topology/routing.h"

namespace hetsim::executor {

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
                                    network::NetworkMode mode, std::vector<LinkLoad>* load = nullptr);

// FlowsAloneTime for many sets in turn on one network, built on first use (over every link of the
// cluster: at 100,000 GPUs building one per set dominated the setup), each set starting on the idle
// network at the clock's current instant, and only the links it crossed read and reset. Times are
// differences of integer instants, so every result is the one a fresh network gives.
class PointFlowTimer {
 public:
  PointFlowTimer(const topology::Topology& topology, network::NetworkMode mode) : topology_(topology), mode_(mode) {}
  absl::StatusOr<Time> AloneTime(const std::vector<BoundaryFlow>& flows, std::vector<LinkLoad>* load = nullptr);

 private:
  const topology::Topology& topology_;
  network::NetworkMode mode_;
  engine::Simulator simulator_;
  std::unique_ptr<network::Network> network_;
  std::vector<LinkId> touched_;  // scratch
};

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_POINT_FLOWS_H_
