#include "sim/workload/optimizer_step.h"

namespace hetsim::sim::workload {

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

}  // namespace hetsim::sim::workload
