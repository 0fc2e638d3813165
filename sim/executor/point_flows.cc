#include "sim/executor/point_flows.h"

#include "sim/collectives/simulate.h"
#include "sim/engine/simulator.h"

namespace hetsim::sim::executor {

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
                                    NetworkMode mode, std::vector<LinkLoad>* load) {
  if (flows.empty()) return Time{0};
  Simulator simulator;
  auto network = Network::Create(&simulator, NetworkLinks(topology), mode);
  if (!network.ok()) return network.status();
  for (const BoundaryFlow& f : flows) (*network)->StartFlow(f.route, f.bytes, nullptr, 0);
  simulator.Run();
  if (load != nullptr) {
    load->clear();
    for (LinkId l = 0; l < (*network)->num_links(); ++l) {
      const LinkCounters c = (*network)->link_counters(l);
      if (c.bytes > 0 || c.busy_time > 0) load->push_back({l, c.bytes, c.busy_time});
    }
  }
  return simulator.now();
}

}  // namespace hetsim::sim::executor
