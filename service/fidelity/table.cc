#include "service/fidelity/table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hetsim::fidelity {
namespace {

std::string Bounds(const hetsim::v1::ValidationBounds& b) {
  std::string out;
  if (b.max_mape_percent() > 0) out = absl::StrFormat("MAPE <= %g%%", b.max_mape_percent());
  if (b.max_abs_error_percent() > 0) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", absl::StrFormat("every |error| <= %g%%", b.max_abs_error_percent()));
  }
  if (b.max_calibrated_mape_percent() > 0) {
    absl::StrAppend(&out, out.empty() ? "" : ", ",
                    absl::StrFormat("calibrated (k = 3) MAPE <= %g%%", b.max_calibrated_mape_percent()));
  }
  if (b.min_top1_agreement() > 0) {
    absl::StrAppend(&out, out.empty() ? "" : ", ",
                    absl::StrFormat("top plan right in >= %g of the groups", b.min_top1_agreement()));
  }
  if (b.max_mean_regret_percent() > 0) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", absl::StrFormat("mean regret <= %g%%", b.max_mean_regret_percent()));
  }
  return out.empty() ? "none" : out;
}

// The ranking within groups, and the groups whose top plan hetsim gets wrong.
void AppendGroups(const hetsim::v1::FidelitySet& set, std::string& out) {
  if (set.groups().empty()) return;
  int agree = 0;
  for (const auto& g : set.groups()) agree += g.top1_agrees();
  absl::StrAppendFormat(&out, "  groups %d: tau %.3f (mean), top plan right in %d of %d, mean regret %.1f%%\n",
                        set.groups_size(), set.group_kendall_tau(), agree, set.groups_size(),
                        set.mean_regret_percent());
  for (const auto& g : set.groups()) {
    if (g.top1_agrees()) continue;
    absl::StrAppendFormat(&out, "    %s: picks %s, measured best %s (%.1f%% faster)\n", g.name(), g.predicted_best(),
                          g.measured_best(), g.regret_percent());
  }
}

void AppendCalibrations(const hetsim::v1::FidelitySet& set, std::string& out) {
  if (set.calibrations().empty()) return;
  absl::StrAppend(&out,
                  "  calibrated on k runs, the others held out: MAPE mean (worst choice), max |error|, signed; "
                  "median fitted values\n");
  for (const auto& c : set.calibrations()) {
    absl::StrAppendFormat(&out,
                          "    k %d (%5d choices)  MAPE %5.2f%% (%5.2f%%)  max %5.2f%%  signed %+5.2f%%  GEMM %+.3f  "
                          "iteration %+.1f ms  pass %+.0f us  inter-node %+.3f  memory-bound %+.3f  "
                          "collective %+.0f us  chose %s in %.0f%%",
                          c.k(), c.choices(), c.mape_percent(), c.worst_mape_percent(), c.max_abs_error_percent(),
                          c.signed_error_percent(), c.gemm_scale(), c.iteration_overhead_delta_ms(),
                          c.pass_overhead_delta_us(), c.network_scale(), c.memory_kernel_scale(),
                          c.collective_overhead_delta_us(), c.usual_values(), 100 * c.usual_values_share());
    if (c.pinned_share() > 0) absl::StrAppendFormat(&out, "  pinned in %.0f%%", 100 * c.pinned_share());
    if (c.weak_fit_share() > 0) absl::StrAppendFormat(&out, "  weak in %.0f%%", 100 * c.weak_fit_share());
    out += "\n";
  }
}

}  // namespace

std::string FormatFidelityTables(const hetsim::v1::FidelityReport& report) {
  std::string out;
  for (const hetsim::v1::FidelitySet& set : report.sets()) {
    size_t name_width = 4, setup_width = 5;
    for (const auto& c : set.cases()) {
      name_width = std::max(name_width, c.name().size());
      setup_width = std::max(setup_width, c.setup().size());
    }
    const std::string unit = set.cases().empty() ? "" : set.cases(0).unit();
    absl::StrAppendFormat(&out, "%s (%s): %d cases, %s\n", set.name(), set.file(), set.cases_size(), unit);
    absl::StrAppendFormat(&out, "  %-*s  %-*s %10s %10s %9s %12s\n", name_width, "case", setup_width, "setup",
                          "measured", "predicted", "error", "time (ms)");
    for (const auto& c : set.cases()) {
      absl::StrAppendFormat(&out, "  %-*s  %-*s %10.1f %10.1f %+8.1f%% %12.1f\n", name_width, c.name(), setup_width,
                            c.setup(), c.measured(), c.predicted(), c.error_percent(), c.predicted_time_ms());
    }
    absl::StrAppendFormat(&out, "  MAPE %.2f%%   max |error| %.2f%% (%s)   signed %+.2f%%   Kendall tau %.3f\n",
                          set.mape_percent(), set.max_abs_error_percent(), set.worst_case(), set.signed_error_percent(),
                          set.kendall_tau());
    AppendGroups(set, out);
    AppendCalibrations(set, out);
    absl::StrAppendFormat(&out, "  bounds: %s: %s\n", Bounds(set.bounds()),
                          set.violations().empty() ? "met" : absl::StrFormat("NOT met (%d)", set.violations_size()));
    for (const std::string& v : set.violations()) absl::StrAppendFormat(&out, "    %s\n", v);
    out += "\n";
  }
  return out;
}

}  // namespace hetsim::fidelity
