#include "proto/gpu_presets.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "base/status_macros.h"

namespace hetsim::proto {

using hetsim::v1::DType;
using hetsim::v1::GpuType;

namespace {
// The kernel model's values per GPU family. A100's max_efficiency is fitted to the published
// Megatron-LM runs of the calibration set, validation/megatron-sc21.pbtxt (0.72 since the recomputed
// forward's TP collectives and the fused bias-dropout-add's one pass are priced; 0.71 before); every other family
// applies 84% (the 0.71 fit's share of the 0.85 of peak a cuBLAS microbenchmark reaches) to the fraction of its peak a
// published GEMM benchmark reaches (docs/hardware.md, "The kernel model", gives each figure, its source, and why the
// ratio is not re-derived from the 0.72 fit). The host-side values are the same everywhere: they belong to the
// framework, not the card.
struct KernelModelValues {
  double max_eff, tile_k, hbm, launch, host, pass, iter;
  double mma_sync = 0;  // ComputeEfficiency.mma_sync_speed; 0: 1 (the GEMM model's speed)
};
constexpr KernelModelValues Family(double max_eff, double hbm, double mma_sync = 0) {
  return {max_eff, 64, hbm, 2, 10, 300, 50, mma_sync};
}
// A kernel built from Ampere's mma.sync on Hopper: FlashAttention-2's Ampere kernels (the same code on both GPUs)
// run 1.69 times faster on an H100 SXM5 than on an A100 80GB SXM4 (Dao 2023, arXiv 2307.08691, Figs. 4(d) and
// 7(d), causal, head dimension 128: 163/99, 221/133, 265/155, 294/173, 308/182 and 328/189 TFLOP/s at 512-16K
// tokens, mean 1.69), where the GEMM model gives the H100-SXM 989.5 x 0.65 against the A100-80GB's 312 x 0.72,
// 2.86 times: such a kernel reaches 1.69 / 2.86 = 0.59 of the GEMM model's speed on Hopper. docs/hardware.md.
constexpr double kHopperMmaSyncSpeed = 1.69 * (312 * 0.72) / (989.5 * 0.65);
constexpr KernelModelValues kVolta = Family(0.67, 0.85);    // V100 0.80 of peak; Turing shares it
constexpr KernelModelValues kGa100 = Family(0.72, 0.85);    // A100: fitted
constexpr KernelModelValues kGa102 = Family(0.68, 0.85);    // A40 0.82, RTX A6000 0.80; A10 by family
constexpr KernelModelValues kA10g = Family(0.83, 0.85);     // 0.99 of its GeForce-rate peak
constexpr KernelModelValues kRtx3090 = Family(0.91, 0.85);  // 1.08: runs above its rated boost clock
constexpr KernelModelValues kRtx4090 = Family(0.84, 0.85);  // 1.00
constexpr KernelModelValues kAda = Family(0.62, 0.85);      // L40S 0.74; L4 by family
constexpr KernelModelValues kHopper = Family(0.65, 0.88, kHopperMmaSyncSpeed);  // H100 0.78
// H20: no mma_sync_speed; its firmware caps the tensor rate below what Ampere's instruction reaches on 78 SMs.
constexpr KernelModelValues kH20 = Family(0.80, 0.88);  // 0.96: its compute is capped, not its HBM
constexpr KernelModelValues kBlackwell = Family(0.60, 0.88);
constexpr KernelModelValues kCdna = Family(0.60, 0.85);  // MI250X one GCD 0.66-0.77; MI300X by family
// The T4: Volta's GEMM share; its own memory rate, 245.2 of its 320.06 GB/s with Jia et al.'s GPU_Microbenchmark
// (github.com/cissieAB/ifarm-gpus, docs/roofline.md), 0.766; CUDA's bandwidthTest gives a T4 239.6 GB/s device to
// device (0.749). docs/hardware.md.
constexpr KernelModelValues kT4 = Family(0.67, 0.766);

// One card's datasheet: dense TFLOP/s FP32, TF32, BF16, FP16, FP8 (0: no such mode), memory GiB and
// GB/s, boost and sustained clock MHz (0: not published / holds its boost clock), SMs (CUs on AMD).
struct Datasheet {
  double fp32, tf32, bf16, fp16, fp8, gib, gbps, boost_mhz, sustained_mhz, sms;
};

GpuPreset Preset(const char* name, const Datasheet& d, const KernelModelValues& k, int compute_capability) {
  return {name,      d.fp32, d.tf32, d.bf16,   d.fp16, d.fp8,    d.gib,  d.gbps, d.boost_mhz, d.sustained_mhz,
          k.max_eff, 0,      d.sms,  k.tile_k, k.hbm,  k.launch, k.host, k.pass, k.iter,      compute_capability,
          k.mma_sync};
}
}  // namespace

const std::vector<GpuPreset>& GpuPresets() {
  // Dense figures; GeForce cards' BF16/FP16/FP8 at the FP32-accumulate rate training uses (half the
  // FP16-accumulate figure); MI250X is one GCD, the device PyTorch sees. docs/hardware.md: sources.
  static const std::vector<GpuPreset> kPresets = {
      Preset("V100-32GB", {15.7, 0, 0, 125, 0, 32, 900, 1530, 0, 80}, kVolta, 70),
      Preset("V100-16GB", {15.7, 0, 0, 125, 0, 16, 900, 1530, 0, 80}, kVolta, 70),
      Preset("V100-PCIe-32GB", {14, 0, 0, 112, 0, 32, 900, 1380, 0, 80}, kVolta, 70),
      Preset("V100-PCIe-16GB", {14, 0, 0, 112, 0, 16, 900, 1380, 0, 80}, kVolta, 70),
      Preset("T4", {8.1, 0, 0, 65, 0, 16, 320, 1590, 1340, 40}, kT4, 75),
      Preset("TITAN-RTX", {16.3, 0, 0, 130.5, 0, 24, 672, 1770, 0, 72}, kVolta, 75),
      Preset("RTX-2080-Ti", {13.4, 0, 0, 53.8, 0, 11, 616, 1545, 0, 68}, kVolta, 75),
      Preset("A100-40GB", {19.5, 156, 312, 312, 0, 40, 1555, 1410, 0, 108}, kGa100, 80),
      Preset("A100-80GB", {19.5, 156, 312, 312, 0, 80, 2039, 1410, 0, 108}, kGa100, 80),
      Preset("A100-PCIe-40GB", {19.5, 156, 312, 312, 0, 40, 1555, 1410, 0, 108}, kGa100, 80),
      Preset("A100-PCIe-80GB", {19.5, 156, 312, 312, 0, 80, 1935, 1410, 0, 108}, kGa100, 80),
      Preset("A10", {31.2, 62.5, 125, 125, 0, 24, 600, 1695, 0, 72}, kGa102, 86),
      Preset("A10G", {35, 35, 70, 70, 0, 24, 600, 1710, 0, 80}, kA10g, 86),
      Preset("A40", {37.4, 74.8, 149.7, 149.7, 0, 48, 696, 1740, 0, 84}, kGa102, 86),
      Preset("RTX-A6000", {38.7, 77.4, 154.8, 154.8, 0, 48, 768, 1800, 0, 84}, kGa102, 86),
      Preset("RTX-3090", {35.6, 35.6, 71, 71, 0, 24, 936, 1695, 0, 82}, kRtx3090, 86),
      Preset("RTX-4090", {82.6, 82.6, 165.2, 165.2, 330.3, 24, 1008, 2520, 0, 128}, kRtx4090, 89),
      Preset("L4", {30.3, 60, 121, 121, 242.5, 24, 300, 2040, 1300, 58}, kAda, 89),
      Preset("L40S", {91.6, 183, 362.05, 362.05, 733, 48, 864, 2520, 0, 142}, kAda, 89),
      Preset("H100-SXM", {67, 494.5, 989.5, 989.5, 1979, 80, 3350, 1830, 0, 132}, kHopper, 90),
      Preset("H100-NVL", {60, 417.5, 835.5, 835.5, 1670.5, 94, 3900, 0, 0, 132}, kHopper, 90),
      Preset("H800", {67, 494.5, 989.5, 989.5, 1979, 80, 3350, 1830, 0, 132}, kHopper, 90),
      Preset("H20", {44, 74, 148, 148, 296, 96, 4000, 0, 0, 78}, kH20, 90),
      Preset("H200", {67, 494.5, 989.5, 989.5, 1979, 141, 4800, 1830, 0, 132}, kHopper, 90),
      Preset("B200", {75, 1125, 2250, 2250, 4500, 180, 8000, 0, 0, 148}, kBlackwell, 100),
      Preset("MI250X", {47.85, 0, 191.5, 191.5, 0, 64, 1638.4, 1700, 0, 110}, kCdna, 0),
      Preset("MI300X", {163.4, 653.7, 1307.4, 1307.4, 2614.9, 192, 5300, 2100, 0, 304}, kCdna, 0),
  };
  return kPresets;
}

const GpuPreset* FindGpuPreset(absl::string_view name) {
  for (const GpuPreset& p : GpuPresets()) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

std::string GpuPresetNames() {
  return absl::StrJoin(GpuPresets(), ", ", [](std::string* out, const GpuPreset& p) { out->append(p.name); });
}

absl::Status ApplyGpuPreset(GpuType* gpu, absl::string_view file, absl::string_view field_path) {
  if (gpu->preset().empty()) return absl::OkStatus();
  const GpuPreset* p = FindGpuPreset(gpu->preset());
  if (p == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s: unknown GPU preset \"%s\" (known: %s)", file, field_path,
                                                      gpu->preset(), GpuPresetNames()));
  }
  auto fill = [](double value, double preset_value, auto setter) {
    if (value == 0) setter(preset_value);
  };
  fill(gpu->peak_tflops_fp32(), p->peak_tflops_fp32, [&](double v) { gpu->set_peak_tflops_fp32(v); });
  fill(gpu->peak_tflops_tf32(), p->peak_tflops_tf32, [&](double v) { gpu->set_peak_tflops_tf32(v); });
  fill(gpu->peak_tflops_bf16(), p->peak_tflops_bf16, [&](double v) { gpu->set_peak_tflops_bf16(v); });
  fill(gpu->peak_tflops_fp16(), p->peak_tflops_fp16, [&](double v) { gpu->set_peak_tflops_fp16(v); });
  fill(gpu->peak_tflops_fp8(), p->peak_tflops_fp8, [&](double v) { gpu->set_peak_tflops_fp8(v); });
  fill(gpu->hbm_gib(), p->hbm_gib, [&](double v) { gpu->set_hbm_gib(v); });
  fill(gpu->hbm_bandwidth_gbytes_per_s(), p->hbm_bandwidth_gbytes_per_s,
       [&](double v) { gpu->set_hbm_bandwidth_gbytes_per_s(v); });
  if (p->sustained_clock_mhz > 0) {
    fill(gpu->sustained_clock_fraction(), p->sustained_clock_mhz / p->boost_clock_mhz,
         [&](double v) { gpu->set_sustained_clock_fraction(v); });
  }
  auto* eff = gpu->mutable_efficiency();
  fill(eff->max_efficiency(), p->max_efficiency, [&](double v) { eff->set_max_efficiency(v); });
  fill(eff->half_efficiency_gflop(), p->half_efficiency_gflop, [&](double v) { eff->set_half_efficiency_gflop(v); });
  fill(eff->sm_count(), p->sm_count, [&](double v) { eff->set_sm_count(static_cast<uint32_t>(v)); });
  fill(eff->tile_overhead_k(), p->tile_overhead_k, [&](double v) { eff->set_tile_overhead_k(v); });
  fill(eff->hbm_efficiency(), p->hbm_efficiency, [&](double v) { eff->set_hbm_efficiency(v); });
  fill(eff->kernel_launch_us(), p->kernel_launch_us, [&](double v) { eff->set_kernel_launch_us(v); });
  fill(eff->host_op_us(), p->host_op_us, [&](double v) { eff->set_host_op_us(v); });
  fill(eff->pass_overhead_us(), p->pass_overhead_us, [&](double v) { eff->set_pass_overhead_us(v); });
  fill(eff->iteration_overhead_ms(), p->iteration_overhead_ms, [&](double v) { eff->set_iteration_overhead_ms(v); });
  fill(eff->mma_sync_speed(), p->mma_sync_speed, [&](double v) { eff->set_mma_sync_speed(v); });
  return absl::OkStatus();
}

absl::Status ApplyGpuPresets(hetsim::v1::Cluster* cluster, absl::string_view file) {
  for (int i = 0; i < cluster->gpu_types_size(); ++i) {
    HETSIM_RETURN_IF_ERROR(
        ApplyGpuPreset(cluster->mutable_gpu_types(i), file, absl::StrFormat("gpu_types[%d].preset", i)));
  }
  return absl::OkStatus();
}

DType EffectiveDType(const hetsim::v1::Model& model) {
  return model.dtype() == hetsim::v1::DTYPE_UNSPECIFIED ? hetsim::v1::BF16 : model.dtype();
}

double SustainedClockFraction(const GpuType& gpu) {
  return gpu.sustained_clock_fraction() > 0 ? gpu.sustained_clock_fraction() : 1.0;
}

double PeakTflops(const GpuType& gpu, DType dtype) {
  const double clock = SustainedClockFraction(gpu);
  switch (dtype) {
    case hetsim::v1::FP32: return gpu.peak_tflops_fp32() * clock;
    case hetsim::v1::TF32: return gpu.peak_tflops_tf32() * clock;
    case hetsim::v1::FP16: return gpu.peak_tflops_fp16() * clock;
    case hetsim::v1::FP8: return gpu.peak_tflops_fp8() * clock;
    case hetsim::v1::DTYPE_UNSPECIFIED:  // the schema's default dtype
    case hetsim::v1::BF16: return gpu.peak_tflops_bf16() * clock;
    case hetsim::v1::DType_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case hetsim::v1::DType_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  HETSIM_CHECK(false, "a DType number outside the schema (proto::Load refuses them)");
  return gpu.peak_tflops_bf16();
}

std::vector<std::pair<std::string, std::string>> PresetNodeProblems(absl::string_view preset,
                                                                    hetsim::v1::IntraNodeFabric fabric,
                                                                    bool nvlink_sharp) {
  using hetsim::v1::IntraNodeFabric_Name;
  static const absl::flat_hash_set<absl::string_view> kNoNvlink = {
      "T4", "A10", "A10G", "L4", "L40S", "RTX-4090", "V100-PCIe-32GB", "V100-PCIe-16GB"};
  static const absl::flat_hash_set<absl::string_view> kNvlinkBridge = {
      "TITAN-RTX", "RTX-2080-Ti", "A40", "RTX-A6000", "RTX-3090", "A100-PCIe-40GB", "A100-PCIe-80GB", "H100-NVL"};
  static const absl::flat_hash_set<absl::string_view> kNvlinkSharp = {"H100-SXM", "H800", "H20", "H200", "B200"};
  std::vector<std::pair<std::string, std::string>> out;
  const bool nvlinks =
      fabric == hetsim::v1::NVSWITCH || fabric == hetsim::v1::NVLINK_BRIDGE || fabric == hetsim::v1::HYBRID_CUBE_MESH;
  if (kNoNvlink.contains(preset) && nvlinks) {
    out.emplace_back("intra_node_fabric",
                     absl::StrFormat("%s: preset \"%s\" is a PCIe card without NVLink (PCIE or PCIE_TREE; "
                                     "docs/hardware.md)",
                                     IntraNodeFabric_Name(fabric), preset));
  } else if (kNvlinkBridge.contains(preset) &&
             (fabric == hetsim::v1::NVSWITCH || fabric == hetsim::v1::HYBRID_CUBE_MESH)) {
    out.emplace_back("intra_node_fabric",
                     absl::StrFormat("%s: preset \"%s\" is a PCIe card whose NVLink joins pairs by a bridge "
                                     "(NVLINK_BRIDGE, PCIE or PCIE_TREE; docs/hardware.md)",
                                     IntraNodeFabric_Name(fabric), preset));
  }
  if (nvlink_sharp && FindGpuPreset(preset) != nullptr && !kNvlinkSharp.contains(preset)) {
    out.emplace_back("nvlink_sharp",
                     absl::StrFormat("preset \"%s\": NVLink SHARP needs Hopper's or Blackwell's NVSwitch (H100-SXM, "
                                     "H800, H20, H200, B200; docs/network.md)",
                                     preset));
  }
  return out;
}

}  // namespace hetsim::proto
