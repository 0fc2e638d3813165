#include "topology/ecmp_collisions.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

namespace hetsim::topology {
namespace {

// The binomial weights of ProbabilityMaxAtMost: P(the first of b bins takes j of r flows) =
// C(r, j) p^j (1 - p)^(r - j), p = 1/b, for j <= min(t, r). They do not depend on t, so ExpectedMaxLoad's
// sum over t computes each once (an exp and two logs each, which were most of its time) and extends the
// rows as t grows; each is the same double as when it was computed inside the sum.
class BinomialWeights {
 public:
  BinomialWeights(int flows, int bins, const std::vector<double>& log_factorial)
      : flows_(flows), log_factorial_(log_factorial), rows_(static_cast<size_t>(bins) * (flows + 1)) {}
  // Row (b, r) holds j = 0 .. min(t, r) on return.
  const std::vector<double>& Row(int b, int r, int t) {
    std::vector<double>& row = rows_[static_cast<size_t>(b - 1) * (flows_ + 1) + r];
    if (static_cast<int>(row.size()) > std::min(t, r)) return row;
    const double p = 1.0 / b;
    const double log_p = std::log(p), log_q = std::log1p(-p);
    for (int j = static_cast<int>(row.size()); j <= std::min(t, r); ++j) {
      const double log_choose = log_factorial_[r] - log_factorial_[j] - log_factorial_[r - j];
      const double stay = r - j == 0 ? 0.0 : (b == 1 ? -INFINITY : (r - j) * log_q);
      row.push_back(std::exp(log_choose + j * log_p + stay));
    }
    return row;
  }

 private:
  int flows_;
  const std::vector<double>& log_factorial_;
  std::vector<std::vector<double>> rows_;  // by (b - 1) (flows + 1) + r
};

// P(no bin of `bins` holds more than `t`) when `flows` flows land uniformly: the first bin takes j
// flows (binomial with p = 1/b), the other b - 1 bins share the rest uniformly.
double ProbabilityMaxAtMost(int flows, int bins, int t, BinomialWeights& weights) {
  std::vector<double> fit(flows + 1, 0.0), next(flows + 1);  // fit[r]: r flows over b bins all <= t
  fit[0] = 1.0;
  for (int b = 1; b <= bins; ++b) {
    for (int r = 0; r <= flows; ++r) {
      const std::vector<double>& weight = weights.Row(b, r, t);
      double sum = 0;
      for (int j = 0; j <= std::min(t, r); ++j) {
        if (fit[r - j] == 0) continue;
        sum += weight[j] * fit[r - j];
      }
      next[r] = sum;
    }
    fit.swap(next);
  }
  return fit[flows];
}

// `compute()` once per process for each key (one cache per call site: each lambda is its own type).
template <typename Key, typename Compute>
double Memoized(const Key& key, Compute compute) {
  static std::mutex mutex;
  static std::map<Key, double> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = cache.try_emplace(key, 0.0);
  if (inserted) it->second = compute();
  return it->second;
}

// Above kExactBusiestFlows: the bins' binomial loads taken as independent.
double IndependentBinsBusiestLoad(int64_t flows, int bins, int groups) {
  // Each bin's load is Binomial(flows, 1 / bins); taken as independent, P(max <= t) = cdf(t)^(bins groups).
  // The sum starts 12 standard deviations below the mean (the cdf there is below 1e-30).
  const double f = static_cast<double>(flows), p = 1.0 / bins;
  const double mean = f * p, sd = std::sqrt(f * p * (1 - p));
  const auto first = static_cast<int64_t>(std::max(0.0, std::floor(mean - 12 * sd)));
  const double k0 = static_cast<double>(first);
  double pmf = std::exp(std::lgamma(f + 1) - std::lgamma(k0 + 1) - std::lgamma(f - k0 + 1) + k0 * std::log(p) +
                        (f - k0) * std::log1p(-p));
  const double odds = p / (1 - p), exponent = static_cast<double>(bins) * groups;
  double cdf = 0, expected = k0;  // the busiest bin holds at least `first` with certainty
  for (int64_t t = first; t < flows; ++t) {
    cdf = std::min(1.0, cdf + pmf);
    const double above = cdf <= 0 ? 1.0 : -std::expm1(exponent * std::log(cdf));
    expected += above;
    if (above < 1e-12 && static_cast<double>(t) > mean) break;
    pmf *= static_cast<double>(flows - t) / static_cast<double>(t + 1) * odds;  // pmf(t + 1)
  }
  return expected;
}

}  // namespace

double ExpectedMaxLoad(int flows, int bins, int groups) {
  if (flows <= 0) return 0;
  if (bins <= 1) return flows;
  std::vector<double> log_factorial(flows + 1, 0.0);
  for (int i = 1; i <= flows; ++i) log_factorial[i] = log_factorial[i - 1] + std::log(static_cast<double>(i));
  BinomialWeights weights(flows, bins, log_factorial);
  double expected = 0;
  for (int t = 0; t < flows; ++t) {
    const double above = 1.0 - std::pow(ProbabilityMaxAtMost(flows, bins, t, weights), groups);
    expected += above;
    if (above < 1e-12) break;  // later terms are smaller still
  }
  return expected;
}

double CachedExpectedMaxLoad(int flows, int bins, int groups) {
  return Memoized(std::make_tuple(flows, bins, groups), [&] { return ExpectedMaxLoad(flows, bins, groups); });
}

// Memoized like CachedExpectedMaxLoad: a 2,048-GPU representative all-to-all asks for thousands of
// classes of a few shapes, each a sum over thousands of loads.
double ExpectedBusiestLoad(int64_t flows, int bins, int groups) {
  if (flows <= kExactBusiestFlows || bins <= 1) return CachedExpectedMaxLoad(static_cast<int>(flows), bins, groups);
  return Memoized(std::make_tuple(flows, bins, groups),
                  [&] { return IndependentBinsBusiestLoad(flows, bins, groups); });
}

}  // namespace hetsim::topology
