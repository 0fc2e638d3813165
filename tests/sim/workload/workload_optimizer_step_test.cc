// The optimizer step (sim/workload/optimizer_step.h): FP16's unscale pass, the gradient norm and Adam,
// each one memory-bound kernel, then the iteration's host work. Expected values are the byte counts
// written out by hand.
#include <catch2/catch.hpp>

#include "sim/workload/gpu_compute.h"
#include "sim/workload/optimizer_step.h"
#include "tests/base/spec/spec_test_util.h"

namespace {

using namespace hetsim::workload;

GpuCompute Gpu(hetsim::v1::DType dtype) {
  hetsim::v1::GpuType g;
  g.set_name("test");
  g.set_peak_tflops_bf16(100);
  g.set_peak_tflops_fp16(100);
  g.set_hbm_gib(80);
  g.set_hbm_bandwidth_gbytes_per_s(2000);
  auto* e = g.mutable_efficiency();
  e->set_hbm_efficiency(0.5);  // 1000 GB/s achieved
  e->set_kernel_launch_us(4);
  e->set_host_op_us(1e-9);
  e->set_iteration_overhead_ms(30);
  auto c = hetsim::testing::GpuComputeOf(g, dtype, "cluster.pbtxt: gpu_types[0]", /*ideal=*/false);
  REQUIRE(c.ok());
  return *c;
}

StageMemory States() {
  StageMemory m;
  m.param_bytes = 2'000'000'000;  // 1e9 parameters in 2 bytes
  m.grad_bytes = 2'000'000'000;
  m.optimizer_bytes = 12'000'000'000;  // fp32 master, momentum, variance
  return m;
}

}  // namespace

TEST_CASE("optimizer step: BF16 reads the gradients for their norm, then Adam") {
  const OptimizerStepPasses p = PlanOptimizerStep(States(), hetsim::spec::DType::kBf16);
  CHECK(p.unscale_bytes == 0);
  CHECK(p.grad_norm_bytes == 2e9);
  CHECK(p.adam_bytes == 2e9 + 2e9 + 2 * 12e9);
  CHECK(p.kernels == 2);
  // 30 GB at 1000 GB/s, two launches of 4 us, 30 ms of host work.
  CHECK(OptimizerStepSeconds(States(), hetsim::spec::DType::kBf16, Gpu(hetsim::v1::BF16)) ==
        Approx(30e9 / 1000e9 + 8e-6 + 30e-3).epsilon(1e-12));
}

TEST_CASE("optimizer step: FP16's loss scaler reads and writes the gradients once more") {
  const OptimizerStepPasses p = PlanOptimizerStep(States(), hetsim::spec::DType::kFp16);
  CHECK(p.unscale_bytes == 4e9);
  CHECK(p.kernels == 3);
  CHECK(OptimizerStepSeconds(States(), hetsim::spec::DType::kFp16, Gpu(hetsim::v1::FP16)) ==
        Approx(34e9 / 1000e9 + 12e-6 + 30e-3).epsilon(1e-12));
}

TEST_CASE("optimizer step: a stage holding no states costs only the host's work") {
  CHECK(OptimizerStepSeconds(StageMemory{}, hetsim::spec::DType::kBf16, Gpu(hetsim::v1::BF16)) ==
        Approx(30e-3).epsilon(1e-12));
}

TEST_CASE("optimizer step: DeepSpeed 0.3's FP16 step adds its overflow check, flatten, copies and all-reduce copies") {
  const GpuCompute fp16 = Gpu(hetsim::v1::FP16);
  const double step = OptimizerStepSeconds(States(), hetsim::spec::DType::kFp16, fp16);
  StageConfig c;
  c.deepspeed_fp16_optimizer = true;
  c.grad_reduce_in_fp32 = true;  // the ds_config's fp32_allreduce
  // 1e9 FP16 parameters. DP 1: overflow check 10, the norm's FP32 copy 6, the cast to the master's
  // gradient 6, the master's read 4 bytes each; four passes of 4 us.
  CHECK(OptimizerStepSeconds(States(), hetsim::spec::DType::kFp16, fp16, c) ==
        Approx(step + 26e9 / 1000e9 + 16e-6).epsilon(1e-12));
  // DP 8 with fp32_allreduce: flatten 4, cast 6, scale 8, copy back 6 and 4: 28 more, five more passes.
  c.data_parallel = 8;
  CHECK(OptimizerStepSeconds(States(), hetsim::spec::DType::kFp16, fp16, c) ==
        Approx(step + 54e9 / 1000e9 + 36e-6).epsilon(1e-12));
  // Without it the bucket stays FP16: flatten 4, scale 4, copy back 4.
  c.grad_reduce_in_fp32 = false;
  CHECK(OptimizerStepSeconds(States(), hetsim::spec::DType::kFp16, fp16, c) ==
        Approx(step + 38e9 / 1000e9 + 28e-6).epsilon(1e-12));
  // Off, or a BF16 model (the FP16_Optimizer is DeepSpeed's FP16 path): the step alone.
  const GpuCompute bf16 = Gpu(hetsim::v1::BF16);
  CHECK(OptimizerStepSeconds(States(), hetsim::spec::DType::kBf16, bf16, c) ==
        OptimizerStepSeconds(States(), hetsim::spec::DType::kBf16, bf16));
  c.deepspeed_fp16_optimizer = false;
  CHECK(OptimizerStepSeconds(States(), hetsim::spec::DType::kFp16, fp16, c) == step);
}

TEST_CASE("optimizer step: Megatron-LM v2's FP16 step casts the gradients to FP32 and copies the masters back") {
  const GpuCompute fp16 = Gpu(hetsim::v1::FP16);
  const double step = OptimizerStepSeconds(States(), hetsim::spec::DType::kFp16, fp16);
  StageConfig c;
  c.megatron_v2_fp16_optimizer = true;
  // 1e9 FP16 parameters, FP16 gradients. The cast to the FP32 main gradient 6 (read 2, write 4); the
  // unscale reads and writes 4 bytes where the step counts 2 (+4), the norm and Adam read 4 where it
  // counts 2 (+2, +2); the copy back reads the master's 4: 18 bytes, two passes of 4 us.
  const MegatronV2Fp16Passes p = PlanMegatronV2Fp16Passes(1e9, true, false);
  CHECK(p.grad_cast_bytes + p.fp32_grads_bytes + p.copy_back_bytes == 18e9);
  CHECK(OptimizerStepSeconds(States(), hetsim::spec::DType::kFp16, fp16, c) ==
        Approx(step + 18e9 / 1000e9 + 8e-6).epsilon(1e-12));
  // The whole v2.5 step over hand counts: cast 6, unscale 8, norm 4, Adam 28 (gradient 4, master,
  // momentum and variance read and written), copy back 6 (read 4, write 2): 52 bytes, 5 passes.
  CHECK(OptimizerStepSeconds(States(), hetsim::spec::DType::kFp16, fp16, c) ==
        Approx(52e9 / 1000e9 + 5 * 4e-6 + 30e-3).epsilon(1e-12));
  // Local DDP's copies besides: flatten 4, the divide 4, the copy back 4: 12 more, three more passes.
  c.megatron_local_ddp_copies = true;
  CHECK(OptimizerStepSeconds(States(), hetsim::spec::DType::kFp16, fp16, c) ==
        Approx(step + 30e9 / 1000e9 + 20e-6).epsilon(1e-12));
  // The copies alone (the field is its own: v2.5's --DDP-impl torch runs have the step, not these).
  c.megatron_v2_fp16_optimizer = false;
  CHECK(OptimizerStepSeconds(States(), hetsim::spec::DType::kFp16, fp16, c) ==
        Approx(step + 12e9 / 1000e9 + 12e-6).epsilon(1e-12));
  // FP32 gradients (v2.5's contiguous main_grad buffers, another path) or a BF16 model: the step alone.
  c.megatron_v2_fp16_optimizer = true;
  c.grad_reduce_in_fp32 = true;
  CHECK(OptimizerStepSeconds(States(), hetsim::spec::DType::kFp16, fp16, c) == step);
  c.grad_reduce_in_fp32 = false;
  const GpuCompute bf16 = Gpu(hetsim::v1::BF16);
  CHECK(OptimizerStepSeconds(States(), hetsim::spec::DType::kBf16, bf16, c) ==
        OptimizerStepSeconds(States(), hetsim::spec::DType::kBf16, bf16));
}
