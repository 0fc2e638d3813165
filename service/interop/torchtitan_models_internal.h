// torchtitan's Qwen3, Llama 4 and DeepSeek-V3 flavors (the tables of torchtitan/models/<name>/__init__.py
// and their model args at pytorch/torchtitan 238fa99, the last commit with TOML configs), as the shapes
// the torchtitan importer prices: grouped-query or multi-latent attention, dense or MoE blocks
// (docs/torchtitan.md, "Qwen3, Llama 4 and DeepSeek-V3").
#ifndef HETSIM_SERVICE_INTEROP_TORCHTITAN_MODELS_INTERNAL_H_
#define HETSIM_SERVICE_INTEROP_TORCHTITAN_MODELS_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace hetsim::interop {

// One flavor, in the model args' words; MoE and MLA fields 0 where the model has none.
struct TitanModel {
  std::string model, flavor;  // "qwen3", "0.6B"
  int64_t dim = 0, layers = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0;
  int64_t head_dim = 0;   // Qwen3's head_dim (0: dim / heads)
  bool tied = false;      // enable_weight_tying: the output head is the embedding
  bool pipelines = true;  // the train spec has a pipelining_fn (Qwen3's has none)
  // MoE: routed experts of moe_ffn each, top_k a token; shared experts' total width; blocks
  // 0 .. first_dense-1 dense, then every layer_freq-th MoE (0: all).
  int64_t experts = 0, top_k = 0, moe_ffn = 0, shared_ffn = 0, first_dense = 0, layer_freq = 0;
  // DeepSeek's multi-latent attention.
  int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  // Llama 4's iRoPE flavors: three of four layers attend within blocks of this many tokens (0: none).
  int64_t attention_block = 0;
  std::vector<std::string> notes;  // what of the flavor is priced otherwise than it runs
};

// A flavor's dense shape: the attention and FFN every flavor has.
TitanModel TitanShape(absl::string_view model, absl::string_view flavor, int64_t dim, int64_t layers, int64_t heads,
                      int64_t kv_heads, int64_t ffn, int64_t vocab);

// The flavor `flavor` of torchtitan's `model` ("qwen3", "llama4", "deepseek_v3"; flavors ending in
// "_flex_attn" or "_varlen", the same shapes, read as their base); nullopt when the model or flavor is
// not one. `known` gets the model's flavor names.
std::optional<TitanModel> OtherTitanFlavor(absl::string_view model, absl::string_view flavor,
                                           std::vector<std::string>& known);

// Whether `model` is one of those models.
bool IsOtherTitanModel(absl::string_view model);

// The Megatron flags of the model's shape beyond the dense llama ones (head width, experts, MLA).
std::string OtherTitanModelFlags(const TitanModel& m);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_TORCHTITAN_MODELS_INTERNAL_H_
