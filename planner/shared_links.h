// Transfers that run at once over links they have in common, priced as max-min fair sharing (issue 39):
// the layer ranges' gradient all-reduces of a plan of pipelines overlap in time and cross the same
// links between islands, as the simulator's flows share a link's bandwidth (sim/network, max-min).
//
// Each flow is a bandwidth term (`bytes` over the slowest of its links) and a latency term paid after
// it. While flows overlap, progressive filling gives every unfrozen flow the same rate until one of its
// links is full: a flow at rate x uses x / capacity of each of its links (capacity: what the link alone
// gives that flow), and a link is full when its flows' uses add up to 1. Two equal flows over one link
// thus each get half its rate, and take twice one alone's bandwidth term.
#ifndef HETSIM_PLANNER_SHARED_LINKS_H_
#define HETSIM_PLANNER_SHARED_LINKS_H_

#include <utility>
#include <vector>

#include "base/time.h"

namespace hetsim::planner {

struct SharedFlow {
  Time start = 0;  // when it may begin
  // The flow it follows (an earlier index; -1: none): it begins no sooner than that one ends, latency
  // included (a range's gradient buckets, one at a time over its communicators).
  int after = -1;
  Time latency = 0;  // its latency terms, paid after its bytes
  double bytes = 0;  // what crosses its links
  // (link key, what that link alone carries for this flow in bytes/s); no links: no bandwidth term.
  std::vector<std::pair<int, double>> links;
};

// When each flow ends (start, shared bandwidth term, latency), in the order given. Deterministic.
std::vector<Time> ShareLinks(const std::vector<SharedFlow>& flows);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_SHARED_LINKS_H_
