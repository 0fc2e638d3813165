#include "app/cli/approximation_options.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace hetsim::cli {

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

absl::StatusOr<driver::FidelityRequest> ParseApproximationOptions(const ApproximationNames& names) {
  driver::FidelityRequest out{.exact = names.exact, .ring_steps = std::nullopt, .boundary_flows = std::nullopt};
  if (!names.ring_steps.empty()) {
    absl::StatusOr<collectives::RingSteps> steps = collectives::ParseRingSteps(names.ring_steps);
    if (!steps.ok()) {  // "stepped" parses; CheckFidelityRequest refuses it with the same message
      return absl::InvalidArgumentError(
          absl::StrFormat("--ring-steps: \"%s\" is not auto or aggregated", names.ring_steps));
    }
    out.ring_steps = *steps;
  }
  if (!names.boundary_flows.empty()) {
    absl::StatusOr<executor::BoundaryFlows> flows = executor::ParseBoundaryFlows(names.boundary_flows);
    if (!flows.ok()) return absl::InvalidArgumentError(absl::StrCat("--", flows.status().message()));
    out.boundary_flows = *flows;
  }
  HETSIM_RETURN_IF_ERROR(driver::CheckFidelityRequest(out));
  return out;
}

}  // namespace hetsim::cli
