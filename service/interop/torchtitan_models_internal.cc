#include "service/interop/torchtitan_models_internal.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace hetsim::interop {
namespace {

// torchtitan/models/qwen3/__init__.py's qwen3_args: head_dim 128 and qk_norm in every flavor; the MoE
// flavors route every block's tokens to top_k of num_experts experts of moe_inter_dim, no shared one.
struct Qwen3Row {
  const char* name;
  int64_t dim, layers, heads, kv_heads, hidden_dim, vocab;
  bool tied;
  int64_t experts, top_k, moe_inter_dim;
};
constexpr Qwen3Row kQwen3[] = {
    {"debugmodel", 256, 8, 16, 8, 3072, 2048, true, 0, 0, 0},
    {"0.6B", 1024, 28, 16, 8, 3072, 151936, true, 0, 0, 0},
    {"1.7B", 2048, 28, 16, 8, 6144, 151936, true, 0, 0, 0},
    {"4B", 2560, 36, 32, 8, 9728, 151936, true, 0, 0, 0},
    {"8B", 4096, 36, 32, 8, 12288, 151936, false, 0, 0, 0},
    {"14B", 5120, 40, 40, 8, 17408, 151936, false, 0, 0, 0},
    {"32B", 5120, 64, 64, 8, 25600, 151936, false, 0, 0, 0},
    {"debugmodel_moe", 256, 8, 16, 8, 3072, 2048, false, 64, 8, 768},
    {"30B-A3B", 2048, 48, 32, 4, 6144, 151936, false, 128, 8, 768},
    {"235B-A22B", 4096, 94, 64, 4, 12288, 151936, false, 128, 8, 1536},
};

// torchtitan/models/llama4/__init__.py's llama4_args (TransformerModelArgs defaults: vocab 202,048,
// multiple_of 256, interleave_moe_layer_step 2, fixed_attn_block_size 8192; MoEArgs: top-1 of
// num_experts and one shared expert).
struct Llama4Row {
  const char* name;
  int64_t dim, layers, heads, kv_heads, multiple_of, vocab;
  double ffn_multiplier;  // 0: None
  int64_t experts, interleave, attention_block;
};
constexpr Llama4Row kLlama4[] = {
    {"debugmodel", 256, 6, 16, 16, 256, 2048, 0, 8, 2, 0},
    {"17bx16e", 5120, 48, 40, 8, 2048, 202048, 1.2, 16, 1, 0},
    {"17bx128e", 5120, 48, 40, 8, 2048, 202048, 1.2, 128, 2, 0},
    {"debugmodel_irope", 256, 6, 16, 16, 256, 2048, 0, 8, 2, 256},
    {"17bx16e_irope", 5120, 48, 40, 8, 2048, 202048, 1.2, 16, 1, 8192},
    {"17bx128e_irope", 5120, 48, 40, 8, 2048, 202048, 1.2, 128, 2, 8192},
};

// torchtitan/models/deepseek_v3/__init__.py's deepseekv3_args: MLA (qk_nope_head_dim 128,
// qk_rope_head_dim 64, v_head_dim 128, kv_lora_rank 512), n_dense_layers dense blocks of inter_dim, then
// MoE blocks of moe_inter_dim experts and num_shared_experts shared ones of the same width.
struct DeepSeekRow {
  const char* name;
  int64_t dim, layers, heads, inter_dim, moe_inter_dim, vocab, dense_layers, experts, shared, top_k, q_lora_rank;
  bool node_limited;  // num_expert_groups set: node-limited routing
};
constexpr DeepSeekRow kDeepSeek[] = {
    {"debugmodel", 256, 6, 16, 1024, 256, 2048, 1, 8, 2, 3, 0, false},
    {"16B", 2048, 27, 16, 10944, 1408, 102400, 1, 64, 2, 6, 0, false},
    {"236B", 5120, 60, 128, 12288, 1536, 102400, 1, 160, 2, 6, 1536, true},
    {"671B", 7168, 61, 128, 18432, 2048, 129280, 3, 256, 1, 8, 1536, true},
};

// Llama 4's FeedForward width: int(2 x hidden / 3), times the multiplier, divided (MoE blocks, its
// auto_scale_hidden_dim) by top_k + shared experts, rounded up to multiple_of (llama4/model/model.py).
int64_t Llama4Ffn(const Llama4Row& r, int64_t denominator) {
  int64_t hidden = 2 * (4 * r.dim) / 3;
  if (r.ffn_multiplier > 0) hidden = static_cast<int64_t>(r.ffn_multiplier * static_cast<double>(hidden));
  hidden /= denominator;
  return (hidden + r.multiple_of - 1) / r.multiple_of * r.multiple_of;
}

// "_flex_attn" and "_varlen" flavors have their base's shapes.
bool SameShapeFlavor(absl::string_view flavor, const char* name) {
  return flavor == name || flavor == absl::StrCat(name, "_flex_attn") || flavor == absl::StrCat(name, "_varlen");
}

std::optional<TitanModel> Qwen3Flavor(absl::string_view flavor, std::vector<std::string>& known) {
  for (const Qwen3Row& q : kQwen3) {
    known.push_back(q.name);
    if (!SameShapeFlavor(flavor, q.name)) continue;
    TitanModel m = TitanShape("qwen3", q.name, q.dim, q.layers, q.heads, q.kv_heads, q.hidden_dim, q.vocab);
    m.head_dim = 128;
    m.tied = q.tied;
    m.pipelines = false;
    if (q.experts > 0) {
      m.experts = q.experts;
      m.top_k = q.top_k;
      m.moe_ffn = q.moe_inter_dim;
    }
    m.notes.push_back(
        "qk_norm: Qwen3's RMSNorm of each head's query and key is not priced (two memory-bound passes over Q and K "
        "a block)");
    return m;
  }
  return std::nullopt;
}

std::optional<TitanModel> Llama4Flavor(absl::string_view flavor, std::vector<std::string>& known) {
  for (const Llama4Row& l : kLlama4) {
    known.push_back(l.name);
    if (!SameShapeFlavor(flavor, l.name)) continue;
    const int64_t top_k = 1, shared = 1;
    TitanModel m = TitanShape("llama4", l.name, l.dim, l.layers, l.heads, l.kv_heads, Llama4Ffn(l, 1), l.vocab);
    m.experts = l.experts;
    m.top_k = top_k;
    m.moe_ffn = Llama4Ffn(l, top_k + shared);
    m.shared_ffn = m.moe_ffn * shared;
    // Block i is MoE when (i + 1) % interleave == 0: with 2, blocks 1, 3, 5, ...
    m.first_dense = l.interleave - 1;
    m.layer_freq = l.interleave;
    m.attention_block = l.attention_block;
    m.notes.push_back("Llama 4's router (sigmoid score, top-1, its expert bias) priced as Megatron's top-k router");
    return m;
  }
  return std::nullopt;
}

std::optional<TitanModel> DeepSeekV3Flavor(absl::string_view flavor, std::vector<std::string>& known) {
  for (const DeepSeekRow& d : kDeepSeek) {
    known.push_back(d.name);
    if (!SameShapeFlavor(flavor, d.name)) continue;
    TitanModel m = TitanShape("deepseek_v3", d.name, d.dim, d.layers, d.heads, d.heads, d.inter_dim, d.vocab);
    m.experts = d.experts;
    m.top_k = d.top_k;
    m.moe_ffn = d.moe_inter_dim;
    m.shared_ffn = d.moe_inter_dim * d.shared;
    m.first_dense = d.dense_layers;
    m.q_lora_rank = d.q_lora_rank;
    m.kv_lora_rank = 512;
    m.qk_nope_head_dim = 128;
    m.qk_rope_head_dim = 64;
    m.v_head_dim = 128;
    if (d.node_limited) {
      m.notes.push_back(
          "num_expert_groups / num_limited_groups: node-limited routing not modelled (a token's experts drawn from "
          "all expert-parallel ranks)");
    }
    return m;
  }
  return std::nullopt;
}

}  // namespace

TitanModel TitanShape(absl::string_view model, absl::string_view flavor, int64_t dim, int64_t layers, int64_t heads,
                      int64_t kv_heads, int64_t ffn, int64_t vocab) {
  TitanModel m;
  m.model = std::string(model);
  m.flavor = std::string(flavor);
  m.dim = dim;
  m.layers = layers;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn = ffn;
  m.vocab = vocab;
  return m;
}

bool IsOtherTitanModel(absl::string_view model) {
  return model == "qwen3" || model == "llama4" || model == "deepseek_v3";
}

std::optional<TitanModel> OtherTitanFlavor(absl::string_view model, absl::string_view flavor,
                                           std::vector<std::string>& known) {
  if (model == "qwen3") return Qwen3Flavor(flavor, known);
  if (model == "llama4") return Llama4Flavor(flavor, known);
  if (model == "deepseek_v3") return DeepSeekV3Flavor(flavor, known);
  return std::nullopt;
}

std::string OtherTitanModelFlags(const TitanModel& m) {
  std::string flags;
  if (m.head_dim > 0) absl::StrAppend(&flags, " --kv-channels ", m.head_dim);
  if (m.kv_lora_rank > 0) {
    absl::StrAppend(&flags, " --multi-latent-attention");
    if (m.q_lora_rank > 0) absl::StrAppend(&flags, " --q-lora-rank ", m.q_lora_rank);
    absl::StrAppend(&flags,
                    absl::StrFormat(" --kv-lora-rank %d --qk-head-dim %d --qk-pos-emb-head-dim %d --v-head-dim %d",
                                    m.kv_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim));
  }
  if (m.experts == 0) return flags;
  // torchtitan's MoE: grouped GEMMs (MoEArgs.use_grouped_mm), tokens to the experts' ranks by all-to-all.
  absl::StrAppend(&flags, absl::StrFormat(" --num-experts %d --moe-router-topk %d --moe-ffn-hidden-size %d "
                                          "--moe-grouped-gemm --moe-token-dispatcher-type alltoall",
                                          m.experts, m.top_k, m.moe_ffn));
  if (m.shared_ffn > 0) absl::StrAppend(&flags, " --moe-shared-expert-intermediate-size ", m.shared_ffn);
  if (m.first_dense > 0 || m.layer_freq > 1) {
    std::vector<int> pattern;
    for (int64_t i = 0; i < m.layers; ++i) {
      const bool moe = i >= m.first_dense && (m.layer_freq <= 1 || (i - m.first_dense) % m.layer_freq == 0);
      pattern.push_back(moe ? 1 : 0);
    }
    absl::StrAppend(&flags, " --moe-layer-freq '[", absl::StrJoin(pattern, ","), "]'");
  }
  return flags;
}

}  // namespace hetsim::interop
