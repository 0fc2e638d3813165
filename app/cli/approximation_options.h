// `--exact`, `--ring-steps MODE` and `--boundary-flows MODE`: the fidelity of the commands that simulate
// plans (run, sweep): one definition, one help text, one parser. Without any of them the fidelity is
// chosen (service/driver/fidelity_choice.h: exact while affordable, else approximations measured under 0.5%).
#ifndef HETSIM_APP_CLI_APPROXIMATION_OPTIONS_H_
#define HETSIM_APP_CLI_APPROXIMATION_OPTIONS_H_

#include <string>

#include <boost/program_options.hpp>

#include "absl/status/status.h"
#include "sim/collectives/collective.h"
#include "sim/executor/executor.h"

namespace hetsim::app {

struct ApproximationNames {
  std::string ring_steps;      // "auto" or "aggregated"; empty: not given
  std::string boundary_flows;  // "all" or "representative"; empty: not given
  bool exact = false;
};

struct Approximations {
  sim::RingSteps ring_steps = sim::RingSteps::kAuto;
  sim::executor::BoundaryFlows boundary_flows = sim::executor::BoundaryFlows::kAll;
  bool choose_fidelity = true;  // none of the three options given: SimulateOptions.choose_fidelity
};

// Adds --exact, --ring-steps and --boundary-flows, stored in `*names`.
void AddApproximationOptions(boost::program_options::options_description& options, ApproximationNames* names);

// What `names` ask for; InvalidArgument starting "--ring-steps: ", "--boundary-flows: " or "--exact: "
// (an approximation asked for beside it) otherwise.
absl::StatusOr<Approximations> ParseApproximationOptions(const ApproximationNames& names);

}  // namespace hetsim::app

#endif  // HETSIM_APP_CLI_APPROXIMATION_OPTIONS_H_
