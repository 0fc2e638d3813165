// proto/gpu_presets: the presets of what heterogeneous clusters mix (issue 39), checked through what
// they imply rather than against a copy of the table: every preset validates, its datasheet peaks
// follow SMs x clock x the architecture's rate per SM, the dtypes follow the architectures, the
// power-capped cards' sustained clock is applied once, and GeForce cards quote the FP32-accumulate rate.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "proto/gpu_presets.h"
#include "proto/io.h"
#include "proto/resolve.h"
#include "proto/summary.h"
#include "proto/validate_cluster.h"
#include "sim/workload/gpu_compute.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/proto/validate_test_util.h"

namespace hetsim::proto {
namespace {

using v1::GpuType;

GpuType PresetGpu(const std::string& preset) {
  GpuType g;
  g.set_name("g");
  g.set_preset(preset);
  REQUIRE(ApplyGpuPreset(&g, "c.pbtxt", "gpu_types[0].preset").ok());
  return g;
}

// A one-island cluster of four GPUs of `preset` on PCIe.
hetsim::v1::Cluster PresetCluster(const std::string& preset) {
  hetsim::v1::Cluster c;
  c.set_name("c");
  GpuType& g = *c.add_gpu_types();
  g.set_name("g");
  g.set_preset(preset);
  auto& n = *c.add_node_types();
  n.set_name("n");
  n.set_gpu_type("g");
  n.set_gpus_per_node(4);
  n.set_intra_node_fabric(hetsim::v1::PCIE);
  n.set_intra_node_bandwidth_gbps(256);
  auto& is = *c.add_islands();
  is.set_name("i");
  is.set_node_type("n");
  is.set_node_count(1);
  return c;
}

}  // namespace

TEST_CASE("every GPU preset validates and resolves to a positive 16-bit or FP32 peak", "[presets]") {
  for (const hetsim::proto::GpuPreset& p : GpuPresets()) {
    INFO(p.name);
    CHECK(hetsim::proto::ValidateCluster(PresetCluster(p.name), "c.pbtxt").ok());
    const hetsim::spec::GpuSpec g = hetsim::proto::ResolveGpu(PresetGpu(p.name));
    CHECK(g.peak(hetsim::spec::DType::kFp32) > 0);
    CHECK(std::max(g.peak(hetsim::spec::DType::kBf16), g.peak(hetsim::spec::DType::kFp16)) > 0);
    CHECK(g.hbm_capacity > Bytes(0));
    CHECK(g.sm_count > 0);
  }
}

TEST_CASE("the error naming an unknown preset lists every preset", "[presets]") {
  GpuType g;
  g.set_preset("RTX-5090");
  const absl::Status s = ApplyGpuPreset(&g, "c.pbtxt", "gpu_types[0].preset");
  REQUIRE(!s.ok());
  for (const hetsim::proto::GpuPreset& p : GpuPresets()) CHECK_THAT(std::string(s.message()), Catch::Contains(p.name));
}

TEST_CASE("datasheet 16-bit peaks are SMs x boost clock x the architecture's rate per SM", "[presets]") {
  // Dense FP16 FLOP per SM (CU) per clock, from the architecture whitepapers (docs/hardware.md): tensor
  // cores of Volta/Turing 8 x 64 FMA; GA100 4 x 256 FMA; GA102/AD10x professional cards 4 x 128 FMA,
  // GeForce (and the A10G) half that with FP32 accumulation; Hopper 4 x 512 FMA; CDNA2 1024 and CDNA3
  // 2048 per CU (AMD's peak formula).
  const std::vector<std::pair<const char*, double>> rate = {{"V100-32GB", 1024},
                                                            {"V100-16GB", 1024},
                                                            {"V100-PCIe-32GB", 1024},
                                                            {"V100-PCIe-16GB", 1024},
                                                            {"T4", 1024},
                                                            {"TITAN-RTX", 1024},
                                                            {"RTX-2080-Ti", 512},
                                                            {"A100-40GB", 2048},
                                                            {"A100-80GB", 2048},
                                                            {"A100-PCIe-40GB", 2048},
                                                            {"A100-PCIe-80GB", 2048},
                                                            {"A10", 1024},
                                                            {"A10G", 512},
                                                            {"A40", 1024},
                                                            {"RTX-A6000", 1024},
                                                            {"RTX-3090", 512},
                                                            {"RTX-4090", 512},
                                                            {"L4", 1024},
                                                            {"L40S", 1024},
                                                            {"H100-SXM", 4096},
                                                            {"H800", 4096},
                                                            {"H200", 4096},
                                                            {"MI250X", 1024},
                                                            {"MI300X", 2048}};
  for (const auto& [name, flop_per_clock] : rate) {
    INFO(name);
    const hetsim::proto::GpuPreset* p = FindGpuPreset(name);
    REQUIRE(p != nullptr);
    const double sixteen_bit = p->peak_tflops_bf16 > 0 ? p->peak_tflops_bf16 : p->peak_tflops_fp16;
    CHECK(sixteen_bit * 1e12 == Approx(p->sm_count * p->boost_clock_mhz * 1e6 * flop_per_clock).epsilon(0.015));
  }
}

TEST_CASE("dtypes follow the architectures: no BF16 before Ampere, no FP8 before Ada and Hopper", "[presets]") {
  const std::vector<std::string> no_bf16 = {"V100-32GB", "V100-16GB", "V100-PCIe-32GB", "V100-PCIe-16GB",
                                            "T4",        "TITAN-RTX", "RTX-2080-Ti"};
  const std::vector<std::string> fp8 = {"RTX-4090", "L4",  "L40S", "H100-SXM", "H100-NVL",
                                        "H800",     "H20", "H200", "B200",     "MI300X"};
  for (const hetsim::proto::GpuPreset& p : GpuPresets()) {
    INFO(p.name);
    const bool has_bf16 = std::find(no_bf16.begin(), no_bf16.end(), p.name) == no_bf16.end();
    const bool has_fp8 = std::find(fp8.begin(), fp8.end(), p.name) != fp8.end();
    CHECK((p.peak_tflops_bf16 > 0) == has_bf16);
    CHECK((p.peak_tflops_tf32 > 0) == (has_bf16 && std::string(p.name) != "MI250X"));  // CDNA2 has no TF32
    CHECK((p.peak_tflops_fp8 > 0) == has_fp8);
  }
}

// The compute capability NCCL's tuner keys on (CollNetDirect's 0.85 from 9.0): NVIDIA's table
// (developer.nvidia.com/cuda-gpus), resolved into the GPU spec; a type without a preset has none.
TEST_CASE("each NVIDIA preset carries its compute capability, resolved into the GPU spec", "[presets]") {
  const std::vector<std::pair<std::string, int>> expected = {
      {"V100-32GB", 70}, {"T4", 75},       {"A100-80GB", 80}, {"A10G", 86}, {"RTX-3090", 86}, {"L4", 89},
      {"RTX-4090", 89},  {"H100-SXM", 90}, {"H20", 90},       {"H200", 90}, {"B200", 100},    {"MI300X", 0}};
  for (const auto& [name, capability] : expected) {
    INFO(name);
    REQUIRE(FindGpuPreset(name) != nullptr);
    CHECK(FindGpuPreset(name)->compute_capability == capability);
    CHECK(hetsim::proto::ResolveGpu(PresetGpu(name)).compute_capability == capability);
  }
  for (const hetsim::proto::GpuPreset& p : GpuPresets()) {
    INFO(p.name);
    const bool amd = std::string(p.name).rfind("MI", 0) == 0;
    CHECK((p.compute_capability == 0) == amd);
  }
  hetsim::v1::GpuType custom;
  custom.set_name("custom");
  custom.set_peak_tflops_bf16(100);
  CHECK(hetsim::proto::ResolveGpu(custom).compute_capability == 0);
}

TEST_CASE("a power-capped T4 runs every dtype at its sustained clock, applied once", "[presets]") {
  const GpuType t4 = PresetGpu("T4");
  const double fraction = 1340.0 / 1590.0;
  CHECK(t4.sustained_clock_fraction() == Approx(fraction));
  CHECK(t4.peak_tflops_fp16() == 65);  // the datasheet figure stays in the message
  CHECK(PeakTflops(t4, hetsim::v1::FP16) == Approx(65 * fraction));
  CHECK(PeakTflops(t4, hetsim::v1::FP32) == Approx(8.1 * fraction));
  const hetsim::spec::GpuSpec g = hetsim::proto::ResolveGpu(t4);
  CHECK(g.peak(hetsim::spec::DType::kFp16) == Approx(65e12 * fraction));
  // An 8192^3 FP16 GEMM: 256x128 tiles, 2048 of them in ceil(2048 / 40) = 52 waves over the T4's 40 SMs,
  // each tile 2 x 256 x 128 x (8192 + 64) FLOPs at the SM's share of the sustained peak x 0.67, plus
  // the 2 us launch. The sustained clock enters once: the time scales by 1 / fraction exactly.
  auto gpu = hetsim::testing::GpuComputeOf(t4, hetsim::v1::FP16, "c");
  REQUIRE(gpu.ok());
  const hetsim::workload::GemmShape s{8192, 8192, 8192};
  const double tile_s = 2.0 * 256 * 128 * (8192 + 64) / (65e12 * fraction * 0.67 / 40);
  CHECK(gpu->GemmSeconds(s) == Approx(52 * tile_s + 2e-6).epsilon(1e-9));
  // Its memory-bound kernels run at its own measured rate, not the clock's: 245.2 of 320.06 GB/s with
  // GPU_Microbenchmark (github.com/cissieAB/ifarm-gpus, docs/roofline.md), 0.766 of the datasheet's 320 GB/s,
  // so 1 GB takes 1e9 / (320e9 x 0.766) = 1e9 / 245.12e9 = 4.080 ms (V100's 0.85 would give 3.676 ms).
  CHECK(gpu->MemorySeconds(1e9) == Approx(1e9 / 245.12e9).epsilon(1e-9));
  // A file's own fraction wins over the preset's; 0 means the boost clock.
  GpuType held;
  held.set_preset("T4");
  held.set_sustained_clock_fraction(1);
  REQUIRE(ApplyGpuPreset(&held, "c", "gpu").ok());
  CHECK(PeakTflops(held, hetsim::v1::FP16) == 65);
  CHECK(PeakTflops(PresetGpu("A100-80GB"), hetsim::v1::BF16) == 312);
}

TEST_CASE("the L4 sustains 1300 of its 2040 MHz, cards without a power cap hold their boost clock", "[presets]") {
  CHECK(PeakTflops(PresetGpu("L4"), hetsim::v1::BF16) == Approx(121 * 1300.0 / 2040.0));
  for (const char* name : {"L40S", "RTX-4090", "A10", "H100-SXM", "MI300X"}) {
    INFO(name);
    CHECK(PresetGpu(name).sustained_clock_fraction() == 0);
  }
}

TEST_CASE("GeForce cards quote the FP32-accumulate tensor rate training uses", "[presets]") {
  // RTX 4090: 512 dense FP16 FLOP per SM per clock with FP32 accumulation (1024 with FP16
  // accumulation, the figure NVIDIA's spec page headlines): 128 SMs x 2520 MHz x 512 = 165.2 TFLOP/s,
  // twice its FP32 rate of 128 x 128 lanes x 2 x 2520 MHz = 82.6, not four times.
  const GpuType rtx4090 = PresetGpu("RTX-4090");
  CHECK(PeakTflops(rtx4090, hetsim::v1::BF16) == Approx(128 * 2520e6 * 512 / 1e12).epsilon(0.001));
  CHECK(PeakTflops(rtx4090, hetsim::v1::BF16) == Approx(2 * PeakTflops(rtx4090, hetsim::v1::FP32)));
  CHECK(PeakTflops(rtx4090, hetsim::v1::FP8) == Approx(2 * PeakTflops(rtx4090, hetsim::v1::BF16)).epsilon(0.001));
  // RTX 3090 likewise: 82 SMs x 1695 MHz x 512 = 71 TFLOP/s, twice its 35.6 FP32.
  const GpuType rtx3090 = PresetGpu("RTX-3090");
  CHECK(PeakTflops(rtx3090, hetsim::v1::BF16) == Approx(82 * 1695e6 * 512 / 1e12).epsilon(0.003));
  CHECK(PeakTflops(rtx3090, hetsim::v1::BF16) == Approx(2 * PeakTflops(rtx3090, hetsim::v1::FP32)).epsilon(0.003));
}

TEST_CASE("an MI250X preset is one GCD, the device PyTorch sees", "[presets]") {
  // The package: 383 TFLOP/s BF16, 128 GB HBM2e at 3.2768 TB/s, 220 CUs; one GCD is half.
  const GpuType g = PresetGpu("MI250X");
  CHECK(g.peak_tflops_bf16() == Approx(383.0 / 2));
  CHECK(g.hbm_gib() == 128 / 2);
  CHECK(g.hbm_bandwidth_gbytes_per_s() == Approx(3276.8 / 2));
  CHECK(g.efficiency().sm_count() == 220 / 2);
}

TEST_CASE("the cluster summary quotes a power-capped card at its sustained clock", "[presets]") {
  hetsim::v1::Cluster c = PresetCluster("T4");
  REQUIRE(hetsim::proto::ApplyGpuPresets(&c, "c.pbtxt").ok());
  const std::string summary = hetsim::proto::SummarizeCluster(c, "c.pbtxt");
  // 4 GPUs x 65 x 1340 / 1590 TFLOP/s = 0.22 PFLOP/s FP16 (T4 has no BF16).
  CHECK_THAT(summary, Catch::Contains(absl::StrFormat("%.2f PFLOP/s FP16", 4 * 65 * 1340.0 / 1590 / 1000)));
  CHECK_THAT(summary, Catch::Contains("(at 84% of the boost clock)"));
}

TEST_CASE("cluster: a sustained clock fraction outside [0, 1] is refused", "[validate]") {
  hetsim::v1::Cluster c = PresetCluster("L4");
  c.mutable_gpu_types(0)->set_sustained_clock_fraction(1.5);
  CHECK_PROBLEM(hetsim::proto::ValidateCluster(c, "c.pbtxt"),
                "c.pbtxt: gpu_types[0].sustained_clock_fraction: 1.5 is outside [0, 1]");
}

TEST_CASE("docs/hardware.md's preset table says what the presets hold", "[presets]") {
  // Rows "| name | architecture | FP32 | TF32 | BF16 | FP16 | FP8 | GiB | GB/s | SMs | boost | sustained |
  // source |"; "-" and blank cells are 0.
  absl::StatusOr<std::string> doc = hetsim::proto::ReadFileToString(HETSIM_SOURCE_DIR "/docs/hardware.md");
  REQUIRE(doc.ok());
  int rows = 0;
  for (absl::string_view line : absl::StrSplit(*doc, '\n')) {
    const std::vector<std::string> cells = absl::StrSplit(line, '|');
    if (cells.size() != 15) continue;  // 13 cells between 14 bars, and the empty ends
    const hetsim::proto::GpuPreset* p = FindGpuPreset(absl::StripAsciiWhitespace(cells[1]));
    if (p == nullptr) continue;
    INFO(line);
    ++rows;
    const double documented[] = {p->peak_tflops_fp32,           p->peak_tflops_tf32, p->peak_tflops_bf16,
                                 p->peak_tflops_fp16,           p->peak_tflops_fp8,  p->hbm_gib,
                                 p->hbm_bandwidth_gbytes_per_s, p->sm_count,         p->boost_clock_mhz,
                                 p->sustained_clock_mhz};
    for (int k = 0; k < 10; ++k) {
      const std::string cell(absl::StripAsciiWhitespace(cells[3 + k]));
      double value = 0;
      if (cell != "-" && !cell.empty()) REQUIRE(absl::SimpleAtod(cell, &value));
      CHECK(value == documented[k]);
    }
  }
  CHECK(rows == static_cast<int>(GpuPresets().size()));
}

}  // namespace hetsim::proto
