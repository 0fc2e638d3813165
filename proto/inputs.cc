#include "proto/inputs.h"

#include <filesystem>

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

absl::StatusOr<PlanInputs> LoadPlanInputs(absl::string_view plan_path, absl::string_view cluster_path) {
  PlanInputs in;
  in.plan_path = std::string(plan_path);
  in.cluster_path = std::string(cluster_path);
  HETSIM_RETURN_IF_ERROR(Load(cluster_path, &in.cluster));
  HETSIM_RETURN_IF_ERROR(Load(plan_path, &in.plan));
  HETSIM_RETURN_IF_ERROR(ReadModelAndValidate(in, ResolveRelativeTo(plan_path, in.plan.model_path())));
  return in;
}

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

}  // namespace hetsim::proto
