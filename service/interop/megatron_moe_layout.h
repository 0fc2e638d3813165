// Megatron-LM's --moe-layer-freq, which blocks run experts, both ways: an integer K (block i is MoE when
// i % K == 0) or a Python list expression of one 0/1 per block ("([0]*3+[1]*58)", DeepSeek-V3's first
// three dense blocks; "[1,0,1,0]"). hetsim says the layouts real models use: the first N blocks dense,
// then every K-th MoE from the first past them (Transformer.moe_first_dense_layers, moe_layer_freq).
#ifndef HETSIM_SERVICE_INTEROP_MEGATRON_MOE_LAYOUT_H_
#define HETSIM_SERVICE_INTEROP_MEGATRON_MOE_LAYOUT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hetsim::interop {

struct MoeLayout {
  uint32_t first_dense = 0;
  uint32_t freq = 1;
};

// The layout of --moe-layer-freq `value` over `num_layers` blocks; an error message (without the file)
// when the value is malformed, has another length, or is a pattern hetsim's two fields cannot say.
absl::StatusOr<MoeLayout> ParseMoeLayerFreq(absl::string_view value, uint32_t num_layers);

// The --moe-layer-freq value that gives `layout` over `num_layers` blocks: "K" without dense blocks,
// "([0]*N+[1]*M)" with them, else the explicit list.
std::string MoeLayerFreqValue(const MoeLayout& layout, uint32_t num_layers);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_MEGATRON_MOE_LAYOUT_H_
