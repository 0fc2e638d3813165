#include "sim/workload/gpu_compute.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "sim/workload/model_cost.h"

namespace hetsim::workload {

namespace {
const char* PeakFieldName(spec::DType dtype) {
  switch (dtype) {
    case spec::DType::kFp32: return "peak_tflops_fp32";
    case spec::DType::kTf32: return "peak_tflops_tf32";
    case spec::DType::kFp16: return "peak_tflops_fp16";
    case spec::DType::kFp8: return "peak_tflops_fp8";
    case spec::DType::kBf16: return "peak_tflops_bf16";
  }
  return "peak_tflops_bf16";
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

}  // namespace

absl::StatusOr<GpuCompute> GpuCompute::Create(const spec::GpuSpec& gpu, spec::DType dtype, absl::string_view where,
                                              bool ideal) {
  // Messages give the file's units (TFLOP/s, GB/s).
  const double peak = gpu.peak(dtype);
  if (!std::isfinite(peak) || peak <= 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.%s: %g is not a positive number (GPU type \"%s\", needed for the model's dtype)", where,
                        PeakFieldName(dtype), peak * 1e-12, gpu.name));
  }
  const double hbm = gpu.hbm_bandwidth.bytes_per_second();
  if (!std::isfinite(hbm) || hbm <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.hbm_bandwidth_gbytes_per_s: %g is not a positive number (GPU type \"%s\")", where, hbm * 1e-9, gpu.name));
  }
  GpuCompute g;
  if (dtype == spec::DType::kFp8) {
    // The attention core, LM head and router of an FP8 model run in BF16 (FP16 on a GPU without it).
    const spec::DType sixteen = gpu.peak(spec::DType::kBf16) > 0 ? spec::DType::kBf16 : spec::DType::kFp16;
    if (!(gpu.peak(sixteen) > 0)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.peak_tflops_bf16: needed besides peak_tflops_fp8 (GPU type \"%s\"): an FP8 model's attention core, "
          "LM head and router run in 16 bits",
          where, gpu.name));
    }
    absl::StatusOr<GpuCompute> sixteen_bit = Create(gpu, sixteen, where, ideal);
    if (!sixteen_bit.ok()) return sixteen_bit.status();
    g.sixteen_bit_ = std::make_shared<const GpuCompute>(*std::move(sixteen_bit));
  }
  g.peak_flop_per_s_ = peak;
  g.hbm_bytes_per_s_ = hbm;
  g.element_bytes_ = ElementBytes(dtype);
  g.compute_capability_ = gpu.compute_capability;
  if (ideal) return g;
  g.max_efficiency_ = gpu.max_efficiency;
  g.half_efficiency_gflop_ = gpu.half_efficiency_gflop;
  g.hbm_bytes_per_s_ *= gpu.hbm_efficiency;
  g.sm_count_ = gpu.sm_count;
  g.tile_overhead_k_ = gpu.tile_overhead_k;
  g.launch_s_ = gpu.kernel_launch_s;
  g.host_op_s_ = gpu.host_op_s;
  g.sync_round_trip_s_ = gpu.sync_round_trip_s > 0 ? gpu.sync_round_trip_s : gpu.host_op_s + gpu.kernel_launch_s;
  g.pass_overhead_s_ = gpu.pass_overhead_s;
  g.iteration_overhead_s_ = gpu.iteration_overhead_s;
  g.mma_sync_speed_ = gpu.mma_sync_speed;
  g.unfused_softmax_speed_ = gpu.unfused_softmax_speed;
  g.host_fill_bytes_per_s_ = gpu.host_fill_bytes_per_s;
  g.pageable_h2d_bytes_per_s_ = gpu.pageable_h2d_bytes_per_s;
  g.pinned_copy_bytes_per_s_ = gpu.pinned_copy_bytes_per_s;
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

TilePlan GpuCompute::PlanTiles(const GemmShape& s, int sms) const {
  const double slots = sms > 0 ? sms : sm_count_;
  TilePlan best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (const Tile& t : kTiles) {
    const double tiles = s.batch * std::ceil(s.m / t.m) * std::ceil(s.n / t.n);
    const double waves = std::ceil(tiles / slots);
    const double cost = waves * t.m * t.n * (s.k + tile_overhead_k_) / t.relative_throughput;
    if (cost < best_cost) {
      best_cost = cost;
      best = TilePlan{t.m, t.n, t.relative_throughput, waves};
    }
  }
  return best;
}

double GpuCompute::GemmSeconds(const GemmShape& s, int sm_margin) const {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) return 0;
  if (!shape_aware()) return GemmSeconds(s.flop());
  const double operands = (s.m * s.k + s.k * s.n + s.m * s.n) * s.batch * element_bytes_;
  // Each SM keeps its rate; the GEMM has fewer of them per wave (ComputeStageCost refuses margins that
  // leave none).
  const TilePlan t = PlanTiles(s, std::max(1, sm_count_ - std::max(0, sm_margin)));
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

double GpuCompute::UnfusedSoftmaxExtraSeconds(double bytes) const {
  if (bytes <= 0) return 0;
  return bytes / hbm_bytes_per_s_ * (1 / unfused_softmax_speed_ - 1);
}

}  // namespace hetsim::workload
