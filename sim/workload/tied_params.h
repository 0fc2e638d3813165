// The tied embedding's parameters in a plan of pipelines (Plan.tied_embedding_grad_sync): the V x h
// matrix that the embedding and a tied head share reduces in a group of its own over every stage that
// holds a copy, so a layer range holding the embedding or the head counts its parameters without it.
// Under ZeRO-1/2 the matrix's states shard over that group and the range's over the range's holders
// (sim/executor/layer_range_shards.h; the planner's PriceLayerRanges the same way).
#ifndef HETSIM_SIM_WORKLOAD_TIED_PARAMS_H_
#define HETSIM_SIM_WORKLOAD_TIED_PARAMS_H_

#include "sim/workload/model_cost.h"

namespace hetsim::workload {

// The tied V x h matrix's parameters per GPU of a `tp`-way shard; 0 without a tied head.
double TiedParamsPerGpu(const ModelCost& model, int tp);

// The dense parameters one GPU of a `tp`-way stage holds of layers [first, first + num)
// (DenseParamsOfLayers) without the tied matrix when the range holds the embedding or the head (once:
// a range holding both holds one copy).
double DenseParamsWithoutTied(const ModelCost& model, int first, int num, int tp);

}  // namespace hetsim::workload

#endif  // HETSIM_SIM_WORKLOAD_TIED_PARAMS_H_
