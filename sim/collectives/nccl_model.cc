#include "sim/collectives/nccl_model.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"

namespace hetsim::collectives {

absl::string_view ProtocolName(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::kLL: return "LL";
    case NcclProtocol::kLL128: return "LL128";
    case NcclProtocol::kSimple: return "Simple";
  }
  return "?";
}

absl::StatusOr<std::optional<NcclProtocol>> ParseProtocol(absl::string_view name) {
  if (name == "auto") return std::optional<NcclProtocol>();
  for (NcclProtocol p : {NcclProtocol::kLL, NcclProtocol::kLL128, NcclProtocol::kSimple}) {
    if (name == ProtocolName(p)) return std::optional<NcclProtocol>(p);
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("proto: unknown protocol \"%s\" (expected auto, LL, LL128 or Simple)", name));
}

double ProtocolBandwidthFraction(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::kLL: return 0.25;
    case NcclProtocol::kLL128: return 0.92;
    case NcclProtocol::kSimple: return 1.0;
  }
  return 1.0;
}

bool NcclEnablesLl128(const topology::Topology& topology, std::span<const GpuId> gpus) {
  absl::flat_hash_map<std::pair<int32_t, int32_t>, int32_t> per_node;  // (island, node) -> the group's GPUs there
  int min_capability = 0, max_capability = 0;
  for (GpuId g : gpus) {
    const absl::StatusOr<topology::GpuLocation> at = topology.Locate(g);
    if (!at.ok()) continue;
    const spec::IslandSpec& island = topology.island(at->island);
    const int c = island.gpu.compute_capability;
    min_capability = min_capability == 0 ? c : std::min(min_capability, c);
    max_capability = std::max(max_capability, c);
    const int32_t here = ++per_node[{at->island, at->node}];
    const spec::IntraNodeFabric fabric = island.node.fabric;
    // typeIntra <= PATH_NVB: NVLink between the node's GPUs of the group (a bridge joins a pair only).
    const bool nvlink = fabric == spec::IntraNodeFabric::kNvSwitch ||
                        fabric == spec::IntraNodeFabric::kHybridCubeMesh ||
                        (fabric == spec::IntraNodeFabric::kNvlinkBridge && here <= 2);
    if (here > 1 && !nvlink) return false;
  }
  return min_capability == max_capability || min_capability >= 90;
}

std::vector<NcclProtocol> CandidateProtocols(const topology::Topology& topology, std::optional<NcclProtocol> forced,
                                             std::span<const GpuId> gpus) {
  if (!topology.nccl_model()) return {NcclProtocol::kSimple};
  if (forced.has_value()) return {*forced};
  if (!gpus.empty() && !NcclEnablesLl128(topology, gpus)) return {NcclProtocol::kLL, NcclProtocol::kSimple};
  return {NcclProtocol::kLL, NcclProtocol::kLL128, NcclProtocol::kSimple};
}

Time RouteStepLatency(const topology::Topology& topology, std::span<const hetsim::LinkId> route, NcclProtocol p) {
  if (!topology.nccl_model()) return 0;
  Time t = 0;
  const auto& fabrics = topology.nccl_fabrics();
  for (hetsim::LinkId l : route) {
    const int32_t f = topology.link(l).fabric;
    if (f >= 0) t = std::max(t, fabrics[f].step_latency[static_cast<int>(p)]);
  }
  return t;
}

Time LaunchLatency(const topology::Topology& topology, std::span<const hetsim::GpuId> gpus) {
  if (!topology.nccl_model() || gpus.size() < 2) return 0;
  const auto& fabrics = topology.nccl_fabrics();
  Time t = 0;
  const topology::GpuLocation first = *topology.Locate(gpus.front());
  bool many_islands = false;
  for (hetsim::GpuId g : gpus) {
    const topology::GpuLocation at = *topology.Locate(g);
    t = std::max(t, fabrics[topology.node_fabric(at.island)].launch_latency);
    many_islands |= at.island != first.island;
    if (at.island != first.island || at.node != first.node) {
      t = std::max(t, fabrics[topology.island_fabric(at.island)].launch_latency);
      t = std::max(t, fabrics[topology.island_fabric(first.island)].launch_latency);
    }
  }
  if (many_islands) {
    // Every inter-island link's fabric: the group's traffic may cross any of them.
    for (const topology::Link& l : topology.links()) {
      if (l.fabric >= 0) t = std::max(t, fabrics[l.fabric].launch_latency);
    }
  }
  return t;
}

}  // namespace hetsim::collectives
