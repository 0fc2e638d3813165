#include "service/fidelity/chart.h"

#include <vector>

#include "absl/strings/str_format.h"
#include "service/evaluation/scatter_chart.h"

namespace hetsim::fidelity {

namespace v1 = hetsim::v1;

absl::StatusOr<std::string> FidelityChartSvg(const v1::FidelityReport& report) {
  evaluation::ScatterChart chart;
  std::vector<const v1::FidelityCase*> cases;
  for (const v1::FidelitySet& set : report.sets()) {
    for (const v1::FidelityCase& c : set.cases()) cases.push_back(&c);
    chart.summaries.push_back(absl::StrFormat("%s: MAPE %.1f%%, max |error| %.1f%%, Kendall tau %.2f", set.name(),
                                              set.mape_percent(), set.max_abs_error_percent(), set.kendall_tau()));
  }
  if (cases.empty()) return absl::InvalidArgumentError("--chart: no case to chart");
  for (const v1::FidelityCase* c : cases) {
    if (c->unit() != cases.front()->unit()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--chart: the cases measure different quantities (%s, %s); chart one kind of set at a time",
                          cases.front()->unit(), c->unit()));
    }
    chart.points.push_back({c->name(), c->measured(), c->predicted(), c->error_percent()});
  }
  chart.unit = cases.front()->unit();
  return evaluation::ScatterChartSvg(chart);
}

}  // namespace hetsim::fidelity
