// Topology::Builder: adds a cluster's devices and links in a fixed order. Internal to topology/:
// device_graph.cc builds nodes with one switch, the fabrics and the gateways; intra_node.cc the nodes
// laid out as a PCIe tree with NVLinks and their intra-node routes.
#ifndef HETSIM_TOPOLOGY_TOPOLOGY_BUILDER_INTERNAL_H_
#define HETSIM_TOPOLOGY_TOPOLOGY_BUILDER_INTERNAL_H_

#include <vector>

#include "base/wall_limit.h"
#include "topology/device_graph.h"

namespace hetsim::topology {

// Adds devices and links in a fixed order, so that ids are deterministic for a given cluster.
class Topology::Builder {
 public:
  explicit Builder(Topology& t) : t_(t) {}

  void Run();

 private:
  DeviceId AddDevice(DeviceKind kind, int32_t island, int32_t node, int32_t index) {
    t_.devices_.push_back({kind, island, node, index});
    boost::add_vertex(*t_.graph_);
    t_.nic_up_.push_back(kNoLink);
    t_.nic_down_.push_back(kNoLink);
    return DeviceId(static_cast<int32_t>(t_.devices_.size() - 1));
  }
  // Links are added on behalf of one fabric at a time (fabric_, set by the caller): its NCCL efficiency
  // derates the line rate, once, here.
  LinkId AddLink(DeviceId src, DeviceId dst, double bytes_per_second, Time latency, LinkClass cls) {
    const LinkId id(static_cast<uint32_t>(t_.links_.size()));
    if (fabric_ >= 0) bytes_per_second *= t_.nccl_fabrics_[fabric_].bandwidth_efficiency;
    t_.links_.push_back({src, dst, Bandwidth(bytes_per_second), latency, cls, fabric_});
    ++t_.links_per_class_[static_cast<int>(cls)];
    boost::add_edge(src.value(), dst.value(), EdgeProps{id, TimeToPicoseconds(latency) * kHopWeightScale + 1},
                    *t_.graph_);
    return id;
  }
  // Two directed links; returns the id of the first (src -> dst); the reverse is id + 1.
  LinkId AddDuplex(DeviceId a, DeviceId b, double bytes_per_second, Time a_to_b, Time b_to_a, LinkClass cls) {
    const LinkId id = AddLink(a, b, bytes_per_second, a_to_b, cls);
    AddLink(b, a, bytes_per_second, b_to_a, cls);
    return id;
  }

  // True once the calling thread's wall-clock limit has passed (polled, cheap): the build stops and
  // leaves the topology marked incomplete.
  bool Stopped() {
    if (!t_.interrupted_ && WallLimitPassed()) t_.interrupted_ = true;
    return t_.interrupted_;
  }

  void Index();
  // ClusterSpec.ideal: nothing. Otherwise the NCCL figures of every node type (per island), island
  // and inter-island link, in that order.
  void CollectNcclFabrics();
  void BuildNodes(int32_t island);
  // A NIC on a network: its island (whose NIC fields give its rate and transport), its node's place
  // among the network's nodes (member order) and its index in the node.
  struct NetNic {
    DeviceId nic;
    int32_t island = 0;
    int32_t node = 0;
    int32_t index = 0;
  };
  // The switches of a network described by island `island`'s switch fields, for `nics` (node-major)
  // of `nodes` nodes: the island's own, or a shared network's (every member's, in member order).
  // Returns the devices a gateway attaches to (its top tier).
  std::vector<DeviceId> BuildFabric(int32_t island, const std::vector<NetNic>& nics, int32_t nodes);
  // CLOS: ToRs, pod switches, aggregation switches (Island.clos); `lanes` NICs per node at most;
  // returns the top tier.
  std::vector<DeviceId> BuildClos(int32_t island, const std::vector<NetNic>& nics, int32_t nodes, int32_t lanes,
                                  LinkClass cls, Time wire, Time hop_from_switch);
  // The NIC's link to its switch at its own island's rate, link class and NCCL fabric.
  void AttachToSwitch(const NetNic& nic, DeviceId sw, Time wire, Time hop_from_switch);
  // The fastest NIC rate (bytes/s) in each of `groups` groups (nics[n] in group[n]) and, in *count,
  // each group's NICs: a switch's ports are sized for the fastest NIC under it.
  std::vector<double> FastestNicPerGroup(const std::vector<NetNic>& nics, const std::vector<int32_t>& group,
                                         size_t groups, std::vector<int32_t>* count) const;
  // The fabric of island i's network once its last member's nodes exist; empty before.
  std::vector<DeviceId> BuildNetworkOf(int32_t i);

  // Nodes of a PCIe-tree fabric (PCIE_TREE, NVLINK_BRIDGE, HYBRID_CUBE_MESH; topology/intra_node.cc):
  // sockets, host memory, PCIe switches, GPUs, their NICs, NVLinks, and every GPU pair's route.
  void BuildTreeNode(int32_t island, int32_t node, const std::vector<DeviceId>& node_nics);
  // The GPU's link to its NIC (GPUDirect RDMA over PCIe), or none without NICs.
  void AttachNic(DeviceId gpu, int32_t local, const std::vector<DeviceId>& node_nics, double nic_bps);

  Topology& t_;
  std::vector<std::vector<DeviceId>> island_nics_;  // per island, node-major
  int32_t fabric_ = -1;                             // the fabric of the links being added
  int32_t first_link_fabric_ = 0;                   // nccl_fabrics_ index of inter_island_links[0]
};

}  // namespace hetsim::topology

#endif  // HETSIM_TOPOLOGY_TOPOLOGY_BUILDER_INTERNAL_H_
