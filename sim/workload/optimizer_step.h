// The optimizer step at the end of an iteration, as Megatron-LM runs it on one GPU: memory-bound
// passes over that GPU's share of the model states.
//
//   auto seconds = OptimizerStepSeconds(stage_cost.optimizer_shard, dtype, gpu);
#pragma once

#include "base/spec/dtype.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/stage_cost.h"

namespace hetsim::workload {

// HBM traffic of each pass of the step, in bytes.
struct OptimizerStepPasses {
  // FP16 only: the loss scaler unscales the gradients and checks them for inf/NaN (read + write).
  double unscale_bytes = 0;
  // Gradient clipping's global norm (read once; the clip itself rarely fires once training settles).
  double grad_norm_bytes = 0;
  // Adam: reads gradients, moments and master weights; writes moments, master weights and weights.
  double adam_bytes = 0;
  int kernels = 0;  // one multi-tensor kernel per pass
};

OptimizerStepPasses PlanOptimizerStep(const StageMemory& memory, spec::DType dtype);

// The step's GPU time plus the iteration's own host work (GpuCompute::iteration_overhead_s).
double OptimizerStepSeconds(const StageMemory& memory, spec::DType dtype, const GpuCompute& gpu);

// DeepSpeed 0.3.x's FP16 step (Plan.deepspeed_fp16_optimizer): what its FP16_UnfusedOptimizer
// (runtime/fp16/unfused_optimizer.py, step: the optimizer of a client optimizer that is not DeepSpeed's
// own FusedAdam, as Megatron's apex FusedAdam is not) and its engine's gradient all-reduce
// (runtime/engine.py, allreduce_bucket, allreduce_and_copy) move beyond the passes above, in bytes per
// parameter of the GPU's share (docs/cost-model.md, "Model states and ZeRO"). One kernel per pass kind
// here; the code runs them tensor by tensor.
struct DeepSpeedFp16Passes {
  double overflow_check_bytes = 0;  // CheckOverflow: float(g.float().sum()) per FP16 gradient
  double norm_copy_bytes = 0;       // get_grad_norm: g.float().norm(), an FP32 copy the norm then reads
  double grad_cast_bytes = 0;       // fp16_param.grad.to(float32) for every FP32 master
  double copy_back_bytes = 0;       // fp16_param.data.copy_(master): its read (the FP16 write is Adam's)
  double allreduce_copy_bytes = 0;  // DP > 1: flatten, cast (fp32_allreduce), scale, copy back twice
  int kernels = 0;
};
DeepSpeedFp16Passes PlanDeepSpeedFp16Passes(double parameters, bool data_parallel, bool fp32_allreduce);

// Megatron-LM v2.x's FP16 step without main_grad buffers (Plan.megatron_v2_fp16_optimizer) and its local
// DDP's copies (Plan.megatron_local_ddp_copies), what they move beyond the passes above, in bytes per
// parameter of the GPU's share (megatron/optimizer/optimizer.py and megatron/model/distributed.py at v2.5;
// docs/cost-model.md, "Megatron-LM v2's FP16 step"). The passes above read FP16 gradients; v2.5's read
// FP32 copies of them.
struct MegatronV2Fp16Passes {
  double grad_cast_bytes = 0;   // _copy_model_grads_to_main_grads: model_param.grad.float()
  double fp32_grads_bytes = 0;  // unscale (read + write), norm and Adam read 4-byte gradients, not 2
  double copy_back_bytes = 0;   // _copy_main_params_to_model_params: the FP32 master read (Adam writes FP16)
  double ddp_copy_bytes = 0;    // local DDP: _flatten_dense_tensors, the in-place divide, copy_ back
  int kernels = 0;
};
MegatronV2Fp16Passes PlanMegatronV2Fp16Passes(double parameters, bool optimizer, bool local_ddp_copies);

// The step as `config` runs it: OptimizerStepSeconds, plus DeepSpeed 0.3.x's FP16 passes when the
// plan names them (config.deepspeed_fp16_optimizer, FP16 models only) and Megatron-LM v2.x's
// (config.megatron_v2_fp16_optimizer, config.megatron_local_ddp_copies; FP16 models with FP16 gradients).
double OptimizerStepSeconds(const StageMemory& memory, spec::DType dtype, const GpuCompute& gpu,
                            const StageConfig& config);

}  // namespace hetsim::workload
