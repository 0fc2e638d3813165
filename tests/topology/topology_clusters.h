// Small Cluster messages built in C++ for the topology and collectives tests.
#ifndef HETSIM_TESTS_TOPOLOGY_CLUSTERS_H_
#define HETSIM_TESTS_TOPOLOGY_CLUSTERS_H_

#include <initializer_list>
#include <string>
#include <utility>

#include "proto/hetsim.pb.h"

namespace hetsim::testing {

inline void AddGpuType(v1::Cluster& c, const std::string& name, double tflops_bf16, double hbm_gib,
                       double hbm_gbytes_per_s) {
  auto* g = c.add_gpu_types();
  g->set_name(name);
  g->set_peak_tflops_bf16(tflops_bf16);
  g->set_hbm_gib(hbm_gib);
  g->set_hbm_bandwidth_gbytes_per_s(hbm_gbytes_per_s);
}

inline void AddNodeType(v1::Cluster& c, const std::string& name, const std::string& gpu, int gpus, double intra_gbps,
                        int64_t intra_latency_ns, v1::IntraNodeFabric fabric = v1::NVSWITCH) {
  auto* n = c.add_node_types();
  n->set_name(name);
  n->set_gpu_type(gpu);
  n->set_gpus_per_node(gpus);
  n->set_intra_node_fabric(fabric);
  n->set_intra_node_bandwidth_gbps(intra_gbps);
  n->set_intra_node_latency_ns(intra_latency_ns);
}

struct IslandSpec {
  std::string name;
  std::string node_type;
  int nodes = 1;
  v1::FabricTopology topology = v1::SINGLE_SWITCH;
  int nics = 8;
  double nic_gbps = 400;
  int64_t nic_latency_ns = 0;
  int64_t switch_latency_ns = 0;
  double oversubscription = 0;
  int nodes_per_leaf = 0;
  v1::InterNodeFabric fabric = v1::INFINIBAND;
};

inline void AddIsland(v1::Cluster& c, const IslandSpec& s) {
  auto* i = c.add_islands();
  i->set_name(s.name);
  i->set_node_type(s.node_type);
  i->set_node_count(s.nodes);
  i->set_fabric(s.fabric);
  i->set_topology(s.topology);
  i->set_nics_per_node(s.nics);
  i->set_nic_bandwidth_gbps(s.nic_gbps);
  i->set_nic_latency_ns(s.nic_latency_ns);
  i->set_switch_latency_ns(s.switch_latency_ns);
  i->set_oversubscription(s.oversubscription);
  i->set_nodes_per_leaf(s.nodes_per_leaf);
}

// One island per (name, node count), of the node type of the same name, on one switch with `nics` NICs
// of `nic_gbps` a node.
inline void AddIslandsOfNodeTypes(v1::Cluster& c, std::initializer_list<std::pair<const char*, int>> islands, int nics,
                                  double nic_gbps, int64_t nic_latency_ns, int64_t switch_latency_ns) {
  for (const auto& [name, nodes] : islands) {
    AddIsland(c, {name, name, nodes, v1::SINGLE_SWITCH, nics, nic_gbps, nic_latency_ns, switch_latency_ns});
  }
}

inline void AddInterIslandLink(v1::Cluster& c, const std::string& a, const std::string& b, double gbps,
                               int64_t latency_ns, int count = 1, v1::InterNodeFabric fabric = v1::ETHERNET) {
  auto* l = c.add_inter_island_links();
  l->set_island_a(a);
  l->set_island_b(b);
  l->set_bandwidth_gbps(gbps);
  l->set_latency_ns(latency_ns);
  l->set_count(count);
  l->set_fabric(fabric);
}

// `nodes` H100 nodes of `gpus` GPUs on NVSwitch (3600 Gb/s per GPU), 8 NICs of 400 Gb/s, one island.
// Ideal hardware (line rate, no NCCL latency): the tests built on it check closed forms.
inline v1::Cluster H100Island(int nodes, v1::FabricTopology topology = v1::SINGLE_SWITCH, int gpus = 8,
                              int nodes_per_leaf = 0, double oversubscription = 0) {
  v1::Cluster c;
  c.set_name("h100");
  c.set_ideal(true);
  AddGpuType(c, "H100", 989, 80, 3350);
  AddNodeType(c, "dgx", "H100", gpus, 3600, 1000);
  IslandSpec s{.name = "a", .node_type = "dgx", .nodes = nodes, .topology = topology, .nics = gpus};
  s.nic_latency_ns = 500;
  s.switch_latency_ns = 200;
  s.nodes_per_leaf = nodes_per_leaf;
  s.oversubscription = oversubscription;
  AddIsland(c, s);
  return c;
}

// `nodes` DGX A100 (8 GPUs on NVSwitch at 300 GB/s, 700 ns GPU to GPU) with 8 x 200 Gb/s HDR
// InfiniBand NICs per node on one switch (NIC wire 1000 ns, switch 130 ns), as validation/nccl/'s
// clusters; island "a100" of node type "dgx", NCCL's figures from the presets.
inline v1::Cluster DgxA100Cluster(int nodes) {
  v1::Cluster c;
  c.set_name("dgx-a100");
  auto* g = c.add_gpu_types();
  g->set_name("a100");
  g->set_preset("A100-80GB");
  AddNodeType(c, "dgx", "a100", 8, 2400, 700);
  AddIsland(c, {"a100", "dgx", nodes, v1::SINGLE_SWITCH, 8, 200, 1000, 130});
  return c;
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_TOPOLOGY_CLUSTERS_H_
