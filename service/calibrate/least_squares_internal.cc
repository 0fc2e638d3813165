#include "service/calibrate/least_squares_internal.h"

#include <algorithm>
#include <cmath>

namespace hetsim::calibrate {
namespace {

constexpr int kMaxIterations = 60;

double SumOfSquares(const std::vector<double>& r) {
  double s = 0;
  for (double v : r) s += v * v;
  return s;
}

}  // namespace

bool SolveLinearSystem(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& x) {
  const size_t n = b.size();
  for (size_t c = 0; c < n; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < n; ++r) {
      if (std::abs(a[r][c]) > std::abs(a[p][c])) p = r;
    }
    if (!(std::abs(a[p][c]) > 1e-300)) return false;
    std::swap(a[p], a[c]);
    std::swap(b[p], b[c]);
    for (size_t r = c + 1; r < n; ++r) {
      const double f = a[r][c] / a[c][c];
      for (size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  x.assign(n, 0);
  for (size_t c = n; c-- > 0;) {
    double s = b[c];
    for (size_t k = c + 1; k < n; ++k) s -= a[c][k] * x[k];
    x[c] = s / a[c][c];
  }
  return true;
}

absl::StatusOr<LeastSquaresResult> SolveLeastSquares(const LeastSquaresProblem& p) {
  const size_t n = p.start.size();
  auto clip = [&](std::vector<double> x) {
    for (size_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], p.lower[i], p.upper[i]);
    return x;
  };
  LeastSquaresResult out;
  out.x = clip(p.start);
  absl::StatusOr<std::vector<double>> r = p.residuals(out.x);
  if (!r.ok()) return r.status();
  out.residuals = *r;
  out.cost = SumOfSquares(out.residuals);
  double lambda = 1e-3;
  for (out.iterations = 0; out.iterations < kMaxIterations && out.cost > 0; ++out.iterations) {
    // Forward differences, stepping inward at an upper bound.
    const size_t m = out.residuals.size();
    std::vector<std::vector<double>> jac(m, std::vector<double>(n));
    for (size_t i = 0; i < n; ++i) {
      std::vector<double> x = out.x;
      double h = std::max(1e-4 * std::abs(x[i]), i < p.min_step.size() ? p.min_step[i] : 1e-7);
      if (x[i] + h > p.upper[i]) h = -h;
      x[i] += h;
      absl::StatusOr<std::vector<double>> ri = p.residuals(x);
      if (!ri.ok()) return ri.status();
      for (size_t k = 0; k < m; ++k) jac[k][i] = ((*ri)[k] - out.residuals[k]) / h;
    }
    std::vector<std::vector<double>> jtj(n, std::vector<double>(n, 0));
    std::vector<double> jtr(n, 0);
    for (size_t k = 0; k < m; ++k) {
      for (size_t i = 0; i < n; ++i) {
        jtr[i] += jac[k][i] * out.residuals[k];
        for (size_t j = 0; j < n; ++j) jtj[i][j] += jac[k][i] * jac[k][j];
      }
    }
    bool improved = false;
    while (lambda < 1e12) {
      std::vector<std::vector<double>> a = jtj;
      std::vector<double> b(n), dx;
      // A parameter the residuals do not depend on (a protocol never chosen) keeps its value.
      for (size_t i = 0; i < n; ++i) {
        a[i][i] += lambda * std::max(jtj[i][i], 1e-12) + 1e-300;
        b[i] = -jtr[i];
      }
      if (!SolveLinearSystem(a, b, dx)) {
        lambda *= 10;
        continue;
      }
      std::vector<double> x = out.x;
      for (size_t i = 0; i < n; ++i) x[i] += dx[i];
      x = clip(x);
      absl::StatusOr<std::vector<double>> rn = p.residuals(x);
      if (!rn.ok()) return rn.status();
      const double cost = SumOfSquares(*rn);
      if (cost < out.cost) {
        const double gain = out.cost - cost;
        out.x = x;
        out.residuals = *rn;
        out.cost = cost;
        lambda = std::max(lambda / 10, 1e-9);
        improved = gain > 1e-14 * std::max(cost, 1e-30);
        break;
      }
      lambda *= 10;
    }
    if (!improved) break;
  }
  return out;
}

}  // namespace hetsim::calibrate
