#include "service/sweep/evaluator.h"

#include <utility>

#include "base/status_macros.h"
#include "planner/planner.h"
#include "proto/validate_plan.h"
#include "service/driver/plan_messages.h"
#include "service/driver/simulate.h"

namespace hetsim::sweep {
namespace {

absl::StatusOr<hetsim::v1::Report> Simulate(const proto::PlanInputs& inputs, const PointOptions& point) {
  driver::SimulateOptions options;
  options.max_events = point.max_events;
  options.max_wall_seconds = point.max_wall_seconds;
  driver::ApplyFidelity(point.fidelity, &options);
  return driver::SimulateReport(inputs, options);
}

}  // namespace

absl::StatusOr<hetsim::v1::Report> SimulationEvaluator::Evaluate(const PointInputs& point) const {
  if (point.has_plan) return Simulate(point.inputs, options_);
  HETSIM_ASSIGN_OR_RETURN(planner::PlannerKind kind, planner::ParsePlannerKind(point.planner));
  const hetsim::v1::Plan& settings = point.inputs.plan;
  planner::PlanRequest request;
  request.planner = kind;
  request.global_batch_size = settings.global_batch_size() > 0 ? settings.global_batch_size() : 128;
  request.micro_batch_size = settings.micro_batch_size();
  request.context_parallel = static_cast<int>(proto::ContextParallel(settings));
  request.grad_reduce_in_fp32 = settings.grad_reduce_in_fp32();
  request.cp_comm = proto::ContextParallelCommOf(settings);
  if (settings.h1f1b_epsilon() > 0) request.epsilon = settings.h1f1b_epsilon();
  request.threads = 1;
  HETSIM_ASSIGN_OR_RETURN(
      driver::Planned outcome,
      driver::PlanOnMessages({.model = point.inputs.model, .cluster = point.inputs.cluster}, request));
  proto::PlanInputs planned;
  planned.cluster = point.inputs.cluster;
  planned.cluster_path = point.inputs.cluster_path;
  planned.model = std::move(outcome.model);
  planned.plan = std::move(outcome.plan);  // the model inline: PlannerMessages names no path
  planned.plan_path = "the planned plan";
  if (settings.schedule() != hetsim::v1::SCHEDULE_UNSPECIFIED) planned.plan.set_schedule(settings.schedule());
  HETSIM_RETURN_IF_ERROR(proto::ValidatePlanInputs(planned));
  return Simulate(planned, options_);
}

}  // namespace hetsim::sweep
