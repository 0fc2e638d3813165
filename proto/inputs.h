// The edge from what a user gives (a file's path, or a message in memory from the Python package) to
// validated messages, ready for the simulator: the cluster with GPU presets applied, the model resolved
// (inline or model_path, relative to the plan's folder), and the plan checked against both. Every command
// of the CLI and of app/api loads its inputs here, so both accept the same inputs with the same messages.
#ifndef HETSIM_PROTO_INPUTS_H_
#define HETSIM_PROTO_INPUTS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"

namespace hetsim::proto {

// Where one input comes from: a file (format from its extension), or a binary message in memory, named
// in error messages by `name` ("plan", "cluster", "plans[2]").
struct Source {
  bool is_file = false;
  std::string path;   // is_file: the file
  std::string bytes;  // else: the serialized message
  std::string name;

  static Source File(std::string path) { return {.is_file = true, .path = std::move(path), .bytes = {}, .name = {}}; }
  // What error messages call it: the path, or the name of a message in memory.
  const std::string& label() const { return is_file ? path : name; }
};

// The message of `source`, parsed but not validated.
absl::Status ParseSource(const Source& source, google::protobuf::Message* message);

// A cluster, validated, GPU presets applied.
absl::StatusOr<hetsim::v1::Cluster> LoadCluster(const Source& source);

// A model, validated.
absl::StatusOr<hetsim::v1::Model> LoadModel(const Source& source);

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

// The files a plan file makes a command read: the plan and, when it parses and names one, its model
// file. For the outputs a command must not write over (proto/output_files.h); not a check of the plan.
std::vector<std::string> PlanFilesRead(absl::string_view plan_path);

// Loads and validates the cluster, the model and the plan, in that order; the first file with problems
// decides the returned InvalidArgument (all of that file's problems, one per line). The plan's model is
// its inline one or the file at its model_path: relative to the plan's folder, or for a plan in memory
// to the working directory.
absl::StatusOr<PlanInputs> LoadPlanInputs(const Source& plan, const Source& cluster);
inline absl::StatusOr<PlanInputs> LoadPlanInputs(absl::string_view plan_path, absl::string_view cluster_path) {
  return LoadPlanInputs(Source::File(std::string(plan_path)), Source::File(std::string(cluster_path)));
}

// LoadPlanInputs for a plan that names no model (a plan written for several models), run with `model`
// (a file or a message): InvalidArgument when the plan names its own.
absl::StatusOr<PlanInputs> LoadPlanInputsWithModel(const Source& plan, const Source& cluster, const Source& model);

// The same checks for messages already in memory (sweeps substitute values and re-validate):
// `inputs.cluster` may still carry presets; they are applied in place.
absl::Status ValidatePlanInputs(PlanInputs& inputs);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_INPUTS_H_
