// The layer sequence and its FLOPs and parameters against hand-computed figures and Megatron's
// published formulas (Narayanan et al. 2021), and the layer count shared with proto/.
#include <catch2/catch.hpp>

#include "proto/validate_model.h"

#include <string>

#include "proto/layer_count.h"
#include "sim/workload/model_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/proto/model_shapes.h"

namespace {

using namespace hetsim::workload;
using hetsim::CollectiveOp;

hetsim::v1::Model Gpt(uint32_t layers, int64_t hidden, uint32_t heads) {
  hetsim::v1::Model m;
  m.set_name("gpt");
  auto* t = hetsim::testing::SetTransformer(
      m, {.layers = layers, .hidden = hidden, .heads = heads, .seq = 2048, .vocab = 51200});
  t->set_tied_embeddings(true);
  return m;
}

ModelCost Make(const hetsim::v1::Model& m) {
  auto cost = hetsim::testing::ModelCostOf(m, "model.pbtxt");
  REQUIRE(cost.ok());
  return *std::move(cost);
}

std::string ErrorOf(const hetsim::v1::Model& m) {
  auto cost = hetsim::testing::ModelCostOf(m, "model.pbtxt");
  REQUIRE_FALSE(cost.ok());
  return std::string(cost.status().message());
}

}  // namespace

TEST_CASE("GPT-3 175B: parameters match Megatron's 12lh^2(1 + 13/12h + (V+s)/12lh)", "[workload][model]") {
  const ModelCost gpt3 = Make(Gpt(96, 12288, 96));
  const double l = 96, h = 12288, V = 51200, s = 2048;
  const double megatron = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
  // The formula counts a learned position table (s*h) we do not model and omits the final LayerNorm.
  CHECK(static_cast<double>(gpt3.TotalParamCount()) + s * h - 2 * h == Approx(megatron).epsilon(1e-15));
  CHECK(gpt3.TotalParamCount() == 174'590'681'088ULL);
  // Per block: 12h^2 + 13h.
  CHECK(gpt3.layer(1).param_count == 12ULL * 12288 * 12288 + 13ULL * 12288);
  CHECK(gpt3.num_layers() == 98);
}

TEST_CASE("GPT 39.1B of Narayanan et al. Table 1", "[workload][model]") {
  const ModelCost gpt39 = Make(Gpt(48, 8192, 64));
  const double params = static_cast<double>(gpt39.TotalParamCount()) + 2048.0 * 8192;
  CHECK(params / 1e9 == Approx(39.1).margin(0.05));
}

TEST_CASE("FLOPs per sample: 24sh^2 + 4s^2h per block, Megatron's 72/96 B s l h^2 formulas", "[workload][model]") {
  const ModelCost gpt3 = Make(Gpt(96, 12288, 96));
  const double l = 96, h = 12288, V = 51200, s = 2048;
  CHECK(gpt3.layer(0).forward_flop_per_sample == 0);  // embedding lookup
  CHECK(gpt3.layer(1).forward_flop_per_sample == 24 * s * h * h + 4 * s * s * h);
  CHECK(gpt3.layer(1).backward_flop_per_sample == 2 * gpt3.layer(1).forward_flop_per_sample);
  CHECK(gpt3.layer(97).forward_flop_per_sample == 2 * s * h * V);
  // Model FLOPs (MFU): 72 B s l h^2 (1 + s/6h + V/12lh); with full recompute 96 B s l h^2 (1 + s/6h + V/16lh).
  CHECK(gpt3.ModelFlopPerSample() == Approx(72 * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))).epsilon(1e-13));
  CHECK(gpt3.HardwareFlopPerSample(0, 98, hetsim::spec::Recompute::kFull) ==
        Approx(96 * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))).epsilon(1e-13));
  // Selective recompute runs the attention core (4 s^2 h per block) again.
  CHECK(gpt3.HardwareFlopPerSample(0, 98, hetsim::spec::Recompute::kSelective) ==
        Approx(gpt3.ModelFlopPerSample() + l * 4 * s * s * h).epsilon(1e-13));
}

TEST_CASE("SUBLAYER granularity splits blocks into attention and MLP with the same totals", "[workload][model]") {
  hetsim::v1::Model m = Gpt(4, 1024, 16);
  const ModelCost block = Make(m);
  m.mutable_transformer()->set_granularity(hetsim::v1::SUBLAYER);
  const ModelCost sub = Make(m);
  REQUIRE(sub.num_layers() == 2 * 4 + 2);
  CHECK(sub.layer(1).kind == LayerKind::kAttention);
  CHECK(sub.layer(2).kind == LayerKind::kMlp);
  CHECK(sub.layer(1).forward_flop_per_sample + sub.layer(2).forward_flop_per_sample ==
        block.layer(1).forward_flop_per_sample);
  CHECK(sub.layer(1).param_count + sub.layer(2).param_count == block.layer(1).param_count);
  CHECK(sub.TotalParamCount() == block.TotalParamCount());
  CHECK(sub.ModelFlopPerSample() == Approx(block.ModelFlopPerSample()).epsilon(1e-15));
  CHECK(sub.layer(1).activation.total() + sub.layer(2).activation.total() == block.layer(1).activation.total());
}

TEST_CASE("GQA, gated MLP and untied head: LLaMA-2 70B has 68.98B parameters", "[workload][model]") {
  hetsim::v1::Model m;
  auto* t = m.mutable_transformer();
  t->set_num_layers(80);
  t->set_hidden_size(8192);
  t->set_num_attention_heads(64);
  t->set_num_kv_heads(8);
  t->set_ffn_hidden_size(28672);
  t->set_gated_mlp(true);
  t->set_seq_length(4096);
  t->set_vocab_size(32000);
  const ModelCost llama = Make(m);
  // We count biases and LayerNorm biases LLaMA does not have: 0.012% more.
  CHECK(static_cast<double>(llama.TotalParamCount()) == Approx(68'976'648'192.0).epsilon(2e-4));
  const double s = 4096, h = 8192, f = 28672;
  // QKV with 8 KV heads of 128: 2sh(h + 2*1024); gated MLP: three h x f GEMMs.
  CHECK(llama.layer(1).forward_flop_per_sample ==
        2 * s * h * (h + 2048) + 4 * s * s * h + 2 * s * h * h + 3 * 2 * s * h * f);
}

TEST_CASE("head_dim apart from hidden / heads: Qwen3-8B's 8.19B parameters and its attention widths",
          "[workload][model]") {
  // Qwen3-8B: 36 blocks of hidden 4096, 32 query heads and 8 KV heads of 128 channels, gated MLP 12288,
  // vocabulary 151,936 (untied). Hugging Face's count is 8.19B; 4096 / 32 = 128 as well, so the head
  // width here is set apart (Qwen3-30B-A3B-like: hidden 2048, 32 heads of 128) to check the widths.
  hetsim::v1::Model m;
  auto* t = m.mutable_transformer();
  t->set_num_layers(36);
  t->set_hidden_size(4096);
  t->set_num_attention_heads(32);
  t->set_num_kv_heads(8);
  t->set_head_dim(128);
  t->set_ffn_hidden_size(12288);
  t->set_gated_mlp(true);
  t->set_seq_length(4096);
  t->set_vocab_size(151936);
  // Biases and LayerNorm biases Qwen3 does not have (and its QK norms, which hetsim does not count).
  CHECK(static_cast<double>(Make(m).TotalParamCount()) == Approx(8.19e9).epsilon(0.01));

  t->set_hidden_size(2048);
  t->set_ffn_hidden_size(6144);
  const ModelCost wide = Make(m);
  const double s = 4096, h = 2048, q = 32 * 128, kv = 8 * 128, f = 6144;
  // QKV (h -> q + 2 kv), the attention core over 32 heads of 128, projection (q -> h), gated MLP.
  CHECK(wide.layer(1).forward_flop_per_sample ==
        2 * s * h * (q + 2 * kv) + 4 * s * s * q + 2 * s * q * h + 3 * 2 * s * h * f);
  const double attention_params = h * (q + 2 * kv) + (q + 2 * kv) + q * h + h + 2 * h;
  const double mlp_params = 2 * h * f + 2 * f + f * h + h + 2 * h;
  CHECK(static_cast<double>(wide.layer(1).param_count) == attention_params + mlp_params);
  CHECK(wide.layer(1).kv_bytes_per_sample == 2 * 2 * s * kv);  // K and V, BF16
  // Without head_dim the heads are 2048 / 32 = 64 wide.
  t->set_head_dim(0);
  CHECK(Make(m).layer(1).forward_flop_per_sample ==
        2 * s * h * (h + 2 * 8 * 64) + 4 * s * s * h + 2 * s * h * h + 3 * 2 * s * h * f);
}

TEST_CASE("MoE: top-k expert FLOPs, expert parameters, all-to-all", "[workload][model]") {
  hetsim::v1::Model m = Gpt(2, 1024, 16);
  auto* t = m.mutable_transformer();
  t->set_num_experts(8);
  t->set_moe_top_k(2);
  const ModelCost moe = Make(m);
  const ModelCost dense = Make(Gpt(2, 1024, 16));
  const double s = 2048, h = 1024;
  const double dense_mlp = 16 * s * h * h;
  CHECK(moe.layer(1).forward_flop_per_sample == dense.layer(1).forward_flop_per_sample + dense_mlp + 2 * s * h * 8);
  const uint64_t expert = 8ULL * (2 * 1024 * 4096 + 4096 + 1024);
  CHECK(moe.layer(1).expert_param_count == expert);
  CHECK(moe.layer(1).param_count == dense.layer(1).param_count - (2 * 1024 * 4096 + 4096 + 1024) + expert + 1024 * 8);
  bool found = false;
  for (const LayerCollective& c : moe.layer(1).collectives) {
    if (c.op == CollectiveOp::kAllToAll) {
      found = true;
      CHECK(c.group == CollectiveGroup::kExpert);
      CHECK(c.bytes_per_sample == 2 * 2 * s * h);
      CHECK(c.forward_count == 2);
      CHECK(c.backward_count == 2);
    }
  }
  CHECK(found);
}

TEST_CASE("MoE layouts: Qwen1.5-MoE-A2.7B's 14.3B parameters with its shared experts", "[workload][model]") {
  // 24 blocks of hidden 2048, 16 heads, 60 experts of gated FFN 1408 (top 4) and shared experts of
  // 5632 in every block, vocabulary 151,936 untied: Qwen's model card counts 14.3B.
  hetsim::v1::Model m;
  auto* t = m.mutable_transformer();
  t->set_num_layers(24);
  t->set_hidden_size(2048);
  t->set_num_attention_heads(16);
  t->set_ffn_hidden_size(5632);
  t->set_gated_mlp(true);
  t->set_seq_length(4096);
  t->set_vocab_size(151936);
  t->set_num_experts(60);
  t->set_moe_top_k(4);
  t->set_expert_ffn_hidden_size(1408);
  t->set_moe_shared_expert_ffn_hidden_size(5632);
  const ModelCost qwen = Make(m);
  CHECK(static_cast<double>(qwen.TotalParamCount()) == Approx(14.3e9).epsilon(0.01));
  // The shared experts are a dense gated MLP every token runs: 3 GEMMs of s x h x 5632, not experts'.
  const double s = 4096, h = 2048;
  t->set_moe_shared_expert_ffn_hidden_size(0);
  const ModelCost routed = Make(m);
  CHECK(qwen.layer(1).forward_flop_per_sample - routed.layer(1).forward_flop_per_sample == 3 * 2 * s * h * 5632);
  CHECK(qwen.layer(1).expert_param_count == routed.layer(1).expert_param_count);
  CHECK(qwen.layer(1).param_count - routed.layer(1).param_count == 2 * h * 5632 + 2 * 5632 + 5632 * h + h);
  // The shared experts' MLP gathers its input and reduce-scatters its output itself (sequence parallel).
  auto tp_calls = [](const ModelCost& m) {
    int calls = 0;
    for (const LayerCollective& c : m.layer(1).collectives_seq_par) {
      if (c.group == CollectiveGroup::kTensor) calls += c.forward_count;
    }
    return calls;
  };
  CHECK(tp_calls(qwen) == tp_calls(routed) + 2);
  CHECK(qwen.uniform_blocks());
}

TEST_CASE("MoE layouts: dense first blocks, then every K-th block MoE", "[workload][model]") {
  hetsim::v1::Model m = Gpt(5, 1024, 16);
  auto* t = m.mutable_transformer();
  t->set_num_experts(8);
  t->set_moe_top_k(2);
  t->set_moe_first_dense_layers(1);
  t->set_moe_layer_freq(2);
  const ModelCost mixed = Make(m);
  const ModelCost dense = Make(Gpt(5, 1024, 16));
  t->set_moe_first_dense_layers(0);
  t->set_moe_layer_freq(0);
  const ModelCost all_moe = Make(m);
  // Layer 0 is the embedding: blocks 1 and 3 (layers 2 and 4) are MoE, blocks 0, 2 and 4 dense.
  for (int block = 0; block < 5; ++block) {
    INFO("block " << block);
    const ModelCost& like = block % 2 == 1 ? all_moe : dense;
    CHECK(mixed.layer(block + 1).forward_flop_per_sample == like.layer(block + 1).forward_flop_per_sample);
    CHECK(mixed.layer(block + 1).param_count == like.layer(block + 1).param_count);
    CHECK(mixed.layer(block + 1).expert_param_count == like.layer(block + 1).expert_param_count);
  }
  CHECK_FALSE(mixed.uniform_blocks());
  CHECK(all_moe.uniform_blocks());
}

TEST_CASE("multi-latent attention: DeepSeek-V3's 671B parameters and MLA's GEMMs", "[workload][model]") {
  // 61 blocks of hidden 7168, 128 heads of MLA (Q latent 1536, KV latent 512, 128 + 64 rotary QK
  // channels, 128 V channels), the first 3 dense (gated FFN 18432), then 256 experts of 2048 (top 8)
  // and one shared expert of 2048; vocabulary 129,280 untied: DeepSeek's report counts 671B (without
  // the multi-token-prediction module).
  hetsim::v1::Model m;
  auto* t = m.mutable_transformer();
  t->set_num_layers(61);
  t->set_hidden_size(7168);
  t->set_num_attention_heads(128);
  t->set_ffn_hidden_size(18432);
  t->set_gated_mlp(true);
  t->set_seq_length(4096);
  t->set_vocab_size(129280);
  t->set_num_experts(256);
  t->set_moe_top_k(8);
  t->set_expert_ffn_hidden_size(2048);
  t->set_moe_shared_expert_ffn_hidden_size(2048);
  t->set_moe_first_dense_layers(3);
  auto* mla = t->mutable_mla();
  mla->set_q_lora_rank(1536);
  mla->set_kv_lora_rank(512);
  mla->set_qk_head_dim(128);
  mla->set_qk_pos_emb_head_dim(64);
  mla->set_v_head_dim(128);
  const ModelCost v3 = Make(m);
  CHECK(static_cast<double>(v3.TotalParamCount()) == Approx(671e9).epsilon(0.01));
  CHECK(hetsim::proto::ModelParamCount(m) == Approx(static_cast<double>(v3.TotalParamCount())).epsilon(1e-3));

  // The attention's GEMMs per sample: Q down (s x 1536 x h) and up (s x 128*192 x 1536), KV down
  // (s x 576 x h) and up (s x 128*256 x 512), the core over 192-wide scores and 128-wide values, the
  // output projection (s x h x 128*128).
  const double s = 4096, h = 7168, a = 128;
  const double expected = 2 * s * 1536 * h + 2 * s * a * 192 * 1536 + 2 * s * 576 * h + 2 * s * a * 256 * 512 +
                          2 * s * s * a * 192 + 2 * s * s * a * 128 + 2 * s * h * a * 128;
  CHECK(v3.layer(1).forward_flop_per_sample ==
        Approx(expected + 3 * 2 * s * h * 18432).epsilon(1e-12));  // block 0: dense MLP
  // K and V as the context-parallel ring passes them: 128 heads of 192 and of 128 channels.
  CHECK(v3.layer(1).kv_bytes_per_sample == 2 * s * a * (192 + 128));
  // The down projections and latent norms sit whole on every TP rank; block 3's router too.
  CHECK(v3.layer(1).tp_replicated_param_count == h * 1536 + 1536 + h * 576 + 512);
  CHECK(v3.layer(4).tp_replicated_param_count == h * 1536 + 1536 + h * 576 + 512 + h * 256);
  // Under SP the attention gathers its latents (1536 + 576 per token), not h, and reduce-scatters h;
  // Transformer Engine's userbuffers do not serve MLA's up projections, so only h-sized ones overlap.
  double gathered = 0, scattered = 0, overlapped_gathers = 0;
  for (const LayerCollective& c : v3.layer(1).collectives_seq_par) {
    if (c.op == CollectiveOp::kAllGather && c.forward_count > 0) gathered += c.bytes_per_sample;
    if (c.op == CollectiveOp::kAllGather && c.forward_count > 0 && c.userbuffers)
      overlapped_gathers += c.bytes_per_sample;
    if (c.op == CollectiveOp::kReduceScatter && c.forward_count > 0 && c.userbuffers) scattered += c.bytes_per_sample;
  }
  CHECK(gathered == 2 * s * (1536 + 576) + 2 * s * h);  // the attention's latents, the dense MLP's input
  CHECK(overlapped_gathers == 2 * s * h);               // the MLP's only
  CHECK(scattered == 2 * 2 * s * h);                    // the projection's and the MLP's outputs

  // With its multi-token prediction module DeepSeek's checkpoint holds 685B (671B + 14B): the module's
  // own parameters, and copies of the embedding and the output head that hetsim counts once.
  m.mutable_transformer()->set_mtp_num_layers(1);
  const ModelCost with_mtp = Make(m);
  CHECK(static_cast<double>(with_mtp.TotalParamCount()) + 2 * 129280 * h == Approx(685e9).epsilon(0.01));
}

TEST_CASE("multi-token prediction: each module adds eh_proj, a block like the last and a head pass to the head",
          "[workload][model]") {
  hetsim::v1::Model m = Gpt(4, 1024, 16);
  m.mutable_transformer()->set_tied_embeddings(false);
  const ModelCost plain = Make(m);
  m.mutable_transformer()->set_mtp_num_layers(2);
  const ModelCost mtp = Make(m);
  REQUIRE(mtp.num_layers() == plain.num_layers());  // merged into the head: the plan's layers do not move
  const LayerCost& head0 = plain.layer(plain.num_layers() - 1);
  const LayerCost& head = mtp.layer(mtp.num_layers() - 1);
  const LayerCost& last_block = plain.layer(plain.num_layers() - 2);
  const double s = 2048, h = 1024, V = 51200;
  // Forward FLOPs per module: eh_proj (s x h x 2h), the block, the head's GEMM again.
  const double module_flop = 2 * s * h * 2 * h + last_block.forward_flop_per_sample + 2 * s * h * V;
  CHECK(head.forward_flop_per_sample == Approx(head0.forward_flop_per_sample + 2 * module_flop).epsilon(1e-12));
  CHECK(head.backward_flop_per_sample == Approx(2 * head.forward_flop_per_sample).epsilon(1e-12));
  // Parameters per module: eh_proj and its two norms, the block, the module's final norm; the output
  // matrix and the embedding are the model's. An untied model's last stage holds the embedding's copy.
  const double module_params = 2 * h * h + 2 * h + static_cast<double>(last_block.param_count) + h;
  CHECK(static_cast<double>(head.param_count) == static_cast<double>(head0.param_count) + 2 * module_params);
  CHECK(head.tied_with_embedding);
  CHECK(head.tied_param_count == static_cast<uint64_t>(V * h));
  hetsim::v1::Model without = m;
  without.mutable_transformer()->set_mtp_num_layers(0);
  CHECK(hetsim::proto::ModelParamCount(m) - hetsim::proto::ModelParamCount(without) ==
        static_cast<double>(mtp.TotalParamCount() - plain.TotalParamCount()));
  // Each module's block keeps its activations and runs its collectives beside the head's.
  CHECK(head.activation.tp_sharded > head0.activation.tp_sharded + 2 * last_block.activation.tp_sharded - 1);
  // Forward TP traffic per module: the vocabulary-parallel lookup's all-reduce and eh_proj's output
  // gather (s h each, 2 bytes), the block's and the head's own.
  const auto forward_tp = [](const LayerCost& l) {
    double bytes = 0;
    for (const LayerCollective& c : l.collectives) {
      if (c.group == CollectiveGroup::kTensor) bytes += c.bytes_per_sample * c.forward_count;
    }
    return bytes;
  };
  CHECK(forward_tp(head) ==
        Approx(forward_tp(head0) + 2 * (2 * 2 * s * h + forward_tp(last_block) + forward_tp(head0))).epsilon(1e-12));
  CHECK_FALSE(head.recomputable);
}

TEST_CASE("the layer count agrees with proto::LayerCount", "[workload][model]") {
  hetsim::v1::Model m = Gpt(7, 512, 8);
  CHECK(Make(m).num_layers() == hetsim::proto::LayerCount(m));
  m.mutable_transformer()->set_granularity(hetsim::v1::SUBLAYER);
  CHECK(Make(m).num_layers() == hetsim::proto::LayerCount(m));
  hetsim::v1::Model list;
  list.mutable_layer_list()->set_seq_length(128);
  for (int i = 0; i < 5; ++i) {
    auto* l = list.mutable_layer_list()->add_layers();
    l->set_forward_gflop_per_sample(1.5);
    l->set_param_count(1000);
  }
  const ModelCost listed = Make(list);
  CHECK(listed.num_layers() == hetsim::proto::LayerCount(list));
  CHECK(listed.layer(2).forward_flop_per_sample == 1.5e9);
  CHECK(listed.layer(2).backward_flop_per_sample == 3e9);
}

TEST_CASE("bad models are reported with the validator's field path", "[workload][model]") {
  // A model is checked once, at the edge (ModelCostOf does as proto::LoadPlanInputs does), with
  // proto::ValidateModel's field paths; the resolver and ModelCost trust it.
  hetsim::v1::Model m = Gpt(2, 1024, 16);
  m.mutable_transformer()->set_num_kv_heads(5);
  CHECK(ErrorOf(m) == "model.pbtxt: transformer.num_kv_heads: 5 does not divide num_attention_heads 16");
  m = Gpt(2, 1000, 16);
  CHECK(ErrorOf(m) ==
        "model.pbtxt: transformer.num_attention_heads: 16 does not divide hidden_size 1000 (or set head_dim)");
  m = Gpt(2, 1024, 16);
  m.mutable_transformer()->set_num_experts(4);
  m.mutable_transformer()->set_moe_top_k(5);
  CHECK(ErrorOf(m) == "model.pbtxt: transformer.moe_top_k: 5 is outside [1, num_experts = 4]");
  hetsim::v1::Model empty;
  CHECK(ErrorOf(empty) == "model.pbtxt: transformer: required: a transformer or a layer_list");
}

TEST_CASE("model FLOPs per iteration scale with the global batch", "[workload][model]") {
  const ModelCost gpt = Make(Gpt(4, 1024, 16));
  CHECK(gpt.ModelFlopPerIteration(512) == 512 * gpt.ModelFlopPerSample());
}

// Transformer.qk_layernorm (Megatron-Core's q_layernorm and k_layernorm of head_dim channels): on a GQA block of
// h 4096, 32 heads of 128, 8 KV heads, 2048 tokens, BF16: Q is 4096 wide and K 1024, 5120 channels a token. The
// norms read and write them (2 x 2 bytes x 2048 x 5120 = 41,943,040 bytes a sample), in 2 kernels, keep their
// input (20,971,520 bytes), and hold a scale and a bias of 128 each (512 parameters, on every TP rank).
TEST_CASE("qk_layernorm: a norm pass over each head's Q and K, its input kept, 4 head_dim parameters",
          "[workload][model]") {
  hetsim::v1::Model m = Gpt(2, 4096, 32);
  m.set_dtype(hetsim::v1::BF16);
  m.mutable_transformer()->set_num_kv_heads(8);
  const ModelCost plain = Make(m);
  m.mutable_transformer()->set_qk_layernorm(true);
  const ModelCost normed = Make(m);
  const LayerCost& a = plain.layer(1);
  const LayerCost& b = normed.layer(1);
  CHECK(b.param_count - a.param_count == 512);
  CHECK(b.tp_replicated_param_count - a.tp_replicated_param_count == 512);
  CHECK(b.memory_bytes_sharded_per_sample - a.memory_bytes_sharded_per_sample == 41943040.0);
  CHECK(b.memory_kernels - a.memory_kernels == 2);
  CHECK(b.activation.tp_sharded - a.activation.tp_sharded == 20971520.0);
  CHECK(b.forward_flop_per_sample == a.forward_flop_per_sample);
  // Multi-latent attention's norms are its latents', priced with them: no effect.
  hetsim::v1::Model mla = m;
  auto* latent = mla.mutable_transformer()->mutable_mla();
  latent->set_q_lora_rank(1536);
  latent->set_kv_lora_rank(512);
  latent->set_qk_head_dim(128);
  latent->set_qk_pos_emb_head_dim(64);
  latent->set_v_head_dim(128);
  mla.mutable_transformer()->set_num_kv_heads(0);
  const ModelCost mla_normed = Make(mla);
  mla.mutable_transformer()->set_qk_layernorm(false);
  CHECK(Make(mla).layer(1).param_count == mla_normed.layer(1).param_count);
}
