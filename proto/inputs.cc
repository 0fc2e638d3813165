#include "proto/inputs.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "proto/framework_profile.h"
#include "proto/gpu_presets.h"
#include "proto/io.h"
#include "proto/layer_count.h"
#include "proto/validate_cluster.h"
#include "proto/validate_model.h"
#include "proto/validate_plan.h"

namespace hetsim::proto {

std::string ResolveRelativeTo(absl::string_view file, absl::string_view relative) {
  const std::filesystem::path rel{std::string(relative)};
  if (relative.empty() || rel.is_absolute()) return std::string(relative);
  return (std::filesystem::path(std::string(file)).parent_path() / rel).lexically_normal().string();
}

std::vector<std::string> PlanFilesRead(absl::string_view plan_path) {
  std::vector<std::string> files = {std::string(plan_path)};
  hetsim::v1::Plan plan;
  if (ParseSource(Source::File(std::string(plan_path)), &plan).ok() && !plan.model_path().empty()) {
    files.push_back(ResolveRelativeTo(plan_path, plan.model_path()));
  }
  return files;
}

absl::Status ValidatePlanInputs(PlanInputs& in) {
  HETSIM_RETURN_IF_ERROR(ValidateCluster(in.cluster, in.cluster_path));
  HETSIM_RETURN_IF_ERROR(ApplyGpuPresets(&in.cluster, in.cluster_path));
  if (in.plan.model_source_case() == hetsim::v1::Plan::MODEL_SOURCE_NOT_SET) {
    return absl::InvalidArgumentError(
        absl::StrCat(in.plan_path, ": model: required: a model (inline) or a model_path"));
  }
  const bool inline_model = in.model_path.empty();
  HETSIM_RETURN_IF_ERROR(
      ValidateModel(in.model, inline_model ? in.plan_path : in.model_path, inline_model ? "model." : ""));
  ApplyFrameworkProfile(&in.plan, in.model);  // before the checks: they judge the plan that runs
  HETSIM_RETURN_IF_ERROR(ValidatePlan(in.plan, in.cluster, in.model, in.plan_path));
  in.layer_count = LayerCount(in.model);
  in.microbatches = MicrobatchCount(in.plan);
  return absl::OkStatus();
}

absl::Status ParseSource(const Source& source, google::protobuf::Message* message) {
  if (source.is_file) return Load(source.path, message);
  return ParseMessage(source.bytes, FileFormat::kBinary, source.name, message);
}

absl::StatusOr<hetsim::v1::Cluster> LoadCluster(const Source& source) {
  if (source.is_file) return LoadCluster(source.path);
  hetsim::v1::Cluster cluster;
  HETSIM_RETURN_IF_ERROR(ParseSource(source, &cluster));
  HETSIM_RETURN_IF_ERROR(ValidateCluster(cluster, source.name));
  HETSIM_RETURN_IF_ERROR(ApplyGpuPresets(&cluster, source.name));
  return cluster;
}

absl::StatusOr<hetsim::v1::Model> LoadModel(const Source& source) {
  hetsim::v1::Model model;
  HETSIM_RETURN_IF_ERROR(ParseSource(source, &model));
  HETSIM_RETURN_IF_ERROR(ValidateModel(model, source.label()));
  return model;
}

namespace {

// The plan's model into `in` (the plan's inline one, or the file at `model_path`), then the checks.
absl::Status ReadModelAndValidate(PlanInputs& in, absl::string_view model_path) {
  if (in.plan.has_model()) {
    in.model = in.plan.model();
  } else if (!in.plan.model_path().empty()) {
    in.model_path = std::string(model_path);
    if (absl::Status s = Load(in.model_path, &in.model); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(in.plan_path, ": model_path: cannot load \"", in.plan.model_path(),
                                                 "\":\n", s.message()));
    }
  }  // else ValidatePlan reports the missing model
  return ValidatePlanInputs(in);
}

}  // namespace

absl::StatusOr<PlanInputs> LoadPlanInputs(const Source& plan, const Source& cluster) {
  PlanInputs in;
  in.plan_path = plan.label();
  in.cluster_path = cluster.label();
  HETSIM_RETURN_IF_ERROR(ParseSource(cluster, &in.cluster));
  HETSIM_RETURN_IF_ERROR(ParseSource(plan, &in.plan));
  const std::string& model_path = in.plan.model_path();
  HETSIM_RETURN_IF_ERROR(
      ReadModelAndValidate(in, plan.is_file ? ResolveRelativeTo(plan.path, model_path) : model_path));
  return in;
}

}  // namespace hetsim::proto

namespace hetsim::proto {

absl::StatusOr<PlanInputs> LoadPlanInputsWithModel(const Source& plan, const Source& cluster, const Source& model) {
  PlanInputs in;
  in.plan_path = plan.label();
  in.cluster_path = cluster.label();
  HETSIM_RETURN_IF_ERROR(ParseSource(cluster, &in.cluster));
  HETSIM_RETURN_IF_ERROR(ParseSource(plan, &in.plan));
  if (in.plan.has_model() || !in.plan.model_path().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(in.plan_path, ": model: the plan names its model (--model is for a plan without one)"));
  }
  HETSIM_ASSIGN_OR_RETURN(in.model, LoadModel(model));
  if (model.is_file) {
    in.model_path = model.path;
    in.plan.set_model_path(model.path);
  } else {
    *in.plan.mutable_model() = in.model;
  }
  HETSIM_RETURN_IF_ERROR(ValidatePlanInputs(in));
  return in;
}

}  // namespace hetsim::proto
