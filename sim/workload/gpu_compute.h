// How long a GPU takes for a GEMM or for memory-bound work.
//
// GEMM time = flop / (peak FLOP/s of the compute dtype * efficiency(g)), with
// efficiency(g) = max_efficiency * g / (g + half_efficiency_gflop) and g the GEMM's size in GFLOP
// (one kernel, on one GPU). Memory-bound time = bytes / HBM bandwidth.
// The GpuType is taken as given (presets are resolved by the loader, proto::ApplyGpuPresets); only
// the fields used are checked.
#ifndef HETSIM_SIM_WORKLOAD_GPU_COMPUTE_H_
#define HETSIM_SIM_WORKLOAD_GPU_COMPUTE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"

namespace hetsim::sim::workload {

class GpuCompute {
 public:
  // Fails when the GpuType lacks the peak for `dtype`, the HBM bandwidth, or has an efficiency
  // outside (0, 1] / a negative half-efficiency size. An unset efficiency (max_efficiency 0) means 1.
  // `where` prefixes error messages: "cluster.pbtxt: gpu_types[1]".
  static absl::StatusOr<GpuCompute> Create(const hetsim::v1::GpuType& gpu, hetsim::v1::DType dtype,
                                           absl::string_view where);

  double peak_flop_per_s() const { return peak_flop_per_s_; }
  double hbm_bytes_per_s() const { return hbm_bytes_per_s_; }
  double max_efficiency() const { return max_efficiency_; }
  double half_efficiency_gflop() const { return half_efficiency_gflop_; }

  // Fraction of peak reached by one kernel of `kernel_flop` FLOPs.
  double Efficiency(double kernel_flop) const;
  // Seconds for `kernel_count` identical kernels of `kernel_flop` FLOPs each.
  double GemmSeconds(double kernel_flop, double kernel_count = 1) const;
  double MemorySeconds(double bytes) const;

 private:
  GpuCompute() = default;
  double peak_flop_per_s_ = 0;
  double hbm_bytes_per_s_ = 0;
  double max_efficiency_ = 1;
  double half_efficiency_gflop_ = 0;
};

}  // namespace hetsim::sim::workload

#endif  // HETSIM_SIM_WORKLOAD_GPU_COMPUTE_H_
