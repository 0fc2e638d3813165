#include "service/calibrate/overhead_fit.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_format.h"
#include "service/calibrate/least_squares_internal.h"

namespace hetsim::calibrate {
namespace {

using Values = OverheadValues;

// Row i of the relative-error system: d((t(x) - m) / m) / dx.
Values Row(const OverheadProbe& r) {
  return {r.gemm_slope() / r.measured,   1 / r.measured,
          r.pass_slope() / r.measured,   r.network_slope() / r.measured,
          r.kernel_slope() / r.measured, r.collective_slope() / r.measured};
}

// Each value's prior weight against a run's: (run width / value width)^2.
Values PriorWeights(const OverheadPrior& prior) {
  auto weight = [&](double width) { return (prior.run / width) * (prior.run / width); };
  return {weight(prior.gemm),    weight(prior.iteration_s), weight(prior.pass_s),
          weight(prior.network), weight(prior.kernel),      weight(prior.collective_s)};
}

double PriorCost(const Values& weights, const Values& x) {
  double cost = 0;
  for (int j = 0; j < kOverheadValues; ++j) cost += weights[j] * x[j] * x[j];
  return cost;
}

double Cost(std::span<const OverheadProbe> runs, const Values& x) {
  double cost = 0;
  for (const OverheadProbe& r : runs) {
    const double e = (PredictWith(r, x) - r.measured) / r.measured;
    cost += e * e;
  }
  return cost;
}

// The best x with values in `free` unconstrained and the others as `x` holds them; false when the
// free values are not determined by the runs or leave their bounds.
bool SolveFace(std::span<const OverheadProbe> runs, const std::vector<int>& free, const Values& lower,
               const Values& upper, const Values& weights, Values& x) {
  if (free.empty()) return true;
  const size_t n = free.size();
  std::vector<std::vector<double>> normal(n, std::vector<double>(n, 0));
  std::vector<double> rhs(n, 0);
  for (const OverheadProbe& r : runs) {
    const Values a = Row(r);
    double residual = (r.measured - r.simulated) / r.measured;  // what the free values must explain
    for (int j = 0; j < kOverheadValues; ++j)
      if (std::find(free.begin(), free.end(), j) == free.end()) residual -= a[j] * x[j];
    for (size_t p = 0; p < n; ++p) {
      rhs[p] += a[free[p]] * residual;
      for (size_t q = 0; q < n; ++q) normal[p][q] += a[free[p]] * a[free[q]];
    }
  }
  for (size_t p = 0; p < n; ++p) normal[p][p] += weights[free[p]];  // the prior pulls towards 0
  std::vector<double> y;
  if (!SolveLinearSystem(std::move(normal), std::move(rhs), y)) return false;
  for (size_t p = 0; p < n; ++p) {
    if (!(y[p] >= lower[free[p]] && y[p] <= upper[free[p]])) return false;
    x[free[p]] = y[p];
  }
  return true;
}

}  // namespace

double PredictWith(const OverheadProbe& probe, const Values& x) {
  return probe.simulated + x[0] * probe.gemm_slope() + x[1] + x[2] * probe.pass_slope() + x[3] * probe.network_slope() +
         x[4] * probe.kernel_slope() + x[5] * probe.collective_slope();
}

OverheadFit FitOverheadValues(std::span<const OverheadProbe> runs, const OverheadBounds& bounds,
                              const OverheadPrior& prior, const ValueMask& movable) {
  OverheadFit fit;
  fit.runs = static_cast<int>(runs.size());
  fit.free = movable;
  fit.cost_before = Cost(runs, fit.x);
  fit.cost_after = fit.cost_before;
  const Values lower = bounds.Lower(), upper = bounds.Upper(), weights = PriorWeights(prior);
  // Each movable value is free, at its lower or at its upper bound: 3^m faces of the box for m movable.
  std::vector<int> movable_values;
  for (int j = 0; j < kOverheadValues; ++j)
    if (movable[j]) movable_values.push_back(j);
  int faces = 1;
  for (size_t i = 0; i < movable_values.size(); ++i) faces *= 3;
  bool found = false;
  double best = 0;
  for (int face = 0; face < faces; ++face) {
    Values x = {0, 0, 0, 0, 0, 0};
    std::vector<int> free;
    ValueMask at_bound = kNoValues;
    int code = face;
    for (int j : movable_values) {
      if (code % 3 == 0) {
        free.push_back(j);
      } else {
        x[j] = code % 3 == 1 ? lower[j] : upper[j];
        at_bound[j] = true;
      }
      code /= 3;
    }
    if (!SolveFace(runs, free, lower, upper, weights, x)) continue;
    const double cost = Cost(runs, x) + PriorCost(weights, x);
    if (!found || cost < best * (1 - 1e-12)) {
      found = true;
      best = cost;
      fit.x = x;
      fit.pinned = at_bound;
      fit.cost_after = Cost(runs, x);
    }
  }
  return fit;
}

std::vector<ValueMask> CandidateValues() {
  std::vector<ValueMask> out = {kNoValues};
  for (int j = 0; j < kOverheadValues; ++j) {
    ValueMask one = kNoValues;
    one[j] = true;
    out.push_back(one);
  }
  for (int j = 1; j < kOverheadValues; ++j) {
    ValueMask two = kNoValues;
    two[0] = two[j] = true;
    out.push_back(two);
  }
  out.push_back(kAllValues);
  return out;
}

std::string ValueNames(const ValueMask& values) {
  std::string out;
  for (int j = 0; j < kOverheadValues; ++j) {
    if (values[j]) out += (out.empty() ? "" : " + ") + std::string(kOverheadNames[j]);
  }
  return out.empty() ? "none" : out;
}

namespace {

// Mean |measured / predicted - 1| of each run predicted by `values` fitted on the other runs: the
// relative error of a throughput, as the sets report it.
double LeaveOneOutError(std::span<const OverheadProbe> runs, const OverheadBounds& bounds, const OverheadPrior& prior,
                        const ValueMask& values) {
  double sum = 0;
  std::vector<OverheadProbe> others;
  for (size_t out = 0; out < runs.size(); ++out) {
    others.clear();
    for (size_t i = 0; i < runs.size(); ++i)
      if (i != out) others.push_back(runs[i]);
    const OverheadFit fit = FitOverheadValues(others, bounds, prior, values);
    sum += std::fabs(runs[out].measured / PredictWith(runs[out], fit.x) - 1);  // throughput's relative error
  }
  return sum / static_cast<double>(runs.size());
}

}  // namespace

OverheadFit ChooseAndFit(std::span<const OverheadProbe> runs, const OverheadBounds& bounds,
                         const OverheadPrior& prior) {
  if (runs.size() < kMinRunsToChoose) return FitOverheadValues(runs, bounds, prior, kAllValues);
  ValueMask best_values = kAllValues;
  double best = -1;
  for (const ValueMask& values : CandidateValues()) {
    const double error = LeaveOneOutError(runs, bounds, prior, values);
    if (best < 0 || error < best * (1 - 1e-9)) {
      best = error;
      best_values = values;
    }
  }
  OverheadFit fit = FitOverheadValues(runs, bounds, prior, best_values);
  fit.held_out_error = best;
  return fit;
}

std::vector<std::string> FitConcerns(const OverheadFit& fit, const OverheadBounds& bounds) {
  std::vector<std::string> out;
  const Values lower = bounds.Lower();
  for (int j = 0; j < kOverheadValues; ++j) {
    if (fit.pinned[j]) {
      out.push_back(absl::StrFormat("%s pinned at its %s bound (%g): the runs ask for more than it may move",
                                    kOverheadNames[j], fit.x[j] == lower[j] ? "lower" : "upper", fit.x[j]));
    }
  }
  // Little explained matters only where much is left: a set already within 2% (RMS) has little to explain.
  const double rms_after = std::sqrt(fit.cost_after / std::max(1, fit.runs));
  if (fit.cost_before > 0 && fit.explained() < 0.25 && rms_after > 0.02) {
    out.push_back(
        absl::StrFormat("the fit explains %.0f%% of the runs' squared error: the model misses something "
                        "these values cannot stand for",
                        100 * fit.explained()));
  }
  return out;
}

}  // namespace hetsim::calibrate
