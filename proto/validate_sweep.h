// Structural validation of a Sweep: base inputs named, axes well-formed, every axis path resolving to
// a scalar field of the schema with values of the right type, and a filter that only mentions axes.
// It does not load the base inputs (the sweep command does, relative to the sweep file).
#ifndef HETSIM_PROTO_VALIDATE_SWEEP_H_
#define HETSIM_PROTO_VALIDATE_SWEEP_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "proto/hetsim.pb.h"

namespace hetsim::proto {

// The planners a sweep may name (field `planner` and the "planner" axis).
bool IsKnownPlanner(absl::string_view name);

// Resolves an axis path such as "cluster.islands[1].node_count" against the schema: the root is
// "cluster", "model" or "plan"; every step names a field; "[i]" follows exactly the repeated fields;
// the last field is a singular scalar or enum. Returns that field, or an InvalidArgument explaining
// which step is wrong (without file or field-path prefix). The special path "planner" returns nullptr.
absl::StatusOr<const google::protobuf::FieldDescriptor*> ResolveSweepPath(absl::string_view path);

absl::Status ValidateSweep(const hetsim::v1::Sweep& sweep, absl::string_view file);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_VALIDATE_SWEEP_H_
