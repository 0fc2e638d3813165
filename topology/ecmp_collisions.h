// How unevenly ECMP hashing spreads flows over equal-cost uplinks, for the planner's boundary model and
// the representative collectives: a switch hashing its flows onto a few uplinks loads the busiest one
// with more than its share, and a transfer of many such switches waits for the busiest uplink of all.
#ifndef HETSIM_TOPOLOGY_ECMP_COLLISIONS_H_
#define HETSIM_TOPOLOGY_ECMP_COLLISIONS_H_

#include <cstdint>

namespace hetsim::topology {

// The expected load of the busiest bin over `groups` independent groups, each throwing `flows` flows
// uniformly at random into `bins` bins (flows >= 0, bins >= 1, groups >= 1): balls into bins, exactly
// (P(max <= t) by a recurrence over bins, E[max] = sum over t of 1 - P(max <= t)^groups).
double ExpectedMaxLoad(int flows, int bins, int groups);
// ExpectedMaxLoad computed once per process for each (flows, bins, groups): it costs bins x flows x
// the busiest load squared, and the planner and the representative collectives ask for few shapes
// many times.
double CachedExpectedMaxLoad(int flows, int bins, int groups);

// The same for any number of flows: exact up to kExactBusiestFlows flows; above, with the bins'
// binomial loads taken as independent (P(max <= t) = P(load <= t)^(bins x groups); within 2.5% of
// exact, low, above the switch: tested).
double ExpectedBusiestLoad(int64_t flows, int bins, int groups);
inline constexpr int64_t kExactBusiestFlows = 96;

}  // namespace hetsim::topology

#endif  // HETSIM_TOPOLOGY_ECMP_COLLISIONS_H_
