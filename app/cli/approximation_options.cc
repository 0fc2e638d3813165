#include "app/cli/approximation_options.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hetsim::app {

void AddApproximationOptions(boost::program_options::options_description& options, ApproximationNames* names) {
  namespace po = boost::program_options;
  options.add_options()("exact", po::bool_switch(&names->exact),
                        "the full simulation, whatever its size (default: approximations measured under 0.5% "
                        "when the exact run would be slow)")(
      "ring-steps", po::value(&names->ring_steps)->value_name("MODE"),
      "auto (exact) or aggregated (approximation); given, it replaces the default's choice")(
      "boundary-flows", po::value(&names->boundary_flows)->value_name("MODE"),
      "all (exact) or representative (approximation); given, it replaces the default's choice");
}

absl::StatusOr<Approximations> ParseApproximationOptions(const ApproximationNames& names) {
  Approximations out;
  out.choose_fidelity = !names.exact && names.ring_steps.empty() && names.boundary_flows.empty();
  if (!names.ring_steps.empty()) {
    // stepped is `collective`'s alone: a plan's rings are stepped up to 128 ranks under auto.
    absl::StatusOr<sim::RingSteps> steps = sim::ParseRingSteps(names.ring_steps);
    if (!steps.ok() || *steps == sim::RingSteps::kStepped) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--ring-steps: \"%s\" is not auto or aggregated", names.ring_steps));
    }
    out.ring_steps = *steps;
  }
  if (!names.boundary_flows.empty()) {
    absl::StatusOr<sim::executor::BoundaryFlows> flows = sim::executor::ParseBoundaryFlows(names.boundary_flows);
    if (!flows.ok()) return absl::InvalidArgumentError(absl::StrCat("--", flows.status().message()));
    out.boundary_flows = *flows;
  }
  if (names.exact && (out.ring_steps == sim::RingSteps::kAggregated ||
                      out.boundary_flows == sim::executor::BoundaryFlows::kRepresentative)) {
    return absl::InvalidArgumentError(
        "--exact: the full simulation takes no approximation (drop --ring-steps aggregated / --boundary-flows "
        "representative)");
  }
  return out;
}

}  // namespace hetsim::app
