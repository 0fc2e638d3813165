#include "proto/gpu_presets.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "base/status_macros.h"

namespace hetsim::proto {

using hetsim::v1::DType;
using hetsim::v1::GpuType;

namespace {
// The kernel model's values per GPU generation. Ampere's are fitted to the published Megatron-LM
// runs of validation/ (one set for every case); the others scale from published microbenchmarks
// (docs/hardware.md, "The kernel model").
struct KernelModelValues {
  double max_eff, tile_k, hbm, launch, host, pass, iter;
};
// max_efficiency: A100's is the fit (0.71: in-framework GEMMs reach 84% of the 0.85 a cuBLAS
// microbenchmark reaches); the other generations apply the same 84% to their microbenchmark figure
// (V100 0.80, H100 0.78, B200 0.72).
constexpr KernelModelValues kV{0.67, 64, 0.85, 2, 10, 300, 50};
constexpr KernelModelValues kA{0.71, 64, 0.85, 2, 10, 300, 50};
constexpr KernelModelValues kH{0.65, 64, 0.88, 2, 10, 300, 50};
constexpr KernelModelValues kB{0.60, 64, 0.88, 2, 10, 300, 50};
}  // namespace

const std::vector<GpuPreset>& GpuPresets() {
  // name, FP32, TF32, BF16, FP16, FP8 (dense TFLOP/s), HBM GiB, HBM GB/s; then the kernel model:
  // max efficiency, half-eff. GFLOP (legacy, 0), SMs, tile overhead K, HBM efficiency, launch us,
  // host us per kernel, pass overhead us, iteration overhead ms.
  static const std::vector<GpuPreset> kPresets = {
      {"V100-32GB", 15.7, 0, 0, 125, 0, 32, 900, kV.max_eff, 0, 80, kV.tile_k, kV.hbm, kV.launch, kV.host, kV.pass,
       kV.iter},
      {"A100-40GB", 19.5, 156, 312, 312, 0, 40, 1555, kA.max_eff, 0, 108, kA.tile_k, kA.hbm, kA.launch, kA.host,
       kA.pass, kA.iter},
      {"A100-80GB", 19.5, 156, 312, 312, 0, 80, 2039, kA.max_eff, 0, 108, kA.tile_k, kA.hbm, kA.launch, kA.host,
       kA.pass, kA.iter},
      {"H100-SXM", 67, 494.5, 989.5, 989.5, 1979, 80, 3350, kH.max_eff, 0, 132, kH.tile_k, kH.hbm, kH.launch, kH.host,
       kH.pass, kH.iter},
      {"H100-NVL", 60, 417.5, 835.5, 835.5, 1670.5, 94, 3900, kH.max_eff, 0, 132, kH.tile_k, kH.hbm, kH.launch, kH.host,
       kH.pass, kH.iter},
      {"H200", 67, 494.5, 989.5, 989.5, 1979, 141, 4800, kH.max_eff, 0, 132, kH.tile_k, kH.hbm, kH.launch, kH.host,
       kH.pass, kH.iter},
      {"B200", 75, 1125, 2250, 2250, 4500, 180, 8000, kB.max_eff, 0, 148, kB.tile_k, kB.hbm, kB.launch, kB.host,
       kB.pass, kB.iter},
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

double PeakTflops(const GpuType& gpu, DType dtype) {
  switch (dtype) {
    case hetsim::v1::FP32: return gpu.peak_tflops_fp32();
    case hetsim::v1::TF32: return gpu.peak_tflops_tf32();
    case hetsim::v1::FP16: return gpu.peak_tflops_fp16();
    case hetsim::v1::FP8: return gpu.peak_tflops_fp8();
    case hetsim::v1::DTYPE_UNSPECIFIED:  // the schema's default dtype
    case hetsim::v1::BF16: return gpu.peak_tflops_bf16();
    case hetsim::v1::DType_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case hetsim::v1::DType_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  HETSIM_CHECK(false, "a DType number outside the schema (proto::Load refuses them)");
  return gpu.peak_tflops_bf16();
}

}  // namespace hetsim::proto
