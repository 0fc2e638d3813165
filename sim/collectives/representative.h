// The opt-in approximation `hetsim collective --representative`: a collective made of symmetric parts
// (NCCL's channels, which are rotations of one another inside every node; hierarchical's rails; the
// shifts of an all-to-all) simulates a few of them, each standing for `multiplicity` parts, as weighted
// flows (Network::StartWeightedFlow).
//
// Links are pooled per class: links the symmetry maps onto one another (the same kinds of devices at
// both ends, the same islands and capacity; inside one node for links that touch a node; in the
// fabric, one switch's uplinks, or the links down into one switch). In the full collective, the parts
// active on one link of a node's class at an instant are the images of the representatives active on
// any link of the class: a channel's flow on GPU l's port meets the other channels' images of the
// representative's flows on GPU l - c's port, whatever they are doing then. So every representative
// hop moves to one canonical link of its class, at the link's own capacity, with weight
//   multiplicity x (the full collective's load on the class's busiest link) / (its load on the class):
// for g ports under g rotated channels, weight 1 and, at every instant, exactly the flows the full
// collective has on each port. A fabric switch's links take the parts as ECMP hashes them: the
// busiest carries the expected maximum of balls into bins (topology/ecmp_collisions.h), which is what the
// slowest part of the full collective waits for (an expectation: the full simulation's own hashes may
// collide more or less). A flat double tree also simulates the edges inside a node for one node per
// class of nodes placed alike in both trees (AppendDoubleTreeAllReduce's `node_classes`), and times
// each edge's first and last chunk without a flow (`timed_ends`, TransferGraph::SetTimed). Error
// measured in docs/decisions.md ("Representative collectives"), bounded by
// tests/sim/collectives/collectives_representative_test.cc.
#ifndef HETSIM_SIM_COLLECTIVES_REPRESENTATIVE_H_
#define HETSIM_SIM_COLLECTIVES_REPRESENTATIVE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "sim/collectives/primitives.h"
#include "sim/collectives/transfer_graph_internal.h"
#include "topology/device_graph.h"

namespace hetsim::collectives {

// Inter-node shifts an all-to-all's representative simulates (strata of the node distances).
inline constexpr int32_t kRepresentativeShifts = 4;

// The routes representatives' flows take and their per-hop weights, every hop moved to its class's
// canonical link and weighted as above; flat: path p's hops are [begin[p], begin[p + 1]). An ordinary
// path (multiplicity 0) has none.
struct RepresentativeRoutes {
  std::vector<size_t> begin;  // per path, and one past the last
  std::vector<LinkId> links;
  std::vector<double> weights;
  bool is_representative(size_t p) const { return !begin.empty() && begin[p + 1] > begin[p]; }
  std::span<const LinkId> route(size_t p) const { return {links.data() + begin[p], begin[p + 1] - begin[p]}; }
  std::span<const double> route_weights(size_t p) const { return {weights.data() + begin[p], begin[p + 1] - begin[p]}; }
};
// `routes` are the paths' physical routes; `multiplicity` is TransferGraph::multiplicities() (empty:
// no representative, an empty result); `group` the collective's GPUs (TransferGraph::group()), whose
// ports and NICs a node's classes rotate over.
RepresentativeRoutes RouteRepresentatives(const topology::Topology& topology,
                                          std::span<const std::span<const LinkId>> routes,
                                          std::span<const double> multiplicity, std::span<const GpuId> group);

// A direct all-to-all over `nodes` (every node the same number g of GPUs) as representative paths:
// GPU (a, l) sends to (a, l + 1), standing for its g - 1 peers in the node, and for each stratum j of
// min(kRepresentativeShifts, N - 1) strata [lo, hi) of the node shifts 1..N-1, to (a + d, l + j) with
// d the stratum's first quartile for even l and its third for odd l, standing for the stratum's
// shifts times g local peers: every GPU's NIC sends and receives exactly the full all-to-all's parts,
// and the node distances of each stratum are sampled at two points, so each tier of the fabric
// carries close to its share.
struct RepresentativePath {
  TransferPath path;
  double multiplicity;
};
std::vector<RepresentativePath> RepresentativeAllToAllPaths(const std::vector<Ranks>& nodes);
// The same paths as transfers of `bytes` / n each (the largest message), marked representative.
void AppendRepresentativeAllToAll(TransferGraph& g, const std::vector<Ranks>& nodes, int64_t bytes);

// Marks every path registered in `g` from index `first` on as standing for `multiplicity` paths.
void MarkRepresentative(TransferGraph& g, size_t first, double multiplicity);

}  // namespace hetsim::collectives

#endif  // HETSIM_SIM_COLLECTIVES_REPRESENTATIVE_H_
