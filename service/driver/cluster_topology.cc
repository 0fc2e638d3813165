#include "service/driver/cluster_topology.h"

#include <utility>

#include "base/status_macros.h"
#include "proto/resolve_cluster.h"

namespace hetsim::driver {

absl::StatusOr<std::unique_ptr<topology::Topology>> BuildTopology(const hetsim::v1::Cluster& cluster,
                                                                  absl::string_view file) {
  HETSIM_ASSIGN_OR_RETURN(spec::ClusterSpec resolved, proto::ResolveCluster(cluster, file));
  auto topology = std::make_unique<topology::Topology>(topology::Topology::Build(std::move(resolved)));
  HETSIM_RETURN_IF_ERROR(topology->CheckComplete());
  return topology;
}

absl::StatusOr<ClusterNetwork> BuildClusterNetwork(const hetsim::v1::Cluster& cluster, absl::string_view file) {
  ClusterNetwork out;
  HETSIM_ASSIGN_OR_RETURN(out.topology, BuildTopology(cluster, file));
  out.router = std::make_unique<topology::Router>(*out.topology);
  return out;
}

}  // namespace hetsim::driver
