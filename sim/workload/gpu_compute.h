// How long a GPU takes for a GEMM, for memory-bound work, and for the host work around them.
//
// With a shape-aware kernel model (ComputeEfficiency.sm_count > 0, set by every preset) a GEMM of
// shape (m x k) @ (k x n), batch times, is cut into output tiles; the tiles run in waves of sm_count,
// and each tile costs 2 Tm Tn (k + tile_overhead_k) FLOPs at the SM's share of peak x max_efficiency
// x the tile's relative throughput (the best of a few tile shapes is taken, as cuBLAS's heuristics
// pick one). The kernel is also never faster than moving its operands at the achieved HBM bandwidth.
// Every kernel then adds kernel_launch_us and lasts at least host_op_us.
// Without sm_count, the legacy size curve: flop / (peak * max_efficiency * g / (g + half_efficiency_gflop)).
// Ideal hardware (Cluster.ideal) is flop / peak and bytes / datasheet bandwidth, no overheads.
// The GPU is a resolved spec (proto::ResolveGpu of a checked GPU type: presets applied, units
// converted). docs/hardware.md gives the sources and the fitted values.
#ifndef HETSIM_SIM_WORKLOAD_GPU_COMPUTE_H_
#define HETSIM_SIM_WORKLOAD_GPU_COMPUTE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/spec/dtype.h"
#include "base/spec/gpu.h"

namespace hetsim::workload {

// One GEMM kernel: `batch` independent products of an (m x k) and a (k x n) matrix.
struct GemmShape {
  double m = 0, n = 0, k = 0;
  double batch = 1;
  double flop() const { return 2 * m * n * k * batch; }
};

// How a shape-aware GPU runs one GEMM: the tile shape it picks and the waves of tiles.
struct TilePlan {
  double tile_m = 0, tile_n = 0;
  double relative_throughput = 1;  // of the tile shape, against the largest tiles
  double waves = 0;
};

class GpuCompute {
 public:
  // Fails when the GPU lacks the peak for `dtype` or the HBM bandwidth. `ideal` ignores every
  // efficiency field. `where` prefixes error messages: "cluster.pbtxt: gpu_types[1]".
  static absl::StatusOr<GpuCompute> Create(const spec::GpuSpec& gpu, spec::DType dtype, absl::string_view where,
                                           bool ideal = false);

  double peak_flop_per_s() const { return peak_flop_per_s_; }
  // The GPU for the GEMMs an FP8 model keeps in 16 bits (Gemm::fp8 false): the same GPU at its BF16
  // peak (FP16 without one) when the dtype is FP8, this one otherwise.
  const GpuCompute& SixteenBit() const { return sixteen_bit_ ? *sixteen_bit_ : *this; }
  double hbm_bytes_per_s() const { return hbm_bytes_per_s_; }
  double max_efficiency() const { return max_efficiency_; }
  double half_efficiency_gflop() const { return half_efficiency_gflop_; }
  bool shape_aware() const { return sm_count_ > 0; }

  // Legacy size curve: fraction of peak reached by one kernel of `kernel_flop` FLOPs.
  double Efficiency(double kernel_flop) const;
  // Seconds for `kernel_count` identical kernels of `kernel_flop` FLOPs each whose shape is unknown
  // (LayerList layers): the size curve, plus the per-kernel overheads.
  double GemmSeconds(double kernel_flop, double kernel_count = 1) const;
  // Seconds for one GEMM kernel of this shape (the size curve on its FLOPs without sm_count), with
  // `sm_margin` of the SMs held by a kernel running beside it (a shape-aware GPU's GEMM runs its tiles
  // in waves over the others; the size curve has no SMs to hold).
  double GemmSeconds(const GemmShape& shape, int sm_margin = 0) const;
  // The tiles of the fastest tile shape for `shape` (shape-aware GPUs only) on `sms` SMs (0: all);
  // the GEMM's compute time is waves x 2 tile_m tile_n (k + tile_overhead_k) / (peak x max_efficiency
  // / SMs x relative).
  TilePlan PlanTiles(const GemmShape& shape, int sms = 0) const;
  int sm_count() const { return sm_count_; }
  double tile_overhead_k() const { return tile_overhead_k_; }
  double kernel_launch_s() const { return launch_s_; }
  // The host's time to issue one operator (ComputeEfficiency.host_op_us; 0 on ideal hardware).
  double host_op_s() const { return host_op_s_; }
  // The host's round trip through a device synchronization (ComputeEfficiency.sync_round_trip_us, else
  // host_op_s + kernel_launch_s; 0 on ideal hardware).
  double sync_round_trip_s() const { return sync_round_trip_s_; }
  // Memory-bound work: `bytes` of HBM traffic spread over `kernels` kernels.
  double MemorySeconds(double bytes, double kernels = 0) const;
  // Host work around one pipeline pass (forward or backward of one microbatch on one stage).
  double pass_overhead_s() const { return pass_overhead_s_; }
  // Per-iteration host work (data loading, loss-scaler check, logging).
  double iteration_overhead_s() const { return iteration_overhead_s_; }
  // How fast a kernel built from Ampere's mma.sync runs here, as a fraction of the GEMM model's speed
  // (ComputeEfficiency.mma_sync_speed; 1 on ideal hardware).
  double mma_sync_speed() const { return mma_sync_speed_; }
  // What the unfused softmax region's `bytes` (masked_fill_ and softmax on the scores) take beyond the
  // other memory-bound kernels' rate: they run at ComputeEfficiency.unfused_softmax_speed of it (0 when 1).
  double UnfusedSoftmaxExtraSeconds(double bytes) const;
  // CUDA compute capability of the GPU type's preset (90: Hopper), 0 without one (spec::GpuSpec).
  int compute_capability() const { return compute_capability_; }
  // The host's rates around this GPU (ComputeEfficiency.host_fill_gbytes_per_s, pageable_h2d_gbytes_per_s,
  // pinned_copy_gbytes_per_s), bytes/s: one thread's zero fill, a pageable copy to the GPU and a pinned copy
  // either way; 0 when not priced or on ideal hardware.
  double host_fill_bytes_per_s() const { return host_fill_bytes_per_s_; }
  double pageable_h2d_bytes_per_s() const { return pageable_h2d_bytes_per_s_; }
  double pinned_copy_bytes_per_s() const { return pinned_copy_bytes_per_s_; }

 private:
  GpuCompute() = default;
  double KernelSeconds(double busy_s) const;  // adds the launch cost, floors at the host's issue time

  double peak_flop_per_s_ = 0;
  double hbm_bytes_per_s_ = 0;  // achieved: datasheet x hbm_efficiency
  double element_bytes_ = 2;    // of the GEMM operands
  double max_efficiency_ = 1;
  double half_efficiency_gflop_ = 0;
  int sm_count_ = 0;
  double tile_overhead_k_ = 0;
  double launch_s_ = 0;
  double host_op_s_ = 0;
  double sync_round_trip_s_ = 0;
  double pass_overhead_s_ = 0;
  double iteration_overhead_s_ = 0;
  double mma_sync_speed_ = 1;
  double unfused_softmax_speed_ = 1;
  int compute_capability_ = 0;
  double host_fill_bytes_per_s_ = 0;
  double pageable_h2d_bytes_per_s_ = 0;
  double pinned_copy_bytes_per_s_ = 0;
  std::shared_ptr<const GpuCompute> sixteen_bit_;  // FP8 only
};

}  // namespace hetsim::workload

#endif  // HETSIM_SIM_WORKLOAD_GPU_COMPUTE_H_
