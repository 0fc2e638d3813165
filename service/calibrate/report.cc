#include "service/calibrate/report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hetsim::calibrate {
namespace {

// Every source's `notes` under `heading`; nothing when there are none (a clean fit's report is as before).
void AppendNotes(const std::vector<SourceFit>& fits, std::vector<std::string> SourceFit::*notes,
                 absl::string_view heading, std::string& out) {
  bool any = false;
  for (const SourceFit& f : fits) {
    for (const std::string& note : f.*notes) {
      if (!any) absl::StrAppend(&out, heading);
      any = true;
      absl::StrAppend(&out, note, "\n");
    }
  }
}

}  // namespace

double MeanAbsolutePercentError(const std::vector<SourceFit>& fits) {
  double sum = 0;
  int n = 0;
  for (const SourceFit& f : fits) {
    for (const CalibrationPoint& p : f.points) {
      sum += std::abs(p.predicted - p.measured) / p.measured;
      ++n;
    }
  }
  return n == 0 ? 0 : 100.0 * sum / n;
}

std::string FormatFitReport(const std::vector<SourceFit>& fits) {
  std::string out = "# hetsim calibrate: fit report (residual = (predicted - measured) / measured)\n";
  double worst = 0;
  for (const SourceFit& f : fits) {
    out += "# parameters: field, before, after\n";
    for (const FittedParameter& p : f.parameters)
      absl::StrAppendFormat(&out, "%s %.6g %.6g\n", p.field, p.before, p.after);
    out += "# points: where, what, measured us, predicted us, residual %\n";
    for (const CalibrationPoint& p : f.points) {
      const double residual = 100.0 * (p.predicted - p.measured) / p.measured;
      worst = std::max(worst, std::abs(residual));
      absl::StrAppendFormat(&out, "%s | %s | %.3f | %.3f | %+.2f\n", p.where, p.what, p.measured * 1e6,
                            p.predicted * 1e6, residual);
    }
  }
  absl::StrAppendFormat(&out, "MAPE %.2f %%, max |residual| %.2f %%\n", MeanAbsolutePercentError(fits), worst);
  AppendNotes(fits, &SourceFit::warnings, "# warnings\n", out);
  AppendNotes(fits, &SourceFit::problems, "# poor fit, accepted with --accept-poor-fit\n", out);
  return out;
}

}  // namespace hetsim::calibrate
