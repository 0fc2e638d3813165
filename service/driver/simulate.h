// The one way to simulate a plan: validated inputs and the run's options in; the execution setup, the
// executed iteration, its Report and (when asked) its Chrome trace out. `hetsim run`, `validate`,
// sweeps, calibration, fidelity predictions, re-planning, the executor benchmark and the plan-sim
// fuzzer all come through here, so the chain "set up, execute, build the report" is written once.
//
//   absl::StatusOr<proto::PlanInputs> inputs = proto::LoadPlanInputs("plan.pbtxt", "cluster.pbtxt");
//   absl::StatusOr<driver::Simulation> sim = driver::SimulatePlan(*inputs, {.max_events = 1'000'000});
//   sim->report.iteration_time_ms();  sim->setup->num_stages();  sim->result.events;
#ifndef HETSIM_SERVICE_DRIVER_SIMULATE_H_
#define HETSIM_SERVICE_DRIVER_SIMULATE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/hetsim.pb.h"
#include "proto/inputs.h"
#include "service/driver/build_setup.h"
#include "service/driver/fidelity_choice.h"
#include "service/driver/resolve_faults.h"
#include "sim/executor/executor.h"
#include "sim/executor/layer_range_sync.h"
#include "sim/executor/setup.h"
#include "sim/faults/fault_set.h"
#include "sim/network/network.h"
#include "traces/chrome_trace.h"

namespace hetsim::driver {

struct SimulateOptions {
  network::NetworkMode network_mode = network::NetworkMode::kMaxMinFair;
  // Ideal hardware on top of the cluster file (Cluster.ideal; a file's own `ideal: true` stays).
  bool ideal = false;
  // What-if faults, validated against the cluster (docs/faults.md), and where each came from (for
  // error messages); empty = none. Resolved against the setup's topology here.
  hetsim::v1::Faults faults;
  std::vector<driver::FaultSource> fault_sources;
  uint64_t max_events = 0;      // 0 = no limit; reaching it fails the run (ResourceExhausted)
  double max_wall_seconds = 0;  // 0 = no limit; holds from the setup's start (base/wall_limit.h)
  // The plan's estimated memory (sim/executor/flow_estimate.h) must fit it before anything is set up;
  // 0 = the machine's physical memory.
  uint64_t max_memory_bytes = 0;
  // Set: the run records what a Chrome trace needs and Simulation.trace_json holds it.
  std::optional<traces::TraceSelection> trace;
  // Set: the run samples the busy time of every link (Simulation.sampled_links), for the HTML report's
  // link chart; the trace still shows only its own links.
  bool sample_all_links = false;
  // Set: Report.wall_time_s is the wall time since this instant (the command's start); unset: left out
  // (byte-identical reports).
  std::optional<std::chrono::steady_clock::time_point> wall_clock_start;
  // Gradient-sync rings (ExecutorOptions::grad_sync_ring_steps): kAggregated is the opt-in
  // approximation `run --ring-steps aggregated`, named in Report.approximations.
  collectives::RingSteps grad_sync_ring_steps = collectives::RingSteps::kAuto;
  // Boundary transfers (ExecutorOptions::boundary_flows): kRepresentative is the opt-in
  // approximation `run --boundary-flows representative`, named in Report.approximations.
  executor::BoundaryFlows boundary_flows = executor::BoundaryFlows::kAll;
  // Set (`hetsim run` and sweeps without --exact or an approximation flag): the fidelity is chosen
  // (service/driver/fidelity_choice.h): exact while affordable, else the approximations measured under
  // 0.5% for the shape, named in Report.approximation_choice. Unset: exactly the two fields above.
  bool choose_fidelity = false;
};

// The limits the plan's estimate is checked against before setup. A run with a GPU failure may end
// before every pass has run, so --max-events is then left to the run itself.
inline WorkLimits WorkLimitsOf(const SimulateOptions& options) {
  const bool may_stop_early = options.faults.faults_size() > 0;
  return {.max_events = may_stop_early ? 0 : options.max_events, .max_memory_bytes = options.max_memory_bytes};
}

// The fidelity a user asks for (`--exact`, `--ring-steps`, `--boundary-flows`; Python's exact=): nothing
// (the fidelity is chosen), the full simulation, or approximations by name.
struct FidelityRequest {
  bool exact = false;
  std::optional<collectives::RingSteps> ring_steps;       // kAuto or kAggregated
  std::optional<executor::BoundaryFlows> boundary_flows;  // kAll or kRepresentative
};

// InvalidArgument, named as the command line spells its options, for `exact` beside an approximation
// and for ring steps other than auto and aggregated (stepped is `hetsim collective`'s alone).
absl::Status CheckFidelityRequest(const FidelityRequest& request);

// Sets `options`' fidelity fields as `request` asks: chosen when it names nothing.
void ApplyFidelity(const FidelityRequest& request, SimulateOptions* options);

// The options every command that simulates a plan starts from: the fidelity chosen as `hetsim run`
// chooses it, or, with `exact` (`--exact`, Python's exact=True), the full simulation.
inline SimulateOptions DefaultFidelity(bool exact) {
  SimulateOptions options;
  ApplyFidelity({.exact = exact, .ring_steps = std::nullopt, .boundary_flows = std::nullopt}, &options);
  return options;
}

// How the report names the aggregated gradient-sync rings (docs/performance.md measures the error).
inline constexpr const char* kAggregatedGradSyncApproximation =
    "aggregated ring steps in gradient synchronisation (--ring-steps aggregated; its error against the "
    "full simulation is measured in docs/performance.md)";

// How the report names representative boundary flows.
inline constexpr const char* kRepresentativeBoundaryFlowsApproximation =
    "representative boundary flows: one weighted flow per group of replicas' flows in the same role "
    "(--boundary-flows representative; its error against the full simulation is measured in "
    "docs/performance.md)";

// One pipeline of a plan of pipelines (Plan.pipelines) as it ran in the iteration.
struct PipelineSimulation {
  std::string name;
  const executor::ExecutionSetup* setup = nullptr;  // owned here, or Simulation.setup for the first
  std::unique_ptr<executor::ExecutionSetup> owned;
  executor::ExecutionResult result;  // its execution with the iteration's gradient sync
  std::vector<bool> traced_gpus;     // when a trace was asked for
  std::vector<LinkId> sampled_links;
};

struct Simulation {
  proto::PlanInputs inputs;  // the inputs as simulated (the cluster ideal under SimulateOptions.ideal)
  std::unique_ptr<executor::ExecutionSetup> setup;
  executor::ExecutionResult result;
  faults::FaultSet faults;            // the options' faults, resolved
  hetsim::v1::Report report;          // with the faults' part when there are any
  std::vector<bool> traced_gpus;      // per global GPU id, when a trace was asked for
  std::string trace_json;             // the Chrome trace, when asked for
  std::vector<LinkId> sampled_links;  // the links whose busy time result.link_busy samples
  double setup_wall_s = 0;            // wall seconds spent building the setup (the executor benchmark)
  // Plan.pipelines: every pipeline (setup and result above are the first's) and the layer ranges'
  // gradient all-reduces; empty for a plan of one pipeline.
  std::vector<PipelineSimulation> pipelines;
  executor::PipelinesSyncResult pipeline_sync;
  FidelityChoice fidelity;  // the approximations in force, chosen or asked for
};

// Errors as the pieces report them: InvalidArgument naming file and field for inputs the setup or the
// faults reject (and "--trace-replica" / "--trace-gpus" for a bad trace selection), ResourceExhausted
// for a run limit.
absl::StatusOr<Simulation> SimulatePlan(const proto::PlanInputs& inputs, const SimulateOptions& options = {});

// The report alone, for callers that need nothing else (sweeps, calibration, re-planning).
absl::StatusOr<hetsim::v1::Report> SimulateReport(const proto::PlanInputs& inputs, const SimulateOptions& options = {});

}  // namespace hetsim::driver

#endif  // HETSIM_SERVICE_DRIVER_SIMULATE_H_
