// The device graph of a cluster: GPUs, intra-node switches, NICs, island fabric switches and gateways,
// joined by directed links (a full-duplex cable is two links) with a capacity and a latency.
//
// Devices and links live in flat arrays (ids are indices) so that the network and the reports can
// address them cheaply; the same topology is also a Boost.Graph adjacency_list (edge property = link
// id) for the graph algorithms (routing, connectivity).
#ifndef HETSIM_TOPOLOGY_DEVICE_GRAPH_H_
#define HETSIM_TOPOLOGY_DEVICE_GRAPH_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/ids.h"
#include "base/spec/cluster.h"
#include "base/spec/plan.h"
#include "base/time.h"
#include "base/units.h"
#include "topology/nccl_fabric_internal.h"

namespace hetsim::topology {

using DeviceId = StrongId<struct DeviceIdTag, int32_t>;  // index into the topology's device table
inline constexpr DeviceId kNoDevice{-1};                 // a GPU's NIC on a node without NICs
inline constexpr LinkId kNoLink{0xffffffffu};
// Links are added in duplex pairs (Builder::AddDuplex): the reverse of the first is the next id.
constexpr LinkId ReverseLink(LinkId forward) { return LinkId(forward.value() + 1); }

enum class DeviceKind : uint8_t {
  kGpu,
  kNvSwitch,    // intra-node NVSwitch (one logical switch per node)
  kPcieSwitch,  // intra-node PCIe switch
  kNic,
  kIslandSwitch,  // SINGLE_SWITCH fabric
  kLeafSwitch,    // FAT_TREE
  kSpineSwitch,   // FAT_TREE and RAIL_OPTIMIZED
  kRailSwitch,    // RAIL_OPTIMIZED
  kTorSwitch,     // CLOS tier 1: a rack's top-of-rack switch (or one of its rail ToRs)
  kPodSwitch,     // CLOS tier 2: joins the ToRs of one pod
  kAggSwitch,     // CLOS tier 3: joins the pods
  kGateway,       // one per island, end of the inter-island links
  kCpu,           // a PCIe-tree node's CPU socket (its root complex); index = socket
  kHostMemory,    // a socket's DRAM, through which GPUs without PCIe peer-to-peer exchange data
};

enum class LinkClass : uint8_t { kNvlink, kPcie, kInfiniband, kRoce, kEthernet };
inline constexpr int kNumLinkClasses = 5;

absl::string_view DeviceKindName(DeviceKind kind);
absl::string_view LinkClassName(LinkClass link_class);  // "NVLINK", "PCIE", ...

struct Device {
  DeviceKind kind;
  int32_t island;  // index into ClusterSpec.islands
  int32_t node;    // node within the island, -1 for fabric devices
  int32_t index;   // GPU/NIC index within the node, or switch index within its tier
};

struct Link {
  DeviceId src;
  DeviceId dst;
  Bandwidth bandwidth;  // line rate x its fabric's NCCL bandwidth efficiency (the line rate when ideal)
  Time latency;
  LinkClass link_class;
  int32_t fabric = -1;  // index into Topology::nccl_fabrics(), -1 with ClusterSpec.ideal
};

// Where a global GPU id sits.
struct GpuLocation {
  int32_t island;
  int32_t node;
  int32_t local;
};

struct EdgeProps {
  LinkId link = kNoLink;
  int64_t route_weight = 0;  // latency in ps, scaled, plus one per hop: "latency, then hops"
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property, EdgeProps>;

// Multiplier that makes a route's weight order paths by latency first and hop count second.
inline constexpr int64_t kHopWeightScale = 1024;

class Topology {
 public:
  // Builds the graph of a resolved cluster (proto::ResolveCluster refused what cannot be built; the
  // topology checks only its own invariants). The build polls the calling thread's wall-clock limit
  // (base/wall_limit.h: 800,000 GPUs are seconds of work) and stops early when it passes: such a
  // topology is incomplete and CheckComplete() says so; callers check it before using the topology.
  static Topology Build(spec::ClusterSpec cluster);
  // OK for a whole topology; DeadlineExceeded (a run limit naming --max-wall-seconds) for one whose
  // build stopped at the wall-clock limit.
  absl::Status CheckComplete() const;

  const spec::ClusterSpec& cluster() const { return cluster_; }
  const spec::IslandSpec& island(int32_t island) const { return cluster_.islands[island]; }
  const std::vector<Device>& devices() const { return devices_; }
  const Device& device(DeviceId id) const { return devices_[id.value()]; }
  const std::vector<Link>& links() const { return links_; }
  const Link& link(LinkId id) const { return links_[id.value()]; }
  // How many links are of class `cls` (counted as they are built).
  uint32_t links_of_class(LinkClass cls) const { return links_per_class_[static_cast<int>(cls)]; }
  const Graph& graph() const { return *graph_; }
  std::string DeviceName(DeviceId id) const;

  int32_t num_gpus() const { return static_cast<int32_t>(gpu_devices_.size()); }
  int32_t num_islands() const { return static_cast<int32_t>(island_first_gpu_.size()); }
  int32_t num_nodes(int32_t island) const { return cluster_.islands[island].node_count; }
  int32_t gpus_per_node(int32_t island) const { return cluster_.islands[island].node.gpus_per_node; }
  absl::StatusOr<int32_t> IslandIndex(absl::string_view name) const;

  // (island, node, local GPU) <-> global GPU id. Out-of-range arguments give InvalidArgument.
  absl::StatusOr<GpuId> GpuIdOf(int32_t island, int32_t node, int32_t local) const;
  absl::StatusOr<GpuLocation> Locate(GpuId gpu) const;
  // The GPUs of a plan mesh, node-major (all GPUs of the first node first); InvalidArgument naming the
  // mesh's field when it leaves its island.
  absl::StatusOr<std::vector<GpuId>> MeshGpus(const spec::MeshSpec& mesh) const;

  DeviceId gpu_device(GpuId gpu) const { return gpu_devices_[gpu.value()]; }
  DeviceId node_switch(GpuId gpu) const;  // the node's NVSwitch or PCIe switch
  DeviceId nic_of(GpuId gpu) const;       // the NIC that carries the GPU's inter-node traffic
  LinkId gpu_to_switch(GpuId gpu) const { return gpu_up_[gpu.value()]; }
  LinkId switch_to_gpu(GpuId gpu) const { return gpu_down_[gpu.value()]; }
  LinkId gpu_to_nic(GpuId gpu) const { return gpu_nic_up_[gpu.value()]; }
  LinkId nic_to_gpu(GpuId gpu) const { return gpu_nic_down_[gpu.value()]; }
  // On a PCIe-tree node (PCIE_TREE, NVLINK_BRIDGE, HYBRID_CUBE_MESH) the links from GPU `src` to GPU
  // `dst` of the same node (src != dst): an NVLink, the PCIe tree, or through host memory; nullptr on
  // a node with one switch, whose route is gpu_to_switch(src), switch_to_gpu(dst). There
  // node_switch() is the node's first CPU socket and gpu_to_switch() the GPU's first PCIe hop.
  const std::vector<LinkId>* intra_node_route(GpuId src, GpuId dst) const;
  // The NIC's link into the fabric and back (kNoLink for devices that are not NICs).
  LinkId nic_uplink(DeviceId nic) const { return nic_up_[nic.value()]; }
  LinkId nic_downlink(DeviceId nic) const { return nic_down_[nic.value()]; }
  bool is_fabric_device(DeviceId d) const;  // switches and gateways that may forward traffic

  // NCCL's achieved bandwidth and latency (docs/network.md): false with ClusterSpec.ideal, and then link
  // capacities are line rates and nccl_fabrics() is empty. Otherwise every link's capacity is its line
  // rate x its fabric's bandwidth_efficiency.
  bool nccl_model() const { return !nccl_fabrics_.empty(); }
  const std::vector<NcclFabricTiming>& nccl_fabrics() const { return nccl_fabrics_; }
  // The fabric of the GPUs' node type, of their island's inter-node fabric (island_fabric), and of an
  // inter-island link (link_fabric); -1 with ClusterSpec.ideal.
  int32_t node_fabric(int32_t island) const { return nccl_model() ? island_node_fabric_[island] : -1; }
  int32_t island_fabric(int32_t island) const { return nccl_model() ? island_net_fabric_[island] : -1; }

 private:
  class Builder;
  friend class Builder;
  Topology() = default;

  spec::ClusterSpec cluster_;
  bool interrupted_ = false;  // the build stopped at the wall-clock limit
  std::vector<Device> devices_;
  std::vector<Link> links_;
  std::array<uint32_t, kNumLinkClasses> links_per_class_{};
  // On the heap: boost 1.74's adjacency_list has no move constructor, so a Topology moved out of Build
  // copied its whole graph (seconds and a second copy's memory at 800,000 GPUs).
  std::unique_ptr<Graph> graph_ = std::make_unique<Graph>();
  std::vector<int32_t> island_first_gpu_;
  std::vector<DeviceId> gpu_devices_;
  std::vector<DeviceId> gpu_switch_;
  std::vector<DeviceId> gpu_nic_;
  std::vector<LinkId> gpu_up_, gpu_down_, gpu_nic_up_, gpu_nic_down_;
  std::vector<LinkId> nic_up_, nic_down_;          // indexed by device id (kNoLink for non-NICs)
  std::vector<std::vector<LinkId>> intra_routes_;  // PCIe-tree nodes: per GPU, its route to each GPU of its node
  std::vector<int64_t> intra_route_base_;          // per GPU: index of its route to local GPU 0; -1: one switch
  std::vector<NcclFabricTiming> nccl_fabrics_;     // node types, then islands, then inter-island links
  std::vector<int32_t> island_node_fabric_, island_net_fabric_;
};

}  // namespace hetsim::topology

#endif  // HETSIM_TOPOLOGY_DEVICE_GRAPH_H_
