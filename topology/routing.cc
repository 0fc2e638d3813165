#include "topology/routing.h"

#include <algorithm>
#include <limits>

#include <functional>
#include <queue>
#include <utility>

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

// The device graph's edge weight of a link (Topology::Builder::AddLink): latency, then hops.
int64_t RouteWeight(const Link& link) { return TimeToPicoseconds(link.latency) * kHopWeightScale + 1; }

}  // namespace

void Router::IndexFabric() {
  if (!fabric_index_.empty()) return;
  const int32_t n = static_cast<int32_t>(topology_.devices().size());
  fabric_index_.assign(n, -1);
  for (DeviceId d : IdsBelow<DeviceId>(n)) {
    if (!topology_.is_fabric_device(d)) continue;
    fabric_index_[d.value()] = static_cast<int32_t>(fabric_devices_.size());
    fabric_devices_.push_back(d);
  }
  fabric_in_.resize(fabric_devices_.size());
  fabric_out_.resize(fabric_devices_.size());
  const std::vector<Link>& links = topology_.links();
  for (uint32_t i = 0; i < static_cast<uint32_t>(links.size()); ++i) {
    const LinkId l(i);
    const int32_t a = FabricIndex(links[i].src), b = FabricIndex(links[i].dst);
    if (a < 0 || b < 0) continue;
    fabric_out_[a].push_back(l);
    fabric_in_[b].push_back(l);
  }
}

const std::vector<int64_t>& Router::FabricDistances(DeviceId from) {
  if (auto it = distances_.find(from); it != distances_.end()) return *it->second;
  IndexFabric();
  if ((tables_.size() + 1) * fabric_devices_.size() * sizeof(int64_t) > kMaxCachedDistanceBytes) {
    distances_.clear();
    shared_distances_.clear();
    tables_.clear();
  }
  const std::vector<LinkId>& out = fabric_out_[FabricIndex(from)];
  if (out.empty() || out.size() > kMaxDerivingNeighbours) {
    tables_.push_back(Dijkstra(from));
    return *distances_.emplace(from, &tables_.back()).first->second;
  }
  NeighbourSignature signature;
  for (LinkId l : out) signature.emplace_back(topology_.link(l).dst, RouteWeight(topology_.link(l)));
  std::sort(signature.begin(), signature.end());
  auto shared = shared_distances_.find(signature);
  if (shared == shared_distances_.end()) {
    tables_.push_back(DistancesThroughNeighbours(signature));
    shared = shared_distances_.emplace(std::move(signature), &tables_.back()).first;
  }
  return *distances_.emplace(from, shared->second).first->second;
}

// A shortest path from a switch to any other device leaves by one of its links, so its distance is the
// smallest (link weight + the neighbour's distance): exact, and in a Clos the ToRs of a pod share their
// few neighbours (the pod's switches), so one Dijkstra per pod switch, and one table per pod, replace
// one per ToR. The switch's own entry comes out as a round trip; FabricDistances' callers take 0.
std::vector<int64_t> Router::DistancesThroughNeighbours(const NeighbourSignature& signature) {
  std::vector<int64_t> dist(fabric_devices_.size(), kUnreachable);
  for (const auto& [u, w] : signature) {
    auto it = neighbour_distances_.find(u);
    if (it == neighbour_distances_.end()) {
      // A quarter of the tables' budget: a Clos has far fewer pod switches than ToRs.
      if ((neighbour_distances_.size() + 1) * fabric_devices_.size() * sizeof(int64_t) > kMaxCachedDistanceBytes / 4) {
        neighbour_distances_.clear();
      }
      it = neighbour_distances_.emplace(u, Dijkstra(u)).first;
    }
    const std::vector<int64_t>& du = it->second;
    for (size_t v = 0; v < dist.size(); ++v) {
      if (du[v] != kUnreachable) dist[v] = std::min(dist[v], du[v] + w);
    }
  }
  return dist;
}

std::vector<int64_t> Router::Dijkstra(DeviceId from) {
  std::vector<int64_t> dist(fabric_devices_.size(), kUnreachable);
  using Entry = std::pair<int64_t, int32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  dist[FabricIndex(from)] = 0;
  heap.push({0, FabricIndex(from)});
  while (!heap.empty()) {
    const auto [d, u] = heap.top();
    heap.pop();
    if (d != dist[u]) continue;
    for (LinkId l : fabric_out_[u]) {
      const int32_t v = FabricIndex(topology_.link(l).dst);
      const int64_t w = d + RouteWeight(topology_.link(l));
      if (w < dist[v]) {
        dist[v] = w;
        heap.push({w, v});
      }
    }
  }
  return dist;
}

absl::Status Router::AppendFabricPath(DeviceId from, DeviceId to, uint64_t hash, Route& out) {
  if (from == to) return absl::OkStatus();
  const std::vector<int64_t>& table = FabricDistances(from);
  const int32_t from_index = FabricIndex(from);
  const auto dist = [&](int32_t index) { return index == from_index ? 0 : table[index]; };
  if (dist(FabricIndex(to)) == kUnreachable) {
    return absl::NotFoundError(
        absl::StrFormat("no route from %s to %s", topology_.DeviceName(from), topology_.DeviceName(to)));
  }
  // Walk back from `to`; at each device keep the in-links that lie on a shortest path and pick one by
  // hash. Links are visited in id order, so the choice depends only on the cluster and the hash.
  const size_t start = out.size();
  std::vector<LinkId> candidates;
  for (DeviceId v = to; v != from;) {
    candidates.clear();
    const int64_t dv = dist(FabricIndex(v));
    for (LinkId l : fabric_in_[FabricIndex(v)]) {
      const int64_t du = dist(FabricIndex(topology_.link(l).src));
      if (du == kUnreachable) continue;
      if (du + RouteWeight(topology_.link(l)) == dv) candidates.push_back(l);
    }
    const LinkId pick = candidates[MixHash(hash ^ (static_cast<uint64_t>(v.value()) << 32)) % candidates.size()];
    out.push_back(pick);
    v = topology_.link(pick).src;
  }
  std::reverse(out.begin() + static_cast<std::ptrdiff_t>(start), out.end());
  return absl::OkStatus();
}

absl::StatusOr<const Route*> Router::GpuRoute(GpuId src, GpuId dst, uint64_t flow_key) {
  const auto key = std::make_tuple(src, dst, flow_key);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const int32_t n = topology_.num_gpus();
  if (src.value() < 0 || src.value() >= n)
    return absl::InvalidArgumentError(absl::StrFormat("source GPU %d is outside [0, %d)", src.value(), n));
  if (dst.value() < 0 || dst.value() >= n) {
    return absl::InvalidArgumentError(absl::StrFormat("destination GPU %d is outside [0, %d)", dst.value(), n));
  }
  if (src == dst) return absl::InvalidArgumentError(absl::StrFormat("GPU %d sends to itself", src.value()));
  Route route;
  if (topology_.node_switch(src) == topology_.node_switch(dst)) {
    const std::vector<LinkId>* tree = topology_.intra_node_route(src, dst);
    route = tree != nullptr ? *tree : Route{topology_.gpu_to_switch(src), topology_.switch_to_gpu(dst)};
  } else {
    const DeviceId nic_src = topology_.nic_of(src);
    const DeviceId nic_dst = topology_.nic_of(dst);
    if (nic_src == kNoDevice || nic_dst == kNoDevice) {
      return absl::NotFoundError(
          absl::StrFormat("no route from GPU %d to GPU %d: a node has no NIC", src.value(), dst.value()));
    }
    const LinkId up = topology_.nic_uplink(nic_src);
    const LinkId down = topology_.nic_downlink(nic_dst);
    route.push_back(topology_.gpu_to_nic(src));
    route.push_back(up);
    const uint64_t hash =
        MixHash(MixHash((static_cast<uint64_t>(src.value()) << 32) | static_cast<uint32_t>(dst.value())) ^ flow_key);
    if (auto s = AppendFabricPath(topology_.link(up).dst, topology_.link(down).src, hash, route); !s.ok()) {
      return absl::NotFoundError(
          absl::StrFormat("no route from GPU %d to GPU %d: %s", src.value(), dst.value(), s.message()));
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
  for (LinkId l : route) t += topology_.link(l).latency;
  return t;
}

double Router::BottleneckBytesPerSecond(const Route& route) const {
  double b = std::numeric_limits<double>::infinity();
  for (LinkId l : route) b = std::min(b, topology_.link(l).bandwidth.bytes_per_second());
  return b;
}

}  // namespace hetsim::topology
