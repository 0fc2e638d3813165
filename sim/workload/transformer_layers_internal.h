// Builds the per-layer costs of a transformer (Megatron GPT-style: pre-LayerNorm blocks with biases,
// vocabulary-parallel embedding and LM head, no learned position table) and of an explicit LayerList.
// Inputs are resolved specs (proto::ResolveModel of a model proto::ValidateModel checked).
#ifndef HETSIM_SIM_WORKLOAD_TRANSFORMER_LAYERS_INTERNAL_H_
#define HETSIM_SIM_WORKLOAD_TRANSFORMER_LAYERS_INTERNAL_H_

#include <string>
#include <vector>

#include "base/spec/model.h"
#include "sim/workload/layer_cost_internal.h"

namespace hetsim::workload {

// `element_bytes`: bytes of one activation / weight element (ElementBytes of the compute dtype).
std::vector<LayerCost> BuildTransformerLayers(const spec::TransformerSpec& t, int element_bytes);
std::vector<LayerCost> BuildLayerListLayers(const std::vector<spec::LayerSpec>& list);

// The pieces a block is made of, for SUBLAYER granularity and for tests.
LayerCost AttentionSublayer(const spec::TransformerSpec& t, int element_bytes, int index);
LayerCost MlpSublayer(const spec::TransformerSpec& t, int element_bytes, int index);
LayerCost EmbeddingLayer(const spec::TransformerSpec& t, int element_bytes);
LayerCost HeadLayer(const spec::TransformerSpec& t, int element_bytes);
// One multi-token prediction module, which BuildTransformerLayers merges into the head once per depth.
LayerCost MtpModule(const spec::TransformerSpec& t, int element_bytes);
// Sums two consecutive layers into one (BLOCK granularity = attention + MLP).
LayerCost MergeLayers(const LayerCost& first, const LayerCost& second, LayerKind kind, std::string name);

}  // namespace hetsim::workload

#endif  // HETSIM_SIM_WORKLOAD_TRANSFORMER_LAYERS_INTERNAL_H_
