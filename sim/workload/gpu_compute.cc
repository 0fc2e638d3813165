#include "sim/workload/gpu_compute.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "proto/gpu_presets.h"
#include "sim/workload/model_cost.h"

namespace hetsim::sim::workload {

namespace {
const char* PeakFieldName(hetsim::v1::DType dtype) {
  switch (EffectiveDType(dtype)) {
    case hetsim::v1::FP32: return "peak_tflops_fp32";
    case hetsim::v1::TF32: return "peak_tflops_tf32";
    case hetsim::v1::FP16: return "peak_tflops_fp16";
    case hetsim::v1::FP8: return "peak_tflops_fp8";
    default: return "peak_tflops_bf16";
  }
}
}  // namespace

absl::StatusOr<GpuCompute> GpuCompute::Create(const hetsim::v1::GpuType& gpu,
                                              hetsim::v1::DType dtype, absl::string_view where) {
  const double peak = hetsim::proto::PeakTflops(gpu, dtype);
  if (!std::isfinite(peak) || peak <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.%s: %g is not a positive number (GPU type \"%s\", needed for the model's dtype)", where,
        PeakFieldName(dtype), peak, gpu.name()));
  }
  const double hbm = gpu.hbm_bandwidth_gbytes_per_s();
  if (!std::isfinite(hbm) || hbm <= 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.hbm_bandwidth_gbytes_per_s: %g is not a positive number (GPU type \"%s\")",
                        where, hbm, gpu.name()));
  }
  const double max_eff = gpu.efficiency().max_efficiency();
  if (!std::isfinite(max_eff) || max_eff < 0 || max_eff > 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.efficiency.max_efficiency: %g is outside (0, 1]", where, max_eff));
  }
  const double half = gpu.efficiency().half_efficiency_gflop();
  if (!std::isfinite(half) || half < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.efficiency.half_efficiency_gflop: %g must be a finite number >= 0", where, half));
  }
  GpuCompute g;
  g.peak_flop_per_s_ = peak * 1e12;
  g.hbm_bytes_per_s_ = hbm * 1e9;
  g.max_efficiency_ = max_eff == 0 ? 1.0 : max_eff;
  g.half_efficiency_gflop_ = half;
  return g;
}

double GpuCompute::Efficiency(double kernel_flop) const {
  const double g = kernel_flop * 1e-9;
  if (half_efficiency_gflop_ == 0) return max_efficiency_;
  return max_efficiency_ * g / (g + half_efficiency_gflop_);
}

double GpuCompute::GemmSeconds(double kernel_flop, double kernel_count) const {
  if (kernel_flop <= 0 || kernel_count <= 0) return 0;
  // flop / (peak * max * g / (g + half)) = (g + half) * 1e9 / (peak * max): linear in the size, so a
  // kernel never takes less than half_efficiency_gflop's worth of time at full efficiency.
  const double per_kernel =
      (kernel_flop + half_efficiency_gflop_ * 1e9) / (peak_flop_per_s_ * max_efficiency_);
  return per_kernel * kernel_count;
}

double GpuCompute::MemorySeconds(double bytes) const {
  return bytes <= 0 ? 0 : bytes / hbm_bytes_per_s_;
}

}  // namespace hetsim::sim::workload
