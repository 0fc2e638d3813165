#include "topology/device_graph.h"

#include <algorithm>
#include <utility>

#include <boost/graph/connected_components.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/units.h"
#include "proto/fabric_presets.h"
#include "topology/limits.h"

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

LinkClass ClassOfFabric(v1::InterNodeFabric fabric) {
  switch (fabric) {
    case v1::ROCE: return LinkClass::kRoce;
    case v1::ETHERNET: return LinkClass::kEthernet;
    default: return LinkClass::kInfiniband;
  }
}

template <typename T>
absl::StatusOr<int32_t> FindByName(const T& items, const std::string& name, absl::string_view field) {
  for (int i = 0; i < items.size(); ++i) {
    if (items[i].name() == name) return i;
  }
  return absl::InvalidArgumentError(absl::StrFormat("%s: no entry named \"%s\"", field, name));
}

}  // namespace

// Adds devices and links in a fixed order, so that ids are deterministic for a given cluster.
class Topology::Builder {
 public:
  explicit Builder(Topology& t) : t_(t) {}

  absl::Status Run();

 private:
  DeviceId AddDevice(DeviceKind kind, int32_t island, int32_t node, int32_t index) {
    t_.devices_.push_back({kind, island, node, index});
    boost::add_vertex(t_.graph_);
    t_.nic_up_.push_back(kNoLink);
    t_.nic_down_.push_back(kNoLink);
    return static_cast<DeviceId>(t_.devices_.size() - 1);
  }
  // Links are added on behalf of one fabric at a time (fabric_, set by the caller): its NCCL efficiency
  // derates the line rate, once, here.
  LinkId AddLink(DeviceId src, DeviceId dst, double bytes_per_second, Time latency, LinkClass cls) {
    const auto id = static_cast<LinkId>(t_.links_.size());
    if (fabric_ >= 0) bytes_per_second *= t_.nccl_fabrics_[fabric_].bandwidth_efficiency;
    t_.links_.push_back({src, dst, bytes_per_second, latency, cls, fabric_});
    boost::add_edge(src, dst, EdgeProps{id, latency * kHopWeightScale + 1}, t_.graph_);
    return id;
  }
  // Two directed links; returns the id of the first (src -> dst); the reverse is id + 1.
  LinkId AddDuplex(DeviceId a, DeviceId b, double bytes_per_second, Time a_to_b, Time b_to_a, LinkClass cls) {
    const LinkId id = AddLink(a, b, bytes_per_second, a_to_b, cls);
    AddLink(b, a, bytes_per_second, b_to_a, cls);
    return id;
  }

  absl::Status ValidateAndIndex();
  // Cluster.ideal: nothing. Otherwise one NcclFabricTiming per node type, island and inter-island link,
  // presets filling the zero fields; InvalidArgument naming the field of an unusable value.
  absl::Status ResolveNcclFabrics();
  void BuildNodes(int32_t island);
  // The island's switches; returns the devices a gateway attaches to (its top tier).
  std::vector<DeviceId> BuildFabric(int32_t island);
  // CLOS: ToRs, pod switches, aggregation switches (Island.clos); returns the top tier.
  std::vector<DeviceId> BuildClos(int32_t island, LinkClass cls, Time wire, Time hop_from_switch);

  Topology& t_;
  std::vector<std::vector<DeviceId>> island_nics_;  // per island, node-major
  int32_t fabric_ = -1;                             // the fabric of the links being added
  int32_t first_link_fabric_ = 0;                   // nccl_fabrics_ index of inter_island_links[0]
};

absl::Status Topology::Builder::ResolveNcclFabrics() {
  const v1::Cluster& c = t_.cluster_;
  if (c.ideal()) return absl::OkStatus();
  auto add = [&](const v1::NcclFabric& given, const proto::NcclFabricPreset& preset, const std::string& at,
                 std::string name) -> absl::Status {
    const v1::NcclFabric f = proto::ResolveNcclFabric(given, preset);
    if (std::string problem = proto::NcclFabricProblem(f); !problem.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s.nccl.%s", at, problem));
    }
    NcclFabricTiming t;
    t.name = std::move(name);
    t.bandwidth_efficiency = f.bandwidth_efficiency();
    t.launch_latency = hetsim::NanosecondsToTime(f.launch_latency_ns());
    t.step_latency = {hetsim::NanosecondsToTime(f.ll_step_latency_ns()),
                      hetsim::NanosecondsToTime(f.ll128_step_latency_ns()),
                      hetsim::NanosecondsToTime(f.simple_step_latency_ns())};
    t_.nccl_fabrics_.push_back(std::move(t));
    return absl::OkStatus();
  };
  for (int i = 0; i < c.islands_size(); ++i) {
    const v1::NodeType& nt = c.node_types(t_.island_node_type_[i]);
    const v1::GpuType& gt = c.gpu_types(t_.island_gpu_type_[i]);
    t_.island_node_fabric_.push_back(static_cast<int32_t>(t_.nccl_fabrics_.size()));
    if (auto s = add(nt.nccl(), proto::IntraNodeFabricPreset(nt.intra_node_fabric(), gt.preset()),
                     absl::StrFormat("node_types[%d]", t_.island_node_type_[i]),
                     absl::StrFormat("node type \"%s\"", nt.name()));
        !s.ok()) {
      return s;
    }
  }
  for (int i = 0; i < c.islands_size(); ++i) {
    const v1::Island& isl = c.islands(i);
    t_.island_net_fabric_.push_back(static_cast<int32_t>(t_.nccl_fabrics_.size()));
    if (auto s = add(isl.nccl(), proto::InterNodeFabricPreset(isl.fabric()), absl::StrFormat("islands[%d]", i),
                     absl::StrFormat("island \"%s\"", isl.name()));
        !s.ok()) {
      return s;
    }
  }
  first_link_fabric_ = static_cast<int32_t>(t_.nccl_fabrics_.size());
  for (int k = 0; k < c.inter_island_links_size(); ++k) {
    const v1::InterIslandLink& l = c.inter_island_links(k);
    if (auto s = add(l.nccl(), proto::InterNodeFabricPreset(l.fabric()), absl::StrFormat("inter_island_links[%d]", k),
                     absl::StrFormat("inter-island link %s-%s", l.island_a(), l.island_b()));
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status Topology::Builder::ValidateAndIndex() {
  const v1::Cluster& c = t_.cluster_;
  if (c.islands().empty()) return absl::InvalidArgumentError("islands: the cluster has no island");
  const bool multi_node = c.islands_size() > 1 || c.islands(0).node_count() > 1;
  for (int i = 0; i < c.islands_size(); ++i) {
    const v1::Island& isl = c.islands(i);
    const std::string at = absl::StrFormat("islands[%d]", i);
    for (int j = 0; j < i; ++j) {
      if (c.islands(j).name() == isl.name()) {
        return absl::InvalidArgumentError(absl::StrFormat("%s.name: \"%s\" repeats islands[%d]", at, isl.name(), j));
      }
    }
    auto nt = FindByName(c.node_types(), isl.node_type(), at + ".node_type");
    if (!nt.ok()) return nt.status();
    const v1::NodeType& node = c.node_types(*nt);
    const std::string nat = absl::StrFormat("node_types[%d]", *nt);
    auto gt = FindByName(c.gpu_types(), node.gpu_type(), nat + ".gpu_type");
    if (!gt.ok()) return gt.status();
    if (isl.node_count() == 0) return absl::InvalidArgumentError(at + ".node_count: must be at least 1");
    if (node.gpus_per_node() == 0) return absl::InvalidArgumentError(nat + ".gpus_per_node: must be at least 1");
    if (!(node.intra_node_bandwidth_gbps() > 0)) {
      return absl::InvalidArgumentError(nat + ".intra_node_bandwidth_gbps: must be > 0");
    }
    if (node.intra_node_latency_ns() < 0 || node.intra_node_latency_ns() > kMaxLatencyNs) {
      return absl::InvalidArgumentError(absl::StrFormat("%s.intra_node_latency_ns: %d is outside [0, %d]", nat,
                                                        node.intra_node_latency_ns(), kMaxLatencyNs));
    }
    if (multi_node) {
      if (isl.nics_per_node() == 0) {
        return absl::InvalidArgumentError(at + ".nics_per_node: must be at least 1 when nodes talk to each other");
      }
      if (!(isl.nic_bandwidth_gbps() > 0)) return absl::InvalidArgumentError(at + ".nic_bandwidth_gbps: must be > 0");
    }
    for (auto [name, v] : {std::pair<const char*, int64_t>{"nic_latency_ns", isl.nic_latency_ns()},
                           {"switch_latency_ns", isl.switch_latency_ns()}}) {
      if (v < 0 || v > kMaxLatencyNs) {
        return absl::InvalidArgumentError(absl::StrFormat("%s.%s: %d is outside [0, %d]", at, name, v, kMaxLatencyNs));
      }
    }
    if (isl.oversubscription() != 0 && !(isl.oversubscription() >= 1)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s.oversubscription: %g must be >= 1", at, isl.oversubscription()));
    }
    t_.island_node_type_.push_back(*nt);
    t_.island_gpu_type_.push_back(*gt);
    t_.island_node_count_.push_back(static_cast<int32_t>(isl.node_count()));
    t_.island_gpus_per_node_.push_back(static_cast<int32_t>(node.gpus_per_node()));
  }
  int64_t total_gpus = 0;
  for (int i = 0; i < c.islands_size(); ++i) {
    t_.island_first_gpu_.push_back(static_cast<int32_t>(total_gpus));
    total_gpus += int64_t{t_.island_node_count_[i]} * t_.island_gpus_per_node_[i];
    if (total_gpus > kMaxGpus) {
      return absl::InvalidArgumentError(
          absl::StrFormat("islands[%d].node_count: the cluster exceeds %d GPUs", i, kMaxGpus));
    }
  }
  // Inter-island links: known islands, positive bandwidth, and every island reachable.
  boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS> islands(c.islands_size());
  for (int k = 0; k < c.inter_island_links_size(); ++k) {
    const v1::InterIslandLink& l = c.inter_island_links(k);
    const std::string at = absl::StrFormat("inter_island_links[%d]", k);
    auto a = FindByName(c.islands(), l.island_a(), at + ".island_a");
    if (!a.ok()) return a.status();
    auto b = FindByName(c.islands(), l.island_b(), at + ".island_b");
    if (!b.ok()) return b.status();
    if (*a == *b) return absl::InvalidArgumentError(at + ".island_b: joins island \"" + l.island_a() + "\" to itself");
    if (!(l.bandwidth_gbps() > 0)) return absl::InvalidArgumentError(at + ".bandwidth_gbps: must be > 0");
    if (l.latency_ns() < 0 || l.latency_ns() > kMaxLatencyNs) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s.latency_ns: %d is outside [0, %d]", at, l.latency_ns(), kMaxLatencyNs));
    }
    if (l.count() > 4096) return absl::InvalidArgumentError(at + ".count: more than 4096 parallel links");
    boost::add_edge(*a, *b, islands);
  }
  std::vector<int> component(c.islands_size());
  if (boost::connected_components(islands, component.data()) > 1) {
    for (int i = 1; i < c.islands_size(); ++i) {
      if (component[i] != component[0]) {
        return absl::InvalidArgumentError(
            absl::StrFormat("inter_island_links: no path from island \"%s\" to island \"%s\" (disconnected islands)",
                            c.islands(0).name(), c.islands(i).name()));
      }
    }
  }
  return absl::OkStatus();
}

void Topology::Builder::BuildNodes(int32_t island) {
  const v1::Island& isl = t_.cluster_.islands(island);
  const v1::NodeType& nt = t_.cluster_.node_types(t_.island_node_type_[island]);
  const bool pcie = nt.intra_node_fabric() == v1::PCIE;
  const LinkClass intra_class = pcie ? LinkClass::kPcie : LinkClass::kNvlink;
  const double intra_bps = GbpsToBytesPerSecond(nt.intra_node_bandwidth_gbps());
  // The GPU-to-GPU latency is split over the two hops through the switch.
  const Time half_intra = NanosecondsToTime(nt.intra_node_latency_ns()) / 2;
  const Time intra_rest = NanosecondsToTime(nt.intra_node_latency_ns()) - half_intra;
  const double nic_bps = GbpsToBytesPerSecond(isl.nic_bandwidth_gbps());
  const int32_t gpus = t_.island_gpus_per_node_[island];
  const int32_t nics = static_cast<int32_t>(isl.nics_per_node());
  for (int32_t node = 0; node < t_.island_node_count_[island]; ++node) {
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
      t_.gpu_down_.push_back(up + 1);
      if (nics == 0) {
        t_.gpu_nic_.push_back(-1);
        t_.gpu_nic_up_.push_back(kNoLink);
        t_.gpu_nic_down_.push_back(kNoLink);
        continue;
      }
      // GPUDirect RDMA over PCIe to the GPU's NIC; GPUs share NICs when there are fewer NICs.
      const DeviceId nic = node_nics[static_cast<int64_t>(g) * nics / gpus];
      const LinkId nic_up = AddDuplex(gpu, nic, nic_bps, 0, 0, LinkClass::kPcie);
      t_.gpu_nic_.push_back(nic);
      t_.gpu_nic_up_.push_back(nic_up);
      t_.gpu_nic_down_.push_back(nic_up + 1);
    }
  }
}

std::vector<DeviceId> Topology::Builder::BuildFabric(int32_t island) {
  const v1::Island& isl = t_.cluster_.islands(island);
  const std::vector<DeviceId>& nics = island_nics_[island];
  if (nics.empty()) return {};
  fabric_ = t_.island_fabric(island);
  const LinkClass cls = ClassOfFabric(isl.fabric());
  const double nic_bps = GbpsToBytesPerSecond(isl.nic_bandwidth_gbps());
  const Time wire = NanosecondsToTime(isl.nic_latency_ns());
  const Time hop_from_switch = wire + NanosecondsToTime(isl.switch_latency_ns());
  const double oversub = isl.oversubscription() >= 1 ? isl.oversubscription() : 1.0;
  const int32_t nodes = t_.island_node_count_[island];
  const int32_t nics_per_node = static_cast<int32_t>(isl.nics_per_node());
  auto attach = [&](DeviceId nic, DeviceId sw) {
    const LinkId up = AddDuplex(nic, sw, nic_bps, wire, hop_from_switch, cls);
    t_.nic_up_[nic] = up;
    t_.nic_down_[nic] = up + 1;
  };
  // Lower-tier switches fully meshed to `spines` spine switches, each pair with `link_bps`.
  auto add_spines = [&](const std::vector<DeviceId>& lower, int32_t spines, double link_bps) {
    std::vector<DeviceId> top;
    for (int32_t s = 0; s < spines; ++s) top.push_back(AddDevice(DeviceKind::kSpineSwitch, island, -1, s));
    for (DeviceId low : lower) {
      for (DeviceId sp : top) AddDuplex(low, sp, link_bps, hop_from_switch, hop_from_switch, cls);
    }
    return top;
  };
  switch (isl.topology()) {
    case v1::FAT_TREE: {
      const int32_t per_leaf =
          isl.nodes_per_leaf() == 0 ? nodes : std::min<int32_t>(nodes, static_cast<int32_t>(isl.nodes_per_leaf()));
      const int32_t leaves = (nodes + per_leaf - 1) / per_leaf;
      std::vector<DeviceId> leaf;
      for (int32_t l = 0; l < leaves; ++l) leaf.push_back(AddDevice(DeviceKind::kLeafSwitch, island, -1, l));
      for (size_t n = 0; n < nics.size(); ++n) attach(nics[n], leaf[n / nics_per_node / per_leaf]);
      if (leaves == 1) return leaf;
      // One spine per NIC index; a leaf's uplinks together carry its downlink bandwidth / oversubscription.
      return add_spines(leaf, nics_per_node, per_leaf * nic_bps / oversub);
    }
    case v1::RAIL_OPTIMIZED: {
      std::vector<DeviceId> rail;
      for (int32_t r = 0; r < nics_per_node; ++r) rail.push_back(AddDevice(DeviceKind::kRailSwitch, island, -1, r));
      for (size_t n = 0; n < nics.size(); ++n) attach(nics[n], rail[n % nics_per_node]);
      if (nics_per_node == 1) return rail;
      return add_spines(rail, nics_per_node, nodes * nic_bps / nics_per_node / oversub);
    }
    case v1::CLOS: return BuildClos(island, cls, wire, hop_from_switch);
    default: {  // SINGLE_SWITCH (and unspecified)
      const DeviceId sw = AddDevice(DeviceKind::kIslandSwitch, island, -1, 0);
      for (DeviceId nic : nics) attach(nic, sw);
      return {sw};
    }
  }
}

std::vector<DeviceId> Topology::Builder::BuildClos(int32_t island, LinkClass cls, Time wire, Time hop_from_switch) {
  const v1::Island& isl = t_.cluster_.islands(island);
  const v1::ClosFabric& f = isl.clos();
  const std::vector<DeviceId>& nics = island_nics_[island];
  const double nic_bps = GbpsToBytesPerSecond(isl.nic_bandwidth_gbps());
  const int32_t nodes = t_.island_node_count_[island];
  const int32_t nics_per_node = static_cast<int32_t>(isl.nics_per_node());
  const int32_t per_rack = std::max<int32_t>(1, static_cast<int32_t>(f.nodes_per_rack()));
  const int32_t racks_per_pod = std::max<int32_t>(1, static_cast<int32_t>(f.racks_per_pod()));
  const int32_t racks = (nodes + per_rack - 1) / per_rack;
  const int32_t pods = (racks + racks_per_pod - 1) / racks_per_pod;
  const int32_t tors_per_rack = f.rail_optimized() ? nics_per_node : 1;
  const int32_t pod_switches = f.pod_switches() > 0 ? static_cast<int32_t>(f.pod_switches()) : nics_per_node;
  const int32_t agg_switches =
      f.aggregation_switches() > 0 ? static_cast<int32_t>(f.aggregation_switches()) : pod_switches;
  const double rack_oversub = std::max(1.0, f.rack_oversubscription());
  const double agg_oversub = std::max(1.0, f.aggregation_oversubscription());
  // Tier 1: NIC k of node n on ToR (rack of n, k when rail-optimised); a ToR's uplinks to its pod's
  // switches together carry its NICs' bandwidth / rack_oversubscription.
  std::vector<DeviceId> tor;
  for (int32_t r = 0; r < racks * tors_per_rack; ++r) tor.push_back(AddDevice(DeviceKind::kTorSwitch, island, -1, r));
  std::vector<int32_t> tor_nics(tor.size(), 0);
  for (size_t n = 0; n < nics.size(); ++n) {
    const int32_t node = static_cast<int32_t>(n) / nics_per_node;
    const int32_t t =
        node / per_rack * tors_per_rack + (f.rail_optimized() ? static_cast<int32_t>(n) % nics_per_node : 0);
    const LinkId up = AddDuplex(nics[n], tor[t], nic_bps, wire, hop_from_switch, cls);
    t_.nic_up_[nics[n]] = up;
    t_.nic_down_[nics[n]] = up + 1;
    ++tor_nics[t];
  }
  if (tor.size() == 1) return tor;
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
    const int32_t p = static_cast<int32_t>(t) / tors_per_rack / racks_per_pod;
    pod_nic_bps[p] += tor_nics[t] * nic_bps;
    const double link_bps = tor_nics[t] * nic_bps / rack_oversub / pod_switches;
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

absl::Status Topology::Builder::Run() {
  if (auto s = ValidateAndIndex(); !s.ok()) return s;
  if (auto s = ResolveNcclFabrics(); !s.ok()) return s;
  const v1::Cluster& c = t_.cluster_;
  island_nics_.resize(c.islands_size());
  std::vector<std::vector<DeviceId>> tops(c.islands_size());
  for (int32_t i = 0; i < c.islands_size(); ++i) {
    BuildNodes(i);
    tops[i] = BuildFabric(i);
  }
  if (c.islands_size() == 1) return absl::OkStatus();
  // A gateway per island, attached to the island's top tier by links that never limit the
  // inter-island links (their capacity is the island's whole inter-island capacity).
  std::vector<double> island_external_bps(c.islands_size(), 0.0);
  std::vector<std::pair<int32_t, int32_t>> ends;
  for (const auto& l : c.inter_island_links()) {
    const int32_t a = *FindByName(c.islands(), l.island_a(), "");
    const int32_t b = *FindByName(c.islands(), l.island_b(), "");
    const double bps = GbpsToBytesPerSecond(l.bandwidth_gbps()) * std::max<uint32_t>(1, l.count());
    island_external_bps[a] += bps;
    island_external_bps[b] += bps;
    ends.emplace_back(a, b);
  }
  std::vector<DeviceId> gateway(c.islands_size());
  for (int32_t i = 0; i < c.islands_size(); ++i) {
    const v1::Island& isl = c.islands(i);
    gateway[i] = AddDevice(DeviceKind::kGateway, i, -1, 0);
    fabric_ = -1;  // never the bottleneck, not derated; routes through it cross an inter-island link
    const Time hop = NanosecondsToTime(isl.nic_latency_ns() + isl.switch_latency_ns());
    for (DeviceId top : tops[i]) {
      AddDuplex(top, gateway[i], island_external_bps[i], hop, hop, ClassOfFabric(isl.fabric()));
    }
  }
  for (int k = 0; k < c.inter_island_links_size(); ++k) {
    const v1::InterIslandLink& l = c.inter_island_links(k);
    const auto [a, b] = ends[k];
    const Time lat = NanosecondsToTime(l.latency_ns());
    fabric_ = t_.nccl_model() ? first_link_fabric_ + k : -1;
    for (uint32_t p = 0; p < std::max<uint32_t>(1, l.count()); ++p) {
      AddDuplex(gateway[a], gateway[b], GbpsToBytesPerSecond(l.bandwidth_gbps()), lat, lat, ClassOfFabric(l.fabric()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Topology> Topology::Build(const v1::Cluster& cluster) {
  Topology t;
  t.cluster_ = cluster;
  Builder b(t);
  if (auto s = b.Run(); !s.ok()) return s;
  return t;
}

std::string Topology::DeviceName(DeviceId id) const {
  const Device& d = devices_[id];
  const std::string& island = cluster_.islands(d.island).name();
  if (d.node < 0) return absl::StrFormat("%s/%s%d", island, DeviceKindName(d.kind), d.index);
  if (d.kind == DeviceKind::kNvSwitch || d.kind == DeviceKind::kPcieSwitch) {
    return absl::StrFormat("%s/node%d/%s", island, d.node, DeviceKindName(d.kind));
  }
  return absl::StrFormat("%s/node%d/%s%d", island, d.node, DeviceKindName(d.kind), d.index);
}

const v1::NodeType& Topology::node_type(int32_t island) const { return cluster_.node_types(island_node_type_[island]); }
const v1::GpuType& Topology::gpu_type(int32_t island) const { return cluster_.gpu_types(island_gpu_type_[island]); }

absl::StatusOr<int32_t> Topology::IslandIndex(absl::string_view name) const {
  for (int i = 0; i < cluster_.islands_size(); ++i) {
    if (cluster_.islands(i).name() == name) return i;
  }
  return absl::InvalidArgumentError(absl::StrFormat("no island named \"%s\"", name));
}

absl::StatusOr<GpuId> Topology::GpuIdOf(int32_t island, int32_t node, int32_t local) const {
  if (island < 0 || island >= num_islands()) {
    return absl::InvalidArgumentError(absl::StrFormat("island %d is outside [0, %d)", island, num_islands()));
  }
  if (node < 0 || node >= island_node_count_[island]) {
    return absl::InvalidArgumentError(absl::StrFormat("node %d is outside island \"%s\" (%d nodes)", node,
                                                      cluster_.islands(island).name(), island_node_count_[island]));
  }
  if (local < 0 || local >= island_gpus_per_node_[island]) {
    return absl::InvalidArgumentError(absl::StrFormat("GPU %d is outside the %d GPUs of a node of island \"%s\"", local,
                                                      island_gpus_per_node_[island], cluster_.islands(island).name()));
  }
  return island_first_gpu_[island] + node * island_gpus_per_node_[island] + local;
}

absl::StatusOr<GpuLocation> Topology::Locate(GpuId gpu) const {
  if (gpu < 0 || gpu >= num_gpus()) {
    return absl::InvalidArgumentError(absl::StrFormat("GPU id %d is outside [0, %d)", gpu, num_gpus()));
  }
  const Device& d = devices_[gpu_devices_[gpu]];
  return GpuLocation{d.island, d.node, d.index};
}

absl::StatusOr<std::vector<GpuId>> Topology::MeshGpus(const v1::Mesh& mesh) const {
  auto island = IslandIndex(mesh.island());
  if (!island.ok()) return absl::InvalidArgumentError("island: " + std::string(island.status().message()));
  const int64_t nodes = island_node_count_[*island];
  const int64_t gpus = island_gpus_per_node_[*island];
  if (mesh.node_count() == 0) return absl::InvalidArgumentError("node_count: must be at least 1");
  if (mesh.gpus_per_node() == 0) return absl::InvalidArgumentError("gpus_per_node: must be at least 1");
  if (int64_t{mesh.first_node()} + mesh.node_count() > nodes) {
    return absl::InvalidArgumentError(absl::StrFormat("node_count: nodes [%d, %d) are outside island \"%s\" (%d nodes)",
                                                      mesh.first_node(), int64_t{mesh.first_node()} + mesh.node_count(),
                                                      mesh.island(), nodes));
  }
  if (int64_t{mesh.first_gpu()} + mesh.gpus_per_node() > gpus) {
    return absl::InvalidArgumentError(
        absl::StrFormat("gpus_per_node: GPUs [%d, %d) are outside a node of island \"%s\" (%d GPUs)", mesh.first_gpu(),
                        int64_t{mesh.first_gpu()} + mesh.gpus_per_node(), mesh.island(), gpus));
  }
  std::vector<GpuId> out;
  out.reserve(static_cast<size_t>(mesh.node_count()) * mesh.gpus_per_node());
  for (uint32_t n = 0; n < mesh.node_count(); ++n) {
    for (uint32_t g = 0; g < mesh.gpus_per_node(); ++g) {
      out.push_back(
          *GpuIdOf(*island, static_cast<int32_t>(mesh.first_node() + n), static_cast<int32_t>(mesh.first_gpu() + g)));
    }
  }
  return out;
}

DeviceId Topology::node_switch(GpuId gpu) const { return gpu_switch_[gpu]; }
DeviceId Topology::nic_of(GpuId gpu) const { return gpu_nic_[gpu]; }

bool Topology::is_fabric_device(DeviceId d) const {
  switch (devices_[d].kind) {
    case DeviceKind::kIslandSwitch:
    case DeviceKind::kLeafSwitch:
    case DeviceKind::kSpineSwitch:
    case DeviceKind::kRailSwitch:
    case DeviceKind::kTorSwitch:
    case DeviceKind::kPodSwitch:
    case DeviceKind::kAggSwitch:
    case DeviceKind::kGateway: return true;
    default: return false;
  }
}

}  // namespace hetsim::topology
