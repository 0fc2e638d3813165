#include "topology/routing.h"

#include <algorithm>
#include <limits>

#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/property_map/property_map.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace hetsim::topology {

uint64_t MixHash(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

namespace {

constexpr int64_t kUnreachable = std::numeric_limits<int64_t>::max();

struct FabricOnly {
  const Topology* topology = nullptr;
  bool operator()(Graph::vertex_descriptor v) const { return topology->is_fabric_device(static_cast<DeviceId>(v)); }
};

}  // namespace

const std::vector<int64_t>& Router::FabricDistances(DeviceId from) {
  auto it = distances_.find(from);
  if (it != distances_.end()) return it->second;
  const Graph& g = topology_.graph();
  boost::filtered_graph<Graph, boost::keep_all, FabricOnly> fabric(g, boost::keep_all(), FabricOnly{&topology_});
  std::vector<int64_t> dist(boost::num_vertices(g), kUnreachable);
  boost::dijkstra_shortest_paths(
      fabric, static_cast<Graph::vertex_descriptor>(from),
      boost::weight_map(boost::get(&EdgeProps::route_weight, g))
          .distance_map(boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, g)))
          .distance_inf(kUnreachable));
  return distances_.emplace(from, std::move(dist)).first->second;
}

absl::Status Router::AppendFabricPath(DeviceId from, DeviceId to, uint64_t hash, Route& out) {
  if (from == to) return absl::OkStatus();
  const std::vector<int64_t>& dist = FabricDistances(from);
  if (dist[to] == kUnreachable) {
    return absl::NotFoundError(absl::StrFormat("no route from %s to %s", topology_.DeviceName(from), topology_.DeviceName(to)));
  }
  // Walk back from `to`; at each device keep the in-links that lie on a shortest path and pick one by
  // hash. Links are visited in id order, so the choice depends only on the cluster and the hash.
  const Graph& g = topology_.graph();
  const size_t start = out.size();
  std::vector<Graph::edge_descriptor> candidates;
  for (DeviceId v = to; v != from;) {
    candidates.clear();
    for (auto [e, end] = boost::in_edges(static_cast<Graph::vertex_descriptor>(v), g); e != end; ++e) {
      const auto u = boost::source(*e, g);
      if (!topology_.is_fabric_device(static_cast<DeviceId>(u)) || dist[u] == kUnreachable) continue;
      if (dist[u] + g[*e].route_weight == dist[v]) candidates.push_back(*e);
    }
    const auto& pick = candidates[MixHash(hash ^ (static_cast<uint64_t>(v) << 32)) % candidates.size()];
    out.push_back(g[pick].link);
    v = static_cast<DeviceId>(boost::source(pick, g));
  }
  std::reverse(out.begin() + static_cast<std::ptrdiff_t>(start), out.end());
  return absl::OkStatus();
}

absl::StatusOr<const Route*> Router::GpuRoute(GpuId src, GpuId dst, uint64_t flow_key) {
  const auto key = std::make_tuple(src, dst, flow_key);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const int32_t n = topology_.num_gpus();
  if (src < 0 || src >= n) return absl::InvalidArgumentError(absl::StrFormat("source GPU %d is outside [0, %d)", src, n));
  if (dst < 0 || dst >= n) {
    return absl::InvalidArgumentError(absl::StrFormat("destination GPU %d is outside [0, %d)", dst, n));
  }
  if (src == dst) return absl::InvalidArgumentError(absl::StrFormat("GPU %d sends to itself", src));
  Route route;
  if (topology_.node_switch(src) == topology_.node_switch(dst)) {
    route = {topology_.gpu_to_switch(src), topology_.switch_to_gpu(dst)};
  } else {
    const DeviceId nic_src = topology_.nic_of(src);
    const DeviceId nic_dst = topology_.nic_of(dst);
    if (nic_src < 0 || nic_dst < 0) {
      return absl::NotFoundError(absl::StrFormat("no route from GPU %d to GPU %d: a node has no NIC", src, dst));
    }
    const LinkId up = topology_.nic_uplink(nic_src);
    const LinkId down = topology_.nic_downlink(nic_dst);
    route.push_back(topology_.gpu_to_nic(src));
    route.push_back(up);
    const uint64_t hash = MixHash(MixHash((static_cast<uint64_t>(src) << 32) | static_cast<uint32_t>(dst)) ^ flow_key);
    if (auto s = AppendFabricPath(topology_.links()[up].dst, topology_.links()[down].src, hash, route); !s.ok()) {
      return absl::NotFoundError(absl::StrFormat("no route from GPU %d to GPU %d: %s", src, dst, s.message()));
    }
    route.push_back(down);
    route.push_back(topology_.nic_to_gpu(dst));
  }
  routes_.push_back(std::move(route));
  cache_.emplace(key, &routes_.back());
  return &routes_.back();
}

Time Router::Latency(const Route& route) const {
  Time t = 0;
  for (LinkId l : route) t += topology_.links()[l].latency;
  return t;
}

double Router::BottleneckBytesPerSecond(const Route& route) const {
  double b = std::numeric_limits<double>::infinity();
  for (LinkId l : route) b = std::min(b, topology_.links()[l].bytes_per_second);
  return b;
}

}  // namespace hetsim::topology
