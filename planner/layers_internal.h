// The planner's layer sequence (HAPT Sec. 5.1): contiguous groups of the model's layers that the
// inter-op search partitions into stages. A plan still indexes the model's own layers; a planner layer
// only decides where stage boundaries may fall.
//
// Two constructions:
//  - Structural (HAPT): the embedding and the head stay layers of their own and the repeated body
//    (transformer blocks, or attention/MLP halves at SUBLAYER granularity) is cut into groups of equal
//    numbers of model layers, so repeated modules stay identical and the profiler can deduplicate them.
//    Asking for more layers than the model has at BLOCK granularity switches a transformer to SUBLAYER
//    granularity (attention and MLP halves), the finest split the cost model prices honestly.
//  - Balanced (Alpa's clustering): groups of roughly equal forward FLOPs over the whole sequence,
//    embedding and head merged into their neighbours; used by the alpa baseline.
#ifndef HETSIM_PLANNER_LAYERS_INTERNAL_H_
#define HETSIM_PLANNER_LAYERS_INTERNAL_H_

#include <vector>

#include "absl/status/statusor.h"
#include "base/spec/model.h"
#include "sim/workload/model_cost.h"

namespace hetsim::planner {

struct LayerGroup {
  int first = 0;  // model layer index
  int count = 0;
};

enum class LayerConstruction { kStructural, kBalanced };

// The model the plan will index: `model` itself, or a SUBLAYER copy of a BLOCK transformer when
// `target_layers` exceeds the BLOCK layer count. Returns the (possibly) refined model.
spec::ModelSpec RefineGranularity(const spec::ModelSpec& model, int target_layers);

// Groups the layers of `cost` into `target_layers` groups (0 or >= the model's layer count: one group
// per model layer). Never returns an empty group.
std::vector<LayerGroup> BuildPlannerLayers(const workload::ModelCost& cost, int target_layers,
                                           LayerConstruction construction);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_LAYERS_INTERNAL_H_
