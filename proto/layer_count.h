// The length of a model's layer sequence: the index space of Stage.first_layer / Stage.num_layers.
// The cost model and the planners use this same definition.
#ifndef HETSIM_PROTO_LAYER_COUNT_H_
#define HETSIM_PROTO_LAYER_COUNT_H_

#include <cstdint>

#include "base/spec/model.h"
#include "proto/hetsim.pb.h"

namespace hetsim::proto {

// Transformer, BLOCK granularity (also the default): embedding, one layer per block, head:
//   num_layers + 2.
// Transformer, SUBLAYER granularity: embedding, then attention and MLP of each block, then head:
//   2 * num_layers + 2.
// Layer list: its size. No architecture set: 0. Saturates at INT_MAX (the validator rejects models
// anywhere near that).
int LayerCount(const hetsim::v1::Model& model);

// The layers of the sequence that are not transformer blocks, at each end: a transformer's embedding
// (first layer) and LM head (last layer), 1 and 1 at either granularity; 0 and 0 for a layer list,
// whose layers are all alike. Interleaved 1F1B splits a stage's other layers (its blocks) evenly over
// its model chunks and adds the embedding to the first chunk and the head to the last, as Megatron-LM
// does (sim/pipeline VirtualStageLayers).
using EdgeLayers = spec::EdgeLayers;
EdgeLayers ModelEdgeLayers(const hetsim::v1::Model& model);

// Of the `num_layers` layers from `first_layer`, how many are blocks: not the embedding or the head.
int StageBlockLayers(const EdgeLayers& edges, int layer_count, int64_t first_layer, int64_t num_layers);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_LAYER_COUNT_H_
