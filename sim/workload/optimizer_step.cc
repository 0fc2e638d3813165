#include "sim/workload/optimizer_step.h"

namespace hetsim::workload {

OptimizerStepPasses PlanOptimizerStep(const StageMemory& memory, spec::DType dtype) {
  const auto grads = static_cast<double>(memory.grad_bytes);
  OptimizerStepPasses p;
  if (dtype == spec::DType::kFp16) {
    p.unscale_bytes = 2 * grads;
    ++p.kernels;
  }
  p.grad_norm_bytes = grads;
  ++p.kernels;
  p.adam_bytes = grads + static_cast<double>(memory.param_bytes) + 2 * static_cast<double>(memory.optimizer_bytes);
  ++p.kernels;
  return p;
}

double OptimizerStepSeconds(const StageMemory& memory, spec::DType dtype, const GpuCompute& gpu) {
  const OptimizerStepPasses p = PlanOptimizerStep(memory, dtype);
  return gpu.MemorySeconds(p.unscale_bytes + p.grad_norm_bytes + p.adam_bytes, p.kernels) + gpu.iteration_overhead_s();
}

DeepSpeedFp16Passes PlanDeepSpeedFp16Passes(double parameters, bool data_parallel, bool fp32_allreduce) {
  DeepSpeedFp16Passes p;
  p.overflow_check_bytes = (2 + 4 + 4) * parameters;  // read FP16, write the FP32 copy, sum it
  p.norm_copy_bytes = (2 + 4) * parameters;           // the FP32 copy; its read is the norm's 4 above
  p.grad_cast_bytes = (2 + 4) * parameters;           // read FP16, write the master's FP32 gradient
  p.copy_back_bytes = 4 * parameters;                 // the FP32 master read into the FP16 weights
  p.kernels = 4;
  if (data_parallel) {
    // flatten (2 + 2), .float() (2 + 4), the scale's mul_ (4 + 4), copy_ into the FP16 buffer (4 + 2),
    // copy_ into each gradient (2 + 2); without fp32_allreduce the bucket stays FP16: flatten, mul_
    // (2 + 2), copy_ into each gradient.
    p.allreduce_copy_bytes = (fp32_allreduce ? 4 + 6 + 8 + 6 + 4 : 4 + 4 + 4) * parameters;
    p.kernels += fp32_allreduce ? 5 : 3;
  }
  return p;
}

MegatronV2Fp16Passes PlanMegatronV2Fp16Passes(double parameters, bool optimizer, bool local_ddp_copies) {
  MegatronV2Fp16Passes p;
  if (optimizer) {
    p.grad_cast_bytes = (2 + 4) * parameters;       // read FP16, write the FP32 main gradient
    p.fp32_grads_bytes = (4 + 2 + 2) * parameters;  // unscale 8 for 4, norm 4 for 2, Adam's gradient 4 for 2
    p.copy_back_bytes = 4 * parameters;             // the masters read into the FP16 weights
    p.kernels = 2;                                  // the casts and the copy back
  }
  if (local_ddp_copies) {
    p.ddp_copy_bytes = (4 + 4 + 4) * parameters;  // flatten (2 + 2), /= (2 + 2), copy_ back (2 + 2)
    p.kernels += 3;
  }
  return p;
}

double OptimizerStepSeconds(const StageMemory& memory, spec::DType dtype, const GpuCompute& gpu,
                            const StageConfig& config) {
  const double step = OptimizerStepSeconds(memory, dtype, gpu);
  if (dtype != spec::DType::kFp16) return step;
  const double parameters = static_cast<double>(memory.param_bytes) / 2;  // FP16 weights
  double extra_s = 0;
  if (config.deepspeed_fp16_optimizer) {
    const DeepSpeedFp16Passes p =
        PlanDeepSpeedFp16Passes(parameters, config.data_parallel > 1, config.grad_reduce_in_fp32);
    extra_s += gpu.MemorySeconds(
        p.overflow_check_bytes + p.norm_copy_bytes + p.grad_cast_bytes + p.copy_back_bytes + p.allreduce_copy_bytes,
        p.kernels);
  }
  // v2.5 with FP32 gradients keeps them in contiguous FP32 main_grad buffers: another path, not these passes.
  const bool megatron_v2 = config.megatron_v2_fp16_optimizer && !config.grad_reduce_in_fp32;
  const bool local_ddp = config.megatron_local_ddp_copies && !config.grad_reduce_in_fp32;
  if (megatron_v2 || local_ddp) {
    const MegatronV2Fp16Passes p = PlanMegatronV2Fp16Passes(parameters, megatron_v2, local_ddp);
    extra_s +=
        gpu.MemorySeconds(p.grad_cast_bytes + p.fp32_grads_bytes + p.copy_back_bytes + p.ddp_copy_bytes, p.kernels);
  }
  return step + extra_s;
}

}  // namespace hetsim::workload
