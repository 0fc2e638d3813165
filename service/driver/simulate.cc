#include "service/driver/simulate.h"

#include <chrono>
#include <optional>
#include <utility>

#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "service/driver/build_setup.h"
#include "service/driver/simulate_pipelines.h"
#include "sim/executor/flow_estimate.h"
#include "traces/fault_report.h"
#include "traces/metrics.h"

namespace hetsim::driver {
namespace {

// The executor's options for `options`, once the setup exists (faults and trace links need it).
// The approximations in force: chosen (SimulateOptions.choose_fidelity) or as the options ask.
FidelityChoice FidelityFor(const SimulateOptions& options, const executor::ExecutionSetup& setup) {
  if (options.choose_fidelity) return ChooseFidelity(setup, options.faults);
  FidelityChoice c;
  c.ring_steps = options.grad_sync_ring_steps;
  c.boundary_flows = options.boundary_flows;
  if (c.approximated()) {
    c.shape = ClassifyShape(setup, options.faults);
    c.estimated_exact_flows = executor::EstimateExactFlows(setup).total();
  }
  return c;
}

absl::StatusOr<executor::ExecutorOptions> ExecutorOptionsFor(const SimulateOptions& options, Simulation& out) {
  executor::ExecutorOptions run;
  run.max_events = options.max_events;
  run.max_wall_seconds = options.max_wall_seconds;
  out.fidelity = FidelityFor(options, *out.setup);
  run.grad_sync_ring_steps = out.fidelity.ring_steps;
  run.boundary_flows = out.fidelity.boundary_flows;
  if (options.faults.faults_size() > 0 || options.faults.has_jitter()) {
    HETSIM_ASSIGN_OR_RETURN(out.faults,
                            driver::ResolveFaults(options.faults, *out.setup->topology, options.fault_sources));
  }
  run.faults = &out.faults;
  if (options.trace.has_value()) {
    HETSIM_ASSIGN_OR_RETURN(out.traced_gpus, traces::SelectTracedGpus(*out.setup, *options.trace));
    run.record_flows = true;
    run.sampled_links = traces::TraceLinks(*out.setup, out.traced_gpus);
    run.link_sample_period = traces::TraceSamplePeriod(*out.setup);
  }
  if (options.sample_all_links) {
    run.sampled_links.resize(out.setup->topology->links().size());
    for (size_t l = 0; l < run.sampled_links.size(); ++l) run.sampled_links[l] = static_cast<LinkId>(l);
    run.link_sample_period = traces::TraceSamplePeriod(*out.setup);
  }
  out.sampled_links = run.sampled_links;
  return run;
}

}  // namespace

traces::ReportOptions ReportOptionsFor(const SimulateOptions& options) {
  traces::ReportOptions report_options;
  if (options.grad_sync_ring_steps == collectives::RingSteps::kAggregated) {
    report_options.approximations.push_back(kAggregatedGradSyncApproximation);
  }
  if (options.boundary_flows == executor::BoundaryFlows::kRepresentative) {
    report_options.approximations.push_back(kRepresentativeBoundaryFlowsApproximation);
  }
  if (options.wall_clock_start.has_value()) {
    report_options.wall_time_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - *options.wall_clock_start).count();
  }
  return report_options;
}

absl::Status CheckFidelityRequest(const FidelityRequest& request) {
  if (request.ring_steps == collectives::RingSteps::kStepped) {
    return absl::InvalidArgumentError("--ring-steps: \"stepped\" is not auto or aggregated");
  }
  if (request.exact && (request.ring_steps == collectives::RingSteps::kAggregated ||
                        request.boundary_flows == executor::BoundaryFlows::kRepresentative)) {
    return absl::InvalidArgumentError(
        "--exact: the full simulation takes no approximation (drop --ring-steps aggregated / --boundary-flows "
        "representative)");
  }
  return absl::OkStatus();
}

void ApplyFidelity(const FidelityRequest& request, SimulateOptions* options) {
  options->choose_fidelity = !request.exact && !request.ring_steps && !request.boundary_flows;
  options->grad_sync_ring_steps = request.ring_steps.value_or(collectives::RingSteps::kAuto);
  options->boundary_flows = request.boundary_flows.value_or(executor::BoundaryFlows::kAll);
}

absl::StatusOr<Simulation> SimulatePlan(const proto::PlanInputs& inputs, const SimulateOptions& options) {
  if (!inputs.plan.pipelines().empty()) return SimulatePipelines(inputs, options);
  Simulation out;
  const auto start = std::chrono::steady_clock::now();
  // --max-wall-seconds holds from here: the setup's collectives can take minutes before the first event.
  // 0 keeps the caller's limit (a calibration's --max-wall-seconds around the runs it fits).
  const WallLimit wall_limit(options.max_wall_seconds, start);
  std::optional<WallLimitScope> wall_scope;
  if (wall_limit.limited()) wall_scope.emplace(wall_limit);
  const WorkLimits limits = WorkLimitsOf(options);
  if (options.ideal && !inputs.cluster.ideal()) {
    proto::PlanInputs ideal = inputs;
    ideal.cluster.set_ideal(true);
    HETSIM_ASSIGN_OR_RETURN(out.setup,
                            BuildSetup(ideal, options.network_mode, executor::ReplicaReuse::kMapped, &limits));
    out.inputs = std::move(ideal);
  } else {
    HETSIM_ASSIGN_OR_RETURN(out.setup,
                            BuildSetup(inputs, options.network_mode, executor::ReplicaReuse::kMapped, &limits));
    out.inputs = inputs;
  }
  out.setup_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  HETSIM_ASSIGN_OR_RETURN(executor::ExecutorOptions run, ExecutorOptionsFor(options, out));
  run.wall_start = start;
  HETSIM_ASSIGN_OR_RETURN(out.result, executor::Execute(*out.setup, run));

  traces::ReportOptions report_options;
  if (out.fidelity.ring_steps == collectives::RingSteps::kAggregated) {
    report_options.approximations.push_back(kAggregatedGradSyncApproximation);
  }
  if (out.fidelity.boundary_flows == executor::BoundaryFlows::kRepresentative) {
    report_options.approximations.push_back(kRepresentativeBoundaryFlowsApproximation);
  }
  if (options.wall_clock_start.has_value()) {
    report_options.wall_time_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - *options.wall_clock_start).count();
  }
  out.report = traces::BuildReport(*out.setup, out.result, report_options);
  // A small exact run's report stays as it was (byte-identical goldens); a large one says why it is exact.
  if (out.fidelity.approximated() || out.fidelity.estimated_exact_flows > kExactFlowLimit) {
    *out.report.mutable_approximation_choice() = ApproximationChoiceOf(out.fidelity);
  }
  if (!out.faults.empty()) traces::AddFaultsToReport(*out.setup, out.result, out.faults, &out.report);
  if (options.trace.has_value()) {
    const std::vector<LinkId> trace_links = traces::TraceLinks(*out.setup, out.traced_gpus);
    out.trace_json = traces::ChromeTraceJson(*out.setup, out.result, out.traced_gpus, run.sampled_links, &trace_links);
  }
  return out;
}

absl::StatusOr<hetsim::v1::Report> SimulateReport(const proto::PlanInputs& inputs, const SimulateOptions& options) {
  HETSIM_ASSIGN_OR_RETURN(Simulation out, SimulatePlan(inputs, options));
  return std::move(out.report);
}

}  // namespace hetsim::driver
