#include "service/calibrate/overhead_probe.h"

#include <algorithm>

#include "service/driver/simulate.h"

namespace hetsim::calibrate {
namespace {

constexpr double kOff = 1e-9;  // a ComputeEfficiency field at 0 would take the preset's value again

double EfficiencyOrOne(double e) { return e > 0 ? e : 1; }

}  // namespace

void ApplyOverheadValues(hetsim::v1::Cluster& cluster, const std::array<double, kOverheadValues>& x) {
  for (hetsim::v1::GpuType& g : *cluster.mutable_gpu_types()) {
    hetsim::v1::ComputeEfficiency& e = *g.mutable_efficiency();
    e.set_max_efficiency(std::min(1.0, EfficiencyOrOne(e.max_efficiency()) / (1 + x[0])));
    e.set_iteration_overhead_ms(std::max(kOff, e.iteration_overhead_ms() + x[1] * 1e3));
    e.set_pass_overhead_us(std::max(kOff, e.pass_overhead_us() + x[2] * 1e6));
  }
}

OverheadBounds BoundsOf(const hetsim::v1::Cluster& cluster) {
  OverheadBounds b;
  bool first = true;
  for (const hetsim::v1::GpuType& g : cluster.gpu_types()) {
    const hetsim::v1::ComputeEfficiency& e = g.efficiency();
    b.gemm_min = std::max(b.gemm_min, EfficiencyOrOne(e.max_efficiency()) - 1);
    const double iteration_s = e.iteration_overhead_ms() * 1e-3, pass_s = e.pass_overhead_us() * 1e-6;
    b.iteration_s = first ? iteration_s : std::min(b.iteration_s, iteration_s);
    b.pass_s = first ? pass_s : std::min(b.pass_s, pass_s);
    first = false;
  }
  return b;
}

absl::StatusOr<double> SimulatedSeconds(const proto::PlanInputs& inputs, const std::array<double, kOverheadValues>& x,
                                        bool exact) {
  proto::PlanInputs moved = inputs;
  ApplyOverheadValues(moved.cluster, x);
  if (absl::Status s = proto::ValidatePlanInputs(moved); !s.ok()) return s;
  absl::StatusOr<hetsim::v1::Report> report = driver::SimulateReport(moved, driver::DefaultFidelity(exact));
  if (!report.ok()) return report.status();
  return report->iteration_time_ms() * 1e-3;
}

absl::StatusOr<OverheadProbe> ProbeRun(const proto::PlanInputs& inputs, double simulated_s, double measured_s,
                                       bool exact) {
  OverheadProbe probe;
  probe.measured = measured_s;
  probe.simulated = simulated_s;
  absl::StatusOr<double> gemm = SimulatedSeconds(inputs, {kGemmProbe, 0, 0}, exact);
  if (!gemm.ok()) return gemm.status();
  absl::StatusOr<double> pass = SimulatedSeconds(inputs, {0, 0, kPassProbe}, exact);
  if (!pass.ok()) return pass.status();
  probe.gemm_probe = *gemm;
  probe.pass_probe = *pass;
  return probe;
}

}  // namespace hetsim::calibrate
