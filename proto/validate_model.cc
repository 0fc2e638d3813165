#include "proto/validate_model.h"

#include <string>

#include "absl/strings/str_format.h"
#include "base/spec/defaults.h"
#include "base/spec/model.h"
#include "proto/limits.h"
#include "proto/validate_problems.h"

namespace hetsim::proto {
namespace {

using namespace hetsim::v1;  // NOLINT: the schema's message names read best unqualified here

void CheckCount(Problems& p, absl::string_view path, uint64_t value, uint64_t max) {
  if (value == 0) {
    p.Add(path, "required (must be >= 1)");
  } else if (value > max) {
    p.Add(path, "%d is more than %d", value, max);
  }
}

// Multi-latent attention: its widths positive and bounded; no KV groups or head_dim beside it.
void CheckMla(Problems& p, const Transformer& t, const std::string& at) {
  if (!t.has_mla()) return;
  const MultiLatentAttention& m = t.mla();
  const std::string mla = at + "mla.";
  auto width = [&](const char* field, uint32_t v, bool required) {
    if (required && v == 0) p.Add(mla + field, "required: > 0");
    if (v > limits::kMaxHiddenSize) p.Add(mla + field, "%d is more than %d", v, limits::kMaxHiddenSize);
  };
  width("q_lora_rank", m.q_lora_rank(), false);
  width("kv_lora_rank", m.kv_lora_rank(), true);
  width("qk_head_dim", m.qk_head_dim(), true);
  width("qk_pos_emb_head_dim", m.qk_pos_emb_head_dim(), true);  // Megatron always ropes that part
  width("v_head_dim", m.v_head_dim(), true);
  if (t.num_kv_heads() != 0 && t.num_kv_heads() != t.num_attention_heads()) {
    p.Add(at + "num_kv_heads", "%d: multi-latent attention has no KV groups (leave it 0)", t.num_kv_heads());
  }
  if (t.head_dim() != 0) p.Add(at + "head_dim", "set beside mla (its qk_head_dim and v_head_dim say the widths)");
}

// Shared experts and which blocks are MoE: only for a model with experts, and with at least one MoE block.
void CheckMoeLayout(Problems& p, const Transformer& t, const std::string& at) {
  const bool moe = t.num_experts() > 1;
  const uint64_t shared = t.moe_shared_expert_ffn_hidden_size();
  if (shared > limits::kMaxFfnHiddenSize) {
    p.Add(at + "moe_shared_expert_ffn_hidden_size", "%d is more than %d", shared, limits::kMaxFfnHiddenSize);
  }
  if (!moe) {
    if (shared != 0) p.Add(at + "moe_shared_expert_ffn_hidden_size", "set but num_experts <= 1");
    if (t.moe_first_dense_layers() != 0) p.Add(at + "moe_first_dense_layers", "set but num_experts <= 1");
    if (t.moe_layer_freq() > 1) p.Add(at + "moe_layer_freq", "set but num_experts <= 1");
    if (t.moe_grouped_gemm()) p.Add(at + "moe_grouped_gemm", "set but num_experts <= 1");
    if (t.moe_token_dispatcher() != hetsim::v1::MOE_DISPATCHER_ALL_TO_ALL) {
      p.Add(at + "moe_token_dispatcher", "set but num_experts <= 1");
    }
    return;
  }
  if (t.moe_first_dense_layers() >= t.num_layers() && t.num_layers() > 0) {
    p.Add(at + "moe_first_dense_layers", "%d leaves none of the %d blocks MoE", t.moe_first_dense_layers(),
          t.num_layers());
    return;
  }
  if (t.moe_layer_freq() > t.num_layers() && t.num_layers() > 0) {
    p.Add(at + "moe_layer_freq", "%d is more than the %d blocks", t.moe_layer_freq(), t.num_layers());
    return;
  }
  bool any = false;
  for (uint32_t i = 0; i < t.num_layers() && !any; ++i) {
    any = spec::TransformerSpec::IsMoeBlockOf(i, t.num_experts(), t.moe_first_dense_layers(), t.moe_layer_freq());
  }
  if (!any && t.num_layers() > 0) {
    p.Add(at + "moe_layer_freq", "%d with moe_first_dense_layers %d leaves none of the %d blocks MoE",
          t.moe_layer_freq(), t.moe_first_dense_layers(), t.num_layers());
  }
}

void CheckTransformer(Problems& p, const Transformer& t) {
  const std::string at = "transformer.";
  CheckCount(p, at + "num_layers", t.num_layers(), limits::kMaxTransformerBlocks);
  CheckCount(p, at + "hidden_size", t.hidden_size(), limits::kMaxHiddenSize);
  if (t.ffn_hidden_size() > limits::kMaxFfnHiddenSize) {
    p.Add(at + "ffn_hidden_size", "%d is more than %d", t.ffn_hidden_size(), limits::kMaxFfnHiddenSize);
  }
  CheckCount(p, at + "num_attention_heads", t.num_attention_heads(), limits::kMaxHiddenSize);
  if (t.head_dim() > limits::kMaxHiddenSize) {
    p.Add(at + "head_dim", "%d is more than %d", t.head_dim(), limits::kMaxHiddenSize);
  } else if (t.head_dim() == 0 && !t.has_mla() && t.num_attention_heads() > 0 &&
             t.hidden_size() % t.num_attention_heads() != 0) {
    p.Add(at + "num_attention_heads", "%d does not divide hidden_size %d (or set head_dim)", t.num_attention_heads(),
          t.hidden_size());
  }
  if (t.num_kv_heads() > 0 && t.num_attention_heads() > 0 && t.num_attention_heads() % t.num_kv_heads() != 0) {
    p.Add(at + "num_kv_heads", "%d does not divide num_attention_heads %d", t.num_kv_heads(), t.num_attention_heads());
  }
  CheckCount(p, at + "seq_length", t.seq_length(), limits::kMaxSeqLength);
  CheckCount(p, at + "vocab_size", t.vocab_size(), limits::kMaxVocabSize);
  if (t.num_experts() > limits::kMaxExperts) {
    p.Add(at + "num_experts", "%d is more than %d", t.num_experts(), limits::kMaxExperts);
  }
  const bool moe = t.num_experts() > 1;
  if (moe && (t.moe_top_k() == 0 || t.moe_top_k() > t.num_experts())) {
    p.Add(at + "moe_top_k", "%d is outside [1, num_experts = %d]", t.moe_top_k(), t.num_experts());
  }
  if (!moe && t.moe_top_k() > 1) p.Add(at + "moe_top_k", "%d needs num_experts > 1", t.moe_top_k());
  if (!moe && t.expert_ffn_hidden_size() != 0) p.Add(at + "expert_ffn_hidden_size", "set but num_experts <= 1");
  if (t.expert_ffn_hidden_size() > limits::kMaxFfnHiddenSize) {
    p.Add(at + "expert_ffn_hidden_size", "%d is more than %d", t.expert_ffn_hidden_size(), limits::kMaxFfnHiddenSize);
  }
  CheckMoeLayout(p, t, at);
  CheckMla(p, t, at);
  if (t.mtp_num_layers() > t.num_layers()) {
    p.Add(at + "mtp_num_layers", "%d is more than the %d blocks", t.mtp_num_layers(), t.num_layers());
  }
}

void CheckLayerList(Problems& p, const LayerList& list) {
  if (list.layers().empty()) p.Add("layer_list.layers", "required: at least one layer");
  if (list.layers_size() > limits::kMaxListLayers) {
    p.Add("layer_list.layers", "%d layers, more than %d", list.layers_size(), limits::kMaxListLayers);
  }
  CheckCount(p, "layer_list.seq_length", list.seq_length(), limits::kMaxSeqLength);
  for (int i = 0; i < list.layers_size(); ++i) {
    const Layer& l = list.layers(i);
    const std::string at = absl::StrFormat("layer_list.layers[%d].", i);
    CheckRange(p, at + "forward_gflop_per_sample", l.forward_gflop_per_sample(), 0, limits::kMaxGflopPerSample);
    CheckRange(p, at + "backward_gflop_per_sample", l.backward_gflop_per_sample(), 0, limits::kMaxGflopPerSample);
    if (static_cast<double>(l.param_count()) > limits::kMaxParams) {
      p.Add(at + "param_count", "%d is more than %g", l.param_count(), limits::kMaxParams);
    }
    if (static_cast<double>(l.activation_bytes_per_sample()) > limits::kMaxBytes) {
      p.Add(at + "activation_bytes_per_sample", "%d is more than %g", l.activation_bytes_per_sample(),
            limits::kMaxBytes);
    }
    if (static_cast<double>(l.output_bytes_per_sample()) > limits::kMaxBytes) {
      p.Add(at + "output_bytes_per_sample", "%d is more than %g", l.output_bytes_per_sample(), limits::kMaxBytes);
    }
  }
}

}  // namespace

double ModelParamCount(const Model& model) {
  if (model.has_layer_list()) {
    double total = 0;
    for (const Layer& l : model.layer_list().layers()) total += static_cast<double>(l.param_count());
    return total;
  }
  if (!model.has_transformer()) return 0;
  const Transformer& t = model.transformer();
  const double h = static_cast<double>(t.hidden_size());
  const uint64_t ffn_width = spec::FfnHiddenSizeOr(t.ffn_hidden_size(), t.hidden_size());
  const double ffn = static_cast<double>(ffn_width);
  const double heads = t.num_attention_heads() ? t.num_attention_heads() : 1;  // 0 is refused; no division by it
  const double kv = spec::KvHeadsOr<double>(t.num_kv_heads(), heads);
  const double d = t.head_dim() ? t.head_dim() : h / heads;
  double attention = 2 * h * (heads * d) + 2 * h * (d * kv) + (heads * d + 2 * kv * d + h);  // + biases
  if (t.has_mla()) {
    const MultiLatentAttention& m = t.mla();
    const double qk = m.qk_head_dim() + m.qk_pos_emb_head_dim(), q_lora = m.q_lora_rank(), kv_lora = m.kv_lora_rank();
    attention = (q_lora > 0 ? h * q_lora + q_lora + q_lora * heads * qk : h * heads * qk) +
                h * (kv_lora + m.qk_pos_emb_head_dim()) + kv_lora +
                kv_lora * heads * (m.qk_head_dim() + m.v_head_dim()) + heads * m.v_head_dim() * h;
  }
  const double mlp_mats = t.gated_mlp() ? 3 : 2;
  const bool moe = t.num_experts() > 1;
  const double experts = moe ? t.num_experts() : 1;
  const double expert_ffn =
      moe ? static_cast<double>(spec::ExpertFfnHiddenSizeOr(t.expert_ffn_hidden_size(), ffn_width)) : ffn;
  const double shared = static_cast<double>(t.moe_shared_expert_ffn_hidden_size());
  const double moe_mlp = experts * (mlp_mats * h * expert_ffn + expert_ffn + h) + (moe ? h * experts : 0) +
                         (shared > 0 ? mlp_mats * h * shared + shared + h : 0);  // + router, shared experts
  const double dense_mlp = mlp_mats * h * ffn + ffn + h;
  auto block = [&](uint32_t i) {
    const bool expert_block =
        spec::TransformerSpec::IsMoeBlockOf(i, t.num_experts(), t.moe_first_dense_layers(), t.moe_layer_freq());
    return attention + (expert_block ? moe_mlp : dense_mlp) + 4 * h;  // two layer norms
  };
  double blocks = 0;
  for (uint32_t i = 0; i < t.num_layers(); ++i) blocks += block(i);
  // Multi-token prediction: a block like the last, eh_proj (2h x h) and three norms each.
  const double mtp = t.num_layers() == 0 ? 0 : t.mtp_num_layers() * (block(t.num_layers() - 1) + 2 * h * h + 3 * h);
  const double embedding = static_cast<double>(t.vocab_size()) * h + static_cast<double>(t.seq_length()) * h;
  const double head = t.tied_embeddings() ? 0 : static_cast<double>(t.vocab_size()) * h;
  return embedding + blocks + mtp + head + 2 * h;  // + final layer norm
}

absl::Status ValidateModel(const Model& model, absl::string_view file, absl::string_view prefix) {
  Problems p(file, prefix);
  switch (model.architecture_case()) {
    case Model::kTransformer: CheckTransformer(p, model.transformer()); break;
    case Model::kLayerList: CheckLayerList(p, model.layer_list()); break;
    case Model::ARCHITECTURE_NOT_SET: p.Add("transformer", "required: a transformer or a layer_list"); break;
  }
  if (p.empty() && ModelParamCount(model) > limits::kMaxParams) {
    p.Add(model.has_transformer() ? "transformer" : "layer_list", "%g parameters, more than %g", ModelParamCount(model),
          limits::kMaxParams);
  }
  return p.ToStatus();
}

}  // namespace hetsim::proto
