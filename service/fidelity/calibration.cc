#include "service/fidelity/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "service/calibrate/overhead_fit.h"

namespace hetsim::fidelity {
namespace {

namespace v1 = hetsim::v1;
using calibrate::OverheadFit;
using calibrate::OverheadProbe;

OverheadProbe ProbeOf(const v1::FidelityCase& c) {
  return {c.measured_time_ms() * 1e-3,        c.predicted_time_ms() * 1e-3,     c.gemm_probe_time_ms() * 1e-3,
          c.pass_probe_time_ms() * 1e-3,      c.network_probe_time_ms() * 1e-3, c.kernel_probe_time_ms() * 1e-3,
          c.collective_probe_time_ms() * 1e-3};
}

// Values every case's cluster allows.
calibrate::OverheadBounds SetBounds(const v1::FidelitySet& set) {
  calibrate::OverheadBounds b;
  b.iteration_s = b.pass_s = b.collective_s = 1e30;
  for (const v1::FidelityCase& c : set.cases()) {
    b.gemm_min = std::max(b.gemm_min, c.gemm_scale_min());
    b.hbm_min = std::max(b.hbm_min, c.hbm_scale_min());
    b.collective_s = std::min(b.collective_s, c.collective_latency_us() * 1e-6);
    b.iteration_s = std::min(b.iteration_s, c.iteration_overhead_ms() * 1e-3);
    b.pass_s = std::min(b.pass_s, c.pass_overhead_us() * 1e-6);
  }
  return b;
}

// The k-subsets of n indices in lexicographic order, every `stride`-th of them: all of them when there
// are at most kMaxCalibrationChoices, else an evenly spaced sample of that many.
std::vector<std::vector<int>> Choices(int n, int k) {
  double count = 1;
  for (int i = 0; i < k; ++i) count = count * (n - i) / (i + 1);
  const int64_t stride = static_cast<int64_t>(std::ceil(count / kMaxCalibrationChoices));
  std::vector<std::vector<int>> out;
  std::vector<int> pick(k);
  for (int i = 0; i < k; ++i) pick[i] = i;
  for (int64_t index = 0;; ++index) {
    if (index % stride == 0) out.push_back(pick);
    int i = k - 1;
    while (i >= 0 && pick[i] == n - k + i) --i;
    if (i < 0) break;
    ++pick[i];
    for (int j = i + 1; j < k; ++j) pick[j] = pick[j - 1] + 1;
  }
  return out;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

struct ChoiceResult {
  double mape = 0, signed_error = 0, max_abs = 0;
};

// Held-out errors of one choice, in the set's unit (throughput: measured time / predicted time - 1).
ChoiceResult HeldOut(const std::vector<OverheadProbe>& probes, const std::vector<int>& chosen, const OverheadFit& fit) {
  ChoiceResult r;
  int n = 0;
  for (int i = 0; i < static_cast<int>(probes.size()); ++i) {
    if (std::find(chosen.begin(), chosen.end(), i) != chosen.end()) continue;
    const double e = (probes[i].measured / calibrate::PredictWith(probes[i], fit.x) - 1) * 100;
    r.mape += std::fabs(e);
    r.signed_error += e;
    r.max_abs = std::max(r.max_abs, std::fabs(e));
    ++n;
  }
  r.mape /= n;
  r.signed_error /= n;
  return r;
}

v1::FidelityCalibration CalibrateOnK(const std::vector<OverheadProbe>& probes, const calibrate::OverheadBounds& bounds,
                                     int k) {
  const std::vector<std::vector<int>> choices = Choices(static_cast<int>(probes.size()), k);
  v1::FidelityCalibration out;
  out.set_k(k);
  out.set_choices(static_cast<uint32_t>(choices.size()));
  std::vector<double> gemm, iteration, pass, network, kernel, collective;
  std::map<std::string, int> chosen_values;
  int pinned = 0, weak = 0;
  double mape = 0, signed_error = 0, worst = 0, max_abs = 0;
  for (const std::vector<int>& chosen : choices) {
    std::vector<OverheadProbe> fitting;
    for (int i : chosen) fitting.push_back(probes[i]);
    const OverheadFit fit = calibrate::ChooseAndFit(fitting, bounds);
    const ChoiceResult r = HeldOut(probes, chosen, fit);
    mape += r.mape;
    signed_error += r.signed_error;
    worst = std::max(worst, r.mape);
    max_abs = std::max(max_abs, r.max_abs);
    gemm.push_back(fit.x[0]);
    iteration.push_back(fit.x[1] * 1e3);
    pass.push_back(fit.x[2] * 1e6);
    network.push_back(fit.x[3]);
    kernel.push_back(fit.x[4]);
    collective.push_back(fit.x[5] * 1e6);
    ++chosen_values[calibrate::ValueNames(fit.free)];
    pinned += std::any_of(fit.pinned.begin(), fit.pinned.end(), [](bool p) { return p; });
    weak += fit.cost_before > 0 && calibrate::FitConcerns(fit, bounds).size() >
                                       static_cast<size_t>(std::count(fit.pinned.begin(), fit.pinned.end(), true));
  }
  const double n = static_cast<double>(choices.size());
  out.set_mape_percent(mape / n);
  out.set_worst_mape_percent(worst);
  out.set_max_abs_error_percent(max_abs);
  out.set_signed_error_percent(signed_error / n);
  out.set_gemm_scale(Median(gemm));
  out.set_iteration_overhead_delta_ms(Median(iteration));
  out.set_pass_overhead_delta_us(Median(pass));
  out.set_network_scale(Median(network));
  out.set_memory_kernel_scale(Median(kernel));
  out.set_collective_overhead_delta_us(Median(collective));
  // The most frequent choice; on a tie the first by name (std::map order), so the same on every run.
  auto usual = chosen_values.begin();
  for (auto it = chosen_values.begin(); it != chosen_values.end(); ++it)
    if (it->second > usual->second) usual = it;
  out.set_usual_values(usual->first);
  out.set_usual_values_share(usual->second / n);
  out.set_pinned_share(pinned / n);
  out.set_weak_fit_share(weak / n);
  return out;
}

}  // namespace

void EvaluateCalibration(v1::FidelitySet* set) {
  set->clear_calibrations();
  std::vector<OverheadProbe> probes;
  for (const v1::FidelityCase& c : set->cases()) {
    if (!(c.measured_time_ms() > 0 && c.gemm_probe_time_ms() > 0 && c.pass_probe_time_ms() > 0)) return;
    probes.push_back(ProbeOf(c));
  }
  const calibrate::OverheadBounds bounds = SetBounds(*set);
  for (int k = 1; k <= kMaxCalibrationRuns && k < static_cast<int>(probes.size()); ++k) {
    *set->add_calibrations() = CalibrateOnK(probes, bounds, k);
  }
}

}  // namespace hetsim::fidelity
