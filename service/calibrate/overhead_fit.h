// The few values a handful of measured iterations can calibrate, and the fit that finds them. An
// iteration's simulated time is, to first order, linear in three cluster-wide values:
//   t(c, db, da) = t + c g + db + da p
// with t the time as the cluster stands, c the relative change of every GEMM's main-loop time
// (ComputeEfficiency.max_efficiency divided by 1 + c on every GPU type), db the change of the
// per-iteration overhead (iteration_overhead_ms) and da the change of the per-pass overhead
// (pass_overhead_us), both on every GPU type. g and p are measured by simulating the run twice more,
// with c = kGemmProbe and with da = kPassProbe (OverheadProbe).
//
// Three values from one to three runs is a fit with as many unknowns as data: fitted exactly, it
// passes through every run's own model error and extrapolates it (on the bundled sets, held-out MAPE
// after 2 or 3 runs was worse than before calibration, with single choices 30-90% off). So the fit is
// a maximum a posteriori one: the squared relative errors (t(x) - m) / m over `run` (the model's own
// error per run), plus each value's squared distance from the cluster's over its prior width, within
// each value's bounds (OverheadPrior; docs/validation.md "Calibration from a few runs"). Runs that
// agree move the values; one run moves them only as far as the evidence outweighs the prior.
#ifndef HETSIM_SERVICE_CALIBRATE_OVERHEAD_FIT_H_
#define HETSIM_SERVICE_CALIBRATE_OVERHEAD_FIT_H_

#include <array>
#include <span>
#include <string>
#include <vector>

namespace hetsim::calibrate {

inline constexpr double kGemmProbe = 0.1;   // the probe run's GEMMs take 10% longer
inline constexpr double kPassProbe = 1e-3;  // the probe run's passes cost 1 ms more, in seconds
inline constexpr int kOverheadValues = 3;   // c, db, da
inline constexpr std::array<const char*, kOverheadValues> kOverheadNames = {"GEMM time scale", "iteration overhead",
                                                                            "pass overhead"};

// One measured run and its three simulations, in seconds.
struct OverheadProbe {
  double measured = 0;
  double simulated = 0;   // as the cluster stands (x = 0)
  double gemm_probe = 0;  // with c = kGemmProbe
  double pass_probe = 0;  // with da = kPassProbe
  double gemm_slope() const { return (gemm_probe - simulated) / kGemmProbe; }
  double pass_slope() const { return (pass_probe - simulated) / kPassProbe; }
};

// Prior widths: how far each value is expected to be from the cluster's before any run is seen, and how
// far one run may be from any model. GEMM efficiency: the presets are fitted to measured GEMMs
// (docs/hardware.md), software versions move it by a few percent. Overheads: of the order of the presets'
// own (50 ms per iteration, 300 us per pass). A run: hetsim's MAPE on the sets it was built on is 2-6%.
struct OverheadPrior {
  double gemm = 0.05;
  double iteration_s = 0.1;
  double pass_s = 200e-6;
  double run = 0.02;
};

// How far each value may move from the cluster's: c in [gemm_min, gemm_max] (max_efficiency / (1 + c)
// stays in (0, 1]), db >= -iteration_s and da >= -pass_s (the overheads stay >= 0).
struct OverheadBounds {
  double gemm_min = -0.5;
  double gemm_max = 1.0;
  double iteration_s = 0;  // the cluster's smallest iteration overhead, seconds
  double pass_s = 0;       // the cluster's smallest pass overhead, seconds
  std::array<double, kOverheadValues> Lower() const { return {gemm_min, -iteration_s, -pass_s}; }
  std::array<double, kOverheadValues> Upper() const { return {gemm_max, 10.0, 0.1}; }
};

struct OverheadFit {
  std::array<double, kOverheadValues> x = {0, 0, 0};  // c, db (s), da (s)
  int runs = 0;
  std::array<bool, kOverheadValues> pinned = {false, false, false};  // ended at a bound
  double cost_before = 0;  // sum of squared relative errors over the runs at x = 0
  double cost_after = 0;   // and at the fit (the runs' errors alone, without the prior's terms)
  // The share of the runs' squared relative error the fit removes, in [0, 1] (1: none left).
  double explained() const { return cost_before > 0 ? 1 - cost_after / cost_before : 1; }
};

// Predicted time of `probe`'s run with the values `x` (seconds).
double PredictWith(const OverheadProbe& probe, const std::array<double, kOverheadValues>& x);

// The fit of the three values to `runs` (at least one). Exact for the box constraints: every face of the
// box is tried and the best feasible one kept, so the same runs give the same values on every machine.
OverheadFit FitOverheadValues(std::span<const OverheadProbe> runs, const OverheadBounds& bounds,
                              const OverheadPrior& prior = {});

// "GEMM time scale pinned at its bound -0.5" style lines for a fit that pins values or explains less
// than a quarter of its runs' error where more than 2% (RMS) is left; empty when the fit is sound.
std::vector<std::string> FitConcerns(const OverheadFit& fit, const OverheadBounds& bounds);

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_OVERHEAD_FIT_H_
