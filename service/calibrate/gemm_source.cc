#include "service/calibrate/gemm_source.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "proto/gpu_presets.h"

namespace hetsim::calibrate {

absl::StatusOr<SourceFit> GemmSource::Fit(hetsim::v1::Cluster& cluster) {
  int index = gpu_type_.empty() && cluster.gpu_types_size() > 0 ? 0 : -1;
  for (int i = 0; index < 0 && i < cluster.gpu_types_size(); ++i) {
    if (cluster.gpu_types(i).name() == gpu_type_) index = i;
  }
  if (index < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--gpu-type: the cluster has no GPU type \"%s\" (for %s)", gpu_type_, file_));
  }
  hetsim::v1::GpuType* gpu = cluster.mutable_gpu_types(index);
  const std::string at = absl::StrFormat("gpu_types[%d]", index);
  hetsim::v1::GpuType resolved = *gpu;
  if (absl::Status s = proto::ApplyGpuPreset(&resolved, file_, at + ".preset"); !s.ok()) return s;
  absl::StatusOr<GemmFit> fit = FitGemm(resolved, timings_, absl::StrFormat("%s: %s", file_, at));
  if (!fit.ok()) return fit.status();

  SourceFit out;
  const hetsim::v1::ComputeEfficiency& before = resolved.efficiency();
  out.parameters = {{at + ".efficiency.max_efficiency", before.max_efficiency(), fit->max_efficiency},
                    {at + ".efficiency.tile_overhead_k", before.tile_overhead_k(), fit->tile_overhead_k},
                    {at + ".efficiency.kernel_launch_us", before.kernel_launch_us(), fit->kernel_launch_us}};
  auto* e = gpu->mutable_efficiency();
  e->set_max_efficiency(fit->max_efficiency);
  // 0 would mean "take the preset's": a fitted zero is written as the smallest positive value.
  e->set_tile_overhead_k(std::max(fit->tile_overhead_k, 1e-9));
  e->set_kernel_launch_us(std::max(fit->kernel_launch_us, 1e-9));
  // The fit clamps the efficiency into [0.01, 1]: a value at either end is what the timings could not
  // give (times no kernel model explains), and a large MAPE says the same; both make a poor fit.
  if (fit->max_efficiency <= 0.01 || fit->max_efficiency >= 1.0) {
    out.problems.push_back(absl::StrFormat(
        "%s: %s.efficiency.max_efficiency = %g is at the fit's bound [0.01, 1]: the timings show what the kernel "
        "model cannot (another GPU than %s, or times that are not one GEMM's)",
        file_, at, fit->max_efficiency, resolved.name()));
  }
  if (!(fit->mape * 100 <= max_mape_percent_)) {
    out.problems.push_back(absl::StrFormat("%s: MAPE %.2f %% over the GEMM timings, above --max-mape (%g %%)", file_,
                                           fit->mape * 100, max_mape_percent_));
  }
  for (const GemmFitPoint& p : fit->points) {
    out.points.push_back({absl::StrFormat("%s:%d", file_, p.measured.line),
                          absl::StrFormat("GEMM %gx%gx%g", p.measured.m, p.measured.n, p.measured.k),
                          p.measured.seconds, p.predicted_s});
  }
  return out;
}

}  // namespace hetsim::calibrate
