// The kernel model (docs/hardware.md): GEMM time from the shape (tiles in waves over the SMs, the
// tile's fixed cost, the HBM floor), per-kernel costs, and the ideal switch. Expected values are the
// formulas written out by hand for shapes where the winning tile is evident.
#include <catch2/catch.hpp>

#include "proto/gpu_presets.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/proto/model_shapes.h"

namespace {

using hetsim::testing::Bf16ComputeOk;

using namespace hetsim::workload;

constexpr double kPeak = 100e12;  // FLOP/s

hetsim::v1::GpuType Gpu(int sms, double tile_k = 0) {
  hetsim::v1::GpuType g;
  g.set_name("test");
  g.set_peak_tflops_bf16(kPeak / 1e12);
  g.set_hbm_gib(80);
  g.set_hbm_bandwidth_gbytes_per_s(1e6);  // so fast that no GEMM below is memory-bound
  auto* e = g.mutable_efficiency();
  e->set_max_efficiency(1);
  e->set_sm_count(sms);
  e->set_tile_overhead_k(tile_k);
  return g;
}

}  // namespace

TEST_CASE("kernel model: one 256x128 tile on one SM runs at the SM's peak") {
  // 256x128 fits exactly; every smaller tile needs more tiles at lower throughput on one SM.
  const GpuCompute gpu = Bf16ComputeOk(Gpu(1));
  const GemmShape s{256, 128, 1000};
  CHECK(gpu.GemmSeconds(s) == Approx(2 * 256 * 128 * 1000 / kPeak).epsilon(1e-12));
}

TEST_CASE("kernel model: one tile more than the SMs costs a whole wave") {
  // 4 SMs, m = 256: n = 512 is 4 tiles of 256x128 (one wave). n = 513 needs a fifth tile: 256x128
  // takes two waves; 128x128 (10 tiles at 0.92) takes 3 waves of half-size tiles = 1.63 big waves;
  // 128x64 (18 tiles at 0.8) 5 waves of quarter tiles = 1.5625; 64x64 (36 tiles at 0.6) 9 waves of
  // eighth tiles = 1.875. The 128x64 tiles win: 1.5625 x the one-wave time for 0.2% more FLOPs.
  const GpuCompute gpu = Bf16ComputeOk(Gpu(4));
  const double one_wave = 2 * 256 * 128 * 1000 / (kPeak / 4);
  CHECK(gpu.GemmSeconds(GemmShape{256, 512, 1000}) == Approx(one_wave).epsilon(1e-12));
  CHECK(gpu.GemmSeconds(GemmShape{256, 513, 1000}) == Approx(one_wave * 5 * 0.25 / 0.8).epsilon(1e-12));
}

TEST_CASE("kernel model: the tile's fixed cost is extra K depth") {
  const GpuCompute gpu = Bf16ComputeOk(Gpu(1, 64));
  CHECK(gpu.GemmSeconds(GemmShape{256, 128, 128}) == Approx(2 * 256 * 128 * (128 + 64) / kPeak).epsilon(1e-12));
}

TEST_CASE("kernel model: a thin GEMM is bound by moving its operands") {
  hetsim::v1::GpuType g = Gpu(108);
  g.set_hbm_bandwidth_gbytes_per_s(2000);
  g.mutable_efficiency()->set_hbm_efficiency(0.5);
  const GpuCompute gpu = Bf16ComputeOk(g);
  // k = 1: 2 x 8192 x 8192 FLOPs, but 8192^2 + 2 x 8192 elements of 2 bytes at 1000 GB/s.
  const double bytes = (8192.0 * 8192 + 2 * 8192) * 2;
  CHECK(gpu.GemmSeconds(GemmShape{8192, 8192, 1}) == Approx(bytes / 1000e9).epsilon(1e-12));
  CHECK(gpu.MemorySeconds(1e9) == Approx(1e9 / 1000e9).epsilon(1e-12));
}

TEST_CASE("kernel model: launch cost per kernel and the host's issue time as a floor") {
  hetsim::v1::GpuType g = Gpu(1);
  g.mutable_efficiency()->set_kernel_launch_us(3);
  g.mutable_efficiency()->set_host_op_us(20);
  const GpuCompute gpu = Bf16ComputeOk(g);
  const double big = 2.0 * 256 * 128 * 100000 / kPeak;  // 65.5 us: longer than the host needs
  CHECK(gpu.GemmSeconds(GemmShape{256, 128, 100000}) == Approx(big + 3e-6).epsilon(1e-12));
  CHECK(gpu.GemmSeconds(GemmShape{64, 64, 64}) == Approx(20e-6).epsilon(1e-12));  // host-bound
  // Ten memory-bound kernels moving 1 KB: the host issues them no faster than 20 us each.
  CHECK(gpu.MemorySeconds(1000, 10) == Approx(200e-6).epsilon(1e-12));
}

TEST_CASE("kernel model: ideal hardware is FLOPs over peak, whatever the efficiency fields say") {
  hetsim::v1::GpuType g = Gpu(108, 64);
  g.mutable_efficiency()->set_max_efficiency(0.5);
  g.mutable_efficiency()->set_kernel_launch_us(5);
  g.mutable_efficiency()->set_hbm_efficiency(0.5);
  g.set_hbm_bandwidth_gbytes_per_s(2000);
  const GpuCompute gpu = Bf16ComputeOk(g, /*ideal=*/true);
  const GemmShape s{1000, 3000, 777};
  CHECK(gpu.GemmSeconds(s) == Approx(s.flop() / kPeak).epsilon(1e-12));
  CHECK(gpu.MemorySeconds(2e9, 7) == Approx(1e-3).epsilon(1e-12));
  CHECK(gpu.pass_overhead_s() == 0);
  CHECK(gpu.iteration_overhead_s() == 0);
}

TEST_CASE("kernel model: every preset sets the kernel model") {
  for (const hetsim::proto::GpuPreset& p : hetsim::proto::GpuPresets()) {
    INFO(p.name);
    CHECK(p.sm_count > 0);
    CHECK(p.max_efficiency > 0);
    CHECK(p.max_efficiency <= 1);
    CHECK(p.hbm_efficiency > 0);
    CHECK(p.hbm_efficiency <= 1);
  }
}

TEST_CASE("kernel model: a large A100 GEMM reaches what cuBLAS measures") {
  // 8192^3 FP16 on the A100 preset: 256x128 tiles, 2048 of them in 19 waves of 108, each tile
  // 2 x 256 x 128 x (8192 + tile_overhead_k) FLOPs at peak x max_efficiency / 108: 222 TFLOP/s with
  // the fitted max_efficiency 0.72, plus the 2 us launch (a cuBLAS microbenchmark reaches 250-270;
  // docs/hardware.md).
  const GpuCompute gpu = hetsim::testing::PresetComputeOk("A100-80GB", hetsim::v1::FP16);
  const GemmShape s{8192, 8192, 8192};
  const double tflops = s.flop() / gpu.GemmSeconds(s) / 1e12;
  CHECK(tflops ==
        Approx(2.0 * 8192 * 8192 * 8192 / (19.0 * 2 * 256 * 128 * (8192 + 64) / (312e12 * 0.72 / 108) + 2e-6) / 1e12));
  CHECK(tflops > 200);
  CHECK(tflops < 250);
}

TEST_CASE("kernel model: tensor parallelism splits a GEMM exactly on ideal hardware, not on a real GPU") {
  hetsim::v1::Model m;
  hetsim::testing::SetTransformer(m, {.layers = 2, .hidden = 3072, .heads = 32, .seq = 2048, .vocab = 51200});
  auto model = hetsim::testing::ModelCostOf(m, "model.pbtxt");
  REQUIRE(model.ok());
  hetsim::v1::GpuType g;
  g.set_preset("A100-80GB");
  REQUIRE(hetsim::proto::ApplyGpuPreset(&g, "c", "gpu").ok());
  auto time_of = [&](int tp, bool ideal) {
    StageConfig c;
    c.first_layer = 1;
    c.num_layers = 1;
    c.tensor_parallel = tp;
    c.micro_batch_size = 1;
    auto gpu = hetsim::testing::GpuComputeOf(g, hetsim::v1::BF16, "c", ideal);
    REQUIRE(gpu.ok());
    auto cost = ComputeStageCost(*model, c, *gpu, "plan");
    REQUIRE(cost.ok());
    return TimeToPicosecondsDouble(cost->forward_time);
  };
  // Ideal: GEMMs and TP-sharded memory traffic scale by 1/8; the replicated LayerNorm/dropout
  // traffic does not, so 8 x the TP-8 time is at least the unsplit time.
  CHECK(8 * time_of(8, true) >= time_of(1, true));
  // Real: the split GEMMs fill fewer waves and pay the same per-kernel costs: well over 1/8.
  CHECK(8 * time_of(8, false) > 1.3 * time_of(1, false));
}

TEST_CASE("kernel model: FlashAttention keeps the FLOPs and drops the s x s traffic and activations") {
  auto build = [](hetsim::v1::AttentionKernel kernel) {
    hetsim::v1::Model m;
    auto* t =
        hetsim::testing::SetTransformer(m, {.layers = 1, .hidden = 4096, .heads = 32, .seq = 4096, .vocab = 32000});
    t->set_attention(kernel);
    auto model = hetsim::testing::ModelCostOf(m, "model.pbtxt");
    REQUIRE(model.ok());
    return *std::move(model);
  };
  const ModelCost unfused = build(hetsim::v1::ATTENTION_UNFUSED);
  const ModelCost flash = build(hetsim::v1::ATTENTION_FLASH);
  const LayerCost& u = unfused.layer(1);
  const LayerCost& f = flash.layer(1);
  CHECK(f.forward_flop_per_sample == Approx(u.forward_flop_per_sample).epsilon(1e-12));
  CHECK(f.memory_bytes_attention_core_per_sample == 0);
  // Unfused keeps 5 a s^2 bytes (softmax output, dropout mask and output); flash 4 a s (statistics).
  CHECK(u.activation.attention_core == Approx(5.0 * 32 * 4096 * 4096));
  CHECK(f.activation.attention_core == Approx(4.0 * 32 * 4096));
}
