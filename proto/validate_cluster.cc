#include "proto/validate_cluster.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "proto/cluster_networks_internal.h"
#include "proto/fabric_presets.h"
#include "proto/gpu_presets.h"
#include "proto/intra_node_layout_internal.h"
#include "proto/io.h"
#include "proto/limits.h"
#include "proto/socket_transport_internal.h"
#include "proto/validate_problems.h"

namespace hetsim::proto {
namespace {

// A share of one of a GPU's datasheet rates in [0, 1], 0 meaning unset, else at least kMinRateShare.
void CheckRateShare(Problems& p, const std::string& path, double share) {
  CheckRange(p, path, share, 0, 1);
  CheckFloor(p, path, share, limits::kMinRateShare);
}

// A host-side rate (ComputeEfficiency.host_fill_gbytes_per_s, pageable_h2d_gbytes_per_s, pinned_copy_gbytes_per_s)
// in GB/s, 0 meaning not priced, else at least kMinHostGbytesPerS: a rate near 0 divides a boundary rebuild's or a
// weight swap's bytes into inf or past int64 picoseconds.
void CheckHostRate(Problems& p, const std::string& path, double gbytes_per_s) {
  CheckRange(p, path, gbytes_per_s, 0, 1e6);
  CheckFloor(p, path, gbytes_per_s, limits::kMinHostGbytesPerS);
}

using namespace hetsim::v1;  // NOLINT: the schema's message names read best unqualified here

// name -> index; reports empty and duplicate names under "<list>[i].name".
absl::flat_hash_map<std::string, int> IndexNames(Problems& p, absl::string_view list, int size,
                                                 const std::function<const std::string&(int)>& name_of) {
  absl::flat_hash_map<std::string, int> index;
  for (int i = 0; i < size; ++i) {
    const std::string path = absl::StrFormat("%s[%d].name", list, i);
    const std::string& name = name_of(i);
    if (name.empty()) {
      p.Add(path, "required");
      continue;
    }
    auto [it, inserted] = index.emplace(name, i);
    if (!inserted) p.Add(path, "duplicate name \"%s\" (also %s[%d])", name, list, it->second);
  }
  return index;
}

void CheckLatency(Problems& p, absl::string_view path, int64_t latency_ns) {
  if (latency_ns < 0 || latency_ns > limits::kMaxLatencyNs) {
    p.Add(path, "%d is outside [0, %d] ns", latency_ns, limits::kMaxLatencyNs);
  }
}

void CheckBandwidth(Problems& p, absl::string_view path, double gbps) {
  if (gbps == 0) {
    p.Add(path, "required (must be > 0)");
  } else {
    CheckRange(p, path, gbps, limits::kMinBandwidthGbps, limits::kMaxBandwidthGbps);
  }
}

// Island.clos: set exactly when the topology is CLOS, with racks and pods of at least one, switch
// counts within the NIC limit and oversubscriptions in [1, kMaxOversubscription] (0 = 1).
void CheckClos(Problems& p, const Island& is, const std::string& at, int64_t network_nodes) {
  if (is.topology() != CLOS) {
    if (is.has_clos()) p.Add(at + "clos", "only meaningful with topology CLOS");
    return;
  }
  const std::string c = at + "clos.";
  const ClosFabric& f = is.clos();
  if (f.nodes_per_rack() == 0) {
    p.Add(c + "nodes_per_rack", "required (must be >= 1)");
  } else if (f.nodes_per_rack() > network_nodes) {
    p.Add(c + "nodes_per_rack", "%d is more than the %s's %d nodes", f.nodes_per_rack(),
          is.network().empty() ? "island" : "network", network_nodes);
  }
  if (f.racks_per_pod() == 0) p.Add(c + "racks_per_pod", "required (must be >= 1)");
  if (f.pod_switches() > limits::kMaxNicsPerNode) {
    p.Add(c + "pod_switches", "%d is more than %d", f.pod_switches(), limits::kMaxNicsPerNode);
  }
  if (f.aggregation_switches() > limits::kMaxNicsPerNode) {
    p.Add(c + "aggregation_switches", "%d is more than %d", f.aggregation_switches(), limits::kMaxNicsPerNode);
  }
  for (const auto& [field, v] : {std::pair{"rack_oversubscription", f.rack_oversubscription()},
                                 std::pair{"aggregation_oversubscription", f.aggregation_oversubscription()}}) {
    if (v != 0) CheckRange(p, c + field, v, 1, limits::kMaxOversubscription);
  }
}

void CheckGpuType(Problems& p, const GpuType& gpu, const std::string& at) {
  const double peaks[] = {gpu.peak_tflops_fp32(), gpu.peak_tflops_tf32(), gpu.peak_tflops_bf16(),
                          gpu.peak_tflops_fp16(), gpu.peak_tflops_fp8()};
  const char* names[] = {"peak_tflops_fp32", "peak_tflops_tf32", "peak_tflops_bf16", "peak_tflops_fp16",
                         "peak_tflops_fp8"};
  bool any_peak = false;
  for (int k = 0; k < 5; ++k) {
    CheckRange(p, at + names[k], peaks[k], 0, limits::kMaxTflops);
    CheckFloor(p, at + names[k], peaks[k], limits::kMinTflops);
    any_peak = any_peak || peaks[k] > 0;
  }
  if (!any_peak) p.Add(at + "peak_tflops_bf16", "required: at least one peak_tflops_* must be > 0 (or set a preset)");
  CheckRateShare(p, at + "sustained_clock_fraction", gpu.sustained_clock_fraction());
  CheckPositive(p, at + "hbm_gib", gpu.hbm_gib(), limits::kMaxHbmGib);
  CheckPositive(p, at + "hbm_bandwidth_gbytes_per_s", gpu.hbm_bandwidth_gbytes_per_s(), limits::kMaxHbmGbytesPerS);
  CheckFloor(p, at + "hbm_bandwidth_gbytes_per_s", gpu.hbm_bandwidth_gbytes_per_s(), limits::kMinHbmGbytesPerS);
  const double max_eff = gpu.efficiency().max_efficiency();
  if (max_eff == 0) {
    p.Add(at + "efficiency.max_efficiency", "required (in (0, 1]; or set a preset)");
  } else if (!(max_eff > 0 && max_eff <= 1)) {
    p.Add(at + "efficiency.max_efficiency", "%g is outside (0, 1]", max_eff);
  }
  CheckFloor(p, at + "efficiency.max_efficiency", max_eff, limits::kMinRateShare);
  const hetsim::v1::ComputeEfficiency& e = gpu.efficiency();
  CheckRange(p, at + "efficiency.half_efficiency_gflop", e.half_efficiency_gflop(), 0, 1e9);
  CheckRange(p, at + "efficiency.sm_count", e.sm_count(), 0, limits::kMaxSmCount);
  CheckRange(p, at + "efficiency.tile_overhead_k", e.tile_overhead_k(), 0, 1e6);
  CheckRateShare(p, at + "efficiency.hbm_efficiency", e.hbm_efficiency());
  CheckRange(p, at + "efficiency.kernel_launch_us", e.kernel_launch_us(), 0, 1e6);
  CheckRange(p, at + "efficiency.host_op_us", e.host_op_us(), 0, 1e6);
  CheckRange(p, at + "efficiency.sync_round_trip_us", e.sync_round_trip_us(), 0, 1e6);
  CheckRange(p, at + "efficiency.pass_overhead_us", e.pass_overhead_us(), 0, 1e9);
  CheckRange(p, at + "efficiency.iteration_overhead_ms", e.iteration_overhead_ms(), 0, 1e9);
  CheckRange(p, at + "efficiency.mma_sync_speed", e.mma_sync_speed(), 0, 1);
  CheckRateShare(p, at + "efficiency.unfused_softmax_speed", e.unfused_softmax_speed());
  CheckHostRate(p, at + "efficiency.host_fill_gbytes_per_s", e.host_fill_gbytes_per_s());
  CheckHostRate(p, at + "efficiency.pageable_h2d_gbytes_per_s", e.pageable_h2d_gbytes_per_s());
  CheckHostRate(p, at + "efficiency.pinned_copy_gbytes_per_s", e.pinned_copy_gbytes_per_s());
}

// Islands must form one connected graph through inter_island_links and shared networks, or some
// stages could never talk.
void CheckConnected(Problems& p, const Cluster& c, const absl::flat_hash_map<std::string, int>& islands) {
  std::vector<int> parent(c.islands_size());
  std::iota(parent.begin(), parent.end(), 0);
  std::function<int(int)> root = [&](int x) { return parent[x] == x ? x : parent[x] = root(parent[x]); };
  for (const IslandNetwork& n : IslandNetworks(c)) {
    for (int i : n.islands) parent[root(i)] = root(n.islands.front());
  }
  for (const InterIslandLink& link : c.inter_island_links()) {
    auto a = islands.find(link.island_a());
    auto b = islands.find(link.island_b());
    if (a != islands.end() && b != islands.end()) parent[root(a->second)] = root(b->second);
  }
  for (int i = 1; i < c.islands_size(); ++i) {
    if (root(i) != root(0)) {
      p.Add(absl::StrFormat("islands[%d]", i),
            "island \"%s\" is not connected to island \"%s\" by inter_island_links or a shared network",
            c.islands(i).name(), c.islands(0).name());
    }
  }
}

// NcclFabric fields as written (zero = the preset; docs/network.md).
void CheckNcclFabrics(Problems& p, const Cluster& c) {
  auto check = [&](const NcclFabric& f, const std::string& at) {
    const std::string problem = NcclFabricProblem(f);  // "field: problem"
    if (const size_t colon = problem.find(": "); colon != std::string::npos) {
      p.Add(absl::StrCat(at, ".nccl.", problem.substr(0, colon)), problem.substr(colon + 2));
    }
  };
  for (int i = 0; i < c.node_types_size(); ++i) check(c.node_types(i).nccl(), absl::StrFormat("node_types[%d]", i));
  for (int i = 0; i < c.islands_size(); ++i) check(c.islands(i).nccl(), absl::StrFormat("islands[%d]", i));
  for (int i = 0; i < c.inter_island_links_size(); ++i) {
    check(c.inter_island_links(i).nccl(), absl::StrFormat("inter_island_links[%d]", i));
  }
}

using NameIndex = absl::flat_hash_map<std::string, int>;

void CheckNodeType(Problems& p, const Cluster& c, const NodeType& n, const std::string& at, const NameIndex& gpus) {
  if (n.gpu_type().empty()) {
    p.Add(at + "gpu_type", "required");
  } else if (auto gpu = gpus.find(n.gpu_type()); gpu == gpus.end()) {
    p.Add(at + "gpu_type", "unknown GPU type \"%s\"", n.gpu_type());
  } else {
    const std::string& preset = c.gpu_types(gpu->second).preset();
    const IntraNodeFabric fabric = n.gpus_per_node() > 1 ? n.intra_node_fabric() : INTRA_NODE_FABRIC_UNSPECIFIED;
    for (const auto& [field, problem] : PresetNodeProblems(preset, fabric, n.nvlink_sharp())) {
      p.Add(at + field, "%s (gpu_type \"%s\")", problem, n.gpu_type());
    }
  }
  if (n.gpus_per_node() == 0) {
    p.Add(at + "gpus_per_node", "required (must be >= 1)");
  } else if (n.gpus_per_node() > limits::kMaxGpusPerNode) {
    p.Add(at + "gpus_per_node", "%d is more than %d", n.gpus_per_node(), limits::kMaxGpusPerNode);
  }
  if (n.gpus_per_node() > 1) {
    if (n.intra_node_fabric() == INTRA_NODE_FABRIC_UNSPECIFIED) {
      p.Add(at + "intra_node_fabric",
            "required with more than one GPU per node (NVSWITCH, PCIE, PCIE_TREE, NVLINK_BRIDGE or HYBRID_CUBE_MESH)");
    }
    CheckBandwidth(p, at + "intra_node_bandwidth_gbps", n.intra_node_bandwidth_gbps());
  } else if (n.intra_node_bandwidth_gbps() != 0) {
    CheckRange(p, at + "intra_node_bandwidth_gbps", n.intra_node_bandwidth_gbps(), limits::kMinBandwidthGbps,
               limits::kMaxBandwidthGbps);
  }
  CheckLatency(p, at + "intra_node_latency_ns", n.intra_node_latency_ns());
  for (const auto& [field, problem] : IntraNodeLayoutProblems(n)) p.Add(at + field, problem);
}

// NIC_PER_GPU: GPU g of n sends through NIC floor(g x nics / n), so the NICs split the GPUs evenly.
void CheckNicsPerGpu(Problems& p, const std::string& at, uint32_t nics, uint32_t gpus) {
  if (gpus == 0) return;
  if (nics > gpus) {
    // With more NICs than GPUs some carry nothing.
    p.Add(at + "nics_per_node", "%d NICs for %d GPUs per node: each GPU uses one NIC, so %d would carry nothing", nics,
          gpus, nics - gpus);
  } else if (gpus % nics != 0) {
    p.Add(at + "nics_per_node",
          "%d NICs do not divide the %d GPUs of a node (nic_sharing NIC_PER_GPU: each NIC serves the same number of "
          "GPUs); set nic_sharing: NIC_SHARED if every GPU uses every NIC (bonded)",
          nics, gpus);
  }
}

// The island's own fields; returns its GPU count (0 when its node type is unknown).
int64_t CheckIsland(Problems& p, const Cluster& c, int i, const NameIndex& nodes) {
  const Island& is = c.islands(i);
  const std::string at = absl::StrFormat("islands[%d].", i);
  const int64_t network_nodes = NetworkNodeCount(c, i);
  auto node = nodes.find(is.node_type());
  if (is.node_type().empty()) {
    p.Add(at + "node_type", "required");
  } else if (node == nodes.end()) {
    p.Add(at + "node_type", "unknown node type \"%s\"", is.node_type());
  }
  if (is.node_count() == 0) {
    p.Add(at + "node_count", "required (must be >= 1)");
  } else if (is.node_count() > limits::kMaxNodesPerIsland) {
    p.Add(at + "node_count", "%d is more than %d", is.node_count(), limits::kMaxNodesPerIsland);
  }
  const bool networked = network_nodes > 1;
  if (networked && is.fabric() == INTER_NODE_FABRIC_UNSPECIFIED) {
    p.Add(at + "fabric", "required with more than one node (INFINIBAND, ROCE or ETHERNET)");
  }
  if (networked && is.topology() == FABRIC_TOPOLOGY_UNSPECIFIED) {
    p.Add(at + "topology", "required with more than one node (SINGLE_SWITCH, FAT_TREE, RAIL_OPTIMIZED or CLOS)");
  }
  if (networked && is.nics_per_node() == 0) p.Add(at + "nics_per_node", "required with more than one node");
  if (is.nics_per_node() > limits::kMaxNicsPerNode) {
    p.Add(at + "nics_per_node", "%d is more than %d", is.nics_per_node(), limits::kMaxNicsPerNode);
  } else if (node != nodes.end() && is.nic_sharing() == hetsim::v1::NIC_PER_GPU && is.nics_per_node() > 0) {
    CheckNicsPerGpu(p, at, is.nics_per_node(), c.node_types(node->second).gpus_per_node());
  }
  if (networked || is.nic_bandwidth_gbps() != 0) CheckBandwidth(p, at + "nic_bandwidth_gbps", is.nic_bandwidth_gbps());
  CheckLatency(p, at + "nic_latency_ns", is.nic_latency_ns());
  CheckLatency(p, at + "switch_latency_ns", is.switch_latency_ns());
  const bool fat_tree = is.topology() == FAT_TREE;
  if (is.oversubscription() != 0) {
    if (!fat_tree) {
      p.Add(at + "oversubscription", "only meaningful with topology FAT_TREE");
    } else {
      CheckRange(p, at + "oversubscription", is.oversubscription(), 1, limits::kMaxOversubscription);
    }
  }
  if (is.nodes_per_leaf() != 0) {
    if (!fat_tree) {
      p.Add(at + "nodes_per_leaf", "only meaningful with topology FAT_TREE");
    } else if (is.nodes_per_leaf() > network_nodes) {
      p.Add(at + "nodes_per_leaf", "%d is more than the %s's %d nodes", is.nodes_per_leaf(),
            is.network().empty() ? "island" : "network", network_nodes);
    }
  }
  CheckClos(p, is, at, network_nodes);
  for (const auto& [field, problem] : SocketTransportProblems(is)) p.Add(at + field, problem);
  if (is.infiniband_sharp() && is.fabric() != hetsim::v1::INFINIBAND &&
      is.fabric() != hetsim::v1::INTER_NODE_FABRIC_UNSPECIFIED) {
    p.Add(at + "infiniband_sharp", "only meaningful with INFINIBAND (SHARP reduces in InfiniBand switches)");
  }
  return node == nodes.end() ? 0 : int64_t{is.node_count()} * c.node_types(node->second).gpus_per_node();
}

void CheckInterIslandLinks(Problems& p, const Cluster& c, const NameIndex& islands) {
  absl::flat_hash_map<std::pair<std::string, std::string>, int> pairs;
  for (int i = 0; i < c.inter_island_links_size(); ++i) {
    const InterIslandLink& l = c.inter_island_links(i);
    const std::string at = absl::StrFormat("inter_island_links[%d].", i);
    bool refs_ok = true;
    for (const auto& [field, name] : {std::pair{"island_a", &l.island_a()}, std::pair{"island_b", &l.island_b()}}) {
      if (name->empty()) {
        p.Add(at + field, "required");
        refs_ok = false;
      } else if (!islands.contains(*name)) {
        p.Add(at + field, "unknown island \"%s\"", *name);
        refs_ok = false;
      }
    }
    if (refs_ok && l.island_a() == l.island_b()) {
      p.Add(at + "island_b", "links island \"%s\" to itself", l.island_a());
    } else if (refs_ok) {
      auto key = std::minmax(l.island_a(), l.island_b());
      auto [it, inserted] = pairs.emplace(std::pair{key.first, key.second}, i);
      if (!inserted) {
        p.Add(at + "island_b", "islands \"%s\" and \"%s\" are already linked by inter_island_links[%d] (use count)",
              l.island_a(), l.island_b(), it->second);
      }
    }
    if (l.fabric() == INTER_NODE_FABRIC_UNSPECIFIED) p.Add(at + "fabric", "required (INFINIBAND, ROCE or ETHERNET)");
    CheckBandwidth(p, at + "bandwidth_gbps", l.bandwidth_gbps());
    CheckLatency(p, at + "latency_ns", l.latency_ns());
    if (l.count() > limits::kMaxLinkCount) p.Add(at + "count", "%d is more than %d", l.count(), limits::kMaxLinkCount);
  }
}

}  // namespace

absl::Status ValidateCluster(const Cluster& written, absl::string_view file) {
  Cluster c = written;
  HETSIM_RETURN_IF_ERROR(ApplyGpuPresets(&c, file));
  Problems p(file);

  if (c.gpu_types().empty()) p.Add("gpu_types", "required: at least one GPU type");
  if (c.node_types().empty()) p.Add("node_types", "required: at least one node type");
  if (c.islands().empty()) p.Add("islands", "required: at least one island");

  const NameIndex gpus = IndexNames(p, "gpu_types", c.gpu_types_size(),
                                    [&](int i) -> const std::string& { return c.gpu_types(i).name(); });
  for (int i = 0; i < c.gpu_types_size(); ++i) CheckGpuType(p, c.gpu_types(i), absl::StrFormat("gpu_types[%d].", i));
  const NameIndex nodes = IndexNames(p, "node_types", c.node_types_size(),
                                     [&](int i) -> const std::string& { return c.node_types(i).name(); });
  for (int i = 0; i < c.node_types_size(); ++i) {
    CheckNodeType(p, c, c.node_types(i), absl::StrFormat("node_types[%d].", i), gpus);
  }
  const NameIndex islands =
      IndexNames(p, "islands", c.islands_size(), [&](int i) -> const std::string& { return c.islands(i).name(); });
  int64_t total_gpus = 0;
  for (int i = 0; i < c.islands_size(); ++i) {
    total_gpus += CheckIsland(p, c, i, nodes);
  }
  if (total_gpus > limits::kMaxGpus) p.Add("islands", "%d GPUs in total, more than %d", total_gpus, limits::kMaxGpus);
  CheckInterIslandLinks(p, c, islands);
  CheckNcclFabrics(p, c);
  CheckNetworks(p, c);
  if (p.empty()) CheckConnected(p, c, islands);
  return p.ToStatus();
}

absl::StatusOr<Cluster> LoadCluster(absl::string_view path) {
  HETSIM_ASSIGN_OR_RETURN(Cluster cluster, LoadAs<Cluster>(path));
  HETSIM_RETURN_IF_ERROR(ValidateCluster(cluster, path));
  HETSIM_RETURN_IF_ERROR(ApplyGpuPresets(&cluster, path));
  return cluster;
}

}  // namespace hetsim::proto
