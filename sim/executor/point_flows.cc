#include "sim/executor/point_flows.h"

#include <algorithm>

#include "sim/collectives/simulate.h"
#include "sim/engine/simulator.h"

namespace hetsim::executor {

absl::Status RouteFlows(topology::Router& router, std::vector<BoundaryFlow>& flows) {
  for (size_t j = 0; j < flows.size(); ++j) {
    BoundaryFlow& f = flows[j];
    if (f.src == f.dst) continue;  // the same GPU: a local copy, no link
    absl::StatusOr<const topology::Route*> route = router.GpuRoute(f.src, f.dst, j);
    if (!route.ok()) return route.status();
    f.route = std::span<const LinkId>((*route)->data(), (*route)->size());
  }
  return absl::OkStatus();
}

absl::StatusOr<Time> FlowsAloneTime(const topology::Topology& topology, const std::vector<BoundaryFlow>& flows,
                                    network::NetworkMode mode, std::vector<LinkLoad>* load) {
  PointFlowTimer timer(topology, mode);
  return timer.AloneTime(flows, load);
}

absl::StatusOr<Time> PointFlowTimer::AloneTime(const std::vector<BoundaryFlow>& flows, std::vector<LinkLoad>* load) {
  if (load != nullptr) load->clear();
  if (flows.empty()) return Time();
  if (network_ == nullptr) {
    auto network = network::Network::Create(&simulator_, collectives::NetworkLinks(topology_), mode_);
    if (!network.ok()) return network.status();
    network_ = *std::move(network);
  }
  const Time start = simulator_.now();
  for (const BoundaryFlow& f : flows) network_->StartFlow(f.route, f.bytes, nullptr, 0);
  simulator_.Run();
  touched_.clear();
  for (const BoundaryFlow& f : flows) touched_.insert(touched_.end(), f.route.begin(), f.route.end());
  std::sort(touched_.begin(), touched_.end());
  touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
  for (LinkId l : touched_) {
    const network::LinkCounters c = network_->link_counters(l);
    if (load != nullptr && (c.bytes > 0 || c.busy_time > 0)) load->push_back({l, c.bytes, c.busy_time});
    network_->ResetLinkCounters(l);
  }
  return simulator_.now() - start;
}

}  // namespace hetsim::executor
