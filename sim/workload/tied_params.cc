#include "sim/workload/tied_params.h"

#include "sim/workload/stage_cost.h"

namespace hetsim::workload {

double TiedParamsPerGpu(const ModelCost& model, int tp) {
  const LayerCost& head = model.layer(model.num_layers() - 1);
  return head.tied_with_embedding ? static_cast<double>(head.tied_param_count) / tp : 0;
}

double DenseParamsWithoutTied(const ModelCost& model, int first, int num, int tp) {
  const bool holds_copy = first == 0 || first + num == model.num_layers();
  return DenseParamsOfLayers(model, first, num, tp) - (holds_copy ? TiedParamsPerGpu(model, tp) : 0);
}

}  // namespace hetsim::workload
