// A resolved model: the file's zero defaults applied (KV heads, FFN widths, experts, a layer's
// backward FLOPs and name), GFLOP converted to FLOP, the dtype never unspecified. Built by
// proto::ResolveModel from a validated Model; the cost model (sim/workload) reads only this.
#ifndef HETSIM_BASE_SPEC_MODEL_H_
#define HETSIM_BASE_SPEC_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/spec/dtype.h"
#include "base/units.h"

namespace hetsim::spec {

enum class Granularity : uint8_t { kBlock, kSublayer };
// kFlashTriton: kFlash's fused kernel built from Ampere's mma.sync (Transformer.attention ATTENTION_FLASH_TRITON).
enum class AttentionKernel : uint8_t { kStandard, kFlash, kFlashTriton };

// Transformer.mla (proto/hetsim.proto, MultiLatentAttention).
struct MlaSpec {
  uint32_t q_lora_rank = 0;
  uint32_t kv_lora_rank = 0;
  uint32_t qk_head_dim = 0;
  uint32_t qk_pos_emb_head_dim = 0;
  uint32_t v_head_dim = 0;
};

struct TransformerSpec {
  uint32_t num_layers = 0;  // transformer blocks
  uint64_t hidden_size = 0;
  uint64_t ffn_hidden_size = 0;  // resolved: 4 x hidden_size when the file leaves it 0
  uint32_t num_attention_heads = 0;
  uint32_t num_kv_heads = 0;  // resolved: the attention heads when the file leaves it 0
  uint64_t seq_length = 0;
  uint64_t vocab_size = 0;
  bool gated_mlp = false;
  bool tied_embeddings = false;
  uint32_t num_experts = 1;  // 1 for a dense model
  uint32_t moe_top_k = 0;
  uint64_t expert_ffn_hidden_size = 0;  // resolved: ffn_hidden_size when the file leaves it 0
  Granularity granularity = Granularity::kBlock;
  AttentionKernel attention = AttentionKernel::kStandard;
  uint32_t head_dim = 0;          // resolved: hidden_size / num_attention_heads when the file leaves it 0
  bool attention_dropout = true;  // Transformer.no_attention_dropout false: the unfused core drops out
  bool qk_layernorm = false;      // Transformer.qk_layernorm: a norm over each head's Q and K
  uint64_t moe_shared_expert_ffn_hidden_size = 0;  // 0: no shared experts
  uint32_t moe_first_dense_layers = 0;
  uint32_t moe_layer_freq = 1;            // resolved: 1 when the file leaves it 0
  std::optional<MlaSpec> mla;             // multi-latent attention instead of MHA / GQA
  bool moe_grouped_gemm = false;          // a GPU's routed experts as one grouped GEMM per projection
  bool moe_allgather_dispatcher = false;  // Transformer.moe_token_dispatcher: all-gather, else all-to-all
  uint32_t mtp_num_layers = 0;            // multi-token prediction modules after the head

  // Whether block `i` (0-based) runs experts: the model has them, i is past the first dense blocks and
  // on the MoE frequency counted from there (Megatron-LM's --moe-layer-freq).
  bool IsMoeBlock(uint32_t i) const { return IsMoeBlockOf(i, num_experts, moe_first_dense_layers, moe_layer_freq); }
  static bool IsMoeBlockOf(uint32_t i, uint32_t experts, uint32_t first_dense, uint32_t freq) {
    return experts > 1 && i >= first_dense && (freq <= 1 || (i - first_dense) % freq == 0);
  }
  // Every block alike (the planner's repeated-layer pricing assumes it).
  bool UniformBlocks() const { return num_experts <= 1 || (moe_first_dense_layers == 0 && moe_layer_freq <= 1); }
};

struct LayerSpec {
  std::string name;  // resolved: "layer<i>" when the file gives none
  double forward_flop_per_sample = 0;
  double backward_flop_per_sample = 0;  // resolved: twice the forward when the file leaves it 0
  uint64_t param_count = 0;
  Bytes activation_bytes_per_sample;  // whole bytes, from the file's integer
  Bytes output_bytes_per_sample;
};

// The layers at either end of the sequence that are not blocks: a transformer's embedding and head
// (1 and 1), none for a layer list (proto/layer_count.h, sim/pipeline VirtualStageLayers).
struct EdgeLayers {
  int embedding = 0;
  int head = 0;
};

struct ModelSpec {
  std::string name;
  DType dtype = DType::kBf16;
  std::optional<TransformerSpec> transformer;  // or else the layer list below
  std::vector<LayerSpec> layers;
  uint64_t layer_list_seq_length = 0;  // tokens per sample of a layer list
  std::string where;                   // names the model in messages: "model.pbtxt" or "plan.pbtxt: model"

  EdgeLayers edge_layers() const { return transformer ? EdgeLayers{1, 1} : EdgeLayers{}; }
};

}  // namespace hetsim::spec

#endif  // HETSIM_BASE_SPEC_MODEL_H_
