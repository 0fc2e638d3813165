// One call that turns the paths a user gives (a plan and a cluster) into validated messages, ready for
// the simulator: the cluster with GPU presets applied, the model resolved (inline or model_path,
// relative to the plan's folder), and the plan checked against both.
#ifndef HETSIM_PROTO_INPUTS_H_
#define HETSIM_PROTO_INPUTS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"

namespace hetsim::proto {

struct PlanInputs {
  hetsim::v1::Cluster cluster;  // GPU presets applied
  hetsim::v1::Model model;      // the plan's inline model or the file at its model_path
  hetsim::v1::Plan plan;        // as written
  std::string plan_path;
  std::string cluster_path;
  std::string model_path;    // resolved path of the model file; empty when the model is inline
  int layer_count = 0;       // LayerCount(model)
  int64_t microbatches = 0;  // global_batch_size / micro_batch_size
};

// `relative` as seen from the folder of `file`; absolute paths and empty strings are returned as-is.
std::string ResolveRelativeTo(absl::string_view file, absl::string_view relative);

// Loads and validates the cluster, the model and the plan, in that order; the first file with problems
// decides the returned InvalidArgument (all of that file's problems, one per line).
absl::StatusOr<PlanInputs> LoadPlanInputs(absl::string_view plan_path, absl::string_view cluster_path);

// The plan's model into `inputs` (the plan's inline one, or the file at `model_path`: its model_path
// as the caller resolves it, relative to the plan's folder or, for a plan in memory, as written), then
// ValidatePlanInputs. The step LoadPlanInputs and app/api (plans passed as bytes) share.
absl::Status ReadModelAndValidate(PlanInputs& inputs, absl::string_view model_path);

// The same checks for messages already in memory (sweeps substitute values and re-validate):
// `inputs.cluster` may still carry presets; they are applied in place.
absl::Status ValidatePlanInputs(PlanInputs& inputs);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_INPUTS_H_
