#include "service/calibrate/overhead_probe.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "proto/fabric_presets.h"
#include "service/driver/simulate.h"

namespace hetsim::calibrate {
namespace {

constexpr double kOff = 1e-9;  // a ComputeEfficiency field at 0 would take the preset's value again

double EfficiencyOrOne(double e) { return e > 0 ? e : 1; }

std::string GpuPresetOf(const hetsim::v1::Cluster& cluster, const hetsim::v1::NodeType& node) {
  for (const hetsim::v1::GpuType& g : cluster.gpu_types())
    if (g.name() == node.gpu_type()) return g.preset();
  return "";
}

// Every NCCL fabric of `cluster` with its preset's figures filled in, handed to `visit` to read or move.
template <typename Visit>
void ForEachNcclFabric(hetsim::v1::Cluster& cluster, Visit visit) {
  for (hetsim::v1::NodeType& node : *cluster.mutable_node_types()) {
    const std::string preset = GpuPresetOf(cluster, node);
    *node.mutable_nccl() =
        proto::ResolveNcclFabric(node.nccl(), proto::IntraNodeFabricPreset(node.intra_node_fabric(), preset));
    visit(*node.mutable_nccl());
  }
  for (hetsim::v1::Island& island : *cluster.mutable_islands()) {
    *island.mutable_nccl() = proto::ResolveNcclFabric(island.nccl(), proto::InterNodeFabricPreset(island.fabric()));
    visit(*island.mutable_nccl());
  }
  for (hetsim::v1::InterIslandLink& link : *cluster.mutable_inter_island_links()) {
    *link.mutable_nccl() = proto::ResolveNcclFabric(link.nccl(), proto::InterNodeFabricPreset(link.fabric()));
    visit(*link.mutable_nccl());
  }
}

// Every collective's fixed cost + `delta_s`, at least 1 ns (0 would take the preset's again).
void MoveCollectiveCost(hetsim::v1::Cluster& cluster, double delta_s) {
  const int64_t delta_ns = std::llround(delta_s * 1e9);
  ForEachNcclFabric(cluster, [delta_ns](hetsim::v1::NcclFabric& f) {
    f.set_launch_latency_ns(std::max<int64_t>(1, f.launch_latency_ns() + delta_ns));
  });
}

void ScaleInterNodeLinks(hetsim::v1::Cluster& cluster, double scale) {
  for (hetsim::v1::Island& island : *cluster.mutable_islands()) {
    island.set_nic_bandwidth_gbps(island.nic_bandwidth_gbps() * scale);
    island.set_tcp_stream_gbps(island.tcp_stream_gbps() * scale);  // 0 (no limit) stays 0
  }
  for (hetsim::v1::InterIslandLink& link : *cluster.mutable_inter_island_links()) {
    link.set_bandwidth_gbps(link.bandwidth_gbps() * scale);
  }
}

}  // namespace

void ApplyOverheadValues(hetsim::v1::Cluster& cluster, const OverheadValues& x) {
  for (hetsim::v1::GpuType& g : *cluster.mutable_gpu_types()) {
    hetsim::v1::ComputeEfficiency& e = *g.mutable_efficiency();
    e.set_max_efficiency(std::min(1.0, EfficiencyOrOne(e.max_efficiency()) / (1 + x[0])));
    e.set_iteration_overhead_ms(std::max(kOff, e.iteration_overhead_ms() + x[1] * 1e3));
    e.set_pass_overhead_us(std::max(kOff, e.pass_overhead_us() + x[2] * 1e6));
    // Values at 0 leave their fields alone, so an uncalibrated value keeps the cluster as it was, to the bit.
    if (x[4] != 0) e.set_hbm_efficiency(std::min(1.0, EfficiencyOrOne(e.hbm_efficiency()) / (1 + x[4])));
  }
  if (x[3] != 0) ScaleInterNodeLinks(cluster, 1 / (1 + x[3]));
  if (x[5] != 0) MoveCollectiveCost(cluster, x[5]);
}

OverheadBounds BoundsOf(const hetsim::v1::Cluster& cluster) {
  OverheadBounds b;
  bool first = true;
  for (const hetsim::v1::GpuType& g : cluster.gpu_types()) {
    const hetsim::v1::ComputeEfficiency& e = g.efficiency();
    b.gemm_min = std::max(b.gemm_min, EfficiencyOrOne(e.max_efficiency()) - 1);
    b.hbm_min = std::max(b.hbm_min, EfficiencyOrOne(e.hbm_efficiency()) - 1);
    const double iteration_s = e.iteration_overhead_ms() * 1e-3, pass_s = e.pass_overhead_us() * 1e-6;
    b.iteration_s = first ? iteration_s : std::min(b.iteration_s, iteration_s);
    b.pass_s = first ? pass_s : std::min(b.pass_s, pass_s);
    first = false;
  }
  hetsim::v1::Cluster resolved = cluster;
  first = true;
  ForEachNcclFabric(resolved, [&](const hetsim::v1::NcclFabric& f) {
    const double latency_s = static_cast<double>(f.launch_latency_ns()) * 1e-9;
    b.collective_s = first ? latency_s : std::min(b.collective_s, latency_s);
    first = false;
  });
  return b;
}

absl::StatusOr<double> SimulatedSeconds(const proto::PlanInputs& inputs, const OverheadValues& x, bool exact) {
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
  // Each probe moves one value by its step: c, db (not probed: its slope is 1), da, n, h, l.
  const OverheadValues steps = {kGemmProbe, 0, kPassProbe, kNetworkProbe, kKernelProbe, kCollectiveProbe};
  double* const out[kOverheadValues] = {&probe.gemm_probe,   nullptr,
                                        &probe.pass_probe,   &probe.network_probe,
                                        &probe.kernel_probe, &probe.collective_probe};
  for (int j = 0; j < kOverheadValues; ++j) {
    if (out[j] == nullptr) continue;
    OverheadValues x = {0, 0, 0, 0, 0, 0};
    x[j] = steps[j];
    absl::StatusOr<double> seconds = SimulatedSeconds(inputs, x, exact);
    if (!seconds.ok()) return seconds.status();
    *out[j] = *seconds;
  }
  return probe;
}

}  // namespace hetsim::calibrate
