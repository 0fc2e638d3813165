// `hetsim run` as one typed request that the command line and the API both run: the plan and cluster
// (files or messages), the what-if faults, the limits, the fidelity, what to record and whether to
// re-plan after failures. The front ends turn their flags or arguments into a RunRequest and the
// response into text or bytes; loading, fault validation, simulation and re-planning live here once.
//
//   driver::RunRequest request;
//   request.plan = proto::Source::File("plan.pbtxt");  request.cluster = proto::Source::File("cluster.pbtxt");
//   HETSIM_RETURN_IF_ERROR(driver::CheckRunRequest(request));           // before any file is read
//   HETSIM_ASSIGN_OR_RETURN(driver::LoadedRun run, driver::LoadRun(request));
//   // (the command line checks its output paths against run.inputs here)
//   HETSIM_ASSIGN_OR_RETURN(driver::Simulation sim, driver::SimulateRun(run));
#ifndef HETSIM_SERVICE_DRIVER_RUN_COMMAND_H_
#define HETSIM_SERVICE_DRIVER_RUN_COMMAND_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/hetsim.pb.h"
#include "proto/inputs.h"
#include "service/driver/resolve_faults.h"
#include "service/driver/simulate.h"
#include "sim/network/network.h"
#include "traces/chrome_trace.h"

namespace hetsim::driver {

// What-if faults as a user gives them (docs/faults.md): a Faults message, then single faults and a
// jitter in text format, each named in messages as the command line spells it ("--fault '...'").
struct FaultInputs {
  std::optional<proto::Source> file;     // a Faults message (--faults FILE, Python's faults=)
  std::vector<std::string> fault_texts;  // --fault 'gpu: 3 kind: SLOW factor: 2'
  std::string jitter_text;               // --jitter 'seed: 7 distribution: LOGNORMAL spread: 0.05'
  bool empty() const { return !file.has_value() && fault_texts.empty() && jitter_text.empty(); }
};

// The faults of `inputs`, validated against `cluster`: the file's, then each text fault; the jitter
// replaces the file's. InvalidArgument naming the file (or the option and its text) and the field.
struct LoadedFaults {
  hetsim::v1::Faults faults;
  std::vector<FaultSource> sources;  // per fault, for error messages
};
absl::StatusOr<LoadedFaults> LoadFaultInputs(const FaultInputs& inputs, const hetsim::v1::Cluster& cluster);

struct RunRequest {
  proto::Source plan;
  proto::Source cluster;
  FaultInputs faults;
  network::NetworkMode network_mode = network::NetworkMode::kMaxMinFair;
  bool ideal = false;             // ideal hardware on top of the cluster (Cluster.ideal)
  int64_t max_events = 0;         // 0 = no limit
  double max_wall_seconds = 0;    // 0 = no limit; from wall_start, setup included
  uint64_t max_memory_bytes = 0;  // 0 = the machine's physical memory
  // Chosen (exact while affordable, else the approximations measured under 0.5%) unless it asks for
  // the full simulation or names approximations (service/driver/fidelity_choice.h).
  FidelityRequest fidelity;
  std::optional<traces::TraceSelection> trace;  // set: record a Chrome trace
  bool sample_all_links = false;                // every link's busy time (the HTML page's link chart)
  std::string replan_planner;                   // set: re-plan after FAIL faults (hapt, tangram, ...)
  bool record_wall_time = true;                 // false: no wall times in the report (byte-identical)
  std::chrono::steady_clock::time_point wall_start = std::chrono::steady_clock::now();
};

// InvalidArgument for a negative --max-events or a --max-wall-seconds that is not a finite number >= 0:
// the one check of the run limits of every command that simulates.
absl::Status CheckRunLimits(int64_t max_events, double max_wall_seconds);

// InvalidArgument for a request no input can make valid (a negative limit, exact with an
// approximation), named as the command line spells its options; checked before any file is read.
absl::Status CheckRunRequest(const RunRequest& request);

// The request's inputs loaded and validated (the plan's model included), its faults validated against
// the cluster, and the simulation's options.
struct LoadedRun {
  proto::PlanInputs inputs;
  SimulateOptions options;
  std::string replan_planner;
};
absl::StatusOr<LoadedRun> LoadRun(const RunRequest& request);

// The iteration simulated; with a re-plan planner, Report.replan too.
absl::StatusOr<Simulation> SimulateRun(const LoadedRun& run);

}  // namespace hetsim::driver

#endif  // HETSIM_SERVICE_DRIVER_RUN_COMMAND_H_
