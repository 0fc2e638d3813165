#include "service/evaluation/rank_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

namespace hetsim::evaluation {

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

std::vector<double> AverageRanks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return values[x] < values[y]; });
  std::vector<double> ranks(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    const double average = (static_cast<double>(i + 1) + static_cast<double>(j + 1)) / 2;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = average;
    i = j + 1;
  }
  return ranks;
}

double SpearmanRho(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t n = std::min(a.size(), b.size());
  if (n < 2) return 0;
  const std::vector<double> ra = AverageRanks({a.begin(), a.begin() + n});
  const std::vector<double> rb = AverageRanks({b.begin(), b.begin() + n});
  const double mean = (static_cast<double>(n) + 1) / 2;  // ranks 1..n average to (n + 1) / 2, ties or not
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < n; ++i) {
    sab += (ra[i] - mean) * (rb[i] - mean);
    saa += (ra[i] - mean) * (ra[i] - mean);
    sbb += (rb[i] - mean) * (rb[i] - mean);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

double ErrorPercent(double predicted, double reference) {
  return reference != 0 ? (predicted - reference) / reference * 100 : 0.0;
}

}  // namespace hetsim::evaluation
