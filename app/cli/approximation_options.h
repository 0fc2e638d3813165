// `--ring-steps MODE` and `--boundary-flows MODE`, the opt-in approximations of frontier-scale runs,
// shared by the commands that simulate plans (run, sweep): one definition, one help text, one parser.
#ifndef HETSIM_APP_CLI_APPROXIMATION_OPTIONS_H_
#define HETSIM_APP_CLI_APPROXIMATION_OPTIONS_H_

#include <string>

#include <boost/program_options.hpp>

#include "absl/status/status.h"
#include "sim/collectives/collective.h"
#include "sim/executor/executor.h"

namespace hetsim::app {

struct ApproximationNames {
  std::string ring_steps = "auto";     // or "aggregated"
  std::string boundary_flows = "all";  // or "representative"
};

struct Approximations {
  sim::RingSteps ring_steps = sim::RingSteps::kAuto;
  sim::executor::BoundaryFlows boundary_flows = sim::executor::BoundaryFlows::kAll;
};

// Adds --ring-steps and --boundary-flows, stored in `*names`.
void AddApproximationOptions(boost::program_options::options_description& options, ApproximationNames* names);

// What `names` ask for; InvalidArgument starting "--ring-steps: " or "--boundary-flows: " otherwise.
absl::StatusOr<Approximations> ParseApproximationOptions(const ApproximationNames& names);

}  // namespace hetsim::app

#endif  // HETSIM_APP_CLI_APPROXIMATION_OPTIONS_H_
