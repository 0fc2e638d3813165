#include "sim/collectives/representative.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "base/ecmp_collisions.h"

namespace hetsim::sim {
namespace {

using topology::DeviceKind;

bool InsideNode(DeviceKind kind) {
  return kind == DeviceKind::kGpu || kind == DeviceKind::kNvSwitch || kind == DeviceKind::kPcieSwitch ||
         kind == DeviceKind::kNic;
}

// Fabric tiers, bottom up: where a link's ECMP choice is made (up) or its flows converge (down).
int Tier(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kSpineSwitch:
    case DeviceKind::kPodSwitch: return 2;
    case DeviceKind::kAggSwitch: return 3;
    case DeviceKind::kGateway: return 4;
    default: return 1;  // island, leaf, rail and ToR switches
  }
}

// Links the symmetry maps onto one another: kinds and islands of both ends and the capacity; the node
// of a link that touches one; in the fabric, the lower switch of the link (a switch's uplinks are one
// ECMP choice, the links down into a switch one convergence).
using ClassKey = std::tuple<uint8_t, uint8_t, int32_t, int32_t, int32_t, topology::DeviceId, double>;

ClassKey KeyOf(const topology::Topology& topology, LinkId id) {
  const topology::Link& link = topology.links()[id];
  const topology::Device& a = topology.devices()[link.src];
  const topology::Device& b = topology.devices()[link.dst];
  const int32_t node = InsideNode(a.kind) ? a.node : InsideNode(b.kind) ? b.node : -1;
  const topology::DeviceId pivot = node >= 0 ? -1 : Tier(b.kind) < Tier(a.kind) ? link.dst : link.src;
  return {static_cast<uint8_t>(a.kind), static_cast<uint8_t>(b.kind), a.island, b.island, node, pivot,
          link.bytes_per_second};
}

struct LinkClass {
  double load = 0;                        // representative multiplicity crossing the class's links
  int64_t links = 0;                      // links in the class
  LinkId canonical = topology::kNoLink;   // the class's lowest link id: where its representatives meet
  double busiest = 0;                     // the full collective's load on the class's busiest link
};

// What the full collective puts on the busiest link of each class: a node's links share the rotated
// parts evenly; a fabric switch's links take them as ECMP hashes them, and the collective waits for
// the busiest link of all the switches that see the same number of parts: the expected maximum of
// balls into bins over those groups (base/ecmp_collisions.h).
void SetBusiest(absl::flat_hash_map<ClassKey, LinkClass>& classes) {
  using Shape = std::pair<int64_t, int64_t>;  // (parts, links) of a fabric class
  auto shape_of = [](const LinkClass& c) { return Shape{std::llround(c.load), c.links}; };
  auto hashed = [](const ClassKey& key, const LinkClass& c) { return std::get<4>(key) < 0 && c.links > 1; };
  absl::flat_hash_map<Shape, int> groups;
  for (const auto& [key, c] : classes) {
    if (hashed(key, c)) ++groups[shape_of(c)];
  }
  absl::flat_hash_map<Shape, double> busiest;
  for (const auto& [shape, count] : groups) {
    busiest[shape] = ExpectedBusiestLoad(shape.first, static_cast<int>(shape.second), count);
  }
  for (auto& [key, c] : classes) {
    if (!hashed(key, c)) {
      c.busiest = c.load / static_cast<double>(c.links);
      continue;
    }
    const Shape shape = shape_of(c);
    c.busiest = busiest.at(shape) * c.load / static_cast<double>(std::max<int64_t>(shape.first, 1));
  }
}

}  // namespace

std::vector<RepresentativeRoute> RepresentativeRoutes(const topology::Topology& topology,
                                                      std::span<const std::span<const LinkId>> routes,
                                                      std::span<const double> multiplicity) {
  std::vector<RepresentativeRoute> out(routes.size());
  if (multiplicity.empty()) return out;
  absl::flat_hash_map<LinkId, double> load;  // per link crossed by a representative
  for (size_t p = 0; p < routes.size(); ++p) {
    if (multiplicity[p] <= 0) continue;
    for (LinkId l : routes[p]) load[l] += multiplicity[p];
  }
  absl::flat_hash_map<ClassKey, LinkClass> classes;
  for (const auto& [l, m] : load) classes[KeyOf(topology, l)].load += m;
  for (LinkId l = 0; l < static_cast<LinkId>(topology.links().size()); ++l) {
    auto it = classes.find(KeyOf(topology, l));
    if (it != classes.end() && it->second.links++ == 0) it->second.canonical = l;
  }
  SetBusiest(classes);
  for (size_t p = 0; p < routes.size(); ++p) {
    if (multiplicity[p] <= 0) continue;
    RepresentativeRoute& r = out[p];
    for (LinkId l : routes[p]) {
      const LinkClass& c = classes.at(KeyOf(topology, l));
      // This representative's share of the busiest link's load.
      const double weight = multiplicity[p] * c.busiest / c.load;
      if (std::find(r.links.begin(), r.links.end(), c.canonical) == r.links.end()) {
        r.links.push_back(c.canonical);
      } else {  // two hops of one class (nested PCIe switches): this one keeps its own link
        r.links.push_back(l);
      }
      r.weights.push_back(weight);
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
