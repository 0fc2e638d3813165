#include "app/cli/approximation_options.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hetsim::app {

void AddApproximationOptions(boost::program_options::options_description& options, ApproximationNames* names) {
  namespace po = boost::program_options;
  options.add_options()("ring-steps", po::value(&names->ring_steps)->value_name("MODE"),
                        "auto (default) or aggregated (approximation)")(
      "boundary-flows", po::value(&names->boundary_flows)->value_name("MODE"),
      "all (default) or representative (approximation)");
}

absl::StatusOr<Approximations> ParseApproximationOptions(const ApproximationNames& names) {
  Approximations out;
  // stepped is `collective`'s alone: a plan's rings are stepped up to 128 ranks under auto.
  absl::StatusOr<sim::RingSteps> steps = sim::ParseRingSteps(names.ring_steps);
  if (!steps.ok() || *steps == sim::RingSteps::kStepped) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--ring-steps: \"%s\" is not auto or aggregated", names.ring_steps));
  }
  out.ring_steps = *steps;
  absl::StatusOr<sim::executor::BoundaryFlows> flows = sim::executor::ParseBoundaryFlows(names.boundary_flows);
  if (!flows.ok()) return absl::InvalidArgumentError(absl::StrCat("--", flows.status().message()));
  out.boundary_flows = *flows;
  return out;
}

}  // namespace hetsim::app
