#include "topology/device_graph.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/check.h"
#include "base/wall_limit.h"
#include "topology/topology_builder_internal.h"

namespace hetsim::topology {

absl::string_view DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kGpu: return "gpu";
    case DeviceKind::kNvSwitch: return "nvswitch";
    case DeviceKind::kPcieSwitch: return "pcie-switch";
    case DeviceKind::kNic: return "nic";
    case DeviceKind::kIslandSwitch: return "switch";
    case DeviceKind::kLeafSwitch: return "leaf";
    case DeviceKind::kSpineSwitch: return "spine";
    case DeviceKind::kRailSwitch: return "rail";
    case DeviceKind::kTorSwitch: return "tor";
    case DeviceKind::kPodSwitch: return "pod-switch";
    case DeviceKind::kAggSwitch: return "agg";
    case DeviceKind::kGateway: return "gateway";
    case DeviceKind::kCpu: return "cpu";
    case DeviceKind::kHostMemory: return "host-memory";
  }
  return "?";
}

absl::string_view LinkClassName(LinkClass link_class) {
  switch (link_class) {
    case LinkClass::kNvlink: return "NVLINK";
    case LinkClass::kPcie: return "PCIE";
    case LinkClass::kInfiniband: return "INFINIBAND";
    case LinkClass::kRoce: return "ROCE";
    case LinkClass::kEthernet: return "ETHERNET";
  }
  return "?";
}

namespace {

LinkClass ClassOfFabric(spec::InterNodeFabric fabric) {
  switch (fabric) {
    case spec::InterNodeFabric::kRoce: return LinkClass::kRoce;
    case spec::InterNodeFabric::kEthernet: return LinkClass::kEthernet;
    case spec::InterNodeFabric::kInfiniband: break;
  }
  return LinkClass::kInfiniband;
}

}  // namespace

void Topology::Builder::CollectNcclFabrics() {
  const spec::ClusterSpec& c = t_.cluster_;
  if (c.ideal) return;
  for (const spec::IslandSpec& island : c.islands) {
    t_.island_node_fabric_.push_back(static_cast<int32_t>(t_.nccl_fabrics_.size()));
    t_.nccl_fabrics_.push_back(island.node.nccl);
  }
  for (const spec::IslandSpec& island : c.islands) {
    t_.island_net_fabric_.push_back(static_cast<int32_t>(t_.nccl_fabrics_.size()));
    t_.nccl_fabrics_.push_back(island.nccl);
  }
  first_link_fabric_ = static_cast<int32_t>(t_.nccl_fabrics_.size());
  for (const spec::InterIslandLinkSpec& link : c.inter_island_links) t_.nccl_fabrics_.push_back(link.nccl);
}

void Topology::Builder::Index() {
  const spec::ClusterSpec& c = t_.cluster_;
  HETSIM_CHECK(!c.islands.empty(), "a cluster spec has islands");
  int64_t total_gpus = 0;
  for (const spec::IslandSpec& island : c.islands) {
    HETSIM_CHECK(island.node_count >= 1 && island.node.gpus_per_node >= 1, "an island has nodes with GPUs");
    t_.island_first_gpu_.push_back(static_cast<int32_t>(total_gpus));
    total_gpus += island.gpus();
  }
  HETSIM_CHECK(total_gpus <= (int64_t{1} << 30), "global GPU ids fit int32");
}

void Topology::Builder::BuildNodes(int32_t island) {
  const spec::IslandSpec& isl = t_.cluster_.islands[island];
  const spec::NodeTypeSpec& nt = isl.node;
  const bool pcie = nt.fabric == spec::IntraNodeFabric::kPcie;
  const LinkClass intra_class = pcie ? LinkClass::kPcie : LinkClass::kNvlink;
  const double intra_bps = nt.bandwidth.bytes_per_second();
  // The GPU-to-GPU latency is split over the two hops through the switch.
  const Time half_intra = nt.latency / 2;
  const Time intra_rest = nt.latency - half_intra;
  const double nic_bps = isl.nic_bandwidth.bytes_per_second();
  const int32_t gpus = nt.gpus_per_node;
  const int32_t nics = isl.nics_per_node;
  const bool tree = nt.fabric == spec::IntraNodeFabric::kPcieTree ||
                    nt.fabric == spec::IntraNodeFabric::kNvlinkBridge ||
                    nt.fabric == spec::IntraNodeFabric::kHybridCubeMesh;
  for (int32_t node = 0; node < isl.node_count; ++node) {
    if (Stopped()) return;
    if (tree) {
      std::vector<DeviceId> node_nics;
      for (int32_t k = 0; k < nics; ++k) node_nics.push_back(AddDevice(DeviceKind::kNic, island, node, k));
      island_nics_[island].insert(island_nics_[island].end(), node_nics.begin(), node_nics.end());
      BuildTreeNode(island, node, node_nics);
      continue;
    }
    const DeviceId sw = AddDevice(pcie ? DeviceKind::kPcieSwitch : DeviceKind::kNvSwitch, island, node, 0);
    std::vector<DeviceId> node_nics;
    for (int32_t k = 0; k < nics; ++k) node_nics.push_back(AddDevice(DeviceKind::kNic, island, node, k));
    island_nics_[island].insert(island_nics_[island].end(), node_nics.begin(), node_nics.end());
    for (int32_t g = 0; g < gpus; ++g) {
      const DeviceId gpu = AddDevice(DeviceKind::kGpu, island, node, g);
      t_.gpu_devices_.push_back(gpu);
      t_.gpu_switch_.push_back(sw);
      fabric_ = t_.node_fabric(island);
      const LinkId up = AddDuplex(gpu, sw, intra_bps, half_intra, intra_rest, intra_class);
      fabric_ = t_.island_fabric(island);
      t_.gpu_up_.push_back(up);
      t_.gpu_down_.push_back(ReverseLink(up));
      t_.intra_route_base_.push_back(-1);
      AttachNic(gpu, g, node_nics, nic_bps);
    }
  }
}

void Topology::Builder::AttachNic(DeviceId gpu, int32_t local, const std::vector<DeviceId>& node_nics, double nic_bps) {
  const auto nics = static_cast<int64_t>(node_nics.size());
  if (nics == 0) {
    t_.gpu_nic_.push_back(kNoDevice);
    t_.gpu_nic_up_.push_back(kNoLink);
    t_.gpu_nic_down_.push_back(kNoLink);
    return;
  }
  // GPUDirect RDMA over PCIe to the GPU's NIC; GPUs share NICs when there are fewer NICs.
  const int32_t gpus = t_.cluster_.islands[t_.devices_[gpu.value()].island].node.gpus_per_node;
  const DeviceId nic = node_nics[local * nics / gpus];
  const LinkId nic_up = AddDuplex(gpu, nic, nic_bps, 0, 0, LinkClass::kPcie);
  t_.gpu_nic_.push_back(nic);
  t_.gpu_nic_up_.push_back(nic_up);
  t_.gpu_nic_down_.push_back(ReverseLink(nic_up));
}

void Topology::Builder::AttachToSwitch(const NetNic& nic, DeviceId sw, Time wire, Time hop_from_switch) {
  const spec::IslandSpec& own = t_.cluster_.islands[nic.island];
  const int32_t network_fabric = fabric_;
  fabric_ = t_.island_fabric(nic.island);  // the NIC's own transport prices its uplink
  const LinkId up =
      AddDuplex(nic.nic, sw, own.nic_bandwidth.bytes_per_second(), wire, hop_from_switch, ClassOfFabric(own.fabric));
  fabric_ = network_fabric;
  t_.nic_up_[nic.nic.value()] = up;
  t_.nic_down_[nic.nic.value()] = ReverseLink(up);
}

std::vector<double> Topology::Builder::FastestNicPerGroup(const std::vector<NetNic>& nics,
                                                          const std::vector<int32_t>& group, size_t groups,
                                                          std::vector<int32_t>* count) const {
  std::vector<double> fastest(groups, 0.0);
  count->assign(groups, 0);
  for (size_t n = 0; n < nics.size(); ++n) {
    const double bps = t_.cluster_.islands[nics[n].island].nic_bandwidth.bytes_per_second();
    fastest[group[n]] = std::max(fastest[group[n]], bps);
    ++(*count)[group[n]];
  }
  return fastest;
}

std::vector<DeviceId> Topology::Builder::BuildFabric(int32_t island, const std::vector<NetNic>& nics, int32_t nodes) {
  const spec::IslandSpec& isl = t_.cluster_.islands[island];
  if (nics.empty()) return {};
  fabric_ = t_.island_fabric(island);
  const LinkClass cls = ClassOfFabric(isl.fabric);
  const Time wire = isl.nic_latency;
  const Time hop_from_switch = wire + isl.switch_latency;
  const double oversub = isl.oversubscription;
  // NICs per node: the most any member's node has (one lane, rail and spine per NIC index).
  int32_t lanes = 0;
  for (const NetNic& n : nics) lanes = std::max(lanes, n.index + 1);
  // Lower-tier switches fully meshed to `spines` spine switches, lower switch k's links at `link_bps[k]`.
  auto add_spines = [&](const std::vector<DeviceId>& lower, int32_t spines, const std::vector<double>& link_bps) {
    std::vector<DeviceId> top;
    for (int32_t s = 0; s < spines; ++s) top.push_back(AddDevice(DeviceKind::kSpineSwitch, island, -1, s));
    for (size_t k = 0; k < lower.size(); ++k) {
      if (Stopped()) return top;
      for (DeviceId sp : top) AddDuplex(lower[k], sp, link_bps[k], hop_from_switch, hop_from_switch, cls);
    }
    return top;
  };
  std::vector<int32_t> group(nics.size()), count;
  switch (isl.topology) {
    case spec::FabricTopology::kFatTree: {
      const int32_t per_leaf = isl.nodes_per_leaf == 0 ? nodes : std::min<int32_t>(nodes, isl.nodes_per_leaf);
      const int32_t leaves = (nodes + per_leaf - 1) / per_leaf;
      std::vector<DeviceId> leaf;
      for (int32_t l = 0; l < leaves; ++l) leaf.push_back(AddDevice(DeviceKind::kLeafSwitch, island, -1, l));
      for (size_t n = 0; n < nics.size() && !Stopped(); ++n) {
        group[n] = nics[n].node / per_leaf;
        AttachToSwitch(nics[n], leaf[group[n]], wire, hop_from_switch);
      }
      if (leaves == 1) return leaf;
      // One spine per NIC index; a leaf's uplinks together carry its downlinks / oversubscription: its
      // nodes_per_leaf nodes x the most NICs a node under it has, each port at its fastest NIC's rate.
      std::vector<int32_t> leaf_lanes(leaf.size(), 0);
      for (size_t n = 0; n < nics.size(); ++n) leaf_lanes[group[n]] = std::max(leaf_lanes[group[n]], nics[n].index + 1);
      std::vector<double> link_bps = FastestNicPerGroup(nics, group, leaf.size(), &count);
      for (size_t l = 0; l < leaf.size(); ++l) {
        link_bps[l] = per_leaf * link_bps[l] / oversub * (static_cast<double>(leaf_lanes[l]) / lanes);
      }
      return add_spines(leaf, lanes, link_bps);
    }
    case spec::FabricTopology::kRailOptimized: {
      std::vector<DeviceId> rail;
      for (int32_t r = 0; r < lanes; ++r) rail.push_back(AddDevice(DeviceKind::kRailSwitch, island, -1, r));
      for (size_t n = 0; n < nics.size() && !Stopped(); ++n) {
        group[n] = nics[n].index;
        AttachToSwitch(nics[n], rail[group[n]], wire, hop_from_switch);
      }
      if (lanes == 1) return rail;
      std::vector<double> link_bps = FastestNicPerGroup(nics, group, rail.size(), &count);
      for (size_t r = 0; r < rail.size(); ++r) link_bps[r] = count[r] * link_bps[r] / lanes / oversub;
      return add_spines(rail, lanes, link_bps);
    }
    case spec::FabricTopology::kClos: return BuildClos(island, nics, nodes, lanes, cls, wire, hop_from_switch);
    case spec::FabricTopology::kSingleSwitch: {
      const DeviceId sw = AddDevice(DeviceKind::kIslandSwitch, island, -1, 0);
      for (size_t n = 0; n < nics.size() && !Stopped(); ++n) AttachToSwitch(nics[n], sw, wire, hop_from_switch);
      return {sw};
    }
  }
  HETSIM_CHECK(false, "a FabricTopology value outside the enum (%d)", static_cast<int>(isl.topology));
}

std::vector<DeviceId> Topology::Builder::BuildClos(int32_t island, const std::vector<NetNic>& nics, int32_t nodes,
                                                   int32_t lanes, LinkClass cls, Time wire, Time hop_from_switch) {
  const spec::IslandSpec& isl = t_.cluster_.islands[island];
  const spec::ClosSpec& f = isl.clos;
  const int32_t per_rack = f.nodes_per_rack;
  const int32_t racks_per_pod = f.racks_per_pod;
  const int32_t racks = (nodes + per_rack - 1) / per_rack;
  const int32_t pods = (racks + racks_per_pod - 1) / racks_per_pod;
  const int32_t tors_per_rack = f.rail_optimized ? lanes : 1;
  const int32_t pod_switches = f.pod_switches;
  const int32_t agg_switches = f.aggregation_switches;
  const double rack_oversub = f.rack_oversubscription;
  const double agg_oversub = f.aggregation_oversubscription;
  // Tier 1: NIC k of node n on ToR (rack of n, k when rail-optimised); a ToR's uplinks to its pod's
  // switches together carry its NICs' bandwidth / rack_oversubscription, its ports sized for the
  // fastest NIC under it.
  std::vector<DeviceId> tor;
  for (int32_t r = 0; r < racks * tors_per_rack; ++r) tor.push_back(AddDevice(DeviceKind::kTorSwitch, island, -1, r));
  std::vector<int32_t> tor_of(nics.size());
  for (size_t n = 0; n < nics.size(); ++n) {
    if (Stopped()) return tor;
    tor_of[n] = nics[n].node / per_rack * tors_per_rack + (f.rail_optimized ? nics[n].index : 0);
    AttachToSwitch(nics[n], tor[tor_of[n]], wire, hop_from_switch);
  }
  if (tor.size() == 1) return tor;
  std::vector<int32_t> tor_nics;
  const std::vector<double> tor_bps = FastestNicPerGroup(nics, tor_of, tor.size(), &tor_nics);
  // Tier 2: every ToR of a pod to each of its pod switches. A pod's uplinks to the aggregation tier
  // together carry its NICs' bandwidth / aggregation_oversubscription, spread over pod x agg links.
  std::vector<DeviceId> pod_switch;
  std::vector<double> pod_nic_bps(pods, 0.0);
  for (int32_t p = 0; p < pods; ++p) {
    for (int32_t s = 0; s < pod_switches; ++s) {
      pod_switch.push_back(AddDevice(DeviceKind::kPodSwitch, island, -1, p * pod_switches + s));
    }
  }
  for (size_t t = 0; t < tor.size(); ++t) {
    if (Stopped()) return tor;
    const int32_t p = static_cast<int32_t>(t) / tors_per_rack / racks_per_pod;
    pod_nic_bps[p] += tor_nics[t] * tor_bps[t];
    const double link_bps = tor_nics[t] * tor_bps[t] / rack_oversub / pod_switches;
    for (int32_t s = 0; s < pod_switches; ++s) {
      AddDuplex(tor[t], pod_switch[p * pod_switches + s], link_bps, hop_from_switch, hop_from_switch, cls);
    }
  }
  if (pods == 1) return {pod_switch.begin(), pod_switch.end()};
  // Tier 3.
  std::vector<DeviceId> agg;
  for (int32_t a = 0; a < agg_switches; ++a) agg.push_back(AddDevice(DeviceKind::kAggSwitch, island, -1, a));
  for (int32_t p = 0; p < pods; ++p) {
    const double link_bps = pod_nic_bps[p] / agg_oversub / (pod_switches * agg_switches);
    for (int32_t s = 0; s < pod_switches; ++s) {
      for (DeviceId a : agg)
        AddDuplex(pod_switch[p * pod_switches + s], a, link_bps, hop_from_switch, hop_from_switch, cls);
    }
  }
  return agg;
}

std::vector<DeviceId> Topology::Builder::BuildNetworkOf(int32_t i) {
  const spec::ClusterSpec& c = t_.cluster_;
  const bool shared = c.islands[i].network >= 0;
  if (shared && c.networks[c.islands[i].network].islands.back() != i) return {};
  const std::vector<int32_t> members = shared ? c.networks[c.islands[i].network].islands : std::vector<int32_t>{i};
  // The members' NICs, node-major in member order, each with its node's place on the network.
  std::vector<NetNic> nics;
  int32_t nodes = 0;
  for (int32_t m : members) {
    for (DeviceId nic : island_nics_[m]) {
      const Device& d = t_.devices_[nic.value()];
      nics.push_back({nic, m, nodes + d.node, d.index});
    }
    nodes += c.islands[m].node_count;
  }
  return BuildFabric(members.front(), nics, nodes);
}

void Topology::Builder::Run() {
  Index();
  CollectNcclFabrics();
  const spec::ClusterSpec& c = t_.cluster_;
  const auto islands = static_cast<int32_t>(c.islands.size());
  island_nics_.resize(islands);
  std::vector<std::vector<DeviceId>> tops(islands);
  for (int32_t i = 0; i < islands; ++i) {
    BuildNodes(i);
    if (Stopped()) return;  // an incomplete island: nothing may be attached to it
    tops[i] = BuildNetworkOf(i);
    if (Stopped()) return;
    if (c.islands[i].network < 0 || tops[i].empty()) continue;
    for (int32_t m : c.networks[c.islands[i].network].islands) tops[m] = tops[i];
  }
  if (islands == 1) return;
  // A gateway per island, attached to the island's top tier by links that never limit the
  // inter-island links (their capacity is the island's whole inter-island capacity).
  std::vector<double> island_external_bps(islands, 0.0);
  for (const spec::InterIslandLinkSpec& l : c.inter_island_links) {
    const double bps = l.bandwidth.bytes_per_second() * l.count;
    island_external_bps[l.island_a] += bps;
    island_external_bps[l.island_b] += bps;
  }
  std::vector<DeviceId> gateway(islands);
  for (int32_t i = 0; i < islands; ++i) {
    const spec::IslandSpec& isl = c.islands[i];
    if (island_external_bps[i] == 0) continue;  // joined to the others by its shared network only
    HETSIM_CHECK(!tops[i].empty(), "an island joined to others has NICs");
    gateway[i] = AddDevice(DeviceKind::kGateway, i, -1, 0);
    fabric_ = -1;  // never the bottleneck, not derated; routes through it cross an inter-island link
    const Time hop = isl.nic_latency + isl.switch_latency;
    for (DeviceId top : tops[i])
      AddDuplex(top, gateway[i], island_external_bps[i], hop, hop, ClassOfFabric(isl.fabric));
  }
  for (size_t k = 0; k < c.inter_island_links.size(); ++k) {
    const spec::InterIslandLinkSpec& l = c.inter_island_links[k];
    fabric_ = t_.nccl_model() ? first_link_fabric_ + static_cast<int32_t>(k) : -1;
    for (int32_t p = 0; p < l.count; ++p) {
      AddDuplex(gateway[l.island_a], gateway[l.island_b], l.bandwidth.bytes_per_second(), l.latency, l.latency,
                ClassOfFabric(l.fabric));
    }
  }
}

Topology Topology::Build(spec::ClusterSpec cluster) {
  Topology t;
  t.cluster_ = std::move(cluster);
  Builder b(t);
  b.Run();
  return t;
}

absl::Status Topology::CheckComplete() const {
  if (!interrupted_) return absl::OkStatus();
  absl::Status s = CurrentWallLimit().Check("building the cluster's topology");
  // The build stopped only because the limit passed, and time runs forward: Check fails.
  return s.ok() ? absl::InternalError("the topology's build stopped before the wall-clock limit") : s;
}

std::string Topology::DeviceName(DeviceId id) const {
  const Device& d = devices_[id.value()];
  const spec::IslandSpec& isl = cluster_.islands[d.island];
  // A shared network's switches are named by the network, its gateways by their island.
  const std::string& island =
      d.node < 0 && d.kind != DeviceKind::kGateway && isl.network >= 0 ? cluster_.networks[isl.network].name : isl.name;
  if (d.node < 0) return absl::StrFormat("%s/%s%d", island, DeviceKindName(d.kind), d.index);
  // A one-switch node's switch has no index; a PCIe tree's switches do.
  if (d.kind == DeviceKind::kNvSwitch ||
      (d.kind == DeviceKind::kPcieSwitch && isl.node.fabric == spec::IntraNodeFabric::kPcie)) {
    return absl::StrFormat("%s/node%d/%s", island, d.node, DeviceKindName(d.kind));
  }
  return absl::StrFormat("%s/node%d/%s%d", island, d.node, DeviceKindName(d.kind), d.index);
}

absl::StatusOr<int32_t> Topology::IslandIndex(absl::string_view name) const {
  for (int32_t i = 0; i < num_islands(); ++i) {
    if (cluster_.islands[i].name == name) return i;
  }
  return absl::InvalidArgumentError(absl::StrFormat("no island named \"%s\"", name));
}

absl::StatusOr<GpuId> Topology::GpuIdOf(int32_t island, int32_t node, int32_t local) const {
  if (island < 0 || island >= num_islands()) {
    return absl::InvalidArgumentError(absl::StrFormat("island %d is outside [0, %d)", island, num_islands()));
  }
  if (node < 0 || node >= num_nodes(island)) {
    return absl::InvalidArgumentError(absl::StrFormat("node %d is outside island \"%s\" (%d nodes)", node,
                                                      cluster_.islands[island].name, num_nodes(island)));
  }
  if (local < 0 || local >= gpus_per_node(island)) {
    return absl::InvalidArgumentError(absl::StrFormat("GPU %d is outside the %d GPUs of a node of island \"%s\"", local,
                                                      gpus_per_node(island), cluster_.islands[island].name));
  }
  return GpuId(island_first_gpu_[island] + node * gpus_per_node(island) + local);
}

absl::StatusOr<GpuLocation> Topology::Locate(GpuId gpu) const {
  if (gpu.value() < 0 || gpu.value() >= num_gpus()) {
    return absl::InvalidArgumentError(absl::StrFormat("GPU id %d is outside [0, %d)", gpu.value(), num_gpus()));
  }
  const Device& d = devices_[gpu_devices_[gpu.value()].value()];
  return GpuLocation{d.island, d.node, d.index};
}

absl::StatusOr<std::vector<GpuId>> Topology::MeshGpus(const spec::MeshSpec& mesh) const {
  auto island = IslandIndex(mesh.island);
  if (!island.ok()) return absl::InvalidArgumentError("island: " + std::string(island.status().message()));
  const int64_t nodes = num_nodes(*island);
  const int64_t gpus = gpus_per_node(*island);
  if (mesh.node_count == 0) return absl::InvalidArgumentError("node_count: must be at least 1");
  if (mesh.gpus_per_node == 0) return absl::InvalidArgumentError("gpus_per_node: must be at least 1");
  if (int64_t{mesh.first_node} + mesh.node_count > nodes) {
    return absl::InvalidArgumentError(absl::StrFormat("node_count: nodes [%d, %d) are outside island \"%s\" (%d nodes)",
                                                      mesh.first_node, int64_t{mesh.first_node} + mesh.node_count,
                                                      mesh.island, nodes));
  }
  if (int64_t{mesh.first_gpu} + mesh.gpus_per_node > gpus) {
    return absl::InvalidArgumentError(
        absl::StrFormat("gpus_per_node: GPUs [%d, %d) are outside a node of island \"%s\" (%d GPUs)", mesh.first_gpu,
                        int64_t{mesh.first_gpu} + mesh.gpus_per_node, mesh.island, gpus));
  }
  std::vector<GpuId> out;
  out.reserve(static_cast<size_t>(mesh.node_count) * mesh.gpus_per_node);
  for (uint32_t n = 0; n < mesh.node_count; ++n) {
    for (uint32_t g = 0; g < mesh.gpus_per_node; ++g) {
      out.push_back(
          *GpuIdOf(*island, static_cast<int32_t>(mesh.first_node + n), static_cast<int32_t>(mesh.first_gpu + g)));
    }
  }
  return out;
}

DeviceId Topology::node_switch(GpuId gpu) const { return gpu_switch_[gpu.value()]; }

const std::vector<LinkId>* Topology::intra_node_route(GpuId src, GpuId dst) const {
  const int64_t base = intra_route_base_[src.value()];
  if (base < 0) return nullptr;
  return &intra_routes_[base + devices_[gpu_devices_[dst.value()].value()].index];
}
DeviceId Topology::nic_of(GpuId gpu) const { return gpu_nic_[gpu.value()]; }

bool Topology::is_fabric_device(DeviceId d) const {
  switch (devices_[d.value()].kind) {
    case DeviceKind::kIslandSwitch:
    case DeviceKind::kLeafSwitch:
    case DeviceKind::kSpineSwitch:
    case DeviceKind::kRailSwitch:
    case DeviceKind::kTorSwitch:
    case DeviceKind::kPodSwitch:
    case DeviceKind::kAggSwitch:
    case DeviceKind::kGateway: return true;
    case DeviceKind::kGpu:
    case DeviceKind::kNvSwitch:
    case DeviceKind::kPcieSwitch:
    case DeviceKind::kNic:
    case DeviceKind::kCpu:
    case DeviceKind::kHostMemory: return false;
  }
  return false;
}

}  // namespace hetsim::topology
