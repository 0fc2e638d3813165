// The max-min recompute of Network: which flows to re-rate after flows start or end at an instant,
// and their progressive filling. Split from network.cc, which keeps the flows' life cycle.
#include <algorithm>
#include <bit>
#include <cmath>

#include "boost/sort/pdqsort/pdqsort.hpp"
#include "sim/network/network.h"

namespace hetsim::network {
namespace {

constexpr uint64_t kSignBit = uint64_t{1} << 63;

// A double's bits mapped so that unsigned order is the doubles' order (a share can come out a hair
// below 0 by rounding); FromOrderedBits gives the same double back.
uint64_t OrderedBits(double x) {
  const uint64_t bits = std::bit_cast<uint64_t>(x);
  return bits ^ (kSignBit | (uint64_t{0} - (bits >> 63)));  // negative: all bits flipped; else the sign
}
double FromOrderedBits(uint64_t key) { return std::bit_cast<double>(key ^ (kSignBit | ((key >> 63) - 1))); }

}  // namespace

void Network::Recompute() {
  recompute_scheduled_ = false;
  ++stats_.recomputations;
  if (dirty_links_.empty() && new_flows_.empty()) {
    // Only flows that left links that do not bind: no rate changes. What the full pass would leave
    // behind: the floor consumed, two epochs used.
    refill_floor_ = kNoFloor;
    NextEpoch();
    NextEpoch();
    if (check_rates_) CheckRates();
    return;
  }
  const double threshold = CollectSeeds();
  for (int round = 1;; ++round) {
    ScanComponentLinks();
    if (round == kMaxLocalRounds) {
      // Still spreading: take the whole component through binding links, whose filling is exact
      // without a check. The closure reads no result of a filling (only the applied rates and the
      // links' flows), and a filling overwrites every result of the one before for the flows it
      // takes: closing first fills a component that grows once, not twice (the last round's filling
      // was three in four of the closures' and a fifth of the exact 16K run's largest recomputes').
      if (CloseComponent(threshold)) {
        ++stats_.component_closures;
        ScanComponentLinks();
      }
      FillProgressively();
      // No check follows this filling: make every record it (or an earlier round) left true again.
      RefreshBottlenecks(threshold);
      break;
    }
    FillProgressively();
    if (!AddFlowsWithoutBottleneck()) break;
  }
  stats_.flows_visited += component_flows_.size();
  ApplyNewRates();
  if (check_rates_) CheckRates();
}

// Which flows to re-rate first. A link can only constrain its flows if the caps of the flows crossing
// it (each flow's tightest link capacity, a bound on its rate) add up to more than its capacity: it
// "binds". A link that does not bind can be dropped from the problem (the allocation without it fits
// in it anyway). The seeds are the new flows and the flows on dirty links (whose flow set, and so
// binding status, changed) that bind or bound.
//
// Progressive filling up to the floor (refill_floor_) is the same before and after the change, so
// flows rated below it keep their rates: they are frozen and count on their links as fixed load
// (proof in docs/decisions.md, "Incremental max-min"). Returns the threshold below which flows are
// frozen.
double Network::CollectSeeds() {
  NextEpoch();
  scanned_flows_ = 0;  // a new component
  component_flows_.clear();
  moved_records_.clear();
  stack_.clear();
  for (LinkId id : dirty_links_) {
    Link& link = links_[id.value()];
    link.dirty = false;
    // Summed afresh in list order: exact and deterministic, no drift from incremental updates.
    double caps = 0;
    for (const LinkEntry& entry : link.flows) caps += flow_cap_[entry.flow] * EntryWeight(link, entry);
    const bool bound = link.binds;
    link.binds = caps > link.capacity;
    if (link.binds != bound) {
      for (const LinkEntry& entry : link.flows) {
        if (entry.hop < kNearHops) flow_binding_hops_[entry.flow] ^= uint64_t{1} << entry.hop;
      }
    }
    // A link that bound before the change may have held its flows back: re-rate them all. One that
    // binds neither before nor after constrains nobody, then or now.
    if (bound || link.binds) stack_.push_back(id);
  }
  dirty_links_.clear();
  LowerFloorForNewFlows();
  // Rounding can leave two flows held by one level a few ulps apart: freezing only below a level a
  // hair under the floor re-rates a few more flows, which is always exact (their rates come out the
  // same).
  const double threshold = refill_floor_ * (1 - 1e-9);
  refill_floor_ = kNoFloor;
  // New flows need a rate even when none of their links binds.
  for (uint32_t slot : new_flows_) AddToComponent(slot);
  new_flows_.clear();
  for (LinkId id : stack_) {
    for (const LinkEntry& entry : links_[id.value()].flows) {
      if (flow_rate_[entry.flow] >= threshold) AddToComponent(entry.flow);
    }
  }
  stack_.clear();
  return threshold;
}

void Network::NextEpoch() {
  if (++epoch_ == 0) {  // wrapped: clear stale markers so no old mark equals the new epoch
    for (Link& link : links_) link.visit_epoch = link.level_epoch = link.check_epoch = link.scan_stamp = 0;
    scanned_flows_ = 0;  // the next scan takes every link afresh
    std::fill(flow_epoch_.begin(), flow_epoch_.end(), 0);
    std::fill(flow_check_epoch_.begin(), flow_check_epoch_.end(), 0);
    epoch_ = 1;
  }
}

// A component link's capacity left by the flows outside the component, and the count and weight of
// the component's flows on it (the flows of this epoch).
inline Network::ScannedLink Network::ScanLink(Link& link) {  // inline: called per link of every scan
  double others_load = 0;
  uint32_t others = 0;
  double weight = 0;
  for (const LinkEntry& entry : link.flows) {
    if (flow_epoch_[entry.flow] != epoch_) {
      others_load += flow_rate_[entry.flow] * EntryWeight(link, entry);
      ++others;
    } else {
      weight += EntryWeight(link, entry);
    }
  }
  link.others = others;
  return ScannedLink{link.capacity - others_load, weight, static_cast<uint32_t>(link.flows.size()) - others, others};
}

// The binding links of the component's flows, each with the capacity the other flows (frozen, or
// simply not re-rated in this round) leave and the count and weight of the component's flows on it.
// The links and their order are those of a scan of every component flow's hops in turn; a link no
// flow added since the last scan crosses keeps the last scan's values, which a scan from scratch
// would compute again to the bit (same flows, same rates, same order of the sums).
void Network::ScanComponentLinks() {
  // A fresh epoch per round: the component's flows are marked anew.
  NextEpoch();
  for (uint32_t slot : component_flows_) flow_epoch_[slot] = epoch_;
  if (scanned_flows_ == 0) {
    component_links_.clear();
    scanned_links_.clear();
    scanned_flows_info_.clear();
    scanned_hops_.clear();
    scan_stamp_ = epoch_;
  }
  const size_t old_links = component_links_.size();
  rescanned_.clear();
  for (size_t i = scanned_flows_; i < component_flows_.size(); ++i) ScanFlowHops(static_cast<uint32_t>(i), old_links);
  for (uint32_t index : rescanned_) scanned_links_[index] = ScanLink(links_[component_links_[index].value()]);
  scanned_flows_ = component_flows_.size();
}

// A flow new to the component: its binding links (new ones scanned, old ones queued for a scan
// again, each once a round) and its entry for the filling.
void Network::ScanFlowHops(uint32_t position, size_t old_links) {
  const uint32_t slot = component_flows_[position];
  const Flow& f = flows_[slot];
  flow_position_[slot] = position;
  const auto begin = static_cast<uint32_t>(scanned_hops_.size());
  ForBindingHops(slot, [&](uint32_t h) {
    const LinkId id = f.hops[h].link;
    Link& link = links_[id.value()];
    if (link.scan_stamp != scan_stamp_) {
      link.scan_stamp = scan_stamp_;
      link.scan_index = static_cast<uint32_t>(component_links_.size());
      scanned_links_.push_back(ScanLink(link));
      component_links_.push_back(id);
    } else if (link.scan_index < old_links && link.visit_epoch != epoch_) {
      link.visit_epoch = epoch_;
      rescanned_.push_back(link.scan_index);  // scanned before: summed again
    }
    scanned_hops_.push_back(ScannedHop{link.scan_index, h});
  });
  // A flow whose tightest link binds never reaches its cap before that link saturates (the link's
  // other flows take some of it), and would reach it only together with the link when they take
  // nothing: its cap entry changes nothing, and most flows of a congested fabric are such flows.
  // Weighted flows keep theirs (a weight below 1 lets a flow reach its cap first).
  const bool weighted = !f.weights.empty();
  scanned_flows_info_.push_back(ScannedFlow{begin, static_cast<uint32_t>(scanned_hops_.size()) - begin, weighted,
                                            weighted || !links_[f.tightest_link.value()].binds});
}

// Max-min is the one feasible allocation in which every flow has a bottleneck: it runs at its cap, or
// crosses a saturated link on which no flow gets a larger share. The filling gives the component's
// flows one against the others' current rates; where some flow on the component's links now lacks a
// bottleneck, the flows that hold it back (itself, if it is not in the component; else the other
// flows on its links) join the component and the filling runs again. When none lacks one, the
// allocation is max-min over the whole network: flows away from the component's links kept their
// links' loads and rates. Returns whether the component grew.
bool Network::AddFlowsWithoutBottleneck() {
  // Checked first, added after: a flow added now would read as re-rated in the checks that follow.
  violators_.clear();
  for (size_t i = 0; i < component_links_.size(); ++i) {
    // Only the component's flows on it: the filling saturated it for them, fair among them.
    if (scanned_links_[i].others == 0) continue;
    for (const LinkEntry& entry : links_[component_links_[i].value()].flows) {
      if (!HasBottleneck(entry.flow)) violators_.push_back(entry.flow);
    }
  }
  bool grew = false;
  for (uint32_t slot : violators_) {
    if (flow_epoch_[slot] != epoch_) {
      grew |= AddToComponent(slot);
      continue;
    }
    ForBindingHops(slot, [&](uint32_t h) {
      for (const LinkEntry& entry : links_[flows_[slot].hops[h].link.value()].flows) grew |= AddToComponent(entry.flow);
    });
  }
  return grew;
}

// After a filling that no check follows (the closure's), a record may be false, and the next
// recompute would accept it unchecked when its link is untouched. Two kinds can be: a component
// flow's, when the link that fixed it also carries flows outside the component that run faster; and
// an outside flow's that an earlier round's check moved to a link holding it only at that round's
// interim rates. Both are checked again; one left without a bottleneck (rounding) keeps no record,
// so its next check looks at all its links. Every other record stands: the filling fixed the flow at
// its cap, or on a link the component fills alone, or at or above `threshold`, where every outside
// flow on a component link is slower (the closure took in all that were not); or the flow is frozen
// below the floor with the record it had (docs/decisions.md). So only flows the local rounds pulled
// in below the floor are checked, and the few records the rounds moved.
void Network::RefreshBottlenecks(double threshold) {
  for (uint32_t slot : component_flows_) {
    const LinkId id = flow_bottleneck_[slot];
    if (id == kAtCap || links_[id.value()].others == 0 || flow_new_rate_[slot] >= threshold) continue;
    if (!HasBottleneck(slot)) flow_bottleneck_[slot] = kAtCap;
  }
  for (uint32_t slot : moved_records_) {
    if (flow_epoch_[slot] == epoch_) continue;  // in the component: recorded afresh
    if (!HasBottleneck(slot)) flow_bottleneck_[slot] = kAtCap;
  }
}

inline double Network::CurrentRate(uint32_t slot) const {
  return flow_epoch_[slot] == epoch_ ? flow_new_rate_[slot] : flow_rate_[slot];
}

bool Network::HasBottleneck(uint32_t slot) {
  if (flow_check_epoch_[slot] == epoch_) return flow_check_result_[slot] != 0;
  flow_check_epoch_[slot] = epoch_;
  flow_check_result_[slot] = CheckBottleneck(slot) ? 1 : 0;
  return flow_check_result_[slot] != 0;
}

// The link that held the flow at its last filling comes first: a link no re-rated flow crosses kept
// its load and rates, so it still holds the flow (a flow below the floor keeps its level's link
// saturated: docs/decisions.md). Only when that fails are the flow's other links looked at.
bool Network::CheckBottleneck(uint32_t slot) {
  const double rate = CurrentRate(slot);
  if (rate >= flow_cap_[slot] * kBottleneckSlack) {
    flow_bottleneck_[slot] = kAtCap;
    return true;
  }
  const LinkId last = flow_bottleneck_[slot];
  if (last != kAtCap && links_[last.value()].binds) {
    // Untouched by the filling, or filled by the component's flows alone.
    if (links_[last.value()].scan_stamp != scan_stamp_ || links_[last.value()].others == 0) return true;
    if (IsBottleneckOf(last, rate)) return true;
  }
  // Only binding links can hold it (IsBottleneckOf).
  const Flow& f = flows_[slot];
  for (uint64_t near = flow_binding_hops_[slot] & ~kFarHops; near != 0; near &= near - 1) {
    const LinkId id = f.hops[__builtin_ctzll(near)].link;
    if (id != last && IsBottleneckOf(id, rate)) return MoveBottleneck(slot, id);
  }
  if ((flow_binding_hops_[slot] & kFarHops) == 0) return false;
  for (uint32_t h = kNearHops; h < f.hops.size(); ++h) {
    const LinkId id = f.hops[h].link;
    if (id != last && IsBottleneckOf(id, rate)) return MoveBottleneck(slot, id);
  }
  return false;
}

// Records what holds the flow now: the next recompute looks there first.
bool Network::MoveBottleneck(uint32_t slot, LinkId id) {
  flow_bottleneck_[slot] = id;
  moved_records_.push_back(slot);
  return true;
}

// Whether `link` is saturated and no flow on it gets more than `rate` per unit of weight.
bool Network::IsBottleneckOf(LinkId id, double rate) {
  Link& link = links_[id.value()];
  if (!link.binds) return false;  // cannot saturate unless every flow on it runs at its cap
  if (link.check_epoch != epoch_) {
    link.check_epoch = epoch_;
    link.check_load = 0;
    link.check_top_share = 0;
    for (const LinkEntry& entry : link.flows) {
      const double r = CurrentRate(entry.flow);
      link.check_load += r * EntryWeight(link, entry);
      link.check_top_share = std::max(link.check_top_share, r);
    }
  }
  return link.check_load >= link.capacity * kBottleneckSlack && rate >= link.check_top_share * kBottleneckSlack;
}

// The whole component: every flow at or above `threshold` connected to the current one through
// binding links. Returns whether it grew.
bool Network::CloseComponent(double threshold) {
  const size_t before = component_flows_.size();
  // The binding links of the flows the last scan took are component_links_, in the order in which
  // the loop below would come to them first: walked from the list, without those flows' hops.
  const size_t scanned = scanned_flows_;
  NextEpoch();
  for (uint32_t slot : component_flows_) flow_epoch_[slot] = epoch_;
  if (scanned != 0) {
    for (LinkId id : component_links_) {
      Link& link = links_[id.value()];
      link.visit_epoch = epoch_;
      for (const LinkEntry& entry : link.flows) {
        if (flow_rate_[entry.flow] >= threshold || std::isinf(flow_rate_[entry.flow])) AddToComponent(entry.flow);
      }
    }
  }
  for (size_t i = scanned; i < component_flows_.size(); ++i) {
    const uint32_t slot = component_flows_[i];
    ForBindingHops(slot, [&](uint32_t h) {
      Link& link = links_[flows_[slot].hops[h].link.value()];
      if (link.visit_epoch == epoch_) return;
      link.visit_epoch = epoch_;
      for (const LinkEntry& entry : link.flows) {
        if (flow_rate_[entry.flow] >= threshold || std::isinf(flow_rate_[entry.flow])) AddToComponent(entry.flow);
      }
    });
  }
  return component_flows_.size() > before;
}

// A new flow adds load x at every level x on its links, so a link it joins may saturate below the
// floor: the floor drops to the level at which the link saturates with its new flow set.
void Network::LowerFloorForNewFlows() {
  for (uint32_t slot : new_flows_) {
    ForBindingHops(slot, [&](uint32_t h) {
      Link& link = links_[flows_[slot].hops[h].link.value()];
      if (link.level_epoch == epoch_) return;
      link.level_epoch = epoch_;
      refill_floor_ = std::min(refill_floor_, SaturationLevel(link));
    });
  }
}

// The water level at which `link` saturates when every flow on it keeps its current rate where that
// is lower: consumption(x) = sum of weight x min(rate, x), with a new flow's rate taken as its cap.
double Network::SaturationLevel(const Link& link) {
  level_scratch_.clear();
  double weight_left = 0;
  for (const LinkEntry& entry : link.flows) {
    const double rate = std::isinf(flow_rate_[entry.flow]) ? flow_cap_[entry.flow] : flow_rate_[entry.flow];
    const double weight = EntryWeight(link, entry);
    level_scratch_.emplace_back(rate, weight);
    weight_left += weight;
  }
  std::sort(level_scratch_.begin(), level_scratch_.end());
  double used = 0;
  for (const auto& [rate, weight] : level_scratch_) {
    const double level = (link.capacity - used) / weight_left;
    if (level <= rate) return level;
    used += rate * weight;
    weight_left -= weight;
  }
  return kNoFloor;  // every flow stops below the capacity
}

// Progressive filling (water filling) over the binding links and the flows' caps: raise every
// unfixed flow's rate together; a flow stops at its cap, or when a link's fair share (residual
// capacity / unfixed flows) is the smallest left, that link saturates and fixes its flows at that
// share. Fixing a flow elsewhere only raises a link's share, so a link's key is a lower bound and is
// not updated when its share rises (that would cost a heap operation per hop); when a link comes up
// with a stale key it is queued again with its current share. The initial keys are sorted once
// (cheap, cache-friendly) and consumed in order; only re-queued links go through a heap.
void Network::FillProgressively() {
  if (component_links_.empty()) {
    // No link binds: every flow reaches its cap (the filling below would fix each at its cap entry, in
    // increasing order). Most recomputes of a large run are a flow alone on its links.
    for (uint32_t slot : component_flows_) {
      flow_fixed_[slot] = 1;
      flow_new_rate_[slot] = flow_cap_[slot];
      flow_bottleneck_[slot] = kAtCap;
    }
    return;
  }
  // The filling works on a copy of the scan's values, indexed like component_links_.
  fill_links_.assign(scanned_links_.begin(), scanned_links_.end());
  sorted_shares_.clear();
  share_heap_.clear();
  // Key: the share's ordered bits, then 0 for a flow's cap and 1 for a link, then the index.
  const auto key = [](double share, uint32_t index, bool is_flow) {
    return (ShareKey{OrderedBits(share)} << 64) | (uint64_t{is_flow ? 0u : 1u} << 32) | index;
  };
  for (size_t i = 0; i < component_flows_.size(); ++i) {
    const uint32_t slot = component_flows_[i];
    flow_fixed_[slot] = 0;
    if (scanned_flows_info_[i].cap_entry) sorted_shares_.push_back(key(flow_cap_[slot], slot, /*is_flow=*/true));
  }
  for (uint32_t j = 0; j < fill_links_.size(); ++j) {
    sorted_shares_.push_back(key(fill_links_[j].residual / fill_links_[j].unfixed_weight, j, /*is_flow=*/false));
  }
  // A total order (equal shares: caps first, then by index). Any order of equal shares gives the
  // same allocation up to rounding; this one is the sort's by construction, whatever its algorithm.
  // (Session 43 measured this order with a comparator that tested ties: every bundled example's
  // output to the byte, but the sort from 5.0% to 8.6% of the exact 16K run; one integer compare
  // has no tie branch: docs/performance.md, session 44.)
  boost::sort::pdqsort_branchless(sorted_shares_.begin(), sorted_shares_.end());
  const auto entry = [](ShareKey k) {
    return ShareEntry{FromOrderedBits(static_cast<uint64_t>(k >> 64)), static_cast<uint32_t>(k),
                      ((static_cast<uint64_t>(k) >> 32) & 1) == 0};
  };
  const auto later = [](const ShareEntry& a, const ShareEntry& b) { return a.share > b.share; };
  size_t next_sorted = 0;
  double level = 0;
  for (;;) {
    ShareEntry top;
    if (!share_heap_.empty() &&
        (next_sorted == sorted_shares_.size() || later(entry(sorted_shares_[next_sorted]), share_heap_.front()))) {
      std::pop_heap(share_heap_.begin(), share_heap_.end(), later);
      top = share_heap_.back();
      share_heap_.pop_back();
    } else if (next_sorted < sorted_shares_.size()) {
      top = entry(sorted_shares_[next_sorted++]);
    } else {
      break;
    }
    if (top.is_flow) {  // a flow reaches its cap
      if (flow_fixed_[top.index]) continue;
      level = std::max(level, top.share);
      FixFlow(top.index, level);
      flow_bottleneck_[top.index] = kAtCap;
      continue;
    }
    const ScannedLink& bottleneck = fill_links_[top.index];
    if (bottleneck.unfixed == 0) continue;  // every flow fixed elsewhere: it limits no one
    // Mathematically the share is >= the level already reached; the max absorbs rounding so that no
    // flow is ever given less than a bottleneck saturated before it.
    const double share = std::max(bottleneck.residual / bottleneck.unfixed_weight, level);
    if (share > top.share) {  // stale key: queue again with the current share
      share_heap_.push_back(ShareEntry{share, top.index, /*is_flow=*/false});
      std::push_heap(share_heap_.begin(), share_heap_.end(), later);
      continue;
    }
    level = share;
    const LinkId id = component_links_[top.index];
    for (const LinkEntry& entry : links_[id.value()].flows) {
      if (flow_fixed_[entry.flow]) continue;
      FixFlow(entry.flow, level);
      flow_bottleneck_[entry.flow] = id;
    }
  }
}

// Fixes a component flow's rate and takes it from its binding links' residuals (the scan's hops: no
// link record read).
void Network::FixFlow(uint32_t slot, double rate) {
  flow_fixed_[slot] = 1;
  flow_new_rate_[slot] = rate;
  const ScannedFlow& scanned = scanned_flows_info_[flow_position_[slot]];
  const ScannedHop* hops = scanned_hops_.data() + scanned.begin;
  for (uint32_t k = 0; k < scanned.count; ++k) {
    ScannedLink& link = fill_links_[hops[k].link];
    const double w = scanned.weighted ? flows_[slot].weights[hops[k].hop] : 1.0;
    link.residual -= rate * w;
    --link.unfixed;
    link.unfixed_weight -= w;
  }
}

// Moves the completion of every flow whose rate changed. Remaining bytes are brought up to date
// only here, at a rate change, so they never drift through repeated small updates; a flow ends by
// its completion event, never by comparing remaining bytes with zero.
void Network::ApplyNewRates() {
  const Time now = simulator_->now();
  for (uint32_t slot : component_flows_) {
    Flow& f = flows_[slot];
    if (flow_new_rate_[slot] == f.rate && f.event.valid()) continue;
    if (f.rate > 0) {
      const double sent = f.rate * TimeToSeconds(now - f.rate_since);
      f.remaining_bytes = std::max(0.0, f.remaining_bytes - sent);
    }
    f.rate = flow_new_rate_[slot];
    flow_rate_[slot] = f.rate;
    f.rate_since = now;
    const Time duration = TransferTime(Bytes(f.remaining_bytes), Bandwidth(f.rate));
    const Time at = duration >= kTimeMax - now ? kTimeMax : now + duration;
    if (f.event.valid()) {
      simulator_->Reschedule(f.event, at);
    } else {
      f.event = simulator_->Schedule(at, this, (uint64_t{slot} << 2) | kComplete);
    }
    ++stats_.flows_rerated;
  }
}

}  // namespace hetsim::network
