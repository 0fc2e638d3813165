#include "sim/workload/transformer_layers_internal.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace hetsim::workload {
namespace {

// Shape of a transformer, in doubles.
struct Shape {
  double s, h, a, d, q_h, kv_h, ffn, vocab, experts, top_k, expert_ffn, shared_ffn;
  bool gated;
  double B;  // element bytes
};

Shape ShapeOf(const spec::TransformerSpec& t, int element_bytes) {
  Shape x;
  x.s = static_cast<double>(t.seq_length);
  x.h = static_cast<double>(t.hidden_size);
  x.a = t.num_attention_heads;
  x.d = t.head_dim;               // channels of one head
  x.q_h = x.a * x.d;              // width of Q and of the attention output (h unless head_dim says)
  x.kv_h = x.d * t.num_kv_heads;  // width of K (and of V)
  x.ffn = static_cast<double>(t.ffn_hidden_size);
  x.vocab = static_cast<double>(t.vocab_size);
  x.experts = t.num_experts;
  x.top_k = x.experts > 1 ? t.moe_top_k : 1;
  x.expert_ffn = static_cast<double>(t.expert_ffn_hidden_size);
  x.shared_ffn = static_cast<double>(t.moe_shared_expert_ffn_hidden_size);
  x.gated = t.gated_mlp;
  x.B = element_bytes;
  return x;
}

// A GEMM of `batch` products (m x k) @ (k x n) per sample, with its FLOPs.
Gemm MakeGemm(const char* name, double m, double n, double k, double batch, TpSplit split, bool per_expert = false,
              bool attention_core = false) {
  Gemm g{.name = name,
         .forward_flop_per_sample = 2 * m * n * k * batch,
         .per_expert = per_expert,
         .attention_core = attention_core,
         .fp8 = !attention_core};
  g.m = m;
  g.n = n;
  g.k = k;
  g.batch = batch;
  g.split = split;
  return g;
}

double SumGemms(const std::vector<Gemm>& gemms) {
  double sum = 0;
  for (const Gemm& g : gemms) sum += g.forward_flop_per_sample;
  return sum;
}

// Megatron's TP pattern around one sublayer (attention or MLP) of width h:
// no SP: all-reduce after the row-parallel GEMM (forward) and before the column-parallel one
// (backward); SP: all-gather before, reduce-scatter after, and their conjugates in the backward.
// The backward all-reduce (SP: reduce-scatter) reduces the column-parallel input gradient:
// `async_backward` unless the sublayer is MoE (LayerCollective::async_backward).
// `input_linear` and `output_linear`: the sublayer's Transformer Engine linears on the column-parallel
// (input) and row-parallel (output) side, kNone where a side's collectives are not userbuffers overlaps
// (LayerCollective::userbuffers); an FC2 output side marks its forward calls as FC2's
// (LayerCollective::fc2_forward_count). `input_bytes` is what the column-parallel side gathers (forward) and reduces
// (backward); `output_bytes` what the row-parallel side reduces (forward) and gathers (backward): both b s h but for
// MLA, which gathers its latents.
void AddSublayerTpCollectives(LayerCost& layer, double input_bytes, double output_bytes, bool async_backward,
                              TeLinear input_linear, TeLinear output_linear) {
  constexpr CollectiveGroup kTp = CollectiveGroup::kTensor;
  const bool in_ub = input_linear != TeLinear::kNone, out_ub = output_linear != TeLinear::kNone;
  auto add = [&](std::vector<LayerCollective>& to, CollectiveOp op, double bytes, int32_t fwd, int32_t bwd, bool async,
                 bool userbuffers) {
    to.push_back({op, kTp, bytes, fwd, bwd, async, userbuffers, output_linear == TeLinear::kFc2 ? fwd : 0});
  };
  if (input_bytes == output_bytes && in_ub == out_ub) {
    const double bytes = input_bytes;
    add(layer.collectives, CollectiveOp::kAllReduce, bytes, 1, 1, async_backward, out_ub);
    add(layer.collectives_seq_par, CollectiveOp::kAllGather, bytes, 1, 1, false, out_ub);
    add(layer.collectives_seq_par, CollectiveOp::kReduceScatter, bytes, 1, 1, async_backward, out_ub);
    return;
  }
  add(layer.collectives, CollectiveOp::kAllReduce, output_bytes, 1, 0, false, out_ub);
  add(layer.collectives, CollectiveOp::kAllReduce, input_bytes, 0, 1, async_backward, in_ub);
  add(layer.collectives_seq_par, CollectiveOp::kAllGather, input_bytes, 1, 0, false, in_ub);
  add(layer.collectives_seq_par, CollectiveOp::kAllGather, output_bytes, 0, 1, false, out_ub);
  add(layer.collectives_seq_par, CollectiveOp::kReduceScatter, output_bytes, 1, 0, false, out_ub);
  add(layer.collectives_seq_par, CollectiveOp::kReduceScatter, input_bytes, 0, 1, async_backward, in_ub);
}

// The routed experts' collectives around Megatron-LM's token dispatchers, for `bsh` bytes of hidden
// states per sample and `k` experts per token. A GPU routes its own tokens (1/TP of the replica's:
// Megatron runs MoE with TP > 1 only under sequence parallelism): the all-to-all dispatcher moves them
// over the EP group, then gathers them over the expert-TP group that shares the experts' weights, and
// after the experts reduce-scatters and returns them; the all-gather dispatcher gathers every token of
// the expert-TP x EP group and reduce-scatters the outputs over it (MoE parallel folding;
// docs/cost-model.md, "Experts"). The same list serves both passes' lists (with TP 1 there is nothing
// to split).
void AddRoutedExpertCollectives(LayerCost& layer, const spec::TransformerSpec& t, double bsh, double k) {
  auto add = [&](CollectiveOp op, CollectiveGroup group, double bytes, int32_t count, bool gathered) {
    LayerCollective c{op, group, bytes, count, count};
    c.times_group_size = gathered;  // a gather's output: every rank's tokens
    c.sequence_split = true;
    layer.collectives.push_back(c);
    layer.collectives_seq_par.push_back(c);
  };
  if (t.moe_allgather_dispatcher) {
    // Gather the tokens (forward; their gradients reduce-scattered in the backward), reduce-scatter the
    // experts' outputs (forward; their gradients gathered in the backward).
    add(CollectiveOp::kAllGather, CollectiveGroup::kExpertAndTensor, bsh, 1, true);
    add(CollectiveOp::kReduceScatter, CollectiveGroup::kExpertAndTensor, bsh, 1, true);
    return;
  }
  // Dispatch and combine, each way: every token's hidden state goes to its k experts and back.
  add(CollectiveOp::kAllToAll, CollectiveGroup::kExpert, k * bsh, 2, false);
  add(CollectiveOp::kAllGather, CollectiveGroup::kExpertTensor, k * bsh, 1, true);
  add(CollectiveOp::kReduceScatter, CollectiveGroup::kExpertTensor, k * bsh, 1, true);
}

void MergeCollectives(std::vector<LayerCollective>& into, const std::vector<LayerCollective>& from) {
  for (const LayerCollective& c : from) {
    bool merged = false;
    for (LayerCollective& existing : into) {
      if (existing.op == c.op && existing.group == c.group && existing.bytes_per_sample == c.bytes_per_sample &&
          existing.async_backward == c.async_backward && existing.userbuffers == c.userbuffers &&
          existing.times_group_size == c.times_group_size && existing.sequence_split == c.sequence_split) {
        existing.forward_count += c.forward_count;
        existing.fc2_forward_count += c.fc2_forward_count;
        existing.backward_count += c.backward_count;
        merged = true;
        break;
      }
    }
    if (!merged) into.push_back(c);
  }
}

// Eager PyTorch's RMSNorm of torchtitan (norms.py: x.float(), pow, mean, + eps, rsqrt, product,
// type_as, times the weight), against the one fused kernel (read, write) the traffic already counts:
// (B + 4) + 8 + 4 + 8 + (4 + B) + 2B bytes an element, 28 + 2B more, in seven more kernels (the
// per-token eps and rsqrt move next to nothing).
void AddEagerNorm(LayerCost& layer, const Shape& x) {
  layer.eager_bytes_replicated_per_sample += (28 + 2 * x.B) * x.s * x.h;
  layer.eager_kernels += 7;
}

// The attention sublayer's eager ops: its RMSNorm, and RoPE on Q and K (`rotated_width` channels a
// token; model.py apply_rotary_emb: float(), the complex product, type_as: (B + 4) + 8 + (4 + B) bytes
// an element, three kernels each), which the fused kernels' traffic does not count at all.
void AddEagerAttentionOps(LayerCost& layer, const Shape& x, double rotated_width) {
  AddEagerNorm(layer, x);
  if (rotated_width <= 0) return;
  layer.eager_bytes_sharded_per_sample += (16 + 2 * x.B) * x.s * rotated_width;
  layer.eager_kernels += 6;
}

// Megatron-LM's fused bias-dropout-add (model/transformer.py, bias_dropout_add_fused_train, a
// torch.jit.script function that initialize.py's _set_jit_fusion_options hands to nvFuser, at 2755bcb
// of June 2022): one kernel reads the sublayer's output and the residual and writes the sum and the
// dropout mask (one byte an element); x + bias and the dropped-out tensor never reach memory.
constexpr double FusedBiasDropoutAddBytes(double bytes_per_element) { return 3 * bytes_per_element + 1; }

// Megatron-LM v1's bias-dropout-add without --bias-dropout-fusion (model/transformer.py,
// get_bias_dropout_add: dropout(x + bias) + residual, three eager ops): bias add (read, write), dropout
// (read, write, mask), residual add (two reads, one write); against the fused kernel's passes, the
// bias add's read and write and the dropout output's write and read back of the sublayer's output
// (`elements`), in two more kernels.
void AddUnfusedBiasDropoutAdd(LayerCost& layer, double bytes_per_element, double elements) {
  layer.unfused.bias_dropout_add += {.bytes_replicated_per_sample = 4 * bytes_per_element * elements, .kernels = 2};
}

// Megatron-Core's qk_layernorm (Transformer.qk_layernorm): a LayerNorm of head_dim channels over each head's Q
// and each KV head's K (attention.py, get_query_key_value_tensors), one fused kernel each (read, write), on the
// heads of the rank's TP shard; its input kept for the backward; scale and bias of head_dim each per norm,
// every TP rank holding them whole.
void AddQkLayerNorm(LayerCost& layer, const Shape& x) {
  const double width = x.q_h + x.kv_h;  // Q's and K's channels a token, over the heads
  layer.memory_bytes_sharded_per_sample += 2 * x.B * x.s * width;
  layer.memory_kernels += 2;
  layer.activation.tp_sharded += x.B * x.s * width;
  const double params = 2 * 2 * x.d;  // two norms, a scale and a bias of head_dim each
  layer.param_count += static_cast<uint64_t>(params);
  layer.tp_replicated_param_count += static_cast<uint64_t>(params);
}

}  // namespace

LayerCost EmbeddingLayer(const spec::TransformerSpec& t, int element_bytes) {
  const Shape x = ShapeOf(t, element_bytes);
  LayerCost layer;
  layer.name = "embedding";
  layer.kind = LayerKind::kEmbedding;
  layer.recomputable = false;
  layer.param_count = static_cast<uint64_t>(x.vocab * x.h);
  // Lookup (read the rows, write the output) on the vocabulary shard, then dropout on the full width.
  layer.memory_bytes_sharded_per_sample = 2 * x.B * x.s * x.h;
  layer.memory_bytes_replicated_per_sample = (2 * x.B + 1) * x.s * x.h;
  layer.activation.tp_replicated = x.s * x.h;  // dropout mask (Korthikanti: sbh p / t with SP)
  layer.memory_kernels = 2;                    // lookup, dropout
  layer.activation.layer_input = 4 * x.s;      // token ids
  layer.output_bytes_per_sample = x.B * x.s * x.h;
  // Vocabulary-parallel lookup: partial rows summed over the TP group.
  const double bytes = x.B * x.s * x.h;
  layer.collectives.push_back({CollectiveOp::kAllReduce, CollectiveGroup::kTensor, bytes, 1, 0});
  layer.collectives_seq_par.push_back({CollectiveOp::kReduceScatter, CollectiveGroup::kTensor, bytes, 1, 0});
  layer.collectives_seq_par.push_back({CollectiveOp::kAllGather, CollectiveGroup::kTensor, bytes, 0, 1});
  return layer;
}

// Marks the sublayer's Transformer Engine linears (the dense column- and row-parallel GEMMs that run
// in FP8 when the model does) as `columns` and `rows` for the userbuffers overlap.
void MarkTeLinears(LayerCost& layer, TeLinear columns, TeLinear rows) {
  for (Gemm& g : layer.gemms) {
    if (g.attention_core || g.per_expert || !g.fp8) continue;
    if (g.split == TpSplit::kColumns) g.te_linear = columns;
    if (g.split == TpSplit::kRows) g.te_linear = rows;
  }
}

// The projections that feed the attention core, pushed onto `layer`, and the widths (over all heads)
// they leave: Q's and K's (the scores' depth), V's and the attention output's, K's and V's as kept.
struct Projections {
  double qk = 0, v = 0;           // per-head widths summed over the heads
  double kept_k = 0, kept_v = 0;  // K and V as stored (GQA: the KV heads only)
  double params = 0;              // weights and biases of the input projections
  double replicated_params = 0;   // of which every TP rank holds whole (MLA's down projections)
  double latent = 0;              // MLA's low-rank latents per token, kept for the backward
  double gathered = 0;            // per token, what SP gathers for the column-parallel projections
};

Projections InputProjections(const spec::TransformerSpec& t, const Shape& x, LayerCost& layer) {
  const double s = x.s, h = x.h, a = x.a;
  if (!t.mla) {
    layer.gemms.push_back(MakeGemm("qkv", s, x.q_h + 2 * x.kv_h, h, 1, TpSplit::kColumns));
    layer.gemms.back().linears = 3;                                        // wq, wk, wv
    layer.gemms.back().op_sac_recomputed = x.kv_h / (x.q_h + 2 * x.kv_h);  // wk, the second matmul
    return {x.q_h, x.q_h, x.kv_h, x.kv_h, h * (x.q_h + 2 * x.kv_h) + (x.q_h + 2 * x.kv_h), 0, 0, h};
  }
  // Multi-latent attention (Megatron-core's MLASelfAttention): the down projections run whole on every
  // TP rank, the up projections split the heads.
  const spec::MlaSpec& m = *t.mla;
  const double nope = m.qk_head_dim, pos = m.qk_pos_emb_head_dim, v = m.v_head_dim;
  const double q_lora = m.q_lora_rank, kv_lora = m.kv_lora_rank;
  // Under SP the down projections run on each rank's tokens and their latents are gathered (the hidden
  // state itself for Q without a latent).
  Projections p{a * (nope + pos), a * v, a * (nope + pos), a * v, 0, 0, kv_lora + pos, kv_lora + pos};
  if (q_lora > 0) {
    layer.gemms.push_back(MakeGemm("q_down", s, q_lora, h, 1, TpSplit::kNone));
    layer.gemms.push_back(MakeGemm("q_up", s, a * (nope + pos), q_lora, 1, TpSplit::kColumns));
    p.params += h * q_lora + q_lora + q_lora * a * (nope + pos);  // with the latent's norm
    p.replicated_params += h * q_lora + q_lora;
    p.latent += q_lora;
    p.gathered += q_lora;
  } else {
    layer.gemms.push_back(MakeGemm("q", s, a * (nope + pos), h, 1, TpSplit::kColumns));
    p.params += h * a * (nope + pos);
    p.gathered += h;
  }
  layer.gemms.push_back(MakeGemm("kv_down", s, kv_lora + pos, h, 1, TpSplit::kNone));
  layer.gemms.push_back(MakeGemm("kv_up", s, a * (nope + v), kv_lora, 1, TpSplit::kColumns));
  p.params += h * (kv_lora + pos) + kv_lora + kv_lora * a * (nope + v);
  p.replicated_params += h * (kv_lora + pos) + kv_lora;
  return p;
}

LayerCost AttentionSublayer(const spec::TransformerSpec& t, int element_bytes, int index) {
  const Shape x = ShapeOf(t, element_bytes);
  LayerCost layer;
  layer.name = absl::StrCat("attention", index);
  layer.kind = LayerKind::kAttention;
  const double s = x.s, h = x.h, B = x.B;
  const bool flash = t.attention != spec::AttentionKernel::kStandard;
  const Projections p = InputProjections(t, x, layer);
  const double head_qk = p.qk / x.a, head_v = p.v / x.a;  // one head's widths
  if (flash) {
    // One fused kernel per head and sample: Q K^T and P V (2 s^2 (d_qk + d_v) FLOPs) with the scores in SRAM.
    layer.gemms.push_back(MakeGemm("flash_attn", s, s, head_qk + head_v, x.a, TpSplit::kBatch, false, true));
    layer.gemms.back().fused_attention = true;
    layer.gemms.back().mma_sync = t.attention == spec::AttentionKernel::kFlashTriton;
  } else {
    layer.gemms.push_back(MakeGemm("scores", s, s, head_qk, x.a, TpSplit::kBatch, false, true));  // Q K^T
    layer.gemms.push_back(MakeGemm("attn_v", s, head_v, s, x.a, TpSplit::kBatch, false, true));   // P V
  }
  layer.gemms.push_back(MakeGemm("proj", s, h, p.v, 1, TpSplit::kRows));
  layer.gemms.back().op_sac_recomputed = t.mla ? 0 : 1;  // wo, the fourth matmul
  // Transformer Engine overlaps the QKV and projection linears; MLA's up projections are not among the
  // layers its userbuffers serve (initialize_ub), so they run whole and their gathers and reductions
  // stay exposed.
  const TeLinear input_linear = t.mla ? TeLinear::kNone : TeLinear::kQkv;
  MarkTeLinears(layer, input_linear, TeLinear::kProj);
  layer.forward_flop_per_sample = SumGemms(layer.gemms);
  layer.backward_flop_per_sample = 2 * layer.forward_flop_per_sample;
  // Weights and biases of the input projections and the output projection, LayerNorm scale and bias.
  layer.param_count = static_cast<uint64_t>(p.params + p.v * h + h + 2 * h);
  layer.tp_replicated_param_count = static_cast<uint64_t>(p.replicated_params);
  // LayerNorm (read, write) and the fused bias-dropout-add after the projection on the full width;
  // softmax (read, write) and attention dropout (read, write, mask) on the scores, unless the model
  // runs none (Transformer.no_attention_dropout).
  const bool dropout = !flash && t.attention_dropout;
  layer.memory_bytes_replicated_per_sample = (2 * B + FusedBiasDropoutAddBytes(B)) * s * h;
  layer.memory_bytes_attention_core_per_sample = flash ? 0 : (2 * B + (dropout ? 2 * B + 1 : 0)) * x.a * s * s;
  layer.norm_input_bytes_per_sample = B * s * h;
  layer.memory_bytes_sharded_per_sample = layer.memory_bytes_attention_core_per_sample;
  // LayerNorm, context-layer copy, bias-dropout-add; unfused attention adds softmax and its dropout.
  layer.memory_kernels = flash ? 3 : (dropout ? 5 : 4);
  AddEagerAttentionOps(layer, x, t.mla ? 0 : x.q_h + x.kv_h);
  // Megatron-LM v1 without --scaled-upper-triang-masked-softmax-fusion (model/fused_softmax.py, its
  // fallback): the causal mask by masked_fill_ on the FP16 scores in place (read, write), one kernel
  // before the softmax the traffic counts. FlashAttention never writes the scores.
  if (!flash) {
    const double scores = B * x.a * s * s;
    layer.unfused.masked_softmax += {.bytes_sharded_per_sample = 2 * scores, .kernels = 1};
    // In place on a view of the scores (FP32 without a scale): autograd's CopySlices (copy_ into a new
    // base, clone of the slice, masked_fill's clone and masked_fill_, copy_ back: 10 passes, 5 kernels;
    // torch/csrc/autograd/functions/tensor.cpp, CopySlices::apply_impl; ATen's masked_fill) and the
    // view's AsStridedBackward0 (new_zeros, copy_: 3 passes, 2 kernels; FunctionsManual.cpp,
    // as_strided_backward), where the 2x rule gives masked_fill's 4 passes in 2 kernels.
    layer.unfused.masked_fill_on_view +=
        {.backward_bytes_sharded_per_sample = (10 + 3 - 4) * scores, .backward_kernels = 5 + 2 - 2};
  }
  AddUnfusedBiasDropoutAdd(layer, B, s * h);
  // Korthikanti et al. 2022: LayerNorm input 2sh, QKV input 2sh, dropout mask sh (replicated; MLA's
  // latents too); Q 2sh, K and V 2sh each (scaled by GQA), projection input 2sh (sharded; a head_dim
  // apart from h / a, or MLA's widths, scale them); 5as^2 attention core.
  layer.activation.tp_replicated = (2 * B + 1) * s * h + B * s * p.latent;
  layer.activation.tp_sharded = B * s * (p.qk + p.kept_k + p.kept_v + p.v);
  // FlashAttention keeps only the softmax statistics (FP32 per head and token); without dropout the
  // probabilities alone.
  layer.activation.attention_core = flash ? 4 * x.a * s : (dropout ? 2 * B + 1 : B) * x.a * s * s;
  layer.activation.layer_input = B * s * h;
  layer.output_bytes_per_sample = B * s * h;
  layer.kv_bytes_per_sample = B * s * (p.kept_k + p.kept_v);
  layer.repeated_kv_bytes_per_sample = t.mla ? layer.kv_bytes_per_sample : B * s * 2 * x.q_h;
  if (t.qk_layernorm && !t.mla) AddQkLayerNorm(layer, x);
  layer.query_bytes_per_sample = B * s * p.qk;
  layer.context_bytes_per_sample = B * s * p.v;
  // MLA gathers (and in the backward reduces) its latents, which the up projections take, not h.
  AddSublayerTpCollectives(layer, B * s * p.gathered, B * s * h, /*async_backward=*/true, input_linear,
                           TeLinear::kProj);
  return layer;
}

LayerCost MlpSublayer(const spec::TransformerSpec& t, int element_bytes, int index) {
  const Shape x = ShapeOf(t, element_bytes);
  LayerCost layer;
  layer.name = absl::StrCat("mlp", index);
  layer.kind = LayerKind::kMlp;
  const double s = x.s, h = x.h, B = x.B;
  const bool moe = t.IsMoeBlock(static_cast<uint32_t>(index));  // dense blocks of an MoE model use ffn
  const double f = moe ? x.expert_ffn : x.ffn;
  const double k = moe ? x.top_k : 1;            // experts each token visits (1 for a dense MLP)
  const double up = x.gated ? 2 : 1;             // gate and up projections of a gated MLP
  const double shared = moe ? x.shared_ffn : 0;  // shared experts: a dense MLP beside the routed ones
  // Per expert (or the dense MLP): up-projection(s) and down-projection weights and biases.
  auto mlp_params = [&](double width) { return up * h * width + up * width + width * h + h; };
  if (moe) {
    layer.gemms.push_back(MakeGemm("router", s, x.experts, h, 1, TpSplit::kNone));
    layer.gemms.back().fp8 = false;
  }
  layer.gemms.push_back(MakeGemm("fc1", s * k, f * up, h, 1, TpSplit::kColumns, moe));
  layer.gemms.push_back(MakeGemm("fc2", s * k, h, f, 1, TpSplit::kRows, moe));
  for (Gemm& g : layer.gemms) g.grouped = g.per_expert && t.moe_grouped_gemm;
  if (!moe) {
    // torchtitan's w1, w3 (gated) and w2: the fifth to seventh matmuls, w3 (or an ungated w2) recomputed.
    layer.gemms[0].linears = up;
    (x.gated ? layer.gemms[0] : layer.gemms[1]).op_sac_recomputed = x.gated ? 0.5 : 1;
  }
  if (shared > 0) {
    layer.gemms.push_back(MakeGemm("shared_fc1", s, shared * up, h, 1, TpSplit::kColumns));
    layer.gemms.push_back(MakeGemm("shared_fc2", s, h, shared, 1, TpSplit::kRows));
  }
  MarkTeLinears(layer, TeLinear::kFc1, TeLinear::kFc2);
  layer.memory_kernels = shared > 0 ? 4 : 3;  // LayerNorm, bias-activation (each MLP), bias-dropout-add
  layer.forward_flop_per_sample = SumGemms(layer.gemms);
  layer.backward_flop_per_sample = 2 * layer.forward_flop_per_sample;
  const double expert_params = moe ? x.experts * mlp_params(f) : 0;
  const double dense_params = moe ? h * x.experts + (shared > 0 ? mlp_params(shared) : 0) : mlp_params(f);
  layer.param_count = static_cast<uint64_t>(expert_params + dense_params + 2 * h);
  layer.expert_param_count = static_cast<uint64_t>(expert_params);
  layer.tp_replicated_param_count = static_cast<uint64_t>(moe ? h * x.experts : 0);  // the router
  // LayerNorm and the fused bias-dropout-add on the full width; the activation function on the hidden
  // width (GeLU: read, write; gated: two reads, one write); MoE also permutes tokens in and out.
  const double act = x.gated ? 3 : 2;
  layer.memory_bytes_replicated_per_sample = (2 * B + FusedBiasDropoutAddBytes(B)) * s * h;
  layer.memory_bytes_sharded_per_sample = (k * f + shared) * act * B * s + (moe ? 2 * 2 * B * k * s * h : 0);
  layer.norm_input_bytes_per_sample = B * s * h;
  // The all-to-all dispatcher's sort of the received copies by local expert and back (read, write each).
  if (moe && !t.moe_allgather_dispatcher) layer.memory_bytes_dispatched_per_sample = 2 * 2 * B * k * s * h;
  AddEagerNorm(layer, x);
  // Megatron-LM v1 without --bias-gelu-fusion (model/transformer.py, ParallelMLP.forward:
  // activation_func(intermediate_parallel + bias_parallel)): the bias added to fc1's output by a kernel
  // of its own (read, write) before the activation; then its bias-dropout-add.
  layer.unfused.bias_activation += {.bytes_sharded_per_sample = 2 * B * s * (k * f + shared) * up, .kernels = 1};
  AddUnfusedBiasDropoutAdd(layer, B, s * h);
  if (x.gated) {
    layer.eager_bytes_sharded_per_sample += 2 * B * s * (k * f + shared);  // SiLU (r, w) before the product
    layer.eager_kernels += 1;
  }
  // Korthikanti: LayerNorm input 2sh, fc1 input 2sh, dropout mask sh (replicated); GeLU input and
  // output 2sf each (sharded; gated: gate, up and their product). MoE: per visited expert and for the
  // shared experts, plus the dispatched tokens.
  layer.activation.tp_replicated = (2 * B + 1) * s * h;
  layer.activation.tp_sharded = (k * f + shared) * act * B * s;
  layer.activation.expert_tokens = moe ? B * k * s * h : 0;
  layer.activation.layer_input = B * s * h;
  layer.output_bytes_per_sample = B * s * h;
  if (!moe) {
    AddSublayerTpCollectives(layer, B * s * h, B * s * h, /*async_backward=*/true, TeLinear::kFc1, TeLinear::kFc2);
  } else {
    AddRoutedExpertCollectives(layer, t, B * s * h, k);
    // Shared experts are an MLP of their own, with their own gather and reduce-scatter (Megatron-core's
    // SharedExpertMLP).
    if (shared > 0) {
      AddSublayerTpCollectives(layer, B * s * h, B * s * h, /*async_backward=*/true, TeLinear::kFc1, TeLinear::kFc2);
    }
  }
  return layer;
}

LayerCost HeadLayer(const spec::TransformerSpec& t, int element_bytes) {
  const Shape x = ShapeOf(t, element_bytes);
  LayerCost layer;
  layer.name = "head";
  layer.kind = LayerKind::kHead;
  layer.recomputable = false;
  const double s = x.s, h = x.h, B = x.B, v = x.vocab;
  layer.gemms = {MakeGemm("lm_head", s, v, h, 1, TpSplit::kColumns)};
  layer.gemms.back().fp8 = false;  // Megatron's output layer, not a Transformer Engine module
  // Final LayerNorm; vocabulary-parallel cross-entropy (max, subtract, exp, sum, log, target pick).
  layer.memory_kernels = 8;
  layer.forward_flop_per_sample = SumGemms(layer.gemms);
  layer.backward_flop_per_sample = 2 * layer.forward_flop_per_sample;
  const uint64_t vocab_matrix = static_cast<uint64_t>(v * h);
  layer.tied_with_embedding = t.tied_embeddings;
  layer.tied_param_count = t.tied_embeddings ? vocab_matrix : 0;
  layer.param_count = static_cast<uint64_t>(2 * h) + (t.tied_embeddings ? 0 : vocab_matrix);
  // Final LayerNorm on the full width; softmax cross-entropy over FP32 logits on the vocabulary shard.
  layer.memory_bytes_replicated_per_sample = 2 * B * s * h;
  layer.memory_bytes_sharded_per_sample = 2 * 4 * s * v;
  layer.norm_input_bytes_per_sample = B * s * h;
  // Megatron-LM v1.1.5 with GPT2ModelPipe (Plan.fp32_logits_cross_entropy): the cast of the FP16 logits
  // (2 read, 4 written; its backward 4 and 2), then max (4), sub_ (8), exp (8), sum (4), div_ (8): 38 s v
  // forward; the backward's mul_ (8) and the cast back (6): 14 s v, where the fused loss counts 16.
  layer.fp32_loss_forward_bytes_per_sample = (6 + 32) * s * v;
  layer.fp32_loss_backward_bytes_per_sample = (6 + 8) * s * v;
  layer.fp32_loss_kernels = 1;
  // Korthikanti Sec. 4.3: 4sbh(1 + v/h) = LayerNorm input 2sh + head input 2sh + FP32 logits 4sv.
  layer.activation.tp_replicated = 2 * B * s * h;
  layer.activation.tp_sharded = 4 * s * v;
  layer.activation.layer_input = B * s * h;
  layer.output_bytes_per_sample = 4;  // the loss
  const double bytes = B * s * h;
  // Vocabulary-parallel cross-entropy: max, target logit and sum of exponentials, FP32 per token.
  LayerCollective ce{CollectiveOp::kAllReduce, CollectiveGroup::kTensor, 4 * s, 3, 0};
  ce.direct_call = true;  // torch.distributed.all_reduce in mpu/cross_entropy.py
  // The head's input is copied to every TP rank (identity forward, all-reduce backward); with SP it
  // is gathered forward and reduce-scattered backward.
  layer.collectives.push_back({CollectiveOp::kAllReduce, CollectiveGroup::kTensor, bytes, 0, 1, true});
  layer.collectives.push_back(ce);
  layer.collectives_seq_par.push_back({CollectiveOp::kAllGather, CollectiveGroup::kTensor, bytes, 1, 0});
  layer.collectives_seq_par.push_back({CollectiveOp::kReduceScatter, CollectiveGroup::kTensor, bytes, 0, 1, true});
  layer.collectives_seq_par.push_back(ce);
  return layer;
}

// One multi-token prediction module (DeepSeek-V3; Megatron-core's MultiTokenPredictionLayer; every depth
// costs the same): the RMSNorms of the hidden state from the depth before and of the next token's embedding,
// their concatenation projected back to h (eh_proj, column-parallel, its output gathered over TP),
// one transformer block built like the model's last, and the output head shared with the model, with
// its own loss. The embedding and the head are the model's: they add work, not parameters.
LayerCost MtpModule(const spec::TransformerSpec& t, int element_bytes) {
  const Shape x = ShapeOf(t, element_bytes);
  const double s = x.s, h = x.h, B = x.B;
  LayerCost proj;
  proj.name = "mtp";
  proj.kind = LayerKind::kHead;
  proj.recomputable = false;
  proj.gemms = {MakeGemm("mtp_proj", s, h, 2 * h, 1, TpSplit::kColumns)};
  proj.forward_flop_per_sample = SumGemms(proj.gemms);
  proj.backward_flop_per_sample = 2 * proj.forward_flop_per_sample;
  proj.param_count = static_cast<uint64_t>(2 * h * h + 2 * h);  // eh_proj, enorm and hnorm
  // The shifted tokens' embedding lookup (read, write), the two RMSNorms (read, write each).
  proj.memory_bytes_replicated_per_sample = 3 * 2 * B * s * h;
  proj.memory_kernels = 3;
  // The norms' inputs, and eh_proj's input (the two normalised states side by side).
  proj.activation.tp_replicated = 2 * B * s * h + 2 * B * s * h;
  proj.activation.layer_input = B * s * h;
  proj.output_bytes_per_sample = B * s * h;
  // The lookup is the model's vocabulary-parallel embedding: partial rows summed over TP (with SP
  // reduce-scattered, gathered back in the backward). eh_proj's output is gathered over TP (a split
  // backward); its input, like any column-parallel linear's, is copied forward and its gradient
  // all-reduced backward (with SP gathered along the sequence and reduce-scattered back, and the
  // gathered output scattered to the sequence again, gathered in the backward).
  const double bsh = B * s * h;
  proj.collectives.push_back({CollectiveOp::kAllReduce, CollectiveGroup::kTensor, bsh, 1, 0});
  proj.collectives.push_back({CollectiveOp::kAllGather, CollectiveGroup::kTensor, bsh, 1, 0});
  proj.collectives.push_back({CollectiveOp::kAllReduce, CollectiveGroup::kTensor, 2 * bsh, 0, 1, true});
  proj.collectives_seq_par.push_back({CollectiveOp::kReduceScatter, CollectiveGroup::kTensor, bsh, 1, 0});
  proj.collectives_seq_par.push_back({CollectiveOp::kAllGather, CollectiveGroup::kTensor, bsh, 0, 1});
  proj.collectives_seq_par.push_back({CollectiveOp::kAllGather, CollectiveGroup::kTensor, bsh, 1, 1});
  proj.collectives_seq_par.push_back({CollectiveOp::kAllGather, CollectiveGroup::kTensor, 2 * bsh, 1, 0});
  proj.collectives_seq_par.push_back({CollectiveOp::kReduceScatter, CollectiveGroup::kTensor, 2 * bsh, 0, 1, true});
  const int last = static_cast<int>(t.num_layers) - 1;  // the block is built like the model's last
  const LayerCost block = MergeLayers(AttentionSublayer(t, element_bytes, last), MlpSublayer(t, element_bytes, last),
                                      LayerKind::kBlock, "block");
  LayerCost head = HeadLayer(t, element_bytes);
  head.param_count = static_cast<uint64_t>(h);  // its own final norm; the output matrix is the model's
  head.tied_with_embedding = false;
  head.tied_param_count = 0;
  return MergeLayers(MergeLayers(proj, block, LayerKind::kHead, proj.name), head, LayerKind::kHead, proj.name);
}

LayerCost MergeLayers(const LayerCost& first, const LayerCost& second, LayerKind kind, std::string name) {
  LayerCost m;
  m.name = std::move(name);
  m.kind = kind;
  m.recomputable = first.recomputable && second.recomputable;
  m.gemms = first.gemms;
  m.gemms.insert(m.gemms.end(), second.gemms.begin(), second.gemms.end());
  m.forward_flop_per_sample = first.forward_flop_per_sample + second.forward_flop_per_sample;
  m.backward_flop_per_sample = first.backward_flop_per_sample + second.backward_flop_per_sample;
  m.memory_bytes_replicated_per_sample =
      first.memory_bytes_replicated_per_sample + second.memory_bytes_replicated_per_sample;
  m.memory_bytes_sharded_per_sample = first.memory_bytes_sharded_per_sample + second.memory_bytes_sharded_per_sample;
  m.memory_bytes_attention_core_per_sample =
      first.memory_bytes_attention_core_per_sample + second.memory_bytes_attention_core_per_sample;
  m.memory_bytes_dispatched_per_sample =
      first.memory_bytes_dispatched_per_sample + second.memory_bytes_dispatched_per_sample;
  m.memory_kernels = first.memory_kernels + second.memory_kernels;
  m.norm_input_bytes_per_sample = first.norm_input_bytes_per_sample + second.norm_input_bytes_per_sample;
  m.eager_bytes_replicated_per_sample =
      first.eager_bytes_replicated_per_sample + second.eager_bytes_replicated_per_sample;
  m.eager_bytes_sharded_per_sample = first.eager_bytes_sharded_per_sample + second.eager_bytes_sharded_per_sample;
  m.eager_kernels = first.eager_kernels + second.eager_kernels;
  m.unfused = first.unfused;
  m.unfused += second.unfused;
  m.param_count = first.param_count + second.param_count;
  m.expert_param_count = first.expert_param_count + second.expert_param_count;
  m.tp_replicated_param_count = first.tp_replicated_param_count + second.tp_replicated_param_count;
  m.attention_core_recomputable = first.attention_core_recomputable || second.attention_core_recomputable;
  m.tied_with_embedding = first.tied_with_embedding || second.tied_with_embedding;
  m.tied_param_count = first.tied_param_count + second.tied_param_count;
  m.activation.tp_replicated = first.activation.tp_replicated + second.activation.tp_replicated;
  m.activation.tp_sharded = first.activation.tp_sharded + second.activation.tp_sharded;
  m.activation.expert_tokens = first.activation.expert_tokens + second.activation.expert_tokens;
  m.activation.attention_core = first.activation.attention_core + second.activation.attention_core;
  m.activation.layer_input = first.activation.layer_input;  // the merged layer's input
  m.output_bytes_per_sample = second.output_bytes_per_sample;
  m.kv_bytes_per_sample = first.kv_bytes_per_sample + second.kv_bytes_per_sample;
  m.repeated_kv_bytes_per_sample = first.repeated_kv_bytes_per_sample + second.repeated_kv_bytes_per_sample;
  m.query_bytes_per_sample = first.query_bytes_per_sample + second.query_bytes_per_sample;
  m.context_bytes_per_sample = first.context_bytes_per_sample + second.context_bytes_per_sample;
  m.collectives = first.collectives;
  MergeCollectives(m.collectives, second.collectives);
  m.collectives_seq_par = first.collectives_seq_par;
  MergeCollectives(m.collectives_seq_par, second.collectives_seq_par);
  return m;
}

std::vector<LayerCost> BuildTransformerLayers(const spec::TransformerSpec& t, int element_bytes) {
  std::vector<LayerCost> layers;
  const bool sublayers = t.granularity == spec::Granularity::kSublayer;
  layers.reserve(sublayers ? 2 * t.num_layers + 2 : t.num_layers + 2);
  layers.push_back(EmbeddingLayer(t, element_bytes));
  for (uint32_t i = 0; i < t.num_layers; ++i) {
    LayerCost attention = AttentionSublayer(t, element_bytes, static_cast<int>(i));
    LayerCost mlp = MlpSublayer(t, element_bytes, static_cast<int>(i));
    if (sublayers) {
      layers.push_back(std::move(attention));
      layers.push_back(std::move(mlp));
    } else {
      layers.push_back(MergeLayers(attention, mlp, LayerKind::kBlock, absl::StrCat("block", i)));
    }
  }
  // The multi-token prediction modules run after the head, on its stage (Megatron places them on the
  // last pipeline stage): one layer with it. Their embedding lookups need the embedding matrix there,
  // which an untied model's last stage then holds a copy of, as it does a tied model's.
  LayerCost head = HeadLayer(t, element_bytes);
  if (t.mtp_num_layers > 0) {
    const LayerCost module = MtpModule(t, element_bytes);
    for (uint32_t d = 0; d < t.mtp_num_layers; ++d) head = MergeLayers(head, module, LayerKind::kHead, "head");
  }
  head.attention_core_recomputable = t.mtp_num_layers > 0;
  if (t.mtp_num_layers > 0 && !t.tied_embeddings) {
    head.tied_with_embedding = true;
    head.tied_param_count =
        static_cast<uint64_t>(static_cast<double>(t.vocab_size) * static_cast<double>(t.hidden_size));
  }
  layers.push_back(std::move(head));
  return layers;
}

std::vector<LayerCost> BuildLayerListLayers(const std::vector<spec::LayerSpec>& list) {
  std::vector<LayerCost> layers;
  layers.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const spec::LayerSpec& in = list[i];
    LayerCost layer;
    layer.name = in.name;
    layer.kind = LayerKind::kCustom;
    const double forward = in.forward_flop_per_sample;
    layer.gemms = {{"layer", forward, false, false}};
    layer.forward_flop_per_sample = forward;
    layer.backward_flop_per_sample = in.backward_flop_per_sample;
    layer.param_count = in.param_count;
    layer.activation.tp_sharded = in.activation_bytes_per_sample.value();
    layer.output_bytes_per_sample = in.output_bytes_per_sample.value();
    // Full recompute keeps the layer's input: the previous layer's output (its own for the first).
    const Bytes input = i > 0 ? list[i - 1].output_bytes_per_sample : in.output_bytes_per_sample;
    layer.activation.layer_input = input.value();
    layers.push_back(std::move(layer));
  }
  return layers;
}

}  // namespace hetsim::workload
