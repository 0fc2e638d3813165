#include "sim/collectives/execution.h"

#include <cmath>
#include <limits>
#include <utility>

#include "base/status_macros.h"
#include "base/units.h"
#include "base/wall_limit.h"
#include "sim/collectives/nccl_model.h"
#include "sim/collectives/representative.h"

namespace hetsim::collectives {
namespace {

// The weight of hop `h` of a route with per-hop `weights` (empty: every hop 1).
double WeightAt(std::span<const double> weights, size_t h) { return weights.empty() ? 1.0 : weights[h]; }

// OnEvent payload of the launch latency's end (transfer indices are int32).
constexpr uint64_t kLaunchDone = std::numeric_limits<uint64_t>::max();
// OnEvent payloads of timed transfers (TransferGraph::SetTimed): pricing those whose bytes start at
// this instant; one's bytes starting after its route's latency, and ending (bits above the index).
constexpr uint64_t kPriceTimed = std::numeric_limits<uint64_t>::max() - 1;
constexpr uint64_t kTimedEnd = uint64_t{1} << 32;
constexpr uint64_t kTimedBytes = uint64_t{1} << 33;

Time SaturatingMultiply(int64_t times, Time t) { return t > 0 && times > kTimeMax / t ? kTimeMax : times * t; }

// A flow's tag (FlowTag): its transfer in the low 32 bits; above them its first successor + 1 (0: none),
// and kMoreSuccessors when it has more than one.
constexpr uint64_t kMoreSuccessors = uint64_t{1} << 63;
constexpr uint64_t kTransferBits = (uint64_t{1} << 32) - 1;
TransferIndex TransferOfTag(uint64_t tag) { return static_cast<TransferIndex>(tag & kTransferBits); }
// The first successor named by a tag, or kNoTransfer.
TransferIndex FirstSuccessorOfTag(uint64_t tag) {
  return static_cast<TransferIndex>(((tag & ~kMoreSuccessors) >> 32)) - 1;
}

}  // namespace

CollectiveExecution::CollectiveExecution(network::Network* network, topology::Router* router,
                                         const TransferGraph* graph, std::function<void(Time)> on_done,
                                         RoutedPathsCache* cache)
    : network_(network), router_(router), graph_(graph), on_done_(std::move(on_done)), cache_(cache) {}

absl::Status CollectiveExecution::RoutePaths(RoutedPaths& paths) const {
  const topology::Topology& topology = router_->topology();
  paths.routes.reserve(graph_->paths().size());
  paths.route_latency.reserve(graph_->paths().size());
  for (const TransferPath& p : graph_->paths()) {
    if (WallLimitPassed()) return CurrentWallLimit().Check("routing a collective's transfers");
    auto route = router_->GpuRoute(p.src, p.dst, p.flow_key);
    if (!route.ok()) return route.status();
    paths.routes.emplace_back((*route)->data(), (*route)->size());
    Time latency = 0;
    for (LinkId l : paths.routes.back()) latency += network_->link(l).latency;
    paths.route_latency.push_back(latency);
    paths.step_latency.push_back(graph_->nccl() ? RouteStepLatency(topology, paths.routes.back(), graph_->protocol())
                                                : 0);
  }
  // Representatives run on their classes' canonical links; latencies stay the physical route's.
  paths.representative = RouteRepresentatives(topology, paths.routes, graph_->multiplicities(), graph_->group());
  paths.summaries.reserve(paths.routes.size());
  for (size_t p = 0; p < paths.routes.size(); ++p) {
    if (paths.representative.is_representative(p)) paths.routes[p] = paths.representative.route(p);
    paths.summaries.push_back(network_->SummarizeRoute(paths.routes[p]));
  }
  return absl::OkStatus();
}

absl::Status CollectiveExecution::Start(engine::Simulator* simulator) {
  simulator_ = simulator;
  wire_bytes_per_byte_ =
      graph_->nccl() ? graph_->channel_cap_factor() / ProtocolBandwidthFraction(graph_->protocol()) : 1.0;
  if (cache_ == nullptr) {
    own_paths_ = RoutedPaths{};
    HETSIM_RETURN_IF_ERROR(RoutePaths(own_paths_));
    paths_ = &own_paths_;
  } else {
    std::unique_ptr<RoutedPaths>& entry = cache_->entries()[graph_];
    if (entry == nullptr) {
      auto paths = std::make_unique<RoutedPaths>();
      HETSIM_RETURN_IF_ERROR(RoutePaths(*paths));
      entry = std::move(paths);
    } else if (!entry->summaries.empty() &&
               entry->summaries.front().capacities_version != network_->capacities_version()) {
      // A capacity changed since they were summarized (faults): as StartFlow would, once per path.
      for (size_t p = 0; p < entry->routes.size(); ++p)
        entry->summaries[p] = network_->SummarizeRoute(entry->routes[p]);
    }
    paths_ = entry.get();
  }
  graph_->BuildSuccessors();
  const auto n = static_cast<TransferIndex>(graph_->size());
  // Per-link and per-transfer state of timed transfers, only for a graph that has some: executions
  // start by the thousand in an iteration, on networks of a hundred thousand links.
  const size_t timed_links = graph_->has_timed() ? network_->num_links() : 0;
  const size_t timed_transfers = graph_->has_timed() ? static_cast<size_t>(n) : 0;
  timed_load_.assign(timed_links, 0);
  timed_weight_.assign(timed_links, 0);
  pending_weight_.assign(timed_links, 0);
  timed_rate_.assign(timed_transfers, 0);
  timed_as_flow_.assign(timed_transfers, 0);
  pending_timed_.clear();
  pending_.resize(n);
  for (TransferIndex t = 0; t < n; ++t) pending_[t] = graph_->num_deps(t);
  remaining_ = n;
  started_ = true;
  start_time_ = finish_time_ = simulator->now();
  if (n == 0) {
    if (on_done_) on_done_(finish_time_);
    return absl::OkStatus();
  }
  if (graph_->nccl() && graph_->launch_latency() > 0) {
    simulator->ScheduleAfter(graph_->launch_latency(), this, kLaunchDone);
    return absl::OkStatus();
  }
  LaunchRoots();
  return absl::OkStatus();
}

void CollectiveExecution::LaunchRoots() {
  const auto n = static_cast<TransferIndex>(graph_->size());
  size_t roots = 0;
  for (TransferIndex t = 0; t < n; ++t) roots += graph_->num_deps(t) == 0 ? 1 : 0;
  network_->ReserveFlows(roots);
  for (TransferIndex t = 0; t < n; ++t) {
    if (graph_->num_deps(t) == 0) Launch(t);
  }
}

void CollectiveExecution::Launch(TransferIndex t) {
  const int32_t path = graph_->path_of(t);
  if (path == kNoPath) {  // a join: nothing to move
    Finish(t);
    return;
  }
  const int32_t repeats = graph_->latency_repeats(t);
  // Saturating (repeats - 1) x latency + repeats x step latency: an absurd latency ends at kTimeMax
  // instead of wrapping.
  const Time wire = SaturatingMultiply(repeats - 1, paths_->route_latency[path]);
  const Time step = SaturatingMultiply(repeats, paths_->step_latency[path]);
  const Time extra = wire > kTimeMax - step ? kTimeMax : wire + step;
  if (extra > 0) {
    // Its flow starts a few dozen events later, reading its route's link ids and summary: asked for
    // now, they arrive meanwhile (the routes are the router's vectors, scattered over the heap, and
    // were a miss per flow there).
    __builtin_prefetch(paths_->routes[path].data());
    __builtin_prefetch(&paths_->summaries[path]);
    // And its successor list, which its tag names (FlowTag); its offset was asked for with this record.
    graph_->PrefetchSuccessorList(t);
    simulator_->ScheduleAfter(extra, this, static_cast<uint64_t>(t));
    return;
  }
  StartFlow(t);
}

void CollectiveExecution::OnEvent(uint64_t payload) {
  if (payload == kLaunchDone) {
    LaunchRoots();
    return;
  }
  if (payload == kPriceTimed) {
    PriceTimed();
    return;
  }
  if ((payload & kTimedBytes) != 0) {
    // Priced once every transfer whose bytes start at this instant is known, so that they share fairly.
    if (pending_timed_.empty()) simulator_->Schedule(simulator_->now(), this, kPriceTimed);
    pending_timed_.push_back(static_cast<TransferIndex>(payload & (kTimedEnd - 1)));
    return;
  }
  if ((payload & kTimedEnd) != 0) {
    const auto t = static_cast<TransferIndex>(payload & (kTimedEnd - 1));
    HoldTimed(t, -1);
    Finish(t);
    return;
  }
  StartFlow(static_cast<TransferIndex>(payload));
}

int64_t CollectiveExecution::WireBytes(TransferIndex t) const {
  const int64_t bytes = graph_->bytes_of(t);
  return wire_bytes_per_byte_ == 1.0
             ? bytes
             : static_cast<int64_t>(std::ceil(static_cast<double>(bytes) * wire_bytes_per_byte_));
}

void CollectiveExecution::StartFlow(TransferIndex t) {
  const int64_t bytes = WireBytes(t);
  const int32_t path = graph_->path_of(t);
  if (graph_->timed(t) && !timed_as_flow_[t]) {  // timed_as_flow_ is sized whenever a transfer is timed
    // Its bytes start after the route's latency, as a flow's would.
    simulator_->ScheduleAfter(paths_->route_latency[path], this, static_cast<uint64_t>(t) | kTimedBytes);
    return;
  }
  ++flows_;
  if (paths_->representative.is_representative(path)) {
    network_->StartWeightedFlow(paths_->routes[path], paths_->representative.route_weights(path), bytes, this,
                                FlowTag(t));
    return;
  }
  network_->StartFlow(paths_->routes[path], paths_->summaries[path], bytes, this, FlowTag(t));
}

// Transfer `t` with its first successor and whether it has more: the flow's end then asks for the
// successor's records without reading the successor list first (two dependent misses per flow on a
// large run, whose graphs are hundreds of MB), and a transfer with one successor (a ring's next step)
// launches it without reading the list at all. The list is read here instead, at the start, where
// Launch asked for it a few dozen events earlier.
uint64_t CollectiveExecution::FlowTag(TransferIndex t) const {
  const std::span<const TransferIndex> successors = graph_->successors(t);
  if (successors.empty()) return static_cast<uint64_t>(t);
  const uint64_t first = static_cast<uint64_t>(successors.front()) + 1;
  return static_cast<uint64_t>(t) | (first << 32) | (successors.size() > 1 ? kMoreSuccessors : 0);
}

std::span<const double> CollectiveExecution::WeightsOf(int32_t path) const {
  return paths_->representative.is_representative(path) ? paths_->representative.route_weights(path)
                                                        : std::span<const double>{};
}

// The timed transfers starting at this instant, together: each at a rate per unit of its weight that
// on each link is the larger of its share of the capacity the flows and the held timed transfers
// leave, and a fair share of the capacity among all of them; the smallest over its route, at most its
// tightest link's capacity (contention-free: that capacity). A rate of 0 (a link down) makes it a
// flow, which waits for the link.
void CollectiveExecution::PriceTimed() {
  if (!network_->rates_settled()) {  // after the network's recompute of this instant
    simulator_->Schedule(simulator_->now(), this, kPriceTimed);
    return;
  }
  std::vector<TransferIndex> pending;
  pending.swap(pending_timed_);
  const bool contention_free = network_->mode() == network::NetworkMode::kContentionFree;
  for (TransferIndex t : pending) {
    const int32_t path = graph_->path_of(t);
    const std::span<const double> weights = WeightsOf(path);
    for (size_t h = 0; h < paths_->routes[path].size(); ++h)
      pending_weight_[paths_->routes[path][h].value()] += WeightAt(weights, h);
  }
  std::vector<double> rates;
  for (TransferIndex t : pending) {
    const int32_t path = graph_->path_of(t);
    double cap = std::numeric_limits<double>::infinity(), rate = cap;
    for (LinkId l : paths_->routes[path]) {
      const double capacity = network_->link(l).capacity.bytes_per_second();
      cap = std::min(cap, capacity);
      if (contention_free) continue;
      const network::Network::LinkUse use = network_->link_use(l);
      const double left = capacity - use.bytes_per_s - timed_load_[l.value()];
      const double others = use.weight + timed_weight_[l.value()];
      rate =
          std::min(rate, std::max(left / pending_weight_[l.value()], capacity / (others + pending_weight_[l.value()])));
    }
    rates.push_back(paths_->routes[path].empty() ? 0 : std::min(rate, cap));
  }
  for (TransferIndex t : pending) {
    for (LinkId l : paths_->routes[graph_->path_of(t)]) pending_weight_[l.value()] = 0;
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    const TransferIndex t = pending[i];
    if (!(rates[i] > 0)) {  // a link down: a flow, which waits for it (and pays the latency again)
      timed_as_flow_[t] = 1;
      StartFlow(t);
      continue;
    }
    timed_rate_[t] = rates[i];
    HoldTimed(t, +1);
    simulator_->ScheduleAfter(TransferTime(Bytes(static_cast<double>(WireBytes(t))), Bandwidth(rates[i])), this,
                              static_cast<uint64_t>(t) | kTimedEnd);
  }
}

// Adds (sign +1) or takes back (-1) timed transfer `t`'s hold of timed_rate_[t] on its links.
void CollectiveExecution::HoldTimed(TransferIndex t, double sign) {
  const int32_t path = graph_->path_of(t);
  const std::span<const LinkId> route = paths_->routes[path];
  const std::span<const double> weights = WeightsOf(path);
  for (size_t h = 0; h < route.size(); ++h) {
    const double w = WeightAt(weights, h);
    timed_load_[route[h].value()] = std::max(0.0, timed_load_[route[h].value()] + sign * timed_rate_[t] * w);
    timed_weight_[route[h].value()] = std::max(0.0, timed_weight_[route[h].value()] + sign * w);
  }
}

void CollectiveExecution::OnFlowCompleted(network::FlowId, uint64_t tag) {
  const TransferIndex s = FirstSuccessorOfTag(tag);
  if (s == kNoTransfer || (tag & kMoreSuccessors) != 0) {
    Finish(TransferOfTag(tag));
    return;
  }
  // Finish with its one successor, known from the tag.
  if (--pending_[s] == 0) Launch(s);
  TransferDone();
}

// OnFlowCompleted reads the first successor's dependency count, and Launch its record and its offset
// in the successor lists: asked for here, from the tag, while the network still updates the flow's
// links.
void CollectiveExecution::PrefetchCompletion(uint64_t tag) const {
  const TransferIndex s = FirstSuccessorOfTag(tag);
  if (s == kNoTransfer) return;
  __builtin_prefetch(&pending_[s], 1);
  // Launched when its count reaches zero (a ring's next step: most successors have one dependency).
  graph_->PrefetchTransfer(s);
  graph_->PrefetchSuccessorRange(s);
}

void CollectiveExecution::Finish(TransferIndex t) {
  for (TransferIndex s : graph_->successors(t)) {
    if (--pending_[s] == 0) Launch(s);
  }
  TransferDone();
}

void CollectiveExecution::TransferDone() {
  if (--remaining_ == 0) {
    finish_time_ = simulator_->now();
    if (on_done_) on_done_(finish_time_);
  }
}

}  // namespace hetsim::collectives
