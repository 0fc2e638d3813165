// Validation of a Cluster: required fields, ranges, unique names, references between GPU types, node
// types and islands, and inter-island links that join all islands into one connected cluster.
#ifndef HETSIM_PROTO_VALIDATE_CLUSTER_H_
#define HETSIM_PROTO_VALIDATE_CLUSTER_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"

namespace hetsim::proto {

// Checks `cluster` as written; GPU presets are applied to a copy first, so values a preset supplies
// count as set. Every problem is one line "<file>: <field path>: <problem>" of the InvalidArgument.
absl::Status ValidateCluster(const hetsim::v1::Cluster& cluster, absl::string_view file);

// Loads `path`, validates it and returns it with GPU presets applied (the form the simulator uses).
absl::StatusOr<hetsim::v1::Cluster> LoadCluster(absl::string_view path);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_VALIDATE_CLUSTER_H_
