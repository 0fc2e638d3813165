#include "app/lib/sweep_evaluator.h"

#include <memory>
#include <utility>

#include "base/status_macros.h"
#include "planner/planner.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"
#include "traces/metrics.h"

namespace hetsim::app {
namespace {

absl::StatusOr<hetsim::v1::Report> Simulate(const proto::PlanInputs& inputs, const PointLimits& limits) {
  absl::StatusOr<std::unique_ptr<sim::executor::ExecutionSetup>> setup =
      sim::executor::BuildExecutionSetup(inputs, sim::NetworkMode::kMaxMinFair);
  if (!setup.ok()) return setup.status();
  sim::executor::ExecutorOptions options;
  options.max_events = limits.max_events;
  options.max_wall_seconds = limits.max_wall_seconds;
  HETSIM_ASSIGN_OR_RETURN(sim::executor::ExecutionResult result, sim::executor::Execute(**setup, options));
  return traces::BuildReport(**setup, result, {});
}

}  // namespace

absl::StatusOr<hetsim::v1::Report> SimulationEvaluator::Evaluate(const PointInputs& point) const {
  if (point.has_plan) return Simulate(point.inputs, limits_);
  HETSIM_ASSIGN_OR_RETURN(planner::PlannerKind kind, planner::ParsePlannerKind(point.planner));
  const hetsim::v1::Plan& settings = point.inputs.plan;
  planner::PlanRequest request;
  request.model = point.inputs.model;
  request.cluster = point.inputs.cluster;
  request.planner = kind;
  request.global_batch_size = settings.global_batch_size() > 0 ? settings.global_batch_size() : 128;
  request.micro_batch_size = settings.micro_batch_size();
  if (settings.h1f1b_epsilon() > 0) request.epsilon = settings.h1f1b_epsilon();
  request.threads = 1;
  HETSIM_ASSIGN_OR_RETURN(planner::PlanOutcome outcome, planner::MakePlan(request));
  proto::PlanInputs planned;
  planned.cluster = point.inputs.cluster;
  planned.cluster_path = point.inputs.cluster_path;
  planned.model = std::move(outcome.model);
  planned.plan = std::move(outcome.plan);
  planned.plan_path = "the planned plan";
  *planned.plan.mutable_model() = planned.model;
  if (settings.schedule() != hetsim::v1::SCHEDULE_UNSPECIFIED) planned.plan.set_schedule(settings.schedule());
  HETSIM_RETURN_IF_ERROR(proto::ValidatePlanInputs(planned));
  return Simulate(planned, limits_);
}

}  // namespace hetsim::app
