// The one way from a validated cluster message to what the network models run on: the cluster
// resolved once (proto::ResolveCluster), its topology (topology::Topology::Build) and a router on it.
// Commands, the API, calibration and the tests start here; the planner, below the driver, resolves
// and builds the same two steps itself.
//
//   auto cluster = proto::LoadCluster("cluster.pbtxt");
//   auto network = driver::BuildClusterNetwork(*cluster, "cluster.pbtxt");
//   collectives::SimulateCollective(*network->topology, *network->router, request);
#ifndef HETSIM_SERVICE_DRIVER_CLUSTER_TOPOLOGY_H_
#define HETSIM_SERVICE_DRIVER_CLUSTER_TOPOLOGY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "topology/device_graph.h"
#include "topology/routing.h"

namespace hetsim::driver {

// The topology of `cluster` (presets applied); a cluster it cannot be built from is named by `file`
// ("<file>: islands[1].node_type: ..."; no prefix when `file` is empty).
absl::StatusOr<std::unique_ptr<topology::Topology>> BuildTopology(const hetsim::v1::Cluster& cluster,
                                                                  absl::string_view file);

struct ClusterNetwork {
  std::unique_ptr<topology::Topology> topology;
  std::unique_ptr<topology::Router> router;  // routes on *topology
};

// BuildTopology and a router on the topology.
absl::StatusOr<ClusterNetwork> BuildClusterNetwork(const hetsim::v1::Cluster& cluster, absl::string_view file);

}  // namespace hetsim::driver

#endif  // HETSIM_SERVICE_DRIVER_CLUSTER_TOPOLOGY_H_
