#include "service/fidelity/fidelity_report.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_format.h"
#include "service/fidelity/calibration.h"
#include "service/fidelity/predict.h"
#include "service/fidelity/stats.h"

namespace hetsim::fidelity {

absl::StatusOr<v1::FidelityReport> PredictSets(const std::vector<LoadedValidationSet>& sets, bool calibration,
                                               const CaseTimer& on_case, bool exact) {
  v1::FidelityReport report;
  for (const LoadedValidationSet& loaded : sets) {
    v1::FidelitySet* out = report.add_sets();
    out->set_file(loaded.path);
    out->set_name(loaded.set.name().empty() ? loaded.path : loaded.set.name());
    *out->mutable_bounds() = loaded.set.bounds();
    const bool training = !loaded.set.cases().empty() && loaded.set.cases(0).has_training_run();
    PredictOptions options;
    options.exact = exact;
    options.calibration_probes = training && (calibration || loaded.set.bounds().max_calibrated_mape_percent() > 0);
    for (int i = 0; i < loaded.set.cases_size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<v1::FidelityCase> c =
          PredictCase(loaded.set.cases(i), absl::StrFormat("%s: cases[%d]", loaded.path, i), options);
      if (!c.ok()) return c.status();
      *out->add_cases() = *std::move(c);
      if (on_case) {
        on_case(loaded.set.cases(i), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    }
    EvaluateCalibration(out);
    SummarizeSet(out);
  }
  return report;
}

}  // namespace hetsim::fidelity
