// The pipelines family's expert layout per GPU type (planner/pipelines.h, issue 39): each type's pipelines lay
// an MoE model's experts out at their own EP and ETP, as heterogeneous planners give each GPU type the layout
// its memory and speed suit (HeterMoE, arXiv 2504.03871; FlashFlex and Metis choose per type too). The
// simulator and `validate` take holders of a layer at layouts that nest (docs/heterogeneous.md, session 40);
// every choice is priced by the family's own price of the plan (its DP runs per type, then the layer ranges'
// reductions, each holder's hop carrying its own expert rings: PriceLayerRanges).
#ifndef HETSIM_PLANNER_EXPERT_LAYOUTS_INTERNAL_H_
#define HETSIM_PLANNER_EXPERT_LAYOUTS_INTERNAL_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "planner/pipelines.h"
#include "sim/workload/model_cost.h"

namespace hetsim::planner {

// Whether `layouts` (each holder's (EP, ETP), in the plan's order) may hold one layer together: every one
// divides, in EP and in ETP, the finest (the largest EP x ETP, the first of equal ones), as `hetsim check`
// requires of a layer's holders (proto/validate_pipelines.cc, CheckExpertSplits).
bool ExpertLayoutsNest(const std::vector<std::pair<int, int>>& layouts);

// The expert layouts the family tries for a GPU type whose nodes hold `gpus_per_node` GPUs, in the order
// tried: ETP 1 at every power-of-two EP dividing the experts, ascending (Profiler::ExpertLayouts' rule), then
// at the largest of them every power-of-two ETP up to the node that divides the experts' FFN, ascending (a
// stage takes it only where its TP is a multiple: ETP up to TP, Megatron-Core's MoE configurations). ETP > 1
// only where EP cannot grow: an EP x ETP block holds the experts' states and reduces their rings as an EP
// block of that size would, and adds collectives inside the experts. Empty for a dense model.
std::vector<std::pair<int, int>> ExpertLayoutsOfType(const workload::ModelCost& model, int gpus_per_node);

// A GPU type of the cluster: its name and its nodes' GPUs (the largest of its islands').
struct TypeNodes {
  std::string gpu_type;
  int gpus_per_node = 1;
};

// The family's plan at `layouts` (every type named); nullopt when a type has no plan at its layout.
using PriceExpertLayouts = std::function<std::optional<PipelinesCandidate>(const TypeExpertLayouts&)>;

// The family's best plan over expert layouts per type, its `expert_layouts` and `expert_why` set:
// 1. one layout for every type, ETP 1 at EP 1, 2, 4, ... while a larger EP prices faster (session 37's search);
// 2. from the best of those, each type in turn (one pass) at each of its own layouts (ExpertLayoutsOfType)
//    with the others kept, the faster kept: the EPs already priced in step 1 all, a larger EP and then ETP
//    2, 4, ... at the largest EP (only when the type's EPs reached it) while each prices faster.
// `price` plans each type at a layout once when it keeps the type plans (TypePlans), so step 2 runs HAPT's
// DP only for the layouts step 1 did not give a type. Calls `price` at most (1 + log2 E) + types x (1 +
// log2 E + log2 gpus_per_node) times. nullopt when no layout plans. A dense model: `price` of no layout.
std::optional<PipelinesCandidate> SearchExpertLayouts(const workload::ModelCost& model,
                                                      const std::vector<TypeNodes>& types,
                                                      const PriceExpertLayouts& price);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_EXPERT_LAYOUTS_INTERNAL_H_
