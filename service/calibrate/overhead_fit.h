// The few values a handful of measured iterations can calibrate, and the fit that finds them. An
// iteration's simulated time is, to first order, linear in six cluster-wide values:
//   t(c, db, da, n, h, l) = t + c g + db + da p + n w + h k + l q
// with t the time as the cluster stands, c the relative change of every GEMM's main-loop time
// (ComputeEfficiency.max_efficiency divided by 1 + c on every GPU type), db the change of the
// per-iteration overhead (iteration_overhead_ms) and da the change of the per-pass overhead
// (pass_overhead_us), both on every GPU type, and n the relative change of the inter-node fabric's
// transfer time (every NIC, TCP stream and inter-island link at bandwidth / (1 + n)), h the relative
// change of every memory-bound kernel's time (hbm_efficiency / (1 + h)) and l the change of every
// collective's fixed cost (NcclFabric.launch_latency_ns of every fabric; a framework that synchronises
// the device around each collective, as Megatron-LM v1's timers do, pays it there). g, p, w, k and q
// are measured by simulating the run five times more, each with one value at its probe
// (kGemmProbe, kPassProbe, kNetworkProbe, kKernelProbe, kCollectiveProbe: OverheadProbe).
//
// Three values from one to three runs is a fit with as many unknowns as data: fitted exactly, it
// passes through every run's own model error and extrapolates it (on the bundled sets, held-out MAPE
// after 2 or 3 runs was worse than before calibration, with single choices 30-90% off). So the fit is
// a maximum a posteriori one: the squared relative errors (t(x) - m) / m over `run` (the model's own
// error per run), plus each value's squared distance from the cluster's over its prior width, within
// each value's bounds (OverheadPrior; docs/validation.md "Calibration from a few runs"). Runs that
// agree move the values; one run moves them only as far as the evidence outweighs the prior.
//
// From kMinRunsToChoose runs on, which values may move is chosen by the runs themselves
// (ChooseAndFit): every candidate set of values (CandidateValues, "none" among them) is fitted on all
// runs but one and scored on the one left out, and the set with the smallest error over the runs left
// out wins. Runs whose error does not follow any value's slope choose "none" and leave the cluster as
// it stands. With fewer runs every value moves, held by its prior: choosing from three runs means
// fitting on two, and on the bundled sets that choice cost more than it saved (docs/validation.md,
// "Calibration from a few runs").
#ifndef HETSIM_SERVICE_CALIBRATE_OVERHEAD_FIT_H_
#define HETSIM_SERVICE_CALIBRATE_OVERHEAD_FIT_H_

#include <array>
#include <span>
#include <string>
#include <vector>

namespace hetsim::calibrate {

inline constexpr double kGemmProbe = 0.1;           // the probe run's GEMMs take 10% longer
inline constexpr double kPassProbe = 1e-3;          // the probe run's passes cost 1 ms more, in seconds
inline constexpr double kNetworkProbe = 0.1;        // the probe run's inter-node links are 10% slower
inline constexpr double kKernelProbe = 0.1;         // the probe run's memory-bound kernels are 10% slower
inline constexpr double kCollectiveProbe = 100e-6;  // the probe run's collectives cost 100 us more, seconds
inline constexpr int kOverheadValues = 6;           // c, db, da, n, h, l
inline constexpr std::array<const char*, kOverheadValues> kOverheadNames = {"GEMM time scale",
                                                                            "iteration overhead",
                                                                            "pass overhead",
                                                                            "inter-node time scale",
                                                                            "memory-bound kernel time scale",
                                                                            "collective overhead"};
inline constexpr size_t kMinRunsToChoose = 4;
using OverheadValues = std::array<double, kOverheadValues>;
using ValueMask = std::array<bool, kOverheadValues>;  // which values a fit may move
inline constexpr ValueMask kAllValues = {true, true, true, true, true, true};
inline constexpr ValueMask kNoValues = {false, false, false, false, false, false};

// One measured run and its six simulations, in seconds. A probe left at 0 was not simulated: its
// value has no slope and stays at 0.
struct OverheadProbe {
  double measured = 0;
  double simulated = 0;         // as the cluster stands (x = 0)
  double gemm_probe = 0;        // with c = kGemmProbe
  double pass_probe = 0;        // with da = kPassProbe
  double network_probe = 0;     // with n = kNetworkProbe
  double kernel_probe = 0;      // with h = kKernelProbe
  double collective_probe = 0;  // with l = kCollectiveProbe
  double gemm_slope() const { return Slope(gemm_probe, kGemmProbe); }
  double pass_slope() const { return Slope(pass_probe, kPassProbe); }
  double network_slope() const { return Slope(network_probe, kNetworkProbe); }
  double kernel_slope() const { return Slope(kernel_probe, kKernelProbe); }
  double collective_slope() const { return Slope(collective_probe, kCollectiveProbe); }
  double Slope(double probe, double step) const { return probe > 0 ? (probe - simulated) / step : 0; }
};

// Prior widths: how far each value is expected to be from the cluster's before any run is seen, and how
// far one run may be from any model. GEMM efficiency: the presets are fitted to measured GEMMs
// (docs/hardware.md), software versions move it by a few percent. Overheads: of the order of the presets'
// own (50 ms per iteration, 300 us per pass). Inter-node fabric: NCCL's efficiency presets are fitted on
// InfiniBand (docs/network.md); a cloud's TCP fabric is known to within a third. Memory-bound kernels:
// the presets' hbm_efficiency is measured on fused kernels (docs/hardware.md), an unfused stack's are
// within 10%. Collectives: NCCL's launch latency is 5-30 us; a device synchronisation around each one
// costs of the order of 50 us more. A run: hetsim's MAPE on the sets it was built on is 2-6%.
struct OverheadPrior {
  double gemm = 0.05;
  double iteration_s = 0.1;
  double pass_s = 200e-6;
  double network = 0.3;
  double kernel = 0.1;
  double collective_s = 50e-6;
  double run = 0.02;
};

// How far each value may move from the cluster's: c in [gemm_min, gemm_max] (max_efficiency / (1 + c)
// stays in (0, 1]), db >= -iteration_s and da >= -pass_s (the overheads stay >= 0), n in
// [network_min, network_max]: NCCL's presets reach 0.8-0.95 of line rate, so at n = -0.2 the fabric
// is at about its line rate; at n = 3 a link carries a quarter of what the cluster says. h in
// [hbm_min, 1] (hbm_efficiency / (1 + h) stays in (0, 1]); l >= -collective_s (the launch latency
// stays >= 0), at most 10 ms.
struct OverheadBounds {
  double gemm_min = -0.5;
  double gemm_max = 1.0;
  double iteration_s = 0;  // the cluster's smallest iteration overhead, seconds
  double pass_s = 0;       // the cluster's smallest pass overhead, seconds
  double network_min = -0.2;
  double network_max = 3.0;
  double hbm_min = -0.5;
  double collective_s = 0;  // the cluster's smallest NCCL launch latency, seconds
  OverheadValues Lower() const { return {gemm_min, -iteration_s, -pass_s, network_min, hbm_min, -collective_s}; }
  OverheadValues Upper() const { return {gemm_max, 10.0, 0.1, network_max, 1.0, 0.01}; }
};

struct OverheadFit {
  OverheadValues x = {0, 0, 0, 0, 0, 0};  // c, db (s), da (s), n, h, l (s)
  int runs = 0;
  ValueMask free = kAllValues;   // the values the fit could move
  ValueMask pinned = kNoValues;  // ended at a bound
  double cost_before = 0;        // sum of squared relative errors over the runs at x = 0
  double cost_after = 0;         // and at the fit (the runs' errors alone, without the prior's terms)
  // ChooseAndFit: mean |measured / predicted - 1| of each run predicted by the chosen values fitted on
  // the others; -1 when there were too few runs to leave one out.
  double held_out_error = -1;
  // The share of the runs' squared relative error the fit removes, in [0, 1] (1: none left).
  double explained() const { return cost_before > 0 ? 1 - cost_after / cost_before : 1; }
};

// Predicted time of `probe`'s run with the values `x` (seconds).
double PredictWith(const OverheadProbe& probe, const OverheadValues& x);

// The fit of the values in `free` to `runs` (at least one), the others at 0. Exact for the box
// constraints: every face of the box is tried and the best feasible one kept, so the same runs give the
// same values on every machine.
OverheadFit FitOverheadValues(std::span<const OverheadProbe> runs, const OverheadBounds& bounds,
                              const OverheadPrior& prior = {}, const ValueMask& free = kAllValues);

// The sets of values ChooseAndFit tries, in order of preference on a tie: none, each value alone, the
// GEMM time with each other value, and all of them.
std::vector<ValueMask> CandidateValues();

// "GEMM time scale + iteration overhead" ("none" for no value).
std::string ValueNames(const ValueMask& values);

// The fit of the candidate set of values whose leave-one-out error over `runs` is smallest; with fewer
// than kMinRunsToChoose runs, every value, held by its prior. Runs predicted better by the cluster as it
// stands choose "none".
OverheadFit ChooseAndFit(std::span<const OverheadProbe> runs, const OverheadBounds& bounds,
                         const OverheadPrior& prior = {});

// "GEMM time scale pinned at its bound -0.5" style lines for a fit that pins values or explains less
// than a quarter of its runs' error where more than 2% (RMS) is left; empty when the fit is sound.
std::vector<std::string> FitConcerns(const OverheadFit& fit, const OverheadBounds& bounds);

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_OVERHEAD_FIT_H_
