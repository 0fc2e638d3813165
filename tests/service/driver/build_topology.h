// The topology of a hand-built Cluster message, built the way every command builds one
// (driver::BuildTopology: proto::ResolveCluster, then topology::Topology::Build). Messages carry no
// file name.
#ifndef HETSIM_TESTS_BUILD_TOPOLOGY_H_
#define HETSIM_TESTS_BUILD_TOPOLOGY_H_

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "proto/hetsim.pb.h"
#include "service/driver/cluster_topology.h"
#include "topology/device_graph.h"

namespace hetsim::testing {

inline absl::StatusOr<topology::Topology> BuildTopology(const v1::Cluster& cluster) {
  absl::StatusOr<std::unique_ptr<topology::Topology>> built = driver::BuildTopology(cluster, "");
  if (!built.ok()) return built.status();
  return std::move(**built);
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_BUILD_TOPOLOGY_H_
