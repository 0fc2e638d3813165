// Built-in GPU types (datasheet figures, dense, no sparsity; sources in docs/hardware.md). A GpuType
// that names a preset gets the preset's value in every field it leaves at zero. A power-capped card
// (T4 at 70 W, L4 at 72 W) does not hold its boost clock: its preset sets
// GpuType.sustained_clock_fraction, which PeakTflops applies to every datasheet peak.
#ifndef HETSIM_PROTO_GPU_PRESETS_H_
#define HETSIM_PROTO_GPU_PRESETS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"

namespace hetsim::proto {

struct GpuPreset {
  const char* name;  // "A100-80GB"
  double peak_tflops_fp32;
  double peak_tflops_tf32;  // 0: the GPU has no such tensor-core mode
  double peak_tflops_bf16;
  double peak_tflops_fp16;
  double peak_tflops_fp8;
  double hbm_gib;
  double hbm_bandwidth_gbytes_per_s;
  // The clock the datasheet peaks are quoted at, and the one the card sustains under a training load
  // (0: it holds the boost clock); documentation except for their ratio, sustained_clock_fraction.
  double boost_clock_mhz;
  double sustained_clock_mhz;
  // The kernel model (ComputeEfficiency; docs/hardware.md gives sources and the fit).
  double max_efficiency;
  double half_efficiency_gflop;
  double sm_count;
  double tile_overhead_k;
  double hbm_efficiency;
  double kernel_launch_us;
  double host_op_us;
  double pass_overhead_us;
  double iteration_overhead_ms;
  // CUDA compute capability, major x 10 + minor (90: Hopper), from NVIDIA's table
  // (developer.nvidia.com/cuda-gpus); 0 for AMD's. NCCL's tuner keys on it (src/graph/tuning.cc: NVLS's
  // efficiency per generation, CollNetDirect's 0.85 from 9.0): docs/network.md.
  int compute_capability;
  // ComputeEfficiency.mma_sync_speed (0: 1): what a kernel of Ampere's mma.sync reaches of the GEMM model's
  // speed; below 1 on Hopper, whose tensor cores reach their rate through wgmma (docs/hardware.md).
  double mma_sync_speed;
};

// Every preset, in the order docs/hardware.md lists them.
const std::vector<GpuPreset>& GpuPresets();

// Exact, case-sensitive name match; nullptr when there is none.
const GpuPreset* FindGpuPreset(absl::string_view name);

// "A100-40GB, A100-80GB, ..." for error messages.
std::string GpuPresetNames();

// Fills the zero fields of `gpu` from its preset (no-op without one). InvalidArgument naming
// `field_path` (e.g. "gpu_types[1].preset") when the preset is unknown; `file` prefixes the message.
absl::Status ApplyGpuPreset(hetsim::v1::GpuType* gpu, absl::string_view file, absl::string_view field_path);

// ApplyGpuPreset on every gpu_types[i].
absl::Status ApplyGpuPresets(hetsim::v1::Cluster* cluster, absl::string_view file);

// What a node of `preset`'s GPUs cannot have, from the card's datasheet (docs/hardware.md, "What a node
// can hold"): as (NodeType field, problem), empty when nothing. PCIe cards without NVLink (T4, A10,
// A10G, L4, L40S, RTX 4090, V100 PCIe) sit on PCIE or PCIE_TREE only; cards with an NVLink bridge (TITAN RTX,
// RTX 2080 Ti, A40, RTX A6000, RTX 3090, A100 PCIe, H100 NVL) also on NVLINK_BRIDGE, never on an NVSwitch or DGX-1's
// cube mesh; NVLink SHARP (nvlink_sharp) needs Hopper's or Blackwell's NVSwitch (H100 SXM, H800, H20,
// H200, B200). Other presets (and GPU types without one) are not restricted.
std::vector<std::pair<std::string, std::string>> PresetNodeProblems(absl::string_view preset,
                                                                    hetsim::v1::IntraNodeFabric fabric,
                                                                    bool nvlink_sharp);

// The compute dtype of a model (DTYPE_UNSPECIFIED means BF16).
hetsim::v1::DType EffectiveDType(const hetsim::v1::Model& model);

// The fraction of the datasheet peak a card sustains: GpuType.sustained_clock_fraction, 0 meaning 1.
double SustainedClockFraction(const hetsim::v1::GpuType& gpu);

// Peak dense TFLOP/s of `gpu` in `dtype` (DTYPE_UNSPECIFIED means BF16) at its sustained clock (the
// datasheet figure x SustainedClockFraction); 0 when not given.
double PeakTflops(const hetsim::v1::GpuType& gpu, hetsim::v1::DType dtype);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_GPU_PRESETS_H_
