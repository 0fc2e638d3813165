// `--exact`, `--ring-steps MODE` and `--boundary-flows MODE`: the fidelity of the commands that simulate
// plans (run, sweep): one definition, one help text, one parser. Without any of them the fidelity is
// chosen (service/driver/fidelity_choice.h: exact while affordable, else approximations measured under 0.5%).
#ifndef HETSIM_APP_CLI_APPROXIMATION_OPTIONS_H_
#define HETSIM_APP_CLI_APPROXIMATION_OPTIONS_H_

#include <string>

#include <boost/program_options.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "service/driver/simulate.h"

namespace hetsim::cli {

struct ApproximationNames {
  std::string ring_steps;      // "auto" or "aggregated"; empty: not given
  std::string boundary_flows;  // "all" or "representative"; empty: not given
  bool exact = false;
};

// Adds --exact, --ring-steps and --boundary-flows, stored in `*names`.
void AddApproximationOptions(boost::program_options::options_description& options, ApproximationNames* names);

// What `names` ask for; InvalidArgument starting "--ring-steps: ", "--boundary-flows: " or "--exact: "
// (an approximation asked for beside it) otherwise.
absl::StatusOr<driver::FidelityRequest> ParseApproximationOptions(const ApproximationNames& names);

}  // namespace hetsim::cli

#endif  // HETSIM_APP_CLI_APPROXIMATION_OPTIONS_H_
