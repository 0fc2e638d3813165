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
  return out.empty() ? "none" : out;
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
    absl::StrAppendFormat(&out, "  MAPE %.2f%%   max |error| %.2f%% (%s)   Kendall tau %.3f\n", set.mape_percent(),
                          set.max_abs_error_percent(), set.worst_case(), set.kendall_tau());
    absl::StrAppendFormat(&out, "  bounds: %s: %s\n", Bounds(set.bounds()),
                          set.violations().empty() ? "met" : absl::StrFormat("NOT met (%d)", set.violations_size()));
    for (const std::string& v : set.violations()) absl::StrAppendFormat(&out, "    %s\n", v);
    out += "\n";
  }
  return out;
}

}  // namespace hetsim::fidelity
