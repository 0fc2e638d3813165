// A resolved GPU type: presets applied, units converted once (FLOP/s, bytes/s, bytes, seconds),
// unset efficiencies made 1. Built by proto::ResolveGpu; sim/workload's GpuCompute reads only this.
#ifndef HETSIM_BASE_SPEC_GPU_H_
#define HETSIM_BASE_SPEC_GPU_H_

#include <array>
#include <string>

#include "base/spec/dtype.h"
#include "base/units.h"

namespace hetsim::spec {

struct GpuSpec {
  std::string name;
  std::string preset;  // empty when none
  // Dense peak per compute dtype, indexed by DType; 0 when the type does not give it.
  std::array<double, kNumDTypes> peak_flop_per_s{};
  Bandwidth hbm_bandwidth;  // datasheet
  Bytes hbm_capacity;
  // ComputeEfficiency, resolved (docs/hardware.md).
  double max_efficiency = 1;
  double hbm_efficiency = 1;
  double half_efficiency_gflop = 0;  // the size curve's parameter, in the file's unit
  int sm_count = 0;
  double tile_overhead_k = 0;
  double kernel_launch_s = 0;
  double host_op_s = 0;
  double sync_round_trip_s = 0;  // ComputeEfficiency.sync_round_trip_us; 0: host_op_s + kernel_launch_s
  double pass_overhead_s = 0;
  double iteration_overhead_s = 0;
  double mma_sync_speed = 1;         // ComputeEfficiency.mma_sync_speed, 0 made 1
  double unfused_softmax_speed = 1;  // ComputeEfficiency.unfused_softmax_speed, 0 made 1
  // ComputeEfficiency.host_fill_gbytes_per_s and pageable_h2d_gbytes_per_s, in bytes/s; 0: not priced.
  double host_fill_bytes_per_s = 0;
  double pageable_h2d_bytes_per_s = 0;
  double pinned_copy_bytes_per_s = 0;  // ComputeEfficiency.pinned_copy_gbytes_per_s; 0: not priced
  // CUDA compute capability of the type's preset (90: Hopper), 0 without a preset or on AMD: what NCCL's
  // tuner keys some of its algorithms' rates on (docs/network.md).
  int compute_capability = 0;

  double peak(DType dtype) const { return peak_flop_per_s[static_cast<int>(dtype)]; }
  // The preset's name when there is one ("H100"), else the type's: how traces and charts label it.
  const std::string& short_name() const { return preset.empty() ? name : preset; }
};

}  // namespace hetsim::spec

#endif  // HETSIM_BASE_SPEC_GPU_H_
