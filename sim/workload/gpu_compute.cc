#include "sim/workload/gpu_compute.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

// Output tile shapes a GEMM library chooses from, with the fraction of the largest tiles' throughput
// each reaches: smaller tiles reuse each loaded operand fewer times (a Tm x Tn tile does
// Tm Tn / (Tm + Tn) FLOPs per operand element loaded), so they fall further below peak. They win when
// they waste less of the last wave. The fractions follow the operand-reuse ratio, softened
// (docs/hardware.md).
struct Tile {
  double m, n, relative_throughput;
};
constexpr Tile kTiles[] = {
    {256, 128, 1.0}, {128, 256, 1.0}, {128, 128, 0.92}, {128, 64, 0.8}, {64, 128, 0.8}, {64, 64, 0.6},
};

absl::Status CheckFraction(absl::string_view where, const char* field, double v) {
  if (!std::isfinite(v) || v < 0 || v > 1) {
    return absl::InvalidArgumentError(absl::StrFormat("%s.efficiency.%s: %g is outside (0, 1]", where, field, v));
  }
  return absl::OkStatus();
}

absl::Status CheckNonNegative(absl::string_view where, const char* field, double v) {
  if (!std::isfinite(v) || v < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.efficiency.%s: %g must be a finite number >= 0", where, field, v));
  }
  return absl::OkStatus();
}

absl::Status CheckEfficiency(const hetsim::v1::ComputeEfficiency& e, absl::string_view where) {
  for (absl::Status s : {CheckFraction(where, "max_efficiency", e.max_efficiency()),
                         CheckFraction(where, "hbm_efficiency", e.hbm_efficiency()),
                         CheckNonNegative(where, "half_efficiency_gflop", e.half_efficiency_gflop()),
                         CheckNonNegative(where, "tile_overhead_k", e.tile_overhead_k()),
                         CheckNonNegative(where, "kernel_launch_us", e.kernel_launch_us()),
                         CheckNonNegative(where, "host_op_us", e.host_op_us()),
                         CheckNonNegative(where, "pass_overhead_us", e.pass_overhead_us()),
                         CheckNonNegative(where, "iteration_overhead_ms", e.iteration_overhead_ms())}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}
}  // namespace

absl::StatusOr<GpuCompute> GpuCompute::Create(const hetsim::v1::GpuType& gpu, hetsim::v1::DType dtype,
                                              absl::string_view where, bool ideal) {
  const double peak = hetsim::proto::PeakTflops(gpu, dtype);
  if (!std::isfinite(peak) || peak <= 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.%s: %g is not a positive number (GPU type \"%s\", needed for the model's dtype)", where,
                        PeakFieldName(dtype), peak, gpu.name()));
  }
  const double hbm = gpu.hbm_bandwidth_gbytes_per_s();
  if (!std::isfinite(hbm) || hbm <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.hbm_bandwidth_gbytes_per_s: %g is not a positive number (GPU type \"%s\")", where, hbm, gpu.name()));
  }
  const hetsim::v1::ComputeEfficiency& e = gpu.efficiency();
  if (absl::Status s = CheckEfficiency(e, where); !s.ok()) return s;

  GpuCompute g;
  g.peak_flop_per_s_ = peak * 1e12;
  g.hbm_bytes_per_s_ = hbm * 1e9;
  g.element_bytes_ = ElementBytes(dtype);
  if (ideal) return g;
  g.max_efficiency_ = e.max_efficiency() == 0 ? 1.0 : e.max_efficiency();
  g.half_efficiency_gflop_ = e.half_efficiency_gflop();
  g.hbm_bytes_per_s_ *= e.hbm_efficiency() == 0 ? 1.0 : e.hbm_efficiency();
  g.sm_count_ = static_cast<int>(e.sm_count());
  g.tile_overhead_k_ = e.tile_overhead_k();
  g.launch_s_ = e.kernel_launch_us() * 1e-6;
  g.host_op_s_ = e.host_op_us() * 1e-6;
  g.pass_overhead_s_ = e.pass_overhead_us() * 1e-6;
  g.iteration_overhead_s_ = e.iteration_overhead_ms() * 1e-3;
  return g;
}

double GpuCompute::Efficiency(double kernel_flop) const {
  const double g = kernel_flop * 1e-9;
  if (half_efficiency_gflop_ == 0) return max_efficiency_;
  return max_efficiency_ * g / (g + half_efficiency_gflop_);
}

double GpuCompute::KernelSeconds(double busy_s) const { return std::max(busy_s + launch_s_, host_op_s_); }

double GpuCompute::GemmSeconds(double kernel_flop, double kernel_count) const {
  if (kernel_flop <= 0 || kernel_count <= 0) return 0;
  // flop / (peak * max * g / (g + half)) = (g + half) * 1e9 / (peak * max): linear in the size, so a
  // kernel never takes less than half_efficiency_gflop's worth of time at full efficiency.
  const double busy = (kernel_flop + half_efficiency_gflop_ * 1e9) / (peak_flop_per_s_ * max_efficiency_);
  return KernelSeconds(busy) * kernel_count;
}

TilePlan GpuCompute::PlanTiles(const GemmShape& s) const {
  TilePlan best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (const Tile& t : kTiles) {
    const double tiles = s.batch * std::ceil(s.m / t.m) * std::ceil(s.n / t.n);
    const double waves = std::ceil(tiles / sm_count_);
    const double cost = waves * t.m * t.n * (s.k + tile_overhead_k_) / t.relative_throughput;
    if (cost < best_cost) {
      best_cost = cost;
      best = TilePlan{t.m, t.n, t.relative_throughput, waves};
    }
  }
  return best;
}

double GpuCompute::GemmSeconds(const GemmShape& s) const {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) return 0;
  if (!shape_aware()) return GemmSeconds(s.flop());
  const double operands = (s.m * s.k + s.k * s.n + s.m * s.n) * s.batch * element_bytes_;
  const TilePlan t = PlanTiles(s);
  const double sm_flop_per_s = peak_flop_per_s_ * max_efficiency_ / sm_count_;
  const double tiled =
      t.waves * 2 * t.tile_m * t.tile_n * (s.k + tile_overhead_k_) / (sm_flop_per_s * t.relative_throughput);
  return KernelSeconds(std::max(tiled, operands / hbm_bytes_per_s_));
}

double GpuCompute::MemorySeconds(double bytes, double kernels) const {
  if (bytes <= 0) return 0;
  const double busy = bytes / hbm_bytes_per_s_ + kernels * launch_s_;
  return std::max(busy, kernels * host_op_s_);
}

}  // namespace hetsim::sim::workload
