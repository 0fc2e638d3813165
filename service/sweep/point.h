// One point of a sweep made concrete: the base inputs with the point's values written in, validated
// the way `hetsim run` / `hetsim plan` validate files, and handed to a PointEvaluator that simulates
// (and, without a plan, first plans) it.
#ifndef HETSIM_SERVICE_SWEEP_POINT_H_
#define HETSIM_SERVICE_SWEEP_POINT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "proto/hetsim.pb.h"
#include "proto/inputs.h"
#include "service/sweep/space.h"

namespace hetsim::sweep {

struct PointInputs {
  int64_t point = 0;
  // cluster (presets applied) and model validated; plan validated against both when has_plan,
  // otherwise the planner's settings (global_batch_size and the like, from plan.* axes).
  proto::PlanInputs inputs;
  bool has_plan = false;
  std::string planner;  // when !has_plan
};

// What a sweep does with one point. Implementations must be safe to call from several threads at
// once, and deterministic: the same inputs give the same report.
class PointEvaluator {
 public:
  virtual ~PointEvaluator() = default;
  // A report (possibly with oom set), or a status whose code says why there is none:
  // InvalidArgument (inputs), FailedPrecondition / ResourceExhausted (no feasible plan), other (bug).
  virtual absl::StatusOr<hetsim::v1::Report> Evaluate(const PointInputs& point) const = 0;
};

// The inputs of `point`; InvalidArgument when the values make them invalid (the message names the
// file and field as `hetsim check` would).
absl::StatusOr<PointInputs> BuildPointInputs(const SweepSpace& space, const SweepBase& base, int64_t point);

// BuildPointInputs then the evaluator; exceptions thrown by the evaluator become an Internal status,
// so one bad point never stops a sweep.
absl::StatusOr<hetsim::v1::Report> EvaluatePoint(const SweepSpace& space, const SweepBase& base, int64_t point,
                                                 const PointEvaluator& evaluator);

}  // namespace hetsim::sweep

#endif  // HETSIM_SERVICE_SWEEP_POINT_H_
