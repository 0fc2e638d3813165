// hetsim against a published measurement: Megatron-LM's GPT 39.1B on 512 A100 (TP 8, PP 2, DP 32,
// global batch 1536, sequence 2048) reached 138 TFLOP/s per GPU, 44% of the 312 TFLOP/s peak
// (Narayanan et al., SC'21, Table 1). The paper counts FLOPs with full activation recomputation
// (96 B s l h^2 (1 + s/6h + V/16lh) per iteration), so 44% is a hardware-FLOPs utilisation; hetsim's
// MFU counts model FLOPs (72 B s l h^2 (1 + s/6h + V/12lh)), so the test converts with the ratio of
// the two formulas before comparing. docs/metrics.md explains the band and the gap.
#include <catch2/catch.hpp>

#include "proto/inputs.h"
#include "tests/sim/executor/executor_test_util.h"

namespace {

TEST_CASE("Megatron GPT 39.1B on 512 A100: utilisation within 6% of the paper's 44%", "[traces][megatron]") {
  auto in = hetsim::proto::LoadPlanInputs(HETSIM_SOURCE_DIR "/examples/plan-megatron-39b.pbtxt",
                                          HETSIM_SOURCE_DIR "/examples/cluster-a100-512.pbtxt");
  INFO(in.status().message());
  REQUIRE(in.ok());
  const hetsim::v1::Report r = hetsim::testing::MakeSimulation(*in).report;
  REQUIRE(r.num_gpus() == 512);
  REQUIRE_FALSE(r.oom());

  // B = 1536, s = 2048, l = 48, h = 8192, V = 51200:
  //   model FLOPs    72 B s l h^2 (1 + s/6h + V/12lh)  = 7.6790e17 per iteration
  //   hardware FLOPs 96 B s l h^2 (1 + s/6h + V/16lh)  = 1.02123e18 (the paper's count)
  // ratio = 96 (1 + 1/24 + 0.0081380) / (72 (1 + 1/24 + 0.0108507)) = 1.3298969.
  const double B = 1536, s = 2048, l = 48, h = 8192, V = 51200;
  const double model_flop = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  const double hardware_flop = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  CHECK(r.model_flop_per_iteration() == Approx(model_flop).epsilon(1e-12));
  const double hardware_utilisation = r.mfu() * hardware_flop / model_flop;

  // The band: the calibration set's bound for every case (docs/validation.md), 6% either way of the
  // measured 44% (the case is also in validation/megatron-sc21.pbtxt).
  INFO("hetsim hardware-FLOPs utilisation " << hardware_utilisation << ", MFU " << r.mfu());
  CHECK(hardware_utilisation >= 0.44 * 0.94);
  CHECK(hardware_utilisation <= 0.44 * 1.06);
  // The same band in the paper's TFLOP/s per GPU: [129.7, 146.3] hardware.
  const double hardware_tflops = r.model_tflops_per_gpu() * hardware_flop / model_flop;
  CHECK(hardware_tflops >= 138 * 0.94);
  CHECK(hardware_tflops <= 138 * 1.06);
}

}  // namespace
