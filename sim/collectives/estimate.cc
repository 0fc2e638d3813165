#include "sim/collectives/estimate.h"

#include <algorithm>
#include <cmath>

#include "base/wall_limit.h"
#include "sim/collectives/nccl_model.h"
#include "sim/collectives/representative.h"

namespace hetsim::collectives {

// Each closed form reads its typed arguments into the doubles of its formula once, at the top, and
// computes exactly what it computed on raw numbers.

Seconds RingAllReduceSeconds(int64_t n, Bytes s, Bandwidth rate, Seconds latency) {
  if (n < 2) return Seconds(0);
  const double bytes = s.value(), bytes_per_s = rate.bytes_per_second(), latency_s = latency.value();
  return Seconds(2.0 * (n - 1) * (bytes / n / bytes_per_s + latency_s));
}

Seconds RingAllGatherSeconds(int64_t n, Bytes s, Bandwidth rate, Seconds latency) {
  if (n < 2) return Seconds(0);
  const double bytes = s.value(), bytes_per_s = rate.bytes_per_second(), latency_s = latency.value();
  return Seconds((n - 1) * (bytes / n / bytes_per_s + latency_s));
}

Seconds HierarchicalAllReduceSeconds(int64_t g, int64_t nodes, Bytes bytes, Bandwidth intra_rate, Seconds intra_latency,
                                     Bandwidth inter_rate, Seconds inter_latency) {
  return Seconds(2 * RingAllGatherSeconds(g, bytes, intra_rate, intra_latency).value() +
                 RingAllReduceSeconds(nodes, Bytes(bytes.value() / g), inter_rate, inter_latency).value());
}

Seconds CollNetPipelineSeconds(int32_t chunks, Seconds rs_chunk, Seconds net_chunk) {
  const double rs_chunk_s = rs_chunk.value(), net_chunk_s = net_chunk.value();
  double nvlink = 0, nics = 0;  // when each is next free
  double reduced_before = 0;    // when the previous chunk's sum was ready
  for (int32_t c = 0; c < chunks; ++c) {
    nvlink += rs_chunk_s;  // RS c
    nics = std::max(nics, nvlink) + net_chunk_s;
    if (c > 0) nvlink = std::max(nvlink, reduced_before) + rs_chunk_s;  // AG c-1
    reduced_before = nics;
  }
  return Seconds(std::max(nvlink, reduced_before) + rs_chunk_s);  // AG C-1
}

Seconds CollNetAllReduceSeconds(int64_t g, Bytes bytes, Bandwidth intra_rate, Seconds intra_latency, Bandwidth nic_rate,
                                Seconds net_latency, int32_t chunks) {
  const double chunk = bytes.value() / chunks;
  const double scatter = g < 2 ? 0.0 : intra_latency.value() + (g - 1) * chunk / g / intra_rate.bytes_per_second();
  return CollNetPipelineSeconds(chunks, Seconds(scatter),
                                Seconds(net_latency.value() + chunk / g / nic_rate.bytes_per_second()));
}

Seconds TwoStagePipelineSeconds(int32_t chunks, Seconds first_chunk, Seconds second_chunk) {
  const double first_chunk_s = first_chunk.value(), second_chunk_s = second_chunk.value();
  return Seconds(first_chunk_s + second_chunk_s + (chunks - 1) * std::max(first_chunk_s, second_chunk_s));
}

Seconds NvlsTreePipelineSeconds(int32_t chunks, int32_t depth, Seconds nvls_chunk, Seconds tree_step) {
  const double nvls = nvls_chunk.value(), step = tree_step.value();
  return Seconds(std::max(chunks * nvls + 2.0 * depth * step, nvls + 2.0 * (chunks + depth - 1) * step));
}

Seconds NvlsTreeAllReduceSeconds(int64_t g, int64_t nodes, Bytes bytes, Bandwidth nvls_rate, Seconds intra_latency,
                                 Bandwidth nic_rate, Seconds net_latency, int32_t chunks) {
  int32_t depth = 0;
  while ((int64_t{1} << depth) < nodes) ++depth;
  const double chunk = bytes.value() / chunks;
  const double nvls = intra_latency.value() + chunk * static_cast<double>(g + 1) / g / nvls_rate.bytes_per_second();
  return NvlsTreePipelineSeconds(chunks, depth, Seconds(nvls),
                                 Seconds(net_latency.value() + chunk / g / nic_rate.bytes_per_second()));
}

Seconds CollNetChainAllReduceSeconds(int64_t g, int32_t channels, Bytes bytes, Bandwidth intra_rate,
                                     Seconds intra_latency, Bandwidth nic_rate, Seconds net_latency, int32_t chunks) {
  const double piece = bytes.value() / channels / chunks;
  const double rate = intra_rate.bytes_per_second(), links = static_cast<double>(g - 1);
  const double hop = g < 2 ? 0.0 : intra_latency.value() + piece / rate;
  const double chain = g < 2 ? 0.0 : intra_latency.value() + 2 * links * piece * channels / g / rate;
  const double net = net_latency.value() + piece / nic_rate.bytes_per_second();
  return Seconds(2.0 * links * hop + net + (chunks - 1) * std::max(chain, net));
}

Bytes CollNetShardBytes(Bytes bytes, int64_t g, int64_t nodes) {
  return Bytes(bytes.value() / g * static_cast<double>(nodes - 1) / static_cast<double>(nodes));
}

Seconds CollNetAllGatherSeconds(int64_t g, int64_t nodes, Bytes bytes, Bandwidth intra_rate, Seconds intra_latency,
                                Bandwidth nic_rate, Seconds net_latency, int32_t chunks) {
  const double chunk = bytes.value() / chunks;
  const double nvlink = g < 2 ? 0.0 : intra_latency.value() + (g - 1) * chunk / g / intra_rate.bytes_per_second();
  return TwoStagePipelineSeconds(
      chunks, Seconds(nvlink),
      Seconds(net_latency.value() + CollNetShardBytes(Bytes(chunk), g, nodes).value() / nic_rate.bytes_per_second()));
}

Seconds TreeAllReduceSeconds(int64_t n, Bytes s, Bandwidth rate, Seconds latency, int32_t chunks) {
  if (n < 2) return Seconds(0);
  int32_t depth = 0;
  while ((int64_t{1} << depth) < n) ++depth;  // NCCL's trees are ceil(log2 n) deep (the root has one child)
  const double bytes = s.value(), bytes_per_s = rate.bytes_per_second(), latency_s = latency.value();
  return Seconds(2.0 * (chunks + depth - 1) * (latency_s + bytes / chunks / bytes_per_s));
}

Seconds ChainBroadcastSeconds(int64_t n, Bytes s, Bandwidth rate, Seconds latency, int32_t chunks) {
  if (n < 2) return Seconds(0);
  const double bytes = s.value(), bytes_per_s = rate.bytes_per_second(), latency_s = latency.value();
  return Seconds((n - 1 + chunks - 1) * (latency_s + bytes / chunks / bytes_per_s));
}

Seconds DirectAllToAllSeconds(int64_t n, Bytes s, Bandwidth rate, Seconds latency) {
  if (n < 2) return Seconds(0);
  const double bytes = s.value(), bytes_per_s = rate.bytes_per_second(), latency_s = latency.value();
  return Seconds(latency_s + (n - 1) * bytes / n / bytes_per_s);
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
  router.ReserveRoutes(paths.size());
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
    PathCost c;
    for (LinkId l : *routes[p]) c.latency += TimeAsSeconds(links[l.value()].latency);
    for (LinkId l : spans[p])
      c.seconds_per_byte =
          std::max(c.seconds_per_byte, SecondsPerByte(load[l.value()] / links[l.value()].bandwidth.bytes_per_second()));
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
    costs[p].latency += TimeAsSeconds(RouteStepLatency(topology, *routes[p], protocol));
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

Seconds StepSeconds(const std::vector<PathCost>& costs, Bytes bytes) {
  Seconds t;
  for (const PathCost& c : costs) t = std::max(t, c.latency + bytes * c.seconds_per_byte);
  return t;
}

std::vector<PathCost> StepFrontier(std::vector<PathCost> costs) {
  if (costs.size() < 2) return costs;
  auto dominates = [](const PathCost& a, const PathCost& b) {
    return a.latency.value() >= b.latency.value() && a.seconds_per_byte.value() >= b.seconds_per_byte.value();
  };
  // Most sets are a few classes of equal routes: drop what the slowest per byte or the slowest to start
  // dominates in one pass, then sort the few left.
  PathCost by_rate = costs.front(), by_latency = costs.front();
  for (const PathCost& c : costs) {
    if (std::isnan(c.latency.value()) || std::isnan(c.seconds_per_byte.value())) return costs;
    const double rate = c.seconds_per_byte.value(), latency = c.latency.value();
    if (rate > by_rate.seconds_per_byte.value() ||
        (rate == by_rate.seconds_per_byte.value() && latency > by_rate.latency.value())) {
      by_rate = c;
    }
    if (latency > by_latency.latency.value() ||
        (latency == by_latency.latency.value() && rate > by_latency.seconds_per_byte.value())) {
      by_latency = c;
    }
  }
  std::vector<PathCost> rest{by_rate, by_latency};
  for (const PathCost& c : costs) {
    if (!dominates(by_rate, c) && !dominates(by_latency, c)) rest.push_back(c);
  }
  std::sort(rest.begin(), rest.end(), [](const PathCost& a, const PathCost& b) {
    if (a.latency.value() != b.latency.value()) return a.latency.value() > b.latency.value();
    return a.seconds_per_byte.value() > b.seconds_per_byte.value();
  });
  std::vector<PathCost> front;  // latencies falling, so a cost stays if it is slower per byte than all kept
  for (const PathCost& c : rest) {
    if (front.empty() || c.seconds_per_byte.value() > front.back().seconds_per_byte.value()) front.push_back(c);
  }
  return front;
}

}  // namespace hetsim::collectives
