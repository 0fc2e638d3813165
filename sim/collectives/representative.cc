#include "sim/collectives/representative.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "topology/ecmp_collisions.h"

namespace hetsim::collectives {
namespace {

using topology::DeviceKind;

bool InsideNode(DeviceKind kind) {
  return kind == DeviceKind::kGpu || kind == DeviceKind::kNvSwitch || kind == DeviceKind::kPcieSwitch ||
         kind == DeviceKind::kNic || kind == DeviceKind::kCpu || kind == DeviceKind::kHostMemory;
}

// Fabric tiers, bottom up: where a link's ECMP choice is made (up) or its flows converge (down).
int Tier(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kSpineSwitch:
    case DeviceKind::kPodSwitch: return 2;
    case DeviceKind::kAggSwitch: return 3;
    case DeviceKind::kGateway: return 4;
    case DeviceKind::kIslandSwitch:
    case DeviceKind::kLeafSwitch:
    case DeviceKind::kRailSwitch:
    case DeviceKind::kTorSwitch: return 1;
    case DeviceKind::kGpu:  // inside a node: the tier of the node's own links
    case DeviceKind::kNvSwitch:
    case DeviceKind::kPcieSwitch:
    case DeviceKind::kCpu:
    case DeviceKind::kHostMemory:
    case DeviceKind::kNic: return 1;
  }
  return 1;
}

// Links the symmetry maps onto one another: kinds and islands of both ends and the capacity; the node
// of a link that touches one; in the fabric, the lower switch of the link (a switch's uplinks are one
// ECMP choice, the links down into a switch one convergence). Packed: kinds and islands, node and
// switch (one of them -1), capacity bits.
using ClassKey = std::tuple<uint64_t, uint64_t, uint64_t>;

ClassKey KeyOf(const topology::Topology& topology, LinkId id) {
  const topology::Link& link = topology.link(id);
  const topology::Device& a = topology.device(link.src);
  const topology::Device& b = topology.device(link.dst);
  const int64_t node = InsideNode(a.kind) ? a.node : InsideNode(b.kind) ? b.node : -1;
  const int64_t pivot = node >= 0 ? -1 : Tier(b.kind) < Tier(a.kind) ? link.dst.value() : link.src.value();
  const uint64_t ends = static_cast<uint64_t>(a.kind) | static_cast<uint64_t>(b.kind) << 8 |
                        static_cast<uint64_t>(static_cast<uint32_t>(a.island)) << 16 |
                        static_cast<uint64_t>(static_cast<uint32_t>(b.island)) << 40;
  return {ends, static_cast<uint64_t>(node + 1) << 32 | static_cast<uint64_t>(pivot + 1),
          std::bit_cast<uint64_t>(link.bandwidth.bytes_per_second())};
}
bool InFabric(const ClassKey& key) { return (std::get<1>(key) >> 32) == 0; }

struct LinkClass {
  double load = 0;                       // representative multiplicity crossing the class's links
  int64_t links = 0;                     // links in the class
  LinkId canonical = topology::kNoLink;  // the class's lowest link id: where its representatives meet
  double busiest = 0;                    // the full collective's load on the class's busiest link
  bool hashed = false;                   // a fabric switch's links (ECMP)
};

// What the full collective puts on the busiest link of each class: a node's links share the rotated
// parts evenly; a fabric switch's links take them as ECMP hashes them, and the collective waits for
// the busiest link of all the switches that see the same number of parts: the expected maximum of
// balls into bins over those groups (topology/ecmp_collisions.h).
void SetBusiest(std::vector<LinkClass>& classes) {
  using Shape = std::pair<int64_t, int64_t>;  // (parts, links) of a fabric class
  auto shape_of = [](const LinkClass& c) { return Shape{std::llround(c.load), c.links}; };
  absl::flat_hash_map<Shape, int> groups;
  for (const LinkClass& c : classes) {
    if (c.hashed) ++groups[shape_of(c)];
  }
  for (LinkClass& c : classes) {
    if (!c.hashed) {
      c.busiest = c.load / static_cast<double>(c.links);
      continue;
    }
    const Shape shape = shape_of(c);
    c.busiest = topology::ExpectedBusiestLoad(shape.first, static_cast<int>(shape.second), groups.at(shape)) * c.load /
                static_cast<double>(std::max<int64_t>(shape.first, 1));
  }
}

// The devices a node's classes rotate over: the group's GPUs and their NICs. A class inside a node
// counts only its links that touch them (or that a representative crosses): a group on 4 of a node's
// 8 GPUs rotates its channels over those 4 ports, not 8.
absl::flat_hash_set<topology::DeviceId> OrbitDevices(const topology::Topology& topology, std::span<const GpuId> group) {
  absl::flat_hash_set<topology::DeviceId> orbit;
  const topology::Graph& graph = topology.graph();
  for (GpuId gpu : group) {
    const topology::DeviceId device = topology.gpu_device(gpu);
    orbit.insert(device);
    for (auto [e, end] = boost::out_edges(device.value(), graph); e != end; ++e) {
      const topology::DeviceId next(static_cast<int32_t>(boost::target(*e, graph)));
      if (topology.device(next).kind == DeviceKind::kNic) orbit.insert(next);
    }
  }
  return orbit;
}

}  // namespace

RepresentativeRoutes RouteRepresentatives(const topology::Topology& topology,
                                          std::span<const std::span<const LinkId>> routes,
                                          std::span<const double> multiplicity, std::span<const GpuId> group) {
  RepresentativeRoutes out;
  if (multiplicity.empty()) return out;
  const size_t num_links = topology.links().size();
  std::vector<double> load(num_links, 0);  // representative multiplicity per link
  std::vector<int32_t> class_of(num_links, -1);
  absl::flat_hash_map<ClassKey, int32_t> index;
  std::vector<LinkClass> classes;
  for (size_t p = 0; p < routes.size(); ++p) {
    if (multiplicity[p] <= 0) continue;
    for (LinkId l : routes[p]) {
      load[l.value()] += multiplicity[p];
      if (class_of[l.value()] >= 0) continue;
      const ClassKey key = KeyOf(topology, l);
      auto [it, inserted] = index.try_emplace(key, static_cast<int32_t>(classes.size()));
      if (inserted) classes.push_back({.hashed = InFabric(key)});
      class_of[l.value()] = it->second;
    }
  }
  for (LinkId l : IdsBelow<LinkId>(num_links)) {
    if (class_of[l.value()] >= 0) continue;
    if (auto it = index.find(KeyOf(topology, l)); it != index.end()) class_of[l.value()] = it->second;
  }
  const absl::flat_hash_set<topology::DeviceId> orbit = OrbitDevices(topology, group);
  for (LinkId l : IdsBelow<LinkId>(num_links)) {
    if (class_of[l.value()] < 0) continue;
    LinkClass& c = classes[class_of[l.value()]];
    const topology::Link& link = topology.link(l);
    if (!c.hashed && load[l.value()] == 0 && !orbit.contains(link.src) && !orbit.contains(link.dst)) continue;
    c.load += load[l.value()];
    if (c.links++ == 0) c.canonical = l;
  }
  for (LinkClass& c : classes) c.hashed = c.hashed && c.links > 1;
  SetBusiest(classes);
  out.begin.reserve(routes.size() + 1);
  for (size_t p = 0; p < routes.size(); ++p) {
    out.begin.push_back(out.links.size());
    if (multiplicity[p] <= 0) continue;
    for (LinkId l : routes[p]) {
      const LinkClass& c = classes[class_of[l.value()]];
      const auto first = out.links.begin() + static_cast<std::ptrdiff_t>(out.begin.back());
      const bool repeated = std::find(first, out.links.end(), c.canonical) != out.links.end();
      out.links.push_back(repeated ? l : c.canonical);              // nested PCIe switches: one class twice on a route
      out.weights.push_back(multiplicity[p] * c.busiest / c.load);  // this part's share of the busiest link
    }
  }
  out.begin.push_back(out.links.size());
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
    for (int64_t a = 0; a < num_nodes; ++a) {
      for (int64_t l = 0; l < g; ++l) {
        // Even and odd GPUs of a node take the stratum's first and third quartile shift (each a
        // permutation of the nodes), so the parts crossing each tier of the fabric keep about their
        // share. Spreading over 4 or 8 shifts was 0.6% / 0.15% closer on the 128-GPU test but 1.5-2x
        // slower (more distinct route latencies, more recomputes; docs/decisions.md).
        const int64_t shift = g > 1 ? lo + (2 * (l % 2) + 1) * (hi - lo) / 4 : (lo + hi - 1) / 2;
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

}  // namespace hetsim::collectives
