// Levenberg-Marquardt least squares over a few bounded parameters, with a forward-difference
// Jacobian: what `hetsim calibrate` fits every input kind's parameters with. The residual function is
// a black box (hetsim's own simulation), so no derivatives are asked for.
#ifndef HETSIM_SERVICE_CALIBRATE_LEAST_SQUARES_INTERNAL_H_
#define HETSIM_SERVICE_CALIBRATE_LEAST_SQUARES_INTERNAL_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"

namespace hetsim::calibrate {

struct LeastSquaresProblem {
  std::vector<double> start;  // initial parameters
  std::vector<double> lower;  // bounds, same length
  std::vector<double> upper;
  // Smallest finite-difference step per parameter (a parameter stored with a resolution, such as a
  // latency in whole nanoseconds, needs a step above it); the step is max(1e-4 |x|, min_step).
  std::vector<double> min_step;
  // The residual vector at x (same length for every x); an error stops the fit.
  std::function<absl::StatusOr<std::vector<double>>(const std::vector<double>& x)> residuals;
};

struct LeastSquaresResult {
  std::vector<double> x;
  std::vector<double> residuals;
  double cost = 0;  // sum of squared residuals
  int iterations = 0;
};

// Solves the n x n system a x = b by Gaussian elimination with partial pivoting; false when singular.
bool SolveLinearSystem(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& x);

// Minimizes the sum of squared residuals within the bounds (a step leaving them is clipped).
absl::StatusOr<LeastSquaresResult> SolveLeastSquares(const LeastSquaresProblem& problem);

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_LEAST_SQUARES_INTERNAL_H_
