#include "service/driver/simulate_pipelines.h"

#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "proto/pipeline_plans.h"
#include "proto/validate_plan.h"
#include "service/driver/build_setup.h"
#include "sim/executor/layer_range_sync.h"
#include "traces/chrome_trace.h"
#include "traces/pipelines_report.h"

namespace hetsim::driver {
namespace {

// What a plan of pipelines cannot run with yet.
absl::Status CheckOptions(const SimulateOptions& options) {
  if (options.faults.faults_size() > 0 || options.faults.has_jitter()) {
    return absl::InvalidArgumentError("--faults: not supported with Plan.pipelines (pipelines of different shapes)");
  }
  if (options.trace.has_value() && !options.trace->gpus.empty()) {
    return absl::InvalidArgumentError(
        "--trace-gpus: not supported with Plan.pipelines (each pipeline traces its own GPUs, or --trace-replica)");
  }
  if (options.sample_all_links) {
    return absl::InvalidArgumentError("--html: not supported with Plan.pipelines yet (the report names each pipeline)");
  }
  return absl::OkStatus();
}

// Pipeline p set up and executed alone, its stages' own data-parallel reduction left to the ranges.
absl::Status RunPipeline(const proto::PlanInputs& inputs, int p, const SimulateOptions& options, Simulation& out) {
  proto::PlanInputs mine = inputs;
  mine.plan = proto::PipelinePlan(inputs.plan, p);
  mine.microbatches = proto::MicrobatchCount(mine.plan);
  const WorkLimits limits = WorkLimitsOf(options);
  HETSIM_ASSIGN_OR_RETURN(std::unique_ptr<sim::executor::ExecutionSetup> setup,
                          BuildSetup(mine, options.network_mode, sim::executor::ReplicaReuse::kMapped, &limits));
  sim::executor::DropStageGradientSync(*setup);
  sim::executor::ExecutorOptions run;
  run.max_events = options.max_events;
  run.max_wall_seconds = options.max_wall_seconds;
  run.wall_start = CurrentWallLimit().start();
  run.grad_sync_ring_steps = options.grad_sync_ring_steps;
  run.boundary_flows = options.boundary_flows;
  PipelineSimulation& pipeline = out.pipelines.emplace_back();
  pipeline.name = inputs.plan.pipelines(p).name();
  if (options.trace.has_value()) {
    HETSIM_ASSIGN_OR_RETURN(pipeline.traced_gpus, traces::SelectTracedGpus(*setup, *options.trace));
    run.record_flows = true;
    run.sampled_links = traces::TraceLinks(*setup, pipeline.traced_gpus);
    run.link_sample_period = traces::TraceSamplePeriod(*setup);
    pipeline.sampled_links = run.sampled_links;
  }
  HETSIM_ASSIGN_OR_RETURN(pipeline.result, sim::executor::Execute(*setup, run));
  if (p == 0) {
    out.setup = std::move(setup);
    pipeline.setup = out.setup.get();
  } else {
    pipeline.owned = std::move(setup);
    pipeline.setup = pipeline.owned.get();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Simulation> SimulatePipelines(const proto::PlanInputs& given, const SimulateOptions& options) {
  HETSIM_RETURN_IF_ERROR(CheckOptions(options));
  Simulation out;
  out.inputs = given;
  if (options.ideal) out.inputs.cluster.set_ideal(true);
  const auto start = std::chrono::steady_clock::now();
  const WallLimit wall_limit(options.max_wall_seconds, start);  // every pipeline's setup and run
  std::optional<WallLimitScope> wall_scope;
  if (wall_limit.limited()) wall_scope.emplace(wall_limit);
  for (int p = 0; p < out.inputs.plan.pipelines_size(); ++p) {
    HETSIM_RETURN_IF_ERROR(RunPipeline(out.inputs, p, options, out));
  }
  out.setup_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::vector<sim::executor::PipelineRun> runs;
  for (const PipelineSimulation& p : out.pipelines) runs.push_back({p.setup, &p.result});
  HETSIM_ASSIGN_OR_RETURN(out.pipeline_sync, sim::executor::SyncPipelineGradients(runs, options.grad_sync_ring_steps));

  std::vector<traces::PipelineReportInput> reports;
  const traces::ReportOptions report_options = ReportOptionsFor(options);
  for (int p = 0; p < static_cast<int>(out.pipelines.size()); ++p) {
    PipelineSimulation& pipeline = out.pipelines[p];
    pipeline.result = sim::executor::WithPipelineSync(std::move(pipeline.result), out.pipeline_sync, p);
    reports.push_back({pipeline.name, pipeline.setup, &pipeline.result,
                       traces::BuildReport(*pipeline.setup, pipeline.result, report_options)});
  }
  out.result = out.pipelines.front().result;
  out.report = traces::MergePipelineReports(reports, out.pipeline_sync);
  if (report_options.wall_time_s.has_value()) out.report.set_wall_time_s(*report_options.wall_time_s);
  if (options.trace.has_value()) {
    std::vector<traces::PipelineTrace> traces;
    for (const PipelineSimulation& p : out.pipelines) {
      traces.push_back({p.name, p.setup, &p.result, p.traced_gpus, p.sampled_links});
    }
    out.trace_json = traces::PipelinesTraceJson(traces);
  }
  return out;
}

}  // namespace hetsim::driver
