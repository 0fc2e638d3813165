#include "app/lib/fidelity_stats.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_format.h"

namespace hetsim::app {

double KendallTauB(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t n = std::min(a.size(), b.size());
  int64_t concordant = 0, discordant = 0, ties_a = 0, ties_b = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const double da = a[j] - a[i], db = b[j] - b[i];
      if (da == 0) ++ties_a;
      if (db == 0) ++ties_b;
      if (da == 0 || db == 0) continue;
      ((da > 0) == (db > 0) ? concordant : discordant) += 1;
    }
  }
  const int64_t pairs = static_cast<int64_t>(n) * (static_cast<int64_t>(n) - 1) / 2;
  const double denominator = std::sqrt(static_cast<double>(pairs - ties_a) * static_cast<double>(pairs - ties_b));
  return denominator > 0 ? static_cast<double>(concordant - discordant) / denominator : 0.0;
}

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
  set->set_kendall_tau(KendallTauB(measured, predicted));

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

}  // namespace hetsim::app
