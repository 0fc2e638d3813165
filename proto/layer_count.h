// The length of a model's layer sequence: the index space of Stage.first_layer / Stage.num_layers.
// The cost model and the planners use this same definition.
#ifndef HETSIM_PROTO_LAYER_COUNT_H_
#define HETSIM_PROTO_LAYER_COUNT_H_

#include "proto/hetsim.pb.h"

namespace hetsim::proto {

// Transformer, BLOCK granularity (also the default): embedding, one layer per block, head:
//   num_layers + 2.
// Transformer, SUBLAYER granularity: embedding, then attention and MLP of each block, then head:
//   2 * num_layers + 2.
// Layer list: its size. No architecture set: 0. Saturates at INT_MAX (the validator rejects models
// anywhere near that).
int LayerCount(const hetsim::v1::Model& model);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_LAYER_COUNT_H_
