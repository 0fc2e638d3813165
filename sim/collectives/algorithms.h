// From a request to a concrete algorithm: channel and chunk counts, hierarchical's inter-node
// algorithm, the on-link alpha-beta estimate, the automatic choice, and the TransferGraph to simulate.
#ifndef HETSIM_SIM_COLLECTIVES_ALGORITHMS_H_
#define HETSIM_SIM_COLLECTIVES_ALGORITHMS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/collectives/collective.h"
#include "sim/collectives/transfer_graph_internal.h"
#include "topology/routing.h"

namespace hetsim::collectives {

struct CollectiveShape {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;  // never kAuto
  int32_t channels = 1;
  int32_t chunks = 1;
  // Hierarchical only: how nodes all-reduce among themselves (kRing or kTree).
  CollectiveAlgorithm inter_node = CollectiveAlgorithm::kRing;
  // How rings and trees run: kStepped, kAggregated, or kAuto (by their size, see RingSteps).
  RingSteps ring_steps = RingSteps::kAuto;
  bool aggregated = false;      // at least one ring or tree of the graph runs aggregated
  bool representative = false;  // requested, and the group is symmetric enough (representative.h)
  // The representative by default (CollectiveRequest::representative_by_default), not requested: its
  // tree chunk ends stay flows (no timed transfers), the measured exact form.
  bool representative_by_default = false;
  // NCCL protocol (kSimple when ideal) and the collective's launch latency (0 when ideal).
  topology::NcclProtocol protocol = topology::NcclProtocol::kSimple;
  Time launch_latency = 0;
  // A tree all-reduce across nodes under NCCL's model: its bytes x this (>= 1) on every link, so that no channel
  // runs faster than NCCL's per-channel tree bandwidth (tuning.cc, perChMaxTreeBws; NcclTreeChannelCapGBps in
  // algorithms.cc). 1 otherwise.
  double channel_cap_factor = 1.0;
  Seconds estimated_seconds;  // alpha-beta on the actual links, launch latency included
  // Rings and trees (not broadcast's): the estimate's byte-independent part, its steps' latencies and the
  // launch, what NCCL's tuner calls an algorithm's latency (NcclRunsTree in algorithms.cc).
  Seconds latency_seconds;
};

struct AlgorithmEstimate {
  CollectiveAlgorithm algorithm;
  Seconds seconds;
  topology::NcclProtocol protocol = topology::NcclProtocol::kSimple;  // the fastest for this algorithm
};

struct ShapeChoice {
  CollectiveShape shape;
  std::vector<AlgorithmEstimate> estimates;  // every algorithm considered, in AlgorithmsFor order
};

// Completes the shape of `algorithm` (not kAuto) run with `protocol` for a validated request: the
// request's channels and chunks when set, otherwise defaults (chunk counts minimize the estimate).
// InvalidArgument when the algorithm cannot run on this group (hierarchical needs >= 2 nodes with
// equal GPU counts); NotFound when a route is missing.
absl::StatusOr<CollectiveShape> ShapeFor(const topology::Topology& topology, topology::Router& router,
                                         const CollectiveRequest& request, CollectiveAlgorithm algorithm,
                                         topology::NcclProtocol protocol = topology::NcclProtocol::kSimple);

// The request's algorithm, or for kAuto the one with the smallest estimate (ties: AlgorithmsFor order),
// each with its fastest protocol (CandidateProtocols; ties: LL, LL128, Simple order). A run limit
// (base/wall_limit.h) once the calling thread's --max-wall-seconds has passed.
absl::StatusOr<ShapeChoice> ChooseShape(const topology::Topology& topology, topology::Router& router,
                                        const CollectiveRequest& request);

// The collective's transfers. Once the calling thread's wall limit has passed it stops between
// channels (or rails) and returns a partial graph: callers check CurrentWallLimit() before using it.
TransferGraph BuildTransferGraph(const topology::Topology& topology, const CollectiveRequest& request,
                                 const CollectiveShape& shape);

}  // namespace hetsim::collectives

#endif  // HETSIM_SIM_COLLECTIVES_ALGORITHMS_H_
