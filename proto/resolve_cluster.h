// The one conversion of a Cluster message into spec::ClusterSpec (base/spec/cluster.h): node and GPU
// types looked up by name, GPU presets' figures as the message holds them, enums mapped to hetsim's
// own, Gb/s to bytes/s and ns to Time once, NCCL fabric presets filled, CLOS defaults applied.
//
//   auto cluster = proto::LoadCluster("cluster.pbtxt");  // validated, presets applied
//   auto spec = proto::ResolveCluster(*cluster, "cluster.pbtxt");
//   topology::Topology topology = topology::Topology::Build(*spec);
#ifndef HETSIM_PROTO_RESOLVE_CLUSTER_H_
#define HETSIM_PROTO_RESOLVE_CLUSTER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/spec/cluster.h"
#include "proto/hetsim.pb.h"

namespace hetsim::proto {

spec::IntraNodeFabric IntraNodeFabricOf(hetsim::v1::IntraNodeFabric fabric);  // UNSPECIFIED -> NVSwitch
spec::InterNodeFabric InterNodeFabricOf(hetsim::v1::InterNodeFabric fabric);  // UNSPECIFIED -> InfiniBand
spec::FabricTopology FabricTopologyOf(hetsim::v1::FabricTopology topology);   // UNSPECIFIED -> single switch

// Also refuses (InvalidArgument naming the field, "<file>: " first when `file` is not empty) what the
// topology could not build, since not every cluster comes from a validated file (calibration fits and
// the planner's surviving cluster are built by code): dangling names, zero counts and bandwidths,
// islands without NICs that must talk, latencies over one second, unusable NCCL figures, islands
// that no inter-island link joins. Each island's GPU is labelled "<file>: gpu_types[\"A100\"]".
absl::StatusOr<spec::ClusterSpec> ResolveCluster(const hetsim::v1::Cluster& cluster, absl::string_view file);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_RESOLVE_CLUSTER_H_
