#include "proto/resolve_cluster.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/units.h"
#include "proto/cluster_networks_internal.h"
#include "proto/fabric_presets.h"
#include "proto/intra_node_layout_internal.h"
#include "proto/limits.h"
#include "proto/resolve.h"
#include "proto/socket_transport_internal.h"

namespace hetsim::proto {
namespace {

using hetsim::v1::Cluster;
using hetsim::v1::InterIslandLink;
using hetsim::v1::Island;
using hetsim::v1::NodeType;

template <typename T>
absl::StatusOr<int32_t> FindByName(const T& items, const std::string& name, absl::string_view field) {
  for (int i = 0; i < items.size(); ++i) {
    if (items[i].name() == name) return i;
  }
  return absl::InvalidArgumentError(absl::StrFormat("%s: no entry named \"%s\"", field, name));
}

// The GPU type of node type `n` (its name was checked).
const hetsim::v1::GpuType& GpuTypeOf(const Cluster& c, const NodeType& n) {
  return c.gpu_types(*FindByName(c.gpu_types(), n.gpu_type(), ""));
}

absl::Status CheckLatency(absl::string_view at, absl::string_view field, int64_t ns) {
  if (ns < 0 || ns > limits::kMaxRouteLatencyNs) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.%s: %d is outside [0, %d]", at, field, ns, limits::kMaxRouteLatencyNs));
  }
  return absl::OkStatus();
}

// Island i's node type's index in Cluster.node_types; refuses what its nodes cannot be built from.
absl::StatusOr<int32_t> CheckIsland(const Cluster& c, int i, bool multi_node) {
  const Island& isl = c.islands(i);
  const std::string at = absl::StrFormat("islands[%d]", i);
  for (int j = 0; j < i; ++j) {
    if (c.islands(j).name() == isl.name()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s.name: \"%s\" repeats islands[%d]", at, isl.name(), j));
    }
  }
  HETSIM_ASSIGN_OR_RETURN(const int32_t nt, FindByName(c.node_types(), isl.node_type(), at + ".node_type"));
  const NodeType& node = c.node_types(nt);
  const std::string nat = absl::StrFormat("node_types[%d]", nt);
  HETSIM_RETURN_IF_ERROR(FindByName(c.gpu_types(), node.gpu_type(), nat + ".gpu_type").status());
  if (isl.node_count() == 0) return absl::InvalidArgumentError(at + ".node_count: must be at least 1");
  if (node.gpus_per_node() == 0) return absl::InvalidArgumentError(nat + ".gpus_per_node: must be at least 1");
  if (!(node.intra_node_bandwidth_gbps() > 0)) {
    return absl::InvalidArgumentError(nat + ".intra_node_bandwidth_gbps: must be > 0");
  }
  HETSIM_RETURN_IF_ERROR(CheckLatency(nat, "intra_node_latency_ns", node.intra_node_latency_ns()));
  if (const auto problems = IntraNodeLayoutProblems(node); !problems.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(nat, ".", problems[0].first, ": ", problems[0].second));
  }
  if (multi_node) {
    if (isl.nics_per_node() == 0) {
      return absl::InvalidArgumentError(at + ".nics_per_node: must be at least 1 when nodes talk to each other");
    }
    if (!(isl.nic_bandwidth_gbps() > 0)) return absl::InvalidArgumentError(at + ".nic_bandwidth_gbps: must be > 0");
  }
  HETSIM_RETURN_IF_ERROR(CheckLatency(at, "nic_latency_ns", isl.nic_latency_ns()));
  HETSIM_RETURN_IF_ERROR(CheckLatency(at, "switch_latency_ns", isl.switch_latency_ns()));
  if (isl.oversubscription() != 0 && !(isl.oversubscription() >= 1)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.oversubscription: %g must be >= 1", at, isl.oversubscription()));
  }
  return nt;
}

// Inter-island links join known, different islands with positive bandwidth, and with the shared
// networks (whose members agree on their fabric fields) every island.
absl::Status CheckInterIslandLinks(const Cluster& c) {
  std::vector<int> parent(c.islands_size());
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](int x) {
    while (parent[x] != x) x = parent[x];
    return x;
  };
  for (const IslandNetwork& n : IslandNetworks(c)) {
    for (int i : n.islands) {
      if (std::string field = DifferingFabricField(c.islands(n.islands.front()), c.islands(i)); !field.empty()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("islands[%d].%s: differs from the first island of network \"%s\"", i, field, n.name));
      }
      if (std::string problem = MixedTransportProblem(c, n, i); !problem.empty()) {
        return absl::InvalidArgumentError(absl::StrFormat("islands[%d].fabric: %s", i, problem));
      }
      parent[root(i)] = root(n.islands.front());
    }
  }
  for (int k = 0; k < c.inter_island_links_size(); ++k) {
    const InterIslandLink& l = c.inter_island_links(k);
    const std::string at = absl::StrFormat("inter_island_links[%d]", k);
    HETSIM_ASSIGN_OR_RETURN(const int32_t a, FindByName(c.islands(), l.island_a(), at + ".island_a"));
    HETSIM_ASSIGN_OR_RETURN(const int32_t b, FindByName(c.islands(), l.island_b(), at + ".island_b"));
    if (a == b) return absl::InvalidArgumentError(at + ".island_b: joins island \"" + l.island_a() + "\" to itself");
    if (!(l.bandwidth_gbps() > 0)) return absl::InvalidArgumentError(at + ".bandwidth_gbps: must be > 0");
    HETSIM_RETURN_IF_ERROR(CheckLatency(at, "latency_ns", l.latency_ns()));
    if (l.count() > 4096) return absl::InvalidArgumentError(at + ".count: more than 4096 parallel links");
    parent[root(a)] = root(b);
  }
  for (int i = 1; i < c.islands_size(); ++i) {
    if (root(i) != root(0)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("inter_island_links: no path from island \"%s\" to island \"%s\" (disconnected islands)",
                          c.islands(0).name(), c.islands(i).name()));
    }
  }
  return absl::OkStatus();
}

// The node type of each island (indices into Cluster.node_types) after the structural checks.
absl::StatusOr<std::vector<int32_t>> CheckStructure(const Cluster& c) {
  if (c.islands().empty()) return absl::InvalidArgumentError("islands: the cluster has no island");
  const bool multi_node = c.islands_size() > 1 || c.islands(0).node_count() > 1;
  std::vector<int32_t> node_type;
  int64_t total_gpus = 0;
  for (int i = 0; i < c.islands_size(); ++i) {
    HETSIM_ASSIGN_OR_RETURN(const int32_t nt, CheckIsland(c, i, multi_node));
    node_type.push_back(nt);
  }
  for (int i = 0; i < c.islands_size(); ++i) {
    total_gpus += int64_t{c.islands(i).node_count()} * c.node_types(node_type[i]).gpus_per_node();
    if (total_gpus > limits::kMaxTopologyGpus) {
      return absl::InvalidArgumentError(
          absl::StrFormat("islands[%d].node_count: the cluster exceeds %d GPUs", i, limits::kMaxTopologyGpus));
    }
  }
  HETSIM_RETURN_IF_ERROR(CheckInterIslandLinks(c));
  return node_type;
}

// `given` with its preset's figures where it has zeros, in Time; `at` names it in messages.
absl::StatusOr<spec::NcclFabricTiming> ResolveNccl(const hetsim::v1::NcclFabric& given, const NcclFabricPreset& preset,
                                                   absl::string_view at, std::string name) {
  const hetsim::v1::NcclFabric f = ResolveNcclFabric(given, preset);
  if (std::string problem = NcclFabricProblem(f); !problem.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s.nccl.%s", at, problem));
  }
  spec::NcclFabricTiming t;
  t.name = std::move(name);
  t.bandwidth_efficiency = f.bandwidth_efficiency();
  t.launch_latency = NanosecondsToTime(f.launch_latency_ns());
  t.step_latency = {NanosecondsToTime(f.ll_step_latency_ns()), NanosecondsToTime(f.ll128_step_latency_ns()),
                    NanosecondsToTime(f.simple_step_latency_ns())};
  return t;
}

spec::NodeTypeSpec ResolveNodeType(const NodeType& n) {
  spec::NodeTypeSpec s;
  s.name = n.name();
  s.gpus_per_node = static_cast<int32_t>(n.gpus_per_node());
  s.fabric = IntraNodeFabricOf(n.intra_node_fabric());
  s.bandwidth = GbpsBandwidth(n.intra_node_bandwidth_gbps());
  s.latency = NanosecondsToTime(n.intra_node_latency_ns());
  if (IsPcieTreeFabric(n.intra_node_fabric())) {
    const hetsim::v1::PcieTree& p = n.pcie();
    s.pcie.gpus_per_switch = p.gpus_per_switch() > 1 ? static_cast<int32_t>(p.gpus_per_switch()) : 0;
    s.pcie.sockets = std::max<int32_t>(1, static_cast<int32_t>(p.sockets()));
    s.pcie.socket_bandwidth = GbpsBandwidth(p.inter_socket_bandwidth_gbps());
    s.pcie.socket_latency = NanosecondsToTime(p.inter_socket_latency_ns());
    s.pcie.no_p2p = p.no_p2p();
    s.pcie.host_memory_bandwidth = GBpsBandwidth(p.host_memory_bandwidth_gbytes_per_s());
    s.pcie.shm_connection = p.shm_connection_gbytes_per_s() > 0
                                ? GBpsBandwidth(p.shm_connection_gbytes_per_s())
                                : Bandwidth(spec::kNcclPcieChannels * spec::kShmDirectChannelBytesPerS);
  }
  s.nvlink_bandwidth = GbpsBandwidth(n.nvlink_bandwidth_gbps());
  s.nvlink_sharp = n.nvlink_sharp();
  s.nvls_efficiency = n.nvls_bandwidth_efficiency();
  return s;
}

spec::ClosSpec ResolveClos(const hetsim::v1::ClosFabric& f, int32_t nics_per_node) {
  spec::ClosSpec s;
  s.nodes_per_rack = std::max<int32_t>(1, static_cast<int32_t>(f.nodes_per_rack()));
  s.racks_per_pod = std::max<int32_t>(1, static_cast<int32_t>(f.racks_per_pod()));
  s.rail_optimized = f.rail_optimized();
  s.pod_switches = f.pod_switches() > 0 ? static_cast<int32_t>(f.pod_switches()) : nics_per_node;
  s.aggregation_switches =
      f.aggregation_switches() > 0 ? static_cast<int32_t>(f.aggregation_switches()) : s.pod_switches;
  s.rack_oversubscription = std::max(1.0, f.rack_oversubscription());
  s.aggregation_oversubscription = std::max(1.0, f.aggregation_oversubscription());
  return s;
}

// Island i of `c` (node type `nt`) without its GPU and NCCL figures.
spec::IslandSpec ResolveIsland(const Cluster& c, int i, int32_t nt) {
  const Island& isl = c.islands(i);
  const NodeType& node = c.node_types(nt);
  spec::IslandSpec s;
  s.name = isl.name();
  s.node = ResolveNodeType(node);
  s.node_count = static_cast<int32_t>(isl.node_count());
  s.nics_per_node = static_cast<int32_t>(isl.nics_per_node());
  s.nic_bandwidth = GbpsBandwidth(isl.nic_bandwidth_gbps());
  if (isl.nic_sharing() == hetsim::v1::NIC_SHARED && s.nics_per_node > 1) {
    // Bonded NICs: one link of their summed rate that every GPU of the node shares.
    s.nic_bandwidth = GbpsBandwidth(isl.nics_per_node() * isl.nic_bandwidth_gbps());
    s.nics_per_node = 1;
  }
  s.nic_latency = NanosecondsToTime(isl.nic_latency_ns());
  s.switch_latency = NanosecondsToTime(isl.switch_latency_ns());
  s.fabric = InterNodeFabricOf(isl.fabric());
  s.topology = FabricTopologyOf(isl.topology());
  s.nodes_per_leaf = static_cast<int32_t>(isl.nodes_per_leaf());
  s.oversubscription = isl.oversubscription() >= 1 ? isl.oversubscription() : 1.0;
  s.clos = ResolveClos(isl.clos(), s.nics_per_node);
  s.infiniband_sharp = isl.infiniband_sharp();
  return s;
}

spec::InterIslandLinkSpec ResolveInterIslandLink(const Cluster& c, const InterIslandLink& l) {
  spec::InterIslandLinkSpec s;
  s.island_a = *FindByName(c.islands(), l.island_a(), "");
  s.island_b = *FindByName(c.islands(), l.island_b(), "");
  s.fabric = InterNodeFabricOf(l.fabric());
  s.bandwidth = GbpsBandwidth(l.bandwidth_gbps());
  s.latency = NanosecondsToTime(l.latency_ns());
  s.count = static_cast<int32_t>(std::max<uint32_t>(1, l.count()));
  return s;
}

// NCCL's figures of every node type (per island), island and inter-island link, in that order.
absl::Status ResolveNcclFabrics(const Cluster& c, const std::vector<int32_t>& node_type, spec::ClusterSpec& s) {
  for (int i = 0; i < c.islands_size(); ++i) {
    const NodeType& nt = c.node_types(node_type[i]);
    HETSIM_ASSIGN_OR_RETURN(
        s.islands[i].node.nccl,
        ResolveNccl(nt.nccl(), IntraNodeFabricPreset(nt.intra_node_fabric(), GpuTypeOf(c, nt).preset()),
                    absl::StrFormat("node_types[%d]", node_type[i]), absl::StrFormat("node type \"%s\"", nt.name())));
  }
  for (int i = 0; i < c.islands_size(); ++i) {
    const Island& isl = c.islands(i);
    HETSIM_ASSIGN_OR_RETURN(s.islands[i].nccl, ResolveNccl(isl.nccl(), InterNodeFabricPreset(isl.fabric()),
                                                           absl::StrFormat("islands[%d]", i),
                                                           absl::StrFormat("island \"%s\"", isl.name())));
    double& efficiency = s.islands[i].nccl.bandwidth_efficiency;
    efficiency = std::min(efficiency, SocketStreamsShare(isl));
  }
  for (int k = 0; k < c.inter_island_links_size(); ++k) {
    const InterIslandLink& l = c.inter_island_links(k);
    HETSIM_ASSIGN_OR_RETURN(
        s.inter_island_links[k].nccl,
        ResolveNccl(l.nccl(), InterNodeFabricPreset(l.fabric()), absl::StrFormat("inter_island_links[%d]", k),
                    absl::StrFormat("inter-island link %s-%s", l.island_a(), l.island_b())));
  }
  return absl::OkStatus();
}

// Island i's GPU, labelled "<file>: gpu_types[\"A100\"]" in the spec and in messages.
absl::Status ResolveGpus(const Cluster& c, const std::vector<int32_t>& node_type, absl::string_view file,
                         spec::ClusterSpec& s) {
  for (int i = 0; i < c.islands_size(); ++i) {
    const hetsim::v1::GpuType& gpu = GpuTypeOf(c, c.node_types(node_type[i]));
    spec::IslandSpec& island = s.islands[i];
    island.gpu_where = absl::StrCat(file, file.empty() ? "" : ": ", "gpu_types[\"", gpu.name(), "\"]");
    island.gpu = ResolveGpu(gpu);
  }
  return absl::OkStatus();
}

absl::Status InFile(absl::Status s, absl::string_view file) {
  if (s.ok() || file.empty()) return s;
  return absl::Status(s.code(), absl::StrCat(file, ": ", s.message()));
}

}  // namespace

spec::IntraNodeFabric IntraNodeFabricOf(hetsim::v1::IntraNodeFabric fabric) {
  switch (fabric) {
    case hetsim::v1::PCIE: return spec::IntraNodeFabric::kPcie;
    case hetsim::v1::PCIE_TREE: return spec::IntraNodeFabric::kPcieTree;
    case hetsim::v1::NVLINK_BRIDGE: return spec::IntraNodeFabric::kNvlinkBridge;
    case hetsim::v1::HYBRID_CUBE_MESH: return spec::IntraNodeFabric::kHybridCubeMesh;
    case hetsim::v1::INTRA_NODE_FABRIC_UNSPECIFIED:
    case hetsim::v1::NVSWITCH: return spec::IntraNodeFabric::kNvSwitch;
    case hetsim::v1::IntraNodeFabric_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case hetsim::v1::IntraNodeFabric_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  return spec::IntraNodeFabric::kNvSwitch;  // a number outside the schema: proto::Load refuses them
}

spec::InterNodeFabric InterNodeFabricOf(hetsim::v1::InterNodeFabric fabric) {
  switch (fabric) {
    case hetsim::v1::ROCE: return spec::InterNodeFabric::kRoce;
    case hetsim::v1::ETHERNET: return spec::InterNodeFabric::kEthernet;
    case hetsim::v1::INTER_NODE_FABRIC_UNSPECIFIED:  // InfiniBand, the schema's default
    case hetsim::v1::INFINIBAND: return spec::InterNodeFabric::kInfiniband;
    case hetsim::v1::InterNodeFabric_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case hetsim::v1::InterNodeFabric_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  return spec::InterNodeFabric::kInfiniband;  // a number outside the schema: proto::Load refuses them
}

spec::FabricTopology FabricTopologyOf(hetsim::v1::FabricTopology topology) {
  switch (topology) {
    case hetsim::v1::FAT_TREE: return spec::FabricTopology::kFatTree;
    case hetsim::v1::RAIL_OPTIMIZED: return spec::FabricTopology::kRailOptimized;
    case hetsim::v1::CLOS: return spec::FabricTopology::kClos;
    case hetsim::v1::FABRIC_TOPOLOGY_UNSPECIFIED:  // one switch, the schema's default
    case hetsim::v1::SINGLE_SWITCH: return spec::FabricTopology::kSingleSwitch;
    case hetsim::v1::FabricTopology_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case hetsim::v1::FabricTopology_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  return spec::FabricTopology::kSingleSwitch;  // a number outside the schema: proto::Load refuses them
}

absl::StatusOr<spec::ClusterSpec> ResolveCluster(const Cluster& c, absl::string_view file) {
  absl::StatusOr<std::vector<int32_t>> node_type = CheckStructure(c);
  if (!node_type.ok()) return InFile(node_type.status(), file);
  spec::ClusterSpec s;
  s.name = c.name();
  s.ideal = c.ideal();
  for (int i = 0; i < c.islands_size(); ++i) s.islands.push_back(ResolveIsland(c, i, (*node_type)[i]));
  for (const InterIslandLink& l : c.inter_island_links()) s.inter_island_links.push_back(ResolveInterIslandLink(c, l));
  for (const IslandNetwork& n : IslandNetworks(c)) {
    int32_t nics = 0;
    for (int i : n.islands) {
      s.islands[i].network = static_cast<int32_t>(s.networks.size());
      nics = std::max(nics, s.islands[i].nics_per_node);
    }
    // A shared CLOS's "0 = one pod switch per NIC of a node" counts the members' most NICs per node.
    s.islands[n.islands.front()].clos = ResolveClos(c.islands(n.islands.front()).clos(), nics);
    s.networks.push_back({n.name, {n.islands.begin(), n.islands.end()}});
  }
  if (!s.ideal) HETSIM_RETURN_IF_ERROR(InFile(ResolveNcclFabrics(c, *node_type, s), file));
  HETSIM_RETURN_IF_ERROR(ResolveGpus(c, *node_type, file, s));
  return s;
}

}  // namespace hetsim::proto
