#include "sim/collectives/estimate.h"

#include <algorithm>

#include "base/wall_limit.h"
#include "sim/collectives/nccl_model.h"
#include "sim/collectives/representative.h"

namespace hetsim::collectives {

double RingAllReduceSeconds(int64_t n, double bytes, double bytes_per_s, double latency_s) {
  if (n < 2) return 0;
  return 2.0 * (n - 1) * (bytes / n / bytes_per_s + latency_s);
}

double RingAllGatherSeconds(int64_t n, double bytes, double bytes_per_s, double latency_s) {
  if (n < 2) return 0;
  return (n - 1) * (bytes / n / bytes_per_s + latency_s);
}

double HierarchicalAllReduceSeconds(int64_t g, int64_t nodes, double bytes, double intra_bytes_per_s,
                                    double intra_latency_s, double inter_bytes_per_s, double inter_latency_s) {
  return 2 * RingAllGatherSeconds(g, bytes, intra_bytes_per_s, intra_latency_s) +
         RingAllReduceSeconds(nodes, bytes / g, inter_bytes_per_s, inter_latency_s);
}

double CollNetPipelineSeconds(int32_t chunks, double rs_chunk_s, double net_chunk_s) {
  double nvlink = 0, nics = 0;  // when each is next free
  double reduced_before = 0;    // when the previous chunk's sum was ready
  for (int32_t c = 0; c < chunks; ++c) {
    nvlink += rs_chunk_s;  // RS c
    nics = std::max(nics, nvlink) + net_chunk_s;
    if (c > 0) nvlink = std::max(nvlink, reduced_before) + rs_chunk_s;  // AG c-1
    reduced_before = nics;
  }
  return std::max(nvlink, reduced_before) + rs_chunk_s;  // AG C-1
}

double CollNetAllReduceSeconds(int64_t g, double bytes, double intra_bytes_per_s, double intra_latency_s,
                               double nic_bytes_per_s, double net_latency_s, int32_t chunks) {
  const double chunk = bytes / chunks;
  const double scatter = g < 2 ? 0.0 : intra_latency_s + (g - 1) * chunk / g / intra_bytes_per_s;
  return CollNetPipelineSeconds(chunks, scatter, net_latency_s + chunk / g / nic_bytes_per_s);
}

double TwoStagePipelineSeconds(int32_t chunks, double first_chunk_s, double second_chunk_s) {
  return first_chunk_s + second_chunk_s + (chunks - 1) * std::max(first_chunk_s, second_chunk_s);
}

double CollNetShardBytes(double bytes, int64_t g, int64_t nodes) {
  return bytes / g * static_cast<double>(nodes - 1) / static_cast<double>(nodes);
}

double CollNetAllGatherSeconds(int64_t g, int64_t nodes, double bytes, double intra_bytes_per_s, double intra_latency_s,
                               double nic_bytes_per_s, double net_latency_s, int32_t chunks) {
  const double chunk = bytes / chunks;
  const double nvlink = g < 2 ? 0.0 : intra_latency_s + (g - 1) * chunk / g / intra_bytes_per_s;
  return TwoStagePipelineSeconds(chunks, nvlink, net_latency_s + CollNetShardBytes(chunk, g, nodes) / nic_bytes_per_s);
}

double TreeAllReduceSeconds(int64_t n, double bytes, double bytes_per_s, double latency_s, int32_t chunks) {
  if (n < 2) return 0;
  int32_t depth = 0;
  while ((int64_t{1} << depth) < n) ++depth;  // NCCL's trees are ceil(log2 n) deep (the root has one child)
  return 2.0 * (chunks + depth - 1) * (latency_s + bytes / chunks / bytes_per_s);
}

double ChainBroadcastSeconds(int64_t n, double bytes, double bytes_per_s, double latency_s, int32_t chunks) {
  if (n < 2) return 0;
  return (n - 1 + chunks - 1) * (latency_s + bytes / chunks / bytes_per_s);
}

double DirectAllToAllSeconds(int64_t n, double bytes, double bytes_per_s, double latency_s) {
  if (n < 2) return 0;
  return latency_s + (n - 1) * bytes / n / bytes_per_s;
}

namespace {

// Routes every transfer and prices it on the links without a protocol: the links' latency, and the
// most loaded link's load / capacity (representatives on their classes' canonical links).
absl::Status LinkCosts(topology::Router& router, const std::vector<TransferPath>& paths,
                       std::span<const double> multiplicity, std::span<const GpuId> group,
                       std::vector<const topology::Route*>& routes, std::vector<PathCost>& costs) {
  const topology::Topology& topology = router.topology();
  const auto& links = topology.links();
  std::vector<std::span<const LinkId>> spans;
  routes.reserve(paths.size());
  spans.reserve(paths.size());
  for (const TransferPath& p : paths) {
    // A group of 800,000 ranks routes for minutes: the command's --max-wall-seconds holds here too.
    if (WallLimitPassed()) return CurrentWallLimit().Check("pricing a collective's routes");
    auto r = router.GpuRoute(p.src, p.dst, p.flow_key);
    if (!r.ok()) return r.status();
    routes.push_back(*r);
    spans.emplace_back((*r)->data(), (*r)->size());
  }
  // Representatives load their classes' canonical links (representative.h).
  const RepresentativeRoutes rep = RouteRepresentatives(topology, spans, multiplicity, group);
  std::vector<double> load(links.size(), 0);
  for (size_t p = 0; p < spans.size(); ++p) {
    if (!rep.is_representative(p)) {
      for (LinkId l : spans[p]) load[l.value()] += 1.0;
      continue;
    }
    spans[p] = rep.route(p);
    for (size_t h = 0; h < spans[p].size(); ++h) load[spans[p][h].value()] += rep.route_weights(p)[h];
  }
  costs.reserve(paths.size());
  for (size_t p = 0; p < routes.size(); ++p) {
    PathCost c{0, 0};
    for (LinkId l : *routes[p]) c.latency_s += TimeToSeconds(links[l.value()].latency);
    for (LinkId l : spans[p])
      c.seconds_per_byte =
          std::max(c.seconds_per_byte, load[l.value()] / links[l.value()].bandwidth.bytes_per_second());
    costs.push_back(c);
  }
  return absl::OkStatus();
}

// The link costs under NCCL protocol `protocol`: its step latency on every route, its wire bytes.
std::vector<PathCost> WithProtocol(const topology::Topology& topology,
                                   const std::vector<const topology::Route*>& routes, std::vector<PathCost> costs,
                                   topology::NcclProtocol protocol) {
  if (!topology.nccl_model()) return costs;
  const double wire_per_byte = 1.0 / ProtocolBandwidthFraction(protocol);
  for (size_t p = 0; p < routes.size(); ++p) {
    costs[p].latency_s += hetsim::TimeToSeconds(RouteStepLatency(topology, *routes[p], protocol));
    costs[p].seconds_per_byte *= wire_per_byte;
  }
  return costs;
}

}  // namespace

absl::StatusOr<std::vector<PathCost>> ConcurrentCosts(topology::Router& router, const std::vector<TransferPath>& paths,
                                                      topology::NcclProtocol protocol,
                                                      std::span<const double> multiplicity,
                                                      std::span<const GpuId> group) {
  std::vector<const topology::Route*> routes;
  std::vector<PathCost> costs;
  if (absl::Status s = LinkCosts(router, paths, multiplicity, group, routes, costs); !s.ok()) return s;
  return WithProtocol(router.topology(), routes, std::move(costs), protocol);
}

absl::StatusOr<std::vector<PathCost>> ConcurrentCostCache::Costs(topology::Router& router,
                                                                 const std::vector<TransferPath>& paths,
                                                                 topology::NcclProtocol protocol,
                                                                 std::span<const double> multiplicity,
                                                                 std::span<const GpuId> group) {
  for (const Entry& e : entries_) {
    if (e.paths == paths && std::ranges::equal(e.multiplicity, multiplicity) && std::ranges::equal(e.group, group)) {
      return WithProtocol(router.topology(), e.routes, e.costs, protocol);
    }
  }
  Entry e{paths, {multiplicity.begin(), multiplicity.end()}, {group.begin(), group.end()}, {}, {}};
  if (absl::Status s = LinkCosts(router, paths, multiplicity, group, e.routes, e.costs); !s.ok()) return s;
  entries_.push_back(std::move(e));
  return WithProtocol(router.topology(), entries_.back().routes, entries_.back().costs, protocol);
}

double StepSeconds(const std::vector<PathCost>& costs, double bytes) {
  double t = 0;
  for (const PathCost& c : costs) t = std::max(t, c.latency_s + bytes * c.seconds_per_byte);
  return t;
}

}  // namespace hetsim::collectives
