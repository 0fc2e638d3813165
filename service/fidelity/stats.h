// How far a set's predictions are from its measurements: MAPE, the largest |error| and Kendall's tau
// of the two rankings (service/evaluation/rank_stats.h), and which of the set's bounds they break.
#ifndef HETSIM_SERVICE_FIDELITY_STATS_H_
#define HETSIM_SERVICE_FIDELITY_STATS_H_

#include <string>
#include <vector>

#include "proto/hetsim.pb.h"

namespace hetsim::fidelity {

// Fills the set's mape_percent, max_abs_error_percent, worst_case (first case with the largest
// |error|), kendall_tau (predicted against measured) and violations (one line per bound broken:
// "MAPE 25.1% > 3%", "case X: |error| 59.0% > 6%") from its cases and bounds; the signed mean error;
// per group of at least two cases (FidelityCase.group) tau, the measured and predicted best and the
// regret of the pick, and their means. The calibrated-MAPE bound reads set->calibrations, so
// EvaluateCalibration (calibration.h) runs first.
void SummarizeSet(hetsim::v1::FidelitySet* set);

}  // namespace hetsim::fidelity

#endif  // HETSIM_SERVICE_FIDELITY_STATS_H_
