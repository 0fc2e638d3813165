// One collective, alone on the cluster: choose the algorithm, build its transfers, run them on the
// flow-level network, and report nccl-tests' figures.
#ifndef HETSIM_SIM_COLLECTIVES_SIMULATE_H_
#define HETSIM_SIM_COLLECTIVES_SIMULATE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sim/collectives/algorithms.h"
#include "sim/collectives/collective.h"
#include "sim/network/network.h"
#include "topology/routing.h"

namespace hetsim::collectives {

// The network's links, one per topology link and with the same ids.
std::vector<network::LinkSpec> NetworkLinks(const topology::Topology& topology);

struct CollectiveResult {
  CollectiveShape shape;                     // the algorithm that ran, with its channels and chunks
  std::vector<AlgorithmEstimate> estimates;  // alpha-beta estimates that decided an automatic choice
  Time time = 0;                             // simulated, from the first flow to the last byte
  double algbw_bytes_per_s = 0;              // bytes / time (nccl-tests' algbw)
  double busbw_bytes_per_s = 0;              // algbw x BusBandwidthFactor (nccl-tests' busbw)
  uint64_t flows = 0;
  uint64_t events = 0;
  network::NetworkStats network;  // the max-min work: recomputes, flows visited and re-rated
  network::NetworkMode network_mode = network::NetworkMode::kMaxMinFair;
};

// Runs `simulator` until no event is left, in slices of 65,536 events, between which the calling
// thread's wall limit (base/wall_limit.h) is checked: its run-limit status names `during`.
absl::Status RunWithinWallLimit(engine::Simulator& simulator, absl::string_view during);

// Validates the request (InvalidArgument naming the field), then simulates it. The calling thread's
// wall limit holds throughout (a 16,384-GPU all-reduce runs for minutes).
absl::StatusOr<CollectiveResult> SimulateCollective(const topology::Topology& topology, topology::Router& router,
                                                    const CollectiveRequest& request,
                                                    network::NetworkMode mode = network::NetworkMode::kMaxMinFair);

}  // namespace hetsim::collectives

#endif  // HETSIM_SIM_COLLECTIVES_SIMULATE_H_
