#include "service/driver/simulate_pipelines.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "proto/pipeline_plans.h"
#include "proto/resolve.h"
#include "proto/validate_plan.h"
#include "service/driver/build_setup.h"
#include "service/driver/resolve_faults.h"
#include "sim/executor/layer_range_shards.h"
#include "sim/executor/layer_range_sync.h"
#include "traces/chrome_trace.h"
#include "traces/fault_report.h"
#include "traces/pipelines_report.h"

namespace hetsim::driver {
namespace {

// The GPUs pipeline `setup` traces: with --trace-gpus those of the list it uses (another pipeline's are
// its), else the selection as for a plan of one pipeline.
absl::StatusOr<std::vector<bool>> TracedGpusOf(const executor::ExecutionSetup& setup,
                                               const traces::TraceSelection& selection) {
  if (selection.gpus.empty()) return traces::SelectTracedGpus(setup, selection);
  std::vector<bool> traced(setup.topology->num_gpus(), false);
  for (const auto& st : setup.stages) {
    for (GpuId g : st.layout.gpus) {
      traced[g.value()] = std::find(selection.gpus.begin(), selection.gpus.end(), g) != selection.gpus.end();
    }
  }
  return traced;
}

// --trace-gpus: every GPU listed is some pipeline's.
absl::Status CheckTracedGpusUsed(const traces::TraceSelection& selection, const std::vector<PipelineSimulation>& all) {
  for (GpuId g : selection.gpus) {
    const bool used = std::any_of(all.begin(), all.end(), [g](const PipelineSimulation& p) {
      return g.value() >= 0 && g.value() < static_cast<int32_t>(p.traced_gpus.size()) && p.traced_gpus[g.value()];
    });
    if (!used) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--trace-gpus: GPU %d is not used by any pipeline of the plan (its GPUs are listed by global id)",
          g.value()));
    }
  }
  return absl::OkStatus();
}

// Pipeline p set up, its stages' own data-parallel reduction left to the ranges, and its executor
// options (the traced GPUs and links when tracing).
// `range_gathers`: ZeRO-3's (BuildPipelineSetup).
absl::Status SetUpPipeline(const proto::PlanInputs& inputs, int p, const SimulateOptions& options, Simulation& out,
                           std::vector<executor::ExecutorOptions>& runs,
                           std::span<const executor::RangeGather> range_gathers) {
  const WorkLimits limits = WorkLimitsOf(options);
  // The first pipeline builds the cluster's topology and router; the others share them.
  HETSIM_ASSIGN_OR_RETURN(std::unique_ptr<executor::ExecutionSetup> setup,
                          BuildPipelineSetup(inputs, p, options.network_mode, &limits, out.setup.get(), range_gathers));
  executor::ExecutorOptions& run = runs.emplace_back();
  run.max_events = options.max_events;
  run.max_wall_seconds = options.max_wall_seconds;
  run.wall_start = CurrentWallLimit().start();
  run.grad_sync_ring_steps = options.grad_sync_ring_steps;
  run.boundary_flows = options.boundary_flows;
  if (options.faults.faults_size() > 0 || options.faults.has_jitter()) {
    // One set for the one cluster: resolved against the topology every pipeline shares, run once on
    // the shared network and on every pipeline's GPUs.
    if (p == 0) {
      HETSIM_ASSIGN_OR_RETURN(out.faults, ResolveFaults(options.faults, *setup->topology, options.fault_sources));
    }
    run.faults = &out.faults;
  }
  PipelineSimulation& pipeline = out.pipelines.emplace_back();
  pipeline.name = inputs.plan.pipelines(p).name();
  if (options.trace.has_value()) {
    HETSIM_ASSIGN_OR_RETURN(pipeline.traced_gpus, TracedGpusOf(*setup, *options.trace));
    run.record_flows = true;
    run.sampled_links = traces::TraceLinks(*setup, pipeline.traced_gpus);
    run.link_sample_period = traces::TraceSamplePeriod(*setup);
    pipeline.sampled_links = run.sampled_links;
  }
  if (options.sample_all_links && p == 0) {
    // The HTML page's link chart: the one network every pipeline shares, sampled by the first until
    // the last pipeline has ended.
    run.sample_whole_shared_run = true;
    run.sampled_links.resize(setup->topology->links().size());
    for (size_t l = 0; l < run.sampled_links.size(); ++l) run.sampled_links[l] = static_cast<LinkId>(l);
    run.link_sample_period = traces::TraceSamplePeriod(*setup);
    pipeline.sampled_links = run.sampled_links;
    out.sampled_links = run.sampled_links;
  }
  if (p == 0) {
    out.setup = std::move(setup);
    pipeline.setup = out.setup.get();
  } else {
    pipeline.owned = std::move(setup);
    pipeline.setup = pipeline.owned.get();
  }
  return absl::OkStatus();
}

// The pipelines' setups, in order.
std::vector<const executor::ExecutionSetup*> SetupsOf(const Simulation& out) {
  std::vector<const executor::ExecutionSetup*> setups;
  for (const PipelineSimulation& p : out.pipelines) setups.push_back(p.setup);
  return setups;
}

// Every pipeline and the layer ranges' all-reduces at once on one engine and one network: boundary
// flows of different pipelines and the ranges' collectives share the links they cross.
absl::Status RunPipelines(const proto::PlanInputs& inputs, const SimulateOptions& options, Simulation& out) {
  std::vector<executor::ExecutorOptions> runs;
  // The whole plan before the first setup: each pipeline's alone fitted while all of them did not
  // (every pipeline's passes; session 33).
  HETSIM_RETURN_IF_ERROR(CheckWorkEstimate(proto::ResolvePlan(inputs.plan, inputs.plan_path),
                                           ClusterGpus(inputs.cluster), WorkLimitsOf(options)));
  for (int p = 0; p < inputs.plan.pipelines_size(); ++p) {
    HETSIM_RETURN_IF_ERROR(SetUpPipeline(inputs, p, options, out, runs, {}));
  }
  std::vector<executor::LayerRangeGroup> ranges = executor::LayerRangeGroups(SetupsOf(out));
  // ZeRO-3: every pass gathers its layers over their ranges' groups, which need every pipeline's
  // layout: the pipelines are set up again with them (on the first setup's topology, kept alive).
  if (const std::vector<executor::RangeGather> gathers = executor::RangeGathersOf(ranges); !gathers.empty()) {
    out.pipelines.clear();  // the first setup stays until the new first one is built on its network
    runs.clear();
    for (int p = 0; p < inputs.plan.pipelines_size(); ++p) {
      HETSIM_RETURN_IF_ERROR(SetUpPipeline(inputs, p, options, out, runs, gathers));
    }
    ranges = executor::LayerRangeGroups(SetupsOf(out));
  }
  if (options.trace.has_value()) HETSIM_RETURN_IF_ERROR(CheckTracedGpusUsed(*options.trace, out.pipelines));
  // ZeRO: each stage's states shard over its ranges' groups, not its own replicas.
  std::vector<executor::ExecutionSetup*> mutable_setups{out.setup.get()};
  for (size_t p = 1; p < out.pipelines.size(); ++p) mutable_setups.push_back(out.pipelines[p].owned.get());
  std::vector<const executor::ExecutionSetup*> setups(mutable_setups.begin(), mutable_setups.end());
  HETSIM_RETURN_IF_ERROR(executor::CheckRangeBuckets(ranges, inputs.plan_path));
  HETSIM_RETURN_IF_ERROR(executor::ShardStatesOverRanges(mutable_setups, ranges));
  HETSIM_ASSIGN_OR_RETURN(executor::PipelinesResult run,
                          executor::ExecutePipelines(setups, runs, options.grad_sync_ring_steps));
  for (size_t p = 0; p < run.results.size(); ++p) out.pipelines[p].result = std::move(run.results[p]);
  out.pipeline_sync = std::move(run.sync);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Simulation> SimulatePipelines(const proto::PlanInputs& given, const SimulateOptions& options) {
  Simulation out;
  out.inputs = given;
  if (options.ideal) out.inputs.cluster.set_ideal(true);
  const auto start = std::chrono::steady_clock::now();
  const WallLimit wall_limit(options.max_wall_seconds, start);  // every pipeline's setup and the run
  std::optional<WallLimitScope> wall_scope;
  if (wall_limit.limited()) wall_scope.emplace(wall_limit);
  HETSIM_RETURN_IF_ERROR(RunPipelines(out.inputs, options, out));
  out.setup_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::vector<traces::PipelineReportInput> reports;
  const traces::ReportOptions report_options = ReportOptionsFor(options);
  for (int p = 0; p < static_cast<int>(out.pipelines.size()); ++p) {
    const PipelineSimulation& pipeline = out.pipelines[p];
    v1::Report report = traces::BuildReport(*pipeline.setup, pipeline.result, report_options);
    if (!out.faults.empty()) {
      traces::AddFaultsToReport(*pipeline.setup, pipeline.result, out.pipeline_sync.faults, out.faults, &report);
    }
    reports.push_back({pipeline.name, pipeline.setup, &pipeline.result, std::move(report)});
  }
  out.result = out.pipelines.front().result;
  out.report = traces::MergePipelineReports(reports, out.pipeline_sync);
  if (report_options.wall_time_s.has_value()) out.report.set_wall_time_s(*report_options.wall_time_s);
  if (options.trace.has_value()) {
    std::vector<traces::PipelineTrace> traces;
    for (const PipelineSimulation& p : out.pipelines) {
      traces.push_back({p.name, p.setup, &p.result, p.traced_gpus, p.sampled_links});
    }
    out.trace_json = traces::PipelinesTraceJson(traces, out.pipeline_sync.faults);
  }
  return out;
}

}  // namespace hetsim::driver
