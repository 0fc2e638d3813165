#include "service/driver/run_command.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "proto/io.h"
#include "proto/validate_faults.h"
#include "proto/validate_problems.h"
#include "service/driver/run_replan.h"

namespace hetsim::driver {
namespace {

// One message in text format from the command line's `option`, validated by `validate` against the cluster.
template <typename Message, typename Validate>
absl::StatusOr<Message> TextOption(absl::string_view option, const std::string& text, const v1::Cluster& cluster,
                                   Validate validate) {
  const std::string source = absl::StrFormat("%s '%s'", option, text);
  Message message;
  HETSIM_RETURN_IF_ERROR(proto::ParseMessage(text, proto::FileFormat::kText, source, &message));
  proto::Problems p(source);
  validate(message, cluster, "", p);
  HETSIM_RETURN_IF_ERROR(p.ToStatus());
  return message;
}

}  // namespace

absl::StatusOr<LoadedFaults> LoadFaultInputs(const FaultInputs& inputs, const v1::Cluster& cluster) {
  LoadedFaults out;
  if (inputs.file) {
    HETSIM_ASSIGN_OR_RETURN(out.faults, LoadFaults(*inputs.file, cluster));
    out.sources = SourcesOf(out.faults, inputs.file->label());
  }
  for (const std::string& text : inputs.fault_texts) {
    HETSIM_ASSIGN_OR_RETURN(*out.faults.add_faults(),
                            TextOption<v1::Fault>("--fault", text, cluster, proto::ValidateFault));
    out.sources.push_back({absl::StrFormat("--fault '%s'", text), ""});
  }
  if (!inputs.jitter_text.empty()) {
    HETSIM_ASSIGN_OR_RETURN(*out.faults.mutable_jitter(),
                            TextOption<v1::Jitter>("--jitter", inputs.jitter_text, cluster, proto::ValidateJitter));
  }
  return out;
}

absl::Status CheckRunLimits(int64_t max_events, double max_wall_seconds) {
  if (max_events < 0) {
    return absl::InvalidArgumentError(absl::StrFormat("--max-events: %d is negative (0 = no limit)", max_events));
  }
  return ValidateMaxWallSeconds(max_wall_seconds, "--max-wall-seconds");
}

absl::Status CheckRunRequest(const RunRequest& request) {
  HETSIM_RETURN_IF_ERROR(CheckRunLimits(request.max_events, request.max_wall_seconds));
  return CheckFidelityRequest(request.fidelity);
}

absl::StatusOr<LoadedRun> LoadRun(const RunRequest& request) {
  HETSIM_RETURN_IF_ERROR(CheckRunRequest(request));
  LoadedRun run;
  HETSIM_ASSIGN_OR_RETURN(run.inputs, proto::LoadPlanInputs(request.plan, request.cluster));
  SimulateOptions& o = run.options;
  o.network_mode = request.network_mode;
  o.ideal = request.ideal;
  o.max_events = static_cast<uint64_t>(request.max_events);
  o.max_wall_seconds = request.max_wall_seconds;
  o.max_memory_bytes = request.max_memory_bytes;
  ApplyFidelity(request.fidelity, &o);
  o.trace = request.trace;
  o.sample_all_links = request.sample_all_links;
  if (request.record_wall_time) o.wall_clock_start = request.wall_start;
  if (!request.faults.empty()) {
    HETSIM_ASSIGN_OR_RETURN(LoadedFaults loaded, LoadFaultInputs(request.faults, run.inputs.cluster));
    o.faults = std::move(loaded.faults);
    o.fault_sources = std::move(loaded.sources);
  }
  run.replan_planner = request.replan_planner;
  return run;
}

absl::StatusOr<Simulation> SimulateRun(const LoadedRun& run) {
  HETSIM_ASSIGN_OR_RETURN(Simulation simulated, SimulatePlan(run.inputs, run.options));
  if (!run.replan_planner.empty()) {
    const RunReplanOptions replan{.planner = run.replan_planner,
                                  .network_mode = run.options.network_mode,
                                  .max_events = run.options.max_events,
                                  .max_wall_seconds = run.options.max_wall_seconds,
                                  .record_wall_time = run.options.wall_clock_start.has_value()};
    HETSIM_RETURN_IF_ERROR(AddReplan(simulated.inputs, run.options.faults, replan, &simulated.report));
  }
  return simulated;
}

}  // namespace hetsim::driver
