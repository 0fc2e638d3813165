#include "service/fidelity/stats.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "service/evaluation/rank_stats.h"

namespace hetsim::fidelity {

void SummarizeSet(hetsim::v1::FidelitySet* set) {
  std::vector<double> measured, predicted;
  double sum = 0, worst = -1;
  for (const hetsim::v1::FidelityCase& c : set->cases()) {
    const double e = std::fabs(c.error_percent());
    sum += e;
    if (e > worst) {
      worst = e;
      set->set_worst_case(c.name());
    }
    measured.push_back(c.measured());
    predicted.push_back(c.predicted());
  }
  set->set_mape_percent(set->cases().empty() ? 0 : sum / set->cases_size());
  set->set_max_abs_error_percent(std::max(0.0, worst));
  set->set_kendall_tau(evaluation::KendallTauB(measured, predicted));

  set->clear_violations();
  const hetsim::v1::ValidationBounds& b = set->bounds();
  if (b.max_mape_percent() > 0 && set->mape_percent() > b.max_mape_percent()) {
    set->add_violations(absl::StrFormat("MAPE %.2f%% > %g%%", set->mape_percent(), b.max_mape_percent()));
  }
  if (b.max_abs_error_percent() > 0) {
    for (const hetsim::v1::FidelityCase& c : set->cases()) {
      if (std::fabs(c.error_percent()) > b.max_abs_error_percent()) {
        set->add_violations(absl::StrFormat("case %s: |error| %.2f%% > %g%%", c.name(), std::fabs(c.error_percent()),
                                            b.max_abs_error_percent()));
      }
    }
  }
}

}  // namespace hetsim::fidelity
