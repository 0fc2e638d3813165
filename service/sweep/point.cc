#include "service/sweep/point.h"

#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "proto/gpu_presets.h"
#include "proto/layer_count.h"
#include "proto/validate_cluster.h"
#include "proto/validate_model.h"

namespace hetsim::sweep {

absl::StatusOr<PointInputs> BuildPointInputs(const SweepSpace& space, const SweepBase& base, int64_t point) {
  SweepBase in = base;
  space.Apply(point, &in);
  PointInputs p;
  p.point = point;
  p.has_plan = in.has_plan;
  p.planner = std::move(in.planner);
  proto::PlanInputs& pi = p.inputs;
  pi.cluster = std::move(in.cluster);
  pi.model = std::move(in.model);
  pi.plan = std::move(in.plan);
  pi.cluster_path = std::move(in.cluster_path);
  pi.model_path = std::move(in.model_path);
  pi.plan_path = std::move(in.plan_path);
  if (p.has_plan) {
    HETSIM_RETURN_IF_ERROR(proto::ValidatePlanInputs(pi));
    return p;
  }
  HETSIM_RETURN_IF_ERROR(proto::ValidateCluster(pi.cluster, pi.cluster_path));
  HETSIM_RETURN_IF_ERROR(proto::ApplyGpuPresets(&pi.cluster, pi.cluster_path));
  HETSIM_RETURN_IF_ERROR(proto::ValidateModel(pi.model, pi.model_path));
  pi.layer_count = proto::LayerCount(pi.model);
  return p;
}

absl::StatusOr<hetsim::v1::Report> EvaluatePoint(const SweepSpace& space, const SweepBase& base, int64_t point,
                                                 const PointEvaluator& evaluator) {
  HETSIM_ASSIGN_OR_RETURN(PointInputs in, BuildPointInputs(space, base, point));
  try {
    return evaluator.Evaluate(in);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("exception: ", e.what()));
  } catch (...) {
    return absl::InternalError("unknown exception");
  }
}

}  // namespace hetsim::sweep
