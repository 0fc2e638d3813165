#include "sim/collectives/representative.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace hetsim::sim {
namespace {

using topology::DeviceKind;

bool InsideNode(DeviceKind kind) {
  return kind == DeviceKind::kGpu || kind == DeviceKind::kNvSwitch || kind == DeviceKind::kPcieSwitch ||
         kind == DeviceKind::kNic;
}

// Links the symmetry maps onto one another: kinds and islands of both ends, the node of a link that
// touches one (-1 in the fabric), and the capacity.
using ClassKey = std::tuple<uint8_t, uint8_t, int32_t, int32_t, int32_t, double>;

ClassKey KeyOf(const topology::Topology& topology, LinkId id) {
  const topology::Link& link = topology.links()[id];
  const topology::Device& a = topology.devices()[link.src];
  const topology::Device& b = topology.devices()[link.dst];
  const int32_t node = InsideNode(a.kind) ? a.node : InsideNode(b.kind) ? b.node : -1;
  return {static_cast<uint8_t>(a.kind), static_cast<uint8_t>(b.kind), a.island, b.island, node, link.bytes_per_second};
}

struct LinkClass {
  double load = 0;               // representative multiplicity crossing the class's links
  int64_t links = 0;             // links in the class
  LinkId canonical = topology::kNoLink;  // the class's lowest link id: where its representatives meet
};

}  // namespace

std::vector<RepresentativeRoute> RepresentativeRoutes(const topology::Topology& topology,
                                                      std::span<const std::span<const LinkId>> routes,
                                                      std::span<const double> multiplicity) {
  std::vector<RepresentativeRoute> out(routes.size());
  if (multiplicity.empty()) return out;
  absl::flat_hash_map<LinkId, double> load;  // per link crossed by a representative
  absl::flat_hash_set<topology::DeviceId> visited;
  for (size_t p = 0; p < routes.size(); ++p) {
    if (multiplicity[p] <= 0) continue;
    for (LinkId l : routes[p]) {
      load[l] += multiplicity[p];
      visited.insert(topology.links()[l].src);
      visited.insert(topology.links()[l].dst);
    }
  }
  absl::flat_hash_map<ClassKey, LinkClass> classes;
  for (const auto& [l, m] : load) classes[KeyOf(topology, l)].load += m;
  // A node's links count whole (the symmetry rotates the parts over all of them); fabric links count
  // where the representatives reach (a group on part of an island spreads over its own switches).
  for (LinkId l = 0; l < static_cast<LinkId>(topology.links().size()); ++l) {
    const ClassKey key = KeyOf(topology, l);
    auto it = classes.find(key);
    if (it == classes.end()) continue;
    const topology::Link& link = topology.links()[l];
    if (std::get<4>(key) < 0 && !(visited.contains(link.src) && visited.contains(link.dst))) continue;
    if (it->second.links++ == 0) it->second.canonical = l;
  }
  for (size_t p = 0; p < routes.size(); ++p) {
    if (multiplicity[p] <= 0) continue;
    RepresentativeRoute& r = out[p];
    for (LinkId l : routes[p]) {
      const LinkClass& c = classes.at(KeyOf(topology, l));
      const double links = static_cast<double>(c.links);
      if (std::find(r.links.begin(), r.links.end(), c.canonical) == r.links.end()) {
        r.links.push_back(c.canonical);
        r.weights.push_back(multiplicity[p] / links);
      } else {  // two hops of one class (nested PCIe switches): this one keeps its link, weighted by the mean
        r.links.push_back(l);
        r.weights.push_back(multiplicity[p] * (c.load / links) / load.at(l));
      }
    }
  }
  return out;
}

std::vector<RepresentativePath> RepresentativeAllToAllPaths(const std::vector<Ranks>& nodes) {
  std::vector<RepresentativePath> out;
  const auto num_nodes = static_cast<int64_t>(nodes.size());
  const auto g = static_cast<int64_t>(nodes.empty() ? 0 : nodes.front().size());
  for (int64_t a = 0; a < num_nodes && g > 1; ++a) {
    for (int64_t l = 0; l < g; ++l) out.push_back({{nodes[a][l], nodes[a][(l + 1) % g], 0}, double(g - 1)});
  }
  const int64_t strata = std::min<int64_t>(kRepresentativeShifts, num_nodes - 1);
  for (int64_t j = 0; j < strata; ++j) {
    const int64_t lo = 1 + j * (num_nodes - 1) / strata;
    const int64_t hi = 1 + (j + 1) * (num_nodes - 1) / strata;  // exclusive
    const int64_t shift = (lo + hi - 1) / 2;
    for (int64_t a = 0; a < num_nodes; ++a) {
      for (int64_t l = 0; l < g; ++l) {
        out.push_back({{nodes[a][l], nodes[(a + shift) % num_nodes][(l + j) % g], 0}, double((hi - lo) * g)});
      }
    }
  }
  return out;
}

void AppendRepresentativeAllToAll(TransferGraph& g, const std::vector<Ranks>& nodes, int64_t bytes) {
  int64_t n = 0;
  for (const Ranks& node : nodes) n += static_cast<int64_t>(node.size());
  for (const RepresentativePath& r : RepresentativeAllToAllPaths(nodes)) {
    const int32_t path = g.Path(r.path.src, r.path.dst, r.path.flow_key);
    g.Add(path, SplitBytes(bytes, n, 0), {});
    g.SetMultiplicity(path, r.multiplicity);
  }
}

void MarkRepresentative(TransferGraph& g, size_t first, double multiplicity) {
  for (size_t p = first; p < g.paths().size(); ++p) g.SetMultiplicity(static_cast<int32_t>(p), multiplicity);
}

}  // namespace hetsim::sim
