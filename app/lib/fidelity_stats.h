// How far a set's predictions are from its measurements: MAPE, the largest |error| and Kendall's tau
// of the two rankings, and which of the set's bounds they break.
#ifndef HETSIM_APP_LIB_FIDELITY_STATS_H_
#define HETSIM_APP_LIB_FIDELITY_STATS_H_

#include <string>
#include <vector>

#include "proto/hetsim.pb.h"

namespace hetsim::app {

// Kendall's tau-b of `a` against `b` (same length): (C - D) / sqrt((n0 - n1)(n0 - n2)) over the
// n0 = n(n-1)/2 pairs, C concordant, D discordant, n1 and n2 the pairs tied in a and in b. Ties
// (equal measured throughputs are common in published tables) neither help nor hurt. 0 when fewer
// than two values or when either list is all ties (no ranking to compare).
double KendallTauB(const std::vector<double>& a, const std::vector<double>& b);

// Fills the set's mape_percent, max_abs_error_percent, worst_case (first case with the largest
// |error|), kendall_tau (predicted against measured) and violations (one line per bound broken:
// "MAPE 25.1% > 3%", "case X: |error| 59.0% > 6%") from its cases and bounds.
void SummarizeSet(hetsim::v1::FidelitySet* set);

}  // namespace hetsim::app

#endif  // HETSIM_APP_LIB_FIDELITY_STATS_H_
