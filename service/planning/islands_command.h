// `hetsim islands --cluster C` as a request and its response, for the command line and the API alike:
// the cluster's GPU islands by Tangram's Algorithm 1 (topology/gpu_islands.h) under the request's
// tolerances, and the table the command prints (each island's sub-clusters, GPUs, peak and effective
// compute, HBM, bandwidths).
#ifndef HETSIM_SERVICE_PLANNING_ISLANDS_COMMAND_H_
#define HETSIM_SERVICE_PLANNING_ISLANDS_COMMAND_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/inputs.h"
#include "topology/gpu_islands.h"

namespace hetsim::planning {

struct IslandsRequest {
  proto::Source cluster;
  topology::IslandThresholds thresholds;  // tau_C, tau_M, tau_B (>= 0) and the merge factor (>= 1)
};

// InvalidArgument for tolerances no formation takes, named as the command line names them
// ("--tau-c: -1 must be >= 0"), in the order it checks them; the command line prints its usage after.
absl::Status CheckIslandsRequest(const IslandsRequest& request);

struct IslandsResponse {
  topology::IslandFormation formation;
  std::string table;  // the header line, the column names and one row per island, as the command prints
};

// Checks the request, loads and resolves the cluster, forms its islands and writes their table.
absl::StatusOr<IslandsResponse> FormIslands(const IslandsRequest& request);

}  // namespace hetsim::planning

#endif  // HETSIM_SERVICE_PLANNING_ISLANDS_COMMAND_H_
