#include "sim/network/network.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "base/check.h"

namespace hetsim::network {

const char* NetworkModeName(NetworkMode mode) {
  switch (mode) {
    case NetworkMode::kMaxMinFair: return "max-min-fair";
    case NetworkMode::kContentionFree: return "contention-free";
  }
  return "unknown";
}

absl::StatusOr<NetworkMode> ParseNetworkMode(absl::string_view name) {
  if (name == "max-min") return NetworkMode::kMaxMinFair;  // the short form `hetsim run` documented
  for (NetworkMode mode : {NetworkMode::kMaxMinFair, NetworkMode::kContentionFree}) {
    if (name == NetworkModeName(mode)) return mode;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown network mode \"%s\" (expected \"max-min-fair\", \"max-min\" or \"contention-free\")", name));
}

absl::StatusOr<std::unique_ptr<Network>> Network::Create(engine::Simulator* simulator, std::vector<LinkSpec> links,
                                                         NetworkMode mode) {
  for (size_t i = 0; i < links.size(); ++i) {
    const double capacity = links[i].capacity.bytes_per_second();
    if (!(capacity > 0) || !std::isfinite(capacity)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("links[%d].capacity: must be positive and finite, got %g", i, capacity));
    }
    if (links[i].latency < 0) {
      return absl::InvalidArgumentError(absl::StrFormat("links[%d].latency: must not be negative, got %d ps", i,
                                                        TimeToPicoseconds(links[i].latency)));
    }
  }
  if (links.size() >= kNoFlow) {
    return absl::InvalidArgumentError(absl::StrFormat("links: too many (%d)", links.size()));
  }
  return std::unique_ptr<Network>(new Network(simulator, std::move(links), mode));
}

Network::Network(engine::Simulator* simulator, std::vector<LinkSpec> links, NetworkMode mode)
    : simulator_(simulator), mode_(mode), check_rates_(CheckRatesFromEnvironment()) {
  links_.resize(links.size());
  for (size_t i = 0; i < links.size(); ++i) links_[i].capacity = links[i].capacity.bytes_per_second();
  link_specs_ = std::move(links);
}

Network::~Network() = default;

LinkCounters Network::link_counters(LinkId id) const {
  const Link& link = links_[id.value()];
  LinkCounters counters;
  counters.bytes = link.bytes;
  counters.flows = link.completed_flows;
  counters.busy_time = link.busy_time_less_since + (link.flows.empty() ? 0 : simulator_->now());
  return counters;
}

void Network::ResetLinkCounters(LinkId id) {
  Link& link = links_[id.value()];
  HETSIM_CHECK(link.flows.empty(), "counters reset on link %u, which carries flows", id.value());
  link.bytes = 0;
  link.completed_flows = 0;
  link.busy_time_less_since = 0;
}

uint32_t Network::SlotOf(FlowId flow) const {
  const uint32_t slot = static_cast<uint32_t>(flow);
  const uint32_t generation = static_cast<uint32_t>(flow >> 32);
  if (slot >= flows_.size()) return kNoFlow;
  const Flow& f = flows_[slot];
  if (f.generation != generation || f.state == FlowState::kFree) return kNoFlow;
  return slot;
}

bool Network::IsActive(FlowId flow) const { return SlotOf(flow) != kNoFlow; }

double Network::FlowRate(FlowId flow) const {
  const uint32_t slot = SlotOf(flow);
  if (slot == kNoFlow || flows_[slot].state != FlowState::kTransmitting) return 0;
  return flows_[slot].rate;
}

Network::LinkUse Network::link_use(LinkId id) const {
  LinkUse use;
  const Link& link = links_[id.value()];
  for (const LinkEntry& entry : link.flows) {
    const double w = EntryWeight(link, entry);
    use.bytes_per_s += flows_[entry.flow].rate * w;
    use.weight += w;
  }
  return use;
}

uint32_t Network::AllocateFlow() {
  if (free_flow_ != kNoFlow) {
    const uint32_t slot = free_flow_;
    free_flow_ = flows_[slot].next_free;
    return slot;
  }
  HETSIM_CHECK(flows_.size() < kNoFlow, "too many concurrent flows (%zu)", flows_.size());
  flows_.emplace_back();
  flow_epoch_.push_back(0);
  flow_fixed_.push_back(0);
  flow_rate_.push_back(kNoFloor);
  flow_new_rate_.push_back(0);
  flow_check_epoch_.push_back(0);
  flow_check_result_.push_back(0);
  flow_bottleneck_.push_back(kAtCap);
  flow_cap_.push_back(0);
  flow_position_.push_back(0);
  flow_binding_hops_.push_back(0);
  return static_cast<uint32_t>(flows_.size() - 1);
}

void Network::ReserveFlows(size_t flows) {
  const size_t want = flows_.size() + flows;
  flows_.reserve(want);
  flow_epoch_.reserve(want);
  flow_fixed_.reserve(want);
  flow_rate_.reserve(want);
  flow_new_rate_.reserve(want);
  flow_check_epoch_.reserve(want);
  flow_check_result_.reserve(want);
  flow_bottleneck_.reserve(want);
  flow_cap_.reserve(want);
  flow_position_.reserve(want);
  flow_binding_hops_.reserve(want);
}

void Network::FreeFlow(uint32_t slot) {
  Flow& f = flows_[slot];
  f.state = FlowState::kFree;
  if (++f.generation == 0) f.generation = 1;
  f.observer = nullptr;
  f.hops.clear();
  f.weights.clear();
  f.next_free = free_flow_;
  free_flow_ = slot;
}

Network::RouteSummary Network::SummarizeRoute(std::span<const LinkId> route) const {
  RouteSummary summary;
  summary.capacities_version = capacities_version_;
  summary.tightest_link = route.empty() ? LinkId() : route.front();
  for (LinkId link : route) {
    HETSIM_CHECK(link.value() < links_.size(), "route names unknown link %u", link.value());
    summary.latency += link_specs_[link.value()].latency;
    const double capacity = links_[link.value()].capacity;
    const double tightest = links_[summary.tightest_link.value()].capacity;
    if (capacity < tightest || (capacity == tightest && link < summary.tightest_link)) {
      summary.tightest_link = link;
    }
  }
  summary.tightest_capacity = route.empty() ? 0 : links_[summary.tightest_link.value()].capacity;
  return summary;
}

FlowId Network::StartFlow(std::span<const LinkId> route, int64_t bytes, FlowObserver* observer, uint64_t tag) {
  return StartFlow(route, SummarizeRoute(route), bytes, observer, tag);
}

FlowId Network::StartFlow(std::span<const LinkId> route, const RouteSummary& summary, int64_t bytes,
                          FlowObserver* observer, uint64_t tag) {
  HETSIM_CHECK(bytes >= 0, "flow of %" PRId64 " bytes", bytes);
  if (summary.capacities_version != capacities_version_) {
    return StartFlow(route, SummarizeRoute(route), bytes, observer, tag);
  }
  const uint32_t slot = AllocateFlow();
  Flow& f = flows_[slot];
  f.bytes = bytes;
  f.remaining_bytes = static_cast<double>(bytes);
  f.rate = 0;
  f.observer = observer;
  f.tag = tag;
  f.tightest_link = summary.tightest_link;
  for (LinkId link : route) f.hops.push_back(Hop{link, 0});
  // Its links' records are read when it joins them, after the route's latency: a few dozen events
  // later on a large run, when lines asked for now are still in cache and were a miss per hop before.
  PrefetchLinks(f);
  flow_cap_[slot] = summary.tightest_capacity;
  ++stats_.flows_started;
  ++active_flows_;
  const Time now = simulator_->now();
  const Time latency = summary.latency;
  const Time start = latency >= kTimeMax - now ? kTimeMax : now + latency;
  if (bytes == 0 || route.empty()) {
    // Nothing to share: the last byte (if any) arrives with the latency.
    f.state = FlowState::kTransmitting;
    f.event = simulator_->Schedule(start, this, (uint64_t{slot} << 2) | kComplete);
  } else {
    f.state = FlowState::kWaitingLatency;
    f.event = simulator_->Schedule(start, this, (uint64_t{slot} << 2) | kActivate);
  }
  return (uint64_t{f.generation} << 32) | slot;
}

FlowId Network::StartWeightedFlow(std::span<const LinkId> route, std::span<const double> weights, int64_t bytes,
                                  FlowObserver* observer, uint64_t tag) {
  HETSIM_CHECK(weights.size() == route.size(), "%zu weights for a route of %zu links", weights.size(), route.size());
  for (double w : weights) {
    HETSIM_CHECK(w > 0 && std::isfinite(w), "flow weight %g is not positive and finite", w);
  }
  const Time now = simulator_->now();
  if (merge_instant_ != now) {
    merge_instant_ = now;
    merge_index_.clear();
  }
  const uint64_t key = absl::HashOf(bytes, absl::MakeConstSpan(route.data(), route.size()),
                                    absl::MakeConstSpan(weights.data(), weights.size()));
  if (const uint32_t host = IdenticalWaitingFlow(key, route, weights, bytes); host != kNoFlow) {
    Flow& f = flows_[host];
    if (f.merged == nullptr) f.merged = std::make_unique<MergedParts>(MergedParts{f.weights, {}});
    for (size_t h = 0; h < weights.size(); ++h) f.weights[h] += weights[h];
    f.merged->riders.emplace_back(observer, tag);
    ++stats_.flows_started;
    ++stats_.flows_merged;
    return (uint64_t{f.generation} << 32) | host;
  }
  const FlowId id = StartFlow(route, bytes, observer, tag);
  const auto slot = static_cast<uint32_t>(id);
  flows_[slot].weights.assign(weights.begin(), weights.end());
  if (flows_[slot].state == FlowState::kWaitingLatency) merge_index_[key] = slot;
  return id;
}

uint32_t Network::IdenticalWaitingFlow(uint64_t key, std::span<const LinkId> route, std::span<const double> weights,
                                       int64_t bytes) {
  const auto it = merge_index_.find(key);
  if (it == merge_index_.end()) return kNoFlow;
  const uint32_t slot = it->second;
  const Flow& f = flows_[slot];
  // Started at this instant (the index is cleared when time moves), so the slot cannot have been
  // reused by a flow of another instant; it may have activated (zero latency) or hash-collided.
  if (f.state != FlowState::kWaitingLatency || f.bytes != bytes || f.hops.size() != route.size()) return kNoFlow;
  for (size_t h = 0; h < route.size(); ++h) {
    if (f.hops[h].link != route[h]) return kNoFlow;
  }
  // A merged flow's weights are its parts' sums: compare with one part's. A plain flow (no weights)
  // that took a freed slot at this instant never matches.
  const std::vector<double>& part = f.merged == nullptr ? f.weights : f.merged->part_weights;
  if (!std::ranges::equal(weights, part)) return kNoFlow;
  return slot;
}

void Network::OnEvent(uint64_t payload) {
  const uint32_t slot = static_cast<uint32_t>(payload >> 2);
  const auto kind = static_cast<EventKind>(payload & 3);
  switch (kind) {
    case kActivate: Activate(slot); return;
    case kComplete: Complete(slot); return;
    case kRecompute: Recompute(); return;
  }
  HETSIM_CHECK(false, "unknown network event %" PRIu64, payload);
}

void Network::Activate(uint32_t slot) {
  Flow& f = flows_[slot];
  f.state = FlowState::kTransmitting;
  f.rate_since = simulator_->now();
  Join(slot);
  if (mode_ == NetworkMode::kContentionFree) {
    double bottleneck = links_[f.hops.front().link.value()].capacity;
    for (const Hop& hop : f.hops) {
      bottleneck = std::min(bottleneck, links_[hop.link.value()].capacity);
    }
    f.rate = bottleneck;
    const Time duration = TransferTime(Bytes(f.remaining_bytes), Bandwidth(f.rate));
    const Time now = simulator_->now();
    f.event = simulator_->Schedule(duration >= kTimeMax - now ? kTimeMax : now + duration, this,
                                   (uint64_t{slot} << 2) | kComplete);
  } else {
    // Rate 0 until the recompute at this instant gives it a share and a completion event.
    f.rate = 0;
    flow_rate_[slot] = kNoFloor;
    f.event = engine::EventId{};
    new_flows_.push_back(slot);
  }
}

void Network::Join(uint32_t slot) {
  Flow& f = flows_[slot];
  const Time now = simulator_->now();
  const bool max_min = mode_ == NetworkMode::kMaxMinFair;
  PrefetchLinks(f);
  if (max_min && !recompute_scheduled_) {  // where the first hop's MarkDirty scheduled it
    recompute_scheduled_ = true;
    simulator_->Schedule(now, this, kRecompute);
  }
  uint64_t binding_hops = f.hops.size() > kNearHops ? kFarHops : 0;
  for (uint32_t h = 0; h < f.hops.size(); ++h) {
    Link& link = links_[f.hops[h].link.value()];
    if (link.binds && h < kNearHops) binding_hops |= uint64_t{1} << h;
    // A plain flow alone on a link cannot make it bind (its cap is at most the link's capacity): the
    // recompute has nothing to look at there, as on most links of a large run.
    const bool alone = link.flows.empty() && !link.binds && !link.dirty && f.weights.empty();
    if (link.flows.empty()) link.busy_time_less_since -= now;
    f.hops[h].position = static_cast<uint32_t>(link.flows.size());
    link.flows.push_back(LinkEntry{slot, h});
    if (!f.weights.empty()) ++link.weighted_flows;
    if (max_min && !alone) MarkDirty(f.hops[h].link);
  }
  flow_binding_hops_[slot] = binding_hops;
  ++transmitting_flows_;
  stats_.max_active_flows = std::max(stats_.max_active_flows, transmitting_flows_);
}

void Network::Leave(uint32_t slot) {
  Flow& f = flows_[slot];
  PrefetchLinks(f);
  const Time now = simulator_->now();
  for (uint32_t h = 0; h < f.hops.size(); ++h) {
    const Hop& hop = f.hops[h];
    Link& link = links_[hop.link.value()];
    // Swap-remove this flow's entry and repoint the entry moved into its place.
    const LinkEntry moved = link.flows.back();
    link.flows[hop.position] = moved;
    flows_[moved.flow].hops[moved.hop].position = hop.position;
    link.flows.pop_back();
    if (f.weights.empty()) {
      link.bytes += f.bytes;
      ++link.completed_flows;
    } else {
      // Each part counts as if it had run alone, whatever merged.
      --link.weighted_flows;
      const uint64_t parts = f.merged == nullptr ? 1 : 1 + f.merged->riders.size();
      const double w = f.merged == nullptr ? f.weights[h] : f.merged->part_weights[h];
      link.bytes += static_cast<int64_t>(parts) * std::llround(static_cast<double>(f.bytes) * w);
      link.completed_flows += parts * static_cast<uint64_t>(std::max<long long>(1, std::llround(w)));
    }
    if (link.flows.empty()) link.busy_time_less_since += now;
    // A link that does not bind stays so with a flow less (its flows' caps only shrink): the recompute
    // has nothing to look at there. Most links of a large run carry one flow at a time.
    if (mode_ == NetworkMode::kMaxMinFair && (link.binds || link.dirty)) MarkDirty(hop.link);
  }
  // The recompute still runs at this instant, where it ran before: what it does and when follow the
  // events of the instant as they did.
  if (mode_ == NetworkMode::kMaxMinFair && !recompute_scheduled_) {
    recompute_scheduled_ = true;
    simulator_->Schedule(now, this, kRecompute);
  }
  // Below its rate, the flow took from each of its links what any flow there took: removing it
  // changes nothing under that level.
  refill_floor_ = std::min(refill_floor_, flow_rate_[slot]);
  --transmitting_flows_;
}

void Network::Complete(uint32_t slot) {
  Flow& f = flows_[slot];
  if (f.observer != nullptr) f.observer->PrefetchCompletion(f.tag);
  if (!f.hops.empty() && f.bytes > 0) Leave(slot);
  const FlowId id = (uint64_t{f.generation} << 32) | slot;
  FlowObserver* observer = f.observer;
  const uint64_t tag = f.tag;
  const std::unique_ptr<MergedParts> merged = std::move(f.merged);
  FreeFlow(slot);
  --active_flows_;
  stats_.flows_completed += 1 + (merged == nullptr ? 0 : merged->riders.size());
  if (observer != nullptr) observer->OnFlowCompleted(id, tag);
  if (merged == nullptr) return;
  for (const auto& [rider, rider_tag] : merged->riders) {
    if (rider != nullptr) rider->OnFlowCompleted(id, rider_tag);
  }
}

void Network::MarkDirty(LinkId link) {
  if (!links_[link.value()].dirty) {
    links_[link.value()].dirty = true;
    dirty_links_.push_back(link);
  }
  if (!recompute_scheduled_) {
    // One recompute per instant, after every start and end already scheduled for it: flows that
    // start or end together (a collective step) cost one progressive filling, not one each.
    recompute_scheduled_ = true;
    simulator_->Schedule(simulator_->now(), this, kRecompute);
  }
}

// Capacity changes (faults) are rare next to flow starts and ends: this scans every flow slot once
// per call rather than keeping per-link lists of waiting flows on the hot path.
void Network::SetLinkCapacities(std::span<const std::pair<LinkId, double>> changes) {
  std::vector<LinkId> changed;
  for (const auto& [id, capacity] : changes) {
    HETSIM_CHECK(id.value() < links_.size(), "capacity change of unknown link %u", id.value());
    HETSIM_CHECK(capacity >= 0 && std::isfinite(capacity), "capacity %g for link %u", capacity, id.value());
    if (links_[id.value()].capacity == capacity) continue;
    links_[id.value()].capacity = capacity;
    link_specs_[id.value()].capacity = Bandwidth(capacity);
    changed.push_back(id);
  }
  if (changed.empty()) return;
  ++capacities_version_;
  std::sort(changed.begin(), changed.end());
  changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
  const Time now = simulator_->now();
  for (uint32_t slot = 0; slot < flows_.size(); ++slot) {
    Flow& f = flows_[slot];
    if (f.state == FlowState::kFree || f.hops.empty()) continue;
    const bool crosses = std::any_of(f.hops.begin(), f.hops.end(), [&](const Hop& h) {
      return std::binary_search(changed.begin(), changed.end(), h.link);
    });
    if (!crosses) continue;
    RefreshCap(slot);
    if (f.state != FlowState::kTransmitting || f.bytes == 0) continue;  // waiting: rated when it starts
    if (mode_ == NetworkMode::kMaxMinFair) {
      // Its cap changed, so every link it crosses may bind differently: recompute them all.
      for (const Hop& hop : f.hops) MarkDirty(hop.link);
      new_flows_.push_back(slot);  // re-rated even if no link binds
      refill_floor_ = 0;           // a capacity moves levels from the bottom up
      continue;
    }
    if (f.rate > 0) f.remaining_bytes = std::max(0.0, f.remaining_bytes - f.rate * TimeToSeconds(now - f.rate_since));
    f.rate = flow_cap_[slot];
    f.rate_since = now;
    const Time duration = TransferTime(Bytes(f.remaining_bytes), Bandwidth(f.rate));
    simulator_->Reschedule(f.event, duration >= kTimeMax - now ? kTimeMax : now + duration);
    ++stats_.flows_rerated;
  }
}

void Network::RefreshCap(uint32_t slot) {
  Flow& f = flows_[slot];
  f.tightest_link = f.hops.front().link;
  for (const Hop& hop : f.hops) {
    const double capacity = links_[hop.link.value()].capacity;
    const double tightest = links_[f.tightest_link.value()].capacity;
    if (capacity < tightest || (capacity == tightest && hop.link < f.tightest_link)) f.tightest_link = hop.link;
  }
  flow_cap_[slot] = links_[f.tightest_link.value()].capacity;
}

}  // namespace hetsim::network
