// How well one list of numbers predicts another: mean and largest absolute percentage error, and how
// alike their rankings are (Kendall's tau-b, Spearman's rho). Used by `hetsim fidelity` (predicted vs
// measured) and `hetsim validate` (a planner's predictions vs the simulation).
#ifndef HETSIM_SERVICE_EVALUATION_RANK_STATS_H_
#define HETSIM_SERVICE_EVALUATION_RANK_STATS_H_

#include <vector>

namespace hetsim::evaluation {

// Kendall's tau-b of `a` against `b` (same length): (C - D) / sqrt((n0 - n1)(n0 - n2)) over the
// n0 = n(n-1)/2 pairs, C concordant, D discordant, n1 and n2 the pairs tied in a and in b. Ties
// (equal measured throughputs are common in published tables) neither help nor hurt. 0 when fewer
// than two values or when either list is all ties (no ranking to compare).
double KendallTauB(const std::vector<double>& a, const std::vector<double>& b);

// 1-based ranks, smallest value first; tied values share the average of their ranks (1, 2.5, 2.5, 4).
std::vector<double> AverageRanks(const std::vector<double>& values);

// Spearman's rho: Pearson's correlation of the average ranks of `a` and `b` (same length). 0 when
// fewer than two values or when either list is all ties.
double SpearmanRho(const std::vector<double>& a, const std::vector<double>& b);

// (predicted - reference) / reference x 100; 0 when reference is 0 (no relative error to give).
double ErrorPercent(double predicted, double reference);

}  // namespace hetsim::evaluation

#endif  // HETSIM_SERVICE_EVALUATION_RANK_STATS_H_
