// Routes between GPUs: shortest by latency, then by hop count; among equal-cost paths a deterministic
// ECMP choice from a hash of (source, destination, flow key). Routes are cached.
//
// GPUs and NICs do not forward traffic (hosts are not routers), so a route leaves a node through the
// sending GPU's NIC and enters through the receiving GPU's NIC; between the two NICs' switches it is a
// shortest path over the fabric switches and gateways, indexed compactly over the fabric devices only.
// Distance tables are kept while their total stays under kMaxCachedDistanceBytes (a recomputed table is
// identical, so the bound never changes a route). A switch with few fabric links (a ToR) takes its
// table from its neighbours' (the pod's switches), and switches whose links go to the same neighbours
// with the same weights (the ToRs of a pod) share one table: a 100,000-GPU Clos has thousands of ToRs
// and a few dozen such groups. Inside a node every GPU pair is two hops through the node's NVSwitch or
// PCIe switch, which is the only shortest path; on a PCIe-tree node (NVLink bridges, the cube-mesh)
// it is the route the topology built for the pair (Topology::intra_node_route).
#ifndef HETSIM_TOPOLOGY_ROUTING_H_
#define HETSIM_TOPOLOGY_ROUTING_H_

#include <cstdint>
#include <deque>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "topology/device_graph.h"

namespace hetsim::topology {

using Route = std::vector<LinkId>;

class Router {
 public:
  explicit Router(const Topology& topology) : topology_(topology) {}

  // The links from GPU `src` to GPU `dst` (src != dst). The reference stays valid for the Router's
  // lifetime. InvalidArgument for ids out of range or src == dst; NotFound when no path exists.
  absl::StatusOr<const Route*> GpuRoute(GpuId src, GpuId dst, uint64_t flow_key = 0);

  // Sum of link latencies and the smallest link capacity along a route.
  Time Latency(const Route& route) const;
  double BottleneckBytesPerSecond(const Route& route) const;

  const Topology& topology() const { return topology_; }
  size_t cached_routes() const { return routes_.size(); }
  // Room in the route cache for `more` routes beyond those cached, so that a caller about to route a
  // known number of transfers grows it once (a collective's estimate routes tens of thousands).
  void ReserveRoutes(size_t more) { cache_.reserve(cache_.size() + more); }

 private:
  // Distances (route weights) from a fabric switch to every fabric device (by compact index) other
  // than itself: the table may be shared with switches of the same neighbours, whose entry for
  // `from` is not 0 (callers take 0 for `from`).
  const std::vector<int64_t>& FabricDistances(DeviceId from);
  // The out-links' (neighbour, weight) pairs of a switch that derives its table from its neighbours'.
  using NeighbourSignature = std::vector<std::pair<DeviceId, int64_t>>;
  std::vector<int64_t> DistancesThroughNeighbours(const NeighbourSignature& signature);
  std::vector<int64_t> Dijkstra(DeviceId from);
  void IndexFabric();
  int32_t FabricIndex(DeviceId d) const { return fabric_index_[d.value()]; }
  absl::Status AppendFabricPath(DeviceId from, DeviceId to, uint64_t hash, Route& out);

  const Topology& topology_;
  absl::flat_hash_map<std::tuple<GpuId, GpuId, uint64_t>, const Route*> cache_;
  std::deque<Route> routes_;  // stable addresses for the cache
  // Per source switch, its table: its own (Dijkstra) or its neighbour signature's, in tables_.
  absl::flat_hash_map<DeviceId, const std::vector<int64_t>*> distances_;
  absl::flat_hash_map<NeighbourSignature, const std::vector<int64_t>*> shared_distances_;
  std::deque<std::vector<int64_t>> tables_;  // stable addresses
  // Dijkstra tables of the neighbours FabricDistances derived a source's table from (pod switches).
  absl::flat_hash_map<DeviceId, std::vector<int64_t>> neighbour_distances_;
  // Fabric devices: compact index per device (-1 for GPUs, NICs, node switches), and per fabric
  // device its links to and from other fabric devices, in link id order.
  std::vector<int32_t> fabric_index_;
  std::vector<DeviceId> fabric_devices_;
  std::vector<std::vector<LinkId>> fabric_in_, fabric_out_;
};

// 1 GiB: a 100,000-GPU Clos keeps every table (one per pod since ToRs share theirs; one per ToR took
// about 330 MiB); at 256 MiB they were cleared and recomputed throughout the run.
inline constexpr size_t kMaxCachedDistanceBytes = size_t{1} << 30;
// A source with at most this many fabric links takes its table from its neighbours' (a ToR: its pod
// switches); one with more runs Dijkstra itself.
inline constexpr size_t kMaxDerivingNeighbours = 16;

// Deterministic 64-bit mixing (splitmix64 finalizer); never seeded by the process, unlike absl::Hash.
uint64_t MixHash(uint64_t x);

}  // namespace hetsim::topology

#endif  // HETSIM_TOPOLOGY_ROUTING_H_
