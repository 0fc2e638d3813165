#include "planner/shared_links.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "base/check.h"

namespace hetsim::planner {
namespace {

constexpr double kUnlimited = std::numeric_limits<double>::infinity();
constexpr double kLongestSeconds = 1e6;  // beyond any transfer, within Time's range

// The max-min rates of flows `active` by progressive filling over the simulator's flows: the rate each flow
// gets rises on every link at once, a transfer going at its weight (SharedLink::Weight) x that rate, until a
// link is full; the transfers it holds lowest (at no more than any other of their links would give them) freeze
// there, and the others go on. With every weight 1 each round freezes every transfer over the fullest link.
std::vector<double> FairRates(const std::vector<SharedFlow>& flows, const std::vector<size_t>& active) {
  std::vector<double> rate(active.size(), -1);  // -1: not frozen yet
  size_t frozen = 0;
  for (size_t a = 0; a < active.size(); ++a) {
    if (flows[active[a]].links.empty()) rate[a] = kUnlimited, ++frozen;
  }
  std::map<int, double> used;  // per link, the share its frozen flows take
  std::vector<double> bound(active.size());
  while (frozen < active.size()) {
    std::map<int, double> per_level;  // per link, what one unit of the rate per flow takes of it
    for (size_t a = 0; a < active.size(); ++a) {
      if (rate[a] >= 0) continue;
      for (const SharedLink& l : flows[active[a]].links) per_level[l.key] += l.Weight() / l.bytes_per_s;
    }
    std::map<int, double> level;  // per link, the rate per flow that fills it
    for (const auto& [link, take] : per_level) level[link] = std::max(0.0, 1 - used[link]) / take;
    // Each transfer's rate were its links filled now: the lowest of them; the links that hold it there.
    std::set<int> holds;
    for (size_t a = 0; a < active.size(); ++a) {
      if (rate[a] >= 0) continue;
      bound[a] = kUnlimited;
      for (const SharedLink& l : flows[active[a]].links) bound[a] = std::min(bound[a], l.Weight() * level[l.key]);
      for (const SharedLink& l : flows[active[a]].links) {
        if (l.Weight() * level[l.key] <= bound[a]) holds.insert(l.key);
      }
    }
    double lowest = kUnlimited;
    int full = 0;
    for (const auto& [link, t] : level) {
      if (holds.contains(link) && t < lowest) lowest = t, full = link;
    }
    for (size_t a = 0; a < active.size(); ++a) {
      if (rate[a] >= 0) continue;
      const auto& links = flows[active[a]].links;
      const auto on_full = std::find_if(links.begin(), links.end(), [&](const SharedLink& l) { return l.key == full; });
      if (std::isfinite(lowest) && (on_full == links.end() || on_full->Weight() * lowest > bound[a])) continue;
      rate[a] = std::isfinite(lowest) ? on_full->Weight() * lowest : kUnlimited;  // no finite link: unbounded
      ++frozen;
      for (const SharedLink& l : links) used[l.key] += rate[a] / l.bytes_per_s;
    }
  }
  return rate;
}

}  // namespace

std::vector<Time> ShareLinks(const std::vector<SharedFlow>& flows) {
  const size_t n = flows.size();
  std::vector<Time> end(n, 0);
  std::vector<double> left(n);
  // The flows whose beginning is known, by it (a follower's once the flow it follows has ended), and
  // per flow those that follow it: a range of a million buckets keeps one flow active at a time.
  std::set<std::pair<Time, size_t>> pending;
  std::vector<std::vector<size_t>> followers(n);
  for (size_t i = 0; i < n; ++i) {
    HETSIM_CHECK(flows[i].after < static_cast<int>(i), "a flow follows an earlier one");
    left[i] = flows[i].bytes;
    if (flows[i].after < 0) {
      pending.emplace(flows[i].start, i);
    } else {
      followers[flows[i].after].push_back(i);
    }
  }
  size_t remaining = n;
  Time now = pending.empty() ? Time() : pending.begin()->first;
  std::vector<size_t> active;  // in index order
  while (remaining > 0) {
    while (!pending.empty() && pending.begin()->first <= now) {
      const size_t i = pending.begin()->second;
      active.insert(std::lower_bound(active.begin(), active.end(), i), i);
      pending.erase(pending.begin());
    }
    Time next = pending.empty() ? kTimeMax : pending.begin()->first;  // the next event: a flow starts or ends
    const std::vector<double> rate = FairRates(flows, active);
    std::vector<Time> finish(active.size());
    for (size_t a = 0; a < active.size(); ++a) {
      const double r = rate[a], seconds = left[active[a]] / r;
      if (left[active[a]] <= 0 || std::isinf(r)) {
        finish[a] = now;
      } else {  // a rate of 0 (a link full to rounding) waits for the others to end
        finish[a] = r > 0 && seconds < kLongestSeconds ? now + SecondsToTime(seconds) : kTimeMax;
      }
      next = std::min(next, finish[a]);
    }
    const double dt = TimeToSeconds(next - now);
    std::vector<size_t> going;
    for (size_t a = 0; a < active.size(); ++a) {
      const size_t i = active[a];
      if (finish[a] <= next) {
        --remaining;
        end[i] = next + flows[i].latency;
        for (const size_t f : followers[i]) pending.emplace(std::max(flows[f].start, end[i]), f);
      } else {
        left[i] = std::max(0.0, left[i] - rate[a] * dt);
        going.push_back(i);
      }
    }
    active = std::move(going);
    now = next;
  }
  return end;
}

}  // namespace hetsim::planner
