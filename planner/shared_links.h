// Transfers that run at once over links they have in common, priced as max-min fair sharing (issue 39):
// the layer ranges' gradient all-reduces of a plan of pipelines overlap in time and cross the same
// links between islands, as the simulator's flows share a link's bandwidth (sim/network, max-min).
//
// Each flow is a bandwidth term (`bytes` over the slowest of its links) and a latency term paid after
// it. While flows overlap, progressive filling raises the rate each of the simulator's flows gets on every
// link until one is full: a transfer at rate x uses x / capacity of each of its links (capacity: what the
// link alone gives that transfer), and goes at its weight there (SharedLink::Weight: its flows on the link)
// x the rate per flow; a link is full when its transfers' uses add up to 1, and its transfers freeze where
// it is the link that holds them lowest. Two equal transfers of one flow each over one link thus each get
// half its rate, and take twice one alone's bandwidth term; with 2 flows and 1, 2/3 and 1/3.
#ifndef HETSIM_PLANNER_SHARED_LINKS_H_
#define HETSIM_PLANNER_SHARED_LINKS_H_

#include <utility>
#include <vector>

#include "base/time.h"

namespace hetsim::planner {

// One link a flow crosses. Its `flows` are the simulator's flows the transfer puts on the link (a ring's
// channels through a NIC, a double tree's two trees' edges across it), each of which the simulator's network
// gives an equal share (sim/network, max-min per flow): a collective of 2 flows beside one of 1 on a link gets
// 2/3 of it. `link_bytes_per_s` is the link's own rate, for every flow on it the same (0: `bytes_per_s`, the
// transfer's bytes being what crosses the link); a flow's pace per share of the link is then
// flows x bytes_per_s / link_bytes_per_s of its bytes (a tree moving 2/3 of a ring's bytes through the NIC in
// 2 flows goes 3 times as fast as a one-channel ring beside it, as the simulator runs them).
struct SharedLink {
  SharedLink(int key, double bytes_per_s, double flows = 1, double link_bytes_per_s = 0)
      : key(key), bytes_per_s(bytes_per_s), flows(flows), link_bytes_per_s(link_bytes_per_s) {}
  int key = 0;
  double bytes_per_s = 0;  // what the link alone carries for this transfer, bytes/s of its `bytes`
  double flows = 1;
  double link_bytes_per_s = 0;
  // Its bytes/s per unit of the rate each of the link's flows gets (the weight of its share).
  double Weight() const { return flows * (link_bytes_per_s > 0 ? bytes_per_s / link_bytes_per_s : 1.0); }
};

struct SharedFlow {
  Time start = 0;  // when it may begin
  // The flow it follows (an earlier index; -1: none): it begins no sooner than that one ends, latency
  // included (a range's gradient buckets, one at a time over its communicators).
  int after = -1;
  Time latency = 0;  // its latency terms, paid after its bytes
  double bytes = 0;  // what crosses its links
  // The links it crosses; none: no bandwidth term.
  std::vector<SharedLink> links;
};

// When each flow ends (start, shared bandwidth term, latency), in the order given. Deterministic.
std::vector<Time> ShareLinks(const std::vector<SharedFlow>& flows);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_SHARED_LINKS_H_
