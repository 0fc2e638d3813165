// hetsim calibrate's GEMM part: parse a microbenchmark's CSV, and recover known kernel-model
// parameters from timings synthesised with them.
#include <catch2/catch.hpp>

#include <string>

#include "absl/strings/str_format.h"
#include "proto/gpu_presets.h"
#include "service/calibrate/gemm_fit.h"
#include "sim/workload/gpu_compute.h"
#include "tests/base/spec/spec_test_util.h"

namespace {

using hetsim::calibrate::FitGemm;
using hetsim::calibrate::ParseGemmCsv;

hetsim::v1::GpuType A100(double eff, double tile_k, double launch_us) {
  hetsim::v1::GpuType g;
  g.set_name("a100");
  g.set_preset("A100-80GB");
  auto* e = g.mutable_efficiency();
  e->set_max_efficiency(eff);
  e->set_tile_overhead_k(tile_k);
  e->set_kernel_launch_us(launch_us);
  e->set_host_op_us(1e-9);  // effectively no host floor (0 would take the preset's)
  REQUIRE(hetsim::proto::ApplyGpuPreset(&g, "c", "gpu").ok());
  return g;
}

}  // namespace

TEST_CASE("calibrate gemm: recovers max_efficiency, tile_overhead_k and launch cost") {
  const hetsim::v1::GpuType truth = A100(0.81, 96, 4);
  auto gpu = hetsim::testing::GpuComputeOf(truth, hetsim::v1::BF16, "c");
  REQUIRE(gpu.ok());
  std::string csv = "# synthesised from the model\nm,n,k,dtype,time_us\n";
  for (double m : {2048.0, 8192.0, 16384.0}) {
    for (double n : {1536.0, 3072.0, 12288.0}) {
      for (double k : {128.0, 1024.0, 4096.0, 12288.0}) {
        csv += absl::StrFormat("%g,%g,%g,bf16,%.6f\n", m, n, k,
                               gpu->GemmSeconds(hetsim::workload::GemmShape{m, n, k}) * 1e6);
      }
    }
  }
  auto timings = ParseGemmCsv(csv, "gemm.csv");
  REQUIRE(timings.ok());
  REQUIRE(timings->size() == 36);
  // Start from the preset's values, not the truth.
  auto fit = FitGemm(A100(0.85, 64, 2), *timings, "cluster: gpu_types[0]");
  REQUIRE(fit.ok());
  CHECK(fit->max_efficiency == Approx(0.81).epsilon(0.01));
  CHECK(fit->tile_overhead_k == Approx(96).epsilon(0.01));
  CHECK(fit->kernel_launch_us == Approx(4).epsilon(0.01));
  CHECK(fit->mape < 1e-4);
}

TEST_CASE("calibrate gemm: malformed CSV names the file and the line") {
  auto no_time = ParseGemmCsv("m,n,k,dtype\n1,2,3,bf16\n", "g.csv");
  REQUIRE(!no_time.ok());
  CHECK(std::string(no_time.status().message()) == "g.csv:1: header: no column \"time_us (or time_ms, time_s)\"");
  auto bad_number = ParseGemmCsv("m,n,k,dtype,time_us\n1,2,3,bf16,4\n1,x,3,bf16,4\n", "g.csv");
  REQUIRE(!bad_number.ok());
  CHECK(std::string(bad_number.status().message()) == "g.csv:3: \"x\" is not a positive number");
  auto bad_dtype = ParseGemmCsv("m,n,k,dtype,time_ms\n1,2,3,int4,4\n", "g.csv");
  REQUIRE(!bad_dtype.ok());
  CHECK(std::string(bad_dtype.status().message()).find("g.csv:2: unknown dtype \"int4\"") == 0);
  auto empty = ParseGemmCsv("m,n,k,dtype,time_s\n", "g.csv");
  CHECK(!empty.ok());
}
