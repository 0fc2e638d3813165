// `hetsim fidelity`'s result: every case of the loaded sets predicted (predict.h) and each set
// summarised (stats.h), as one FidelityReport that the tables, the chart and --json draw.
#ifndef HETSIM_SERVICE_FIDELITY_FIDELITY_REPORT_H_
#define HETSIM_SERVICE_FIDELITY_FIDELITY_REPORT_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/hetsim.pb.h"
#include "service/fidelity/validation_set.h"

namespace hetsim::fidelity {

// Called after each case with its wall time in seconds (`hetsim fidelity --timing`).
using CaseTimer = std::function<void(const hetsim::v1::ValidationCase& validation_case, double seconds)>;

// The first case that cannot be predicted ends the run with its error (PredictCase's). With
// `calibration` (or for a set that bounds its calibrated MAPE), training sets also get their
// calibration from k = 1, 2, 3 runs (calibration.h), at two more simulations per case. `exact`:
// training runs simulated exactly (PredictOptions.exact).
absl::StatusOr<hetsim::v1::FidelityReport> PredictSets(const std::vector<LoadedValidationSet>& sets,
                                                       bool calibration = false, const CaseTimer& on_case = nullptr,
                                                       bool exact = false);

}  // namespace hetsim::fidelity

#endif  // HETSIM_SERVICE_FIDELITY_FIDELITY_REPORT_H_
