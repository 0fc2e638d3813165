// A resolved cluster: every field the topology, the executor and the commands read, in hetsim's own
// enums and the simulator's units (bytes/s, Time picoseconds), each island with its node type and GPU
// (presets applied), each inter-island link with its islands' indices, NCCL's fabric figures with
// their presets filled, and labels for messages. Built once by proto::ResolveCluster from a
// validated Cluster, which refuses what breaks the invariants noted below; topology::Topology::Build
// trusts it.
#ifndef HETSIM_BASE_SPEC_CLUSTER_H_
#define HETSIM_BASE_SPEC_CLUSTER_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/spec/gpu.h"
#include "base/time.h"
#include "base/units.h"

namespace hetsim::spec {

// UNSPECIFIED is NVSwitch; kNvSwitch and kPcie are one switch per node, the others a PCIe tree
// (NodeTypeSpec.pcie) with, for the last two, NVLinks between GPU pairs.
enum class IntraNodeFabric : uint8_t { kNvSwitch, kPcie, kPcieTree, kNvlinkBridge, kHybridCubeMesh };
enum class InterNodeFabric : uint8_t { kInfiniband, kRoce, kEthernet };                  // UNSPECIFIED is InfiniBand
enum class FabricTopology : uint8_t { kSingleSwitch, kFatTree, kRailOptimized, kClos };  // UNSPECIFIED: single

// NCCL's protocols: LL (8-byte lines with a flag, lowest latency), LL128 (128-byte lines, 120 bytes of
// payload), Simple (large chunks and fences, full bandwidth, highest latency).
enum class NcclProtocol : uint8_t { kLL = 0, kLL128 = 1, kSimple = 2 };
inline constexpr int kNumNcclProtocols = 3;

// NCCL's achieved bandwidth and latency on one fabric (a node type's, an island's or an inter-island
// link's), the fabric's preset filling what the file leaves at zero. docs/network.md.
struct NcclFabricTiming {
  std::string name;                                    // "node type \"dgx\"", "island \"a100\"", ...
  double bandwidth_efficiency = 1;                     // link capacities are line rate x this
  Time launch_latency = 0;                             // once per collective
  std::array<Time, kNumNcclProtocols> step_latency{};  // per algorithm step, by NcclProtocol
};

// NodeType.pcie with its defaults applied: GPUs in order split evenly over `sockets`, and under a
// socket `gpus_per_switch` per PCIe switch (dividing the socket's GPUs; 0: each on a root port).
struct PcieTreeSpec {
  int32_t gpus_per_switch = 0;
  int32_t sockets = 1;         // >= 1, divides gpus_per_node
  Bandwidth socket_bandwidth;  // between two sockets, per direction (> 0 with sockets > 1)
  Time socket_latency = 0;
  bool no_p2p = false;              // through the sending socket's memory (NCCL's SHM transport)
  Bandwidth host_memory_bandwidth;  // a socket's DRAM bandwidth, reads plus writes (> 0 with no_p2p)
  Bandwidth shm_connection;         // no_p2p: one SHM connection (ring hop), per direction (> 0 with no_p2p)
};

// NCCL's SHM transport without P2P (SHM/direct, NCCL's default): the sender's kernel stores into a
// buffer in the receiver's host memory (NCCL_SHM_LOCALITY = 2), the receiver's kernel loads it over
// PCIe, a few cache lines in flight per channel, so a connection runs at channels x a per-channel rate
// far below the link (https://github.com/NVIDIA/nccl/blob/master/src/transport/shm.cc). On a PCIe-only
// node the ring search finds one ring and connectRings doubles it: 2 channels
// (src/graph/search.cc, ncclTopoDupChannels only above 25 GB/s; src/graph/connect.cc, "nChannels * 2").
// Per channel: two RTX 5070 Ti on PCIe 4.0 x16 (26 GB/s measured per direction) all-reduce 20 MB in
// 10.9 ms over SHM, 1.9 GB/s bus bandwidth, LL, LL128 and Simple alike
// (https://github.com/sgl-project/sglang/pull/39605), i.e. 0.95 GB/s per channel. docs/network.md.
// The same count on PCIe nodes with P2P (sim/workload/nccl_contention.h has the logs).
inline constexpr int kNcclPcieChannels = 2;
inline constexpr double kShmDirectChannelBytesPerS = 0.95e9;

struct NodeTypeSpec {
  std::string name;
  int32_t gpus_per_node = 1;  // >= 1
  IntraNodeFabric fabric = IntraNodeFabric::kNvSwitch;
  Bandwidth bandwidth;         // per GPU and direction into the node's switch (a tree: its PCIe link)
  Time latency = 0;            // GPU to GPU through the switch (a tree: under one PCIe switch; an NVLink)
  PcieTreeSpec pcie;           // kPcieTree, kNvlinkBridge, kHybridCubeMesh
  Bandwidth nvlink_bandwidth;  // per direction: a bridge (even GPU count), one cube-mesh NVLink (8 GPUs)
  bool nvlink_sharp = false;   // NVSWITCH whose switches reduce (NVLS): an all-reduce may run kNvls (one node) or
                               // NVLSTree (across nodes)
  double nvls_efficiency = 0;  // NVLS's share of the line rate; 0: nccl.bandwidth_efficiency x 5/6
  NcclFabricTiming nccl;       // unused with ClusterSpec.ideal
};

// Island.clos with its "0 means" defaults applied.
struct ClosSpec {
  int32_t nodes_per_rack = 1;
  int32_t racks_per_pod = 1;
  bool rail_optimized = false;
  int32_t pod_switches = 1;          // 0 in the file: one per NIC of a node
  int32_t aggregation_switches = 1;  // 0 in the file: as many as pod_switches
  double rack_oversubscription = 1;  // >= 1
  double aggregation_oversubscription = 1;
};

struct IslandSpec {
  std::string name;
  GpuSpec gpu;
  std::string gpu_where;  // "cluster.pbtxt: gpu_types[\"A100\"]"
  NodeTypeSpec node;
  int32_t node_count = 1;     // >= 1
  int32_t nics_per_node = 0;  // >= 1 when the island's nodes talk to other nodes
  Bandwidth nic_bandwidth;
  Time nic_latency = 0;     // NIC to its switch
  Time switch_latency = 0;  // added on every hop out of a switch
  InterNodeFabric fabric = InterNodeFabric::kInfiniband;
  FabricTopology topology = FabricTopology::kSingleSwitch;
  int32_t nodes_per_leaf = 0;     // FAT_TREE; 0 = every node on one leaf
  double oversubscription = 1;    // FAT_TREE, >= 1
  ClosSpec clos;                  // CLOS
  NcclFabricTiming nccl;          // unused with ClusterSpec.ideal
  int32_t network = -1;           // index into ClusterSpec.networks; -1: the island's own network
  bool infiniband_sharp = false;  // INFINIBAND switches that reduce (SHARP): multi-node all-reduce may run
                                  // CollNetDirect or CollNetChain

  int64_t gpus() const { return int64_t{node_count} * node.gpus_per_node; }
};

struct InterIslandLinkSpec {
  int32_t island_a = 0;  // indices into ClusterSpec.islands, different
  int32_t island_b = 0;
  InterNodeFabric fabric = InterNodeFabric::kInfiniband;
  Bandwidth bandwidth;  // each of the `count` parallel links
  Time latency = 0;
  int32_t count = 1;      // >= 1
  NcclFabricTiming nccl;  // unused with ClusterSpec.ideal
};

// Islands on one flat network (Island.network): their NICs under the same switches, sized by the
// first island's fabric fields, which every member repeats (checked). Nodes in member order.
struct NetworkSpec {
  std::string name;
  std::vector<int32_t> islands;  // indices into ClusterSpec.islands, ascending, at least one
};

struct ClusterSpec {
  std::string name;
  bool ideal = false;                                   // flop / peak and bytes / datasheet bandwidth, no overheads
  std::vector<IslandSpec> islands;                      // in the order of Cluster.islands (the topology's island index)
  std::vector<InterIslandLinkSpec> inter_island_links;  // in file order; with the networks they join every island
  std::vector<NetworkSpec> networks;                    // in order of their first island
};

}  // namespace hetsim::spec

#endif  // HETSIM_BASE_SPEC_CLUSTER_H_
