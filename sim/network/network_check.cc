// The debug cross-check of Network's incremental max-min (Network::set_check_rates, or
// HETSIM_CHECK_MAX_MIN=1 in the environment): after every recompute, weighted max-min solved from
// scratch over every transmitting flow and every link it crosses, by plain progressive filling with no
// state kept between recomputes, and every flow's rate compared with the incremental one.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <queue>

#include "base/check.h"
#include "sim/network/network.h"

namespace hetsim::network {

bool Network::CheckRatesFromEnvironment() {
  const char* value = std::getenv("HETSIM_CHECK_MAX_MIN");
  return value != nullptr && std::strcmp(value, "") != 0 && std::strcmp(value, "0") != 0;
}

// Progressive filling over flat arrays: every link a transmitting flow crosses (binding or not), and
// every flow's cap; a link's key is a lower bound of its share and is queued again when stale.
void Network::SolveFromScratch(std::vector<uint32_t>& slots, std::vector<double>& rates) {
  slots.clear();
  for (uint32_t slot = 0; slot < flows_.size(); ++slot) {
    const Flow& f = flows_[slot];
    if (f.state == FlowState::kTransmitting && !f.hops.empty() && f.bytes > 0) slots.push_back(slot);
  }
  rates.assign(slots.size(), -1);
  check_local_link_.resize(links_.size(), kNoFlow);
  std::vector<uint32_t> link_ids;
  std::vector<double> residual;
  std::vector<double> weight_left;
  std::vector<std::vector<std::pair<uint32_t, double>>> link_flows;  // (index in slots, weight)
  for (uint32_t i = 0; i < slots.size(); ++i) {
    const Flow& f = flows_[slots[i]];
    for (uint32_t h = 0; h < f.hops.size(); ++h) {
      const uint32_t id = f.hops[h].link.value();
      if (check_local_link_[id] == kNoFlow) {
        check_local_link_[id] = static_cast<uint32_t>(link_ids.size());
        link_ids.push_back(id);
        residual.push_back(links_[id].capacity);
        weight_left.push_back(0);
        link_flows.emplace_back();
      }
      const uint32_t local = check_local_link_[id];
      weight_left[local] += HopWeight(f, h);
      link_flows[local].emplace_back(i, HopWeight(f, h));
    }
  }
  using Entry = std::pair<double, int64_t>;  // (share, link local index, or -1 - flow index for a cap)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (uint32_t i = 0; i < slots.size(); ++i) heap.emplace(flow_cap_[slots[i]], -1 - static_cast<int64_t>(i));
  for (uint32_t l = 0; l < link_ids.size(); ++l) heap.emplace(residual[l] / weight_left[l], l);
  const auto fix = [&](uint32_t i, double rate) {
    rates[i] = rate;
    const Flow& f = flows_[slots[i]];
    for (uint32_t h = 0; h < f.hops.size(); ++h) {
      const uint32_t local = check_local_link_[f.hops[h].link.value()];
      residual[local] -= rate * HopWeight(f, h);
      weight_left[local] -= HopWeight(f, h);
    }
  };
  double level = 0;
  while (!heap.empty()) {
    const auto [key, index] = heap.top();
    heap.pop();
    if (index < 0) {
      const auto i = static_cast<uint32_t>(-1 - index);
      if (rates[i] < 0) fix(i, std::max(level, key));
      level = std::max(level, key);
      continue;
    }
    const auto& on_link = link_flows[index];
    if (std::none_of(on_link.begin(), on_link.end(), [&](const auto& e) { return rates[e.first] < 0; })) continue;
    const double share = std::max(residual[index] / weight_left[index], level);
    if (share > key) {
      heap.emplace(share, index);
      continue;
    }
    level = share;
    for (const auto& [i, w] : on_link) {
      if (rates[i] < 0) fix(i, level);
    }
  }
  for (uint32_t id : link_ids) check_local_link_[id] = kNoFlow;
}

void Network::CheckRates() {
  std::vector<uint32_t> slots;
  std::vector<double> expected;
  SolveFromScratch(slots, expected);
  for (size_t i = 0; i < slots.size(); ++i) {
    const uint32_t slot = slots[i];
    const double rate = flows_[slot].rate;
    // Relative to the rate; for a flow stalled at 0 (a link down), to its cap.
    constexpr double kRelative = 1e-9;
    constexpr double kOfCap = 1e-12;
    const double tolerance =
        std::max(kRelative * std::max(std::abs(expected[i]), std::abs(rate)), kOfCap * flow_cap_[slot]);
    HETSIM_CHECK(std::abs(rate - expected[i]) <= tolerance,
                 "max-min cross-check at %lld ps: flow slot %u (%zu hops) has rate %.17g B/s, a from-scratch "
                 "solve gives %.17g (relative difference %.3g)",
                 static_cast<long long>(TimeToPicoseconds(simulator_->now())), slot, flows_[slot].hops.size(), rate,
                 expected[i], std::abs(rate - expected[i]) / std::max(std::abs(expected[i]), 1e-300));
  }
  ++stats_.rate_checks;
}

}  // namespace hetsim::network
