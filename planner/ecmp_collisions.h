// How unevenly ECMP hashing spreads flows over equal-cost uplinks, for the planner's boundary model:
// a switch hashing its flows onto a few uplinks loads the busiest one with more than its share, and a
// transfer of many such switches waits for the busiest uplink of all of them.
#ifndef HETSIM_PLANNER_ECMP_COLLISIONS_H_
#define HETSIM_PLANNER_ECMP_COLLISIONS_H_

namespace hetsim::planner {

// The expected load of the busiest bin over `groups` independent groups, each throwing `flows` flows
// uniformly at random into `bins` bins (flows >= 0, bins >= 1, groups >= 1): balls into bins, exactly
// (P(max <= t) by a recurrence over bins, E[max] = sum over t of 1 - P(max <= t)^groups).
double ExpectedMaxLoad(int flows, int bins, int groups);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_ECMP_COLLISIONS_H_
