// The optimizer step at the end of an iteration, as Megatron-LM runs it on one GPU: memory-bound
// passes over that GPU's share of the model states.
//
//   auto seconds = OptimizerStepSeconds(stage_cost.optimizer_shard, dtype, gpu);
#pragma once

#include "base/spec/dtype.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/stage_cost.h"

namespace hetsim::sim::workload {

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

}  // namespace hetsim::sim::workload
