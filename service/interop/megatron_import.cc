#include "service/interop/megatron_import.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "proto/framework_profile.h"
#include "proto/inputs.h"
#include "proto/limits.h"
#include "service/interop/accelerate_config.h"
#include "service/interop/deepspeed_config.h"
#include "service/interop/fused_softmax_internal.h"
#include "service/interop/megatron_export.h"
#include "service/interop/megatron_layout.h"
#include "service/interop/megatron_moe_layout.h"
#include "service/interop/megatron_split.h"
#include "service/interop/tokenizer_vocab_internal.h"

namespace hetsim::interop {
namespace {

namespace v1 = hetsim::v1;

// Megatron's entry points (and Megatron-DeepSpeed's): their lines describe the model with flags.
// A `finetune*.py` run by DeepSpeed's launcher is a DeepSpeed script, not Megatron's. A `main.py` is
// Megatron's tasks/main.py only with --task, its required argument (GLUE, RACE, ...; Megatron-DeepSpeed's
// bert_with_pile scripts run it under `deepspeed`); without it, a main.py with Megatron's model flags is a
// fork's pretraining entry point (LLM360's K2 and Amber: `python main.py --num-layers 80 ...`), and one
// without them a script that builds its model itself (DeepSpeed-Chat's, LLM360's Amber `main.py --n_nodes 56`).
bool MegatronEntryPoint(const MegatronFlags& flags) {
  if (flags.launch.script == "main.py") return flags.Has("task") || flags.launch.megatron_main;
  const bool megatron_finetune =
      absl::StartsWith(flags.launch.script, "finetune") && flags.launch.launcher != "deepspeed";
  return flags.launch.script.empty() || absl::StartsWith(flags.launch.script, "pretrain_") ||
         flags.launch.script == "run_text_generation_server.py" || megatron_finetune;
}

class Reader {
 public:
  Reader(const MegatronFlags& flags, absl::string_view source) : flags_(flags), source_(source) {}

  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": ", message));
  }
  // A positive whole number of at most `max`, `fallback` when absent (0 = required). Every value
  // lands in a 32-bit plan field, and parallel sizes multiply: the bound keeps products in int64.
  absl::StatusOr<int64_t> Int(absl::string_view name, int64_t fallback, int64_t max = INT32_MAX) const {
    std::optional<std::string> v = flags_.Value(name);
    if (!v) {
      if (fallback > 0) return fallback;
      return Error(absl::StrFormat("--%s: required", name));
    }
    int64_t x = 0;
    if (!absl::SimpleAtoi(*v, &x) || x <= 0) {
      return Error(absl::StrFormat("--%s: \"%s\" is not a positive whole number", name, *v));
    }
    if (x > max) return Error(absl::StrFormat("--%s: %d is larger than %d, the most hetsim reads", name, x, max));
    return x;
  }
  // A parallel size: at most the most GPUs a cluster may have.
  absl::StatusOr<int64_t> ParallelSize(absl::string_view name, int64_t fallback) const {
    return Int(name, fallback, proto::limits::kMaxGpus);
  }
  bool Has(absl::string_view name) const { return flags_.Has(name); }
  const MegatronFlags& flags() const { return flags_; }
  // DeepSpeed's engine runs the line: Megatron-DeepSpeed's --deepspeed, or a DeepSpeed script's config.
  bool DeepSpeed() const {
    return Has("deepspeed") || Has("deepspeed_config") || Has("deepspeed-config") ||
           (flags_.launch.launcher == "deepspeed" && !MegatronEntryPoint(flags_));
  }
  std::vector<std::string> Values(absl::string_view name) const { return flags_.Values(name); }
  std::string Value(absl::string_view name) const { return flags_.Value(name).value_or(""); }
  absl::Status Contradict(absl::string_view a, absl::string_view b, absl::string_view why = "") const {
    return Error(absl::StrFormat("%s and %s contradict each other%s%s", a, b, why.empty() ? "" : ": ", why));
  }

 private:
  const MegatronFlags& flags_;
  std::string source_;
};

struct Layout {
  int64_t tp = 1, pp = 1, cp = 1, ep = 1, etp = 1, dp = 1, gpus_per_node = 0, nodes = 0;
  const v1::Island* island = nullptr;
};

absl::StatusOr<Layout> ReadLayout(const Reader& r, const MegatronFlags& flags, const v1::Cluster& cluster,
                                  const MegatronImportRequest& request) {
  Layout l;
  HETSIM_ASSIGN_OR_RETURN(l.tp, r.ParallelSize("tensor-model-parallel-size", 1));
  HETSIM_ASSIGN_OR_RETURN(l.pp, r.ParallelSize("pipeline-model-parallel-size", 1));
  HETSIM_ASSIGN_OR_RETURN(l.cp, r.ParallelSize("context-parallel-size", 1));
  HETSIM_ASSIGN_OR_RETURN(l.ep, r.ParallelSize("expert-model-parallel-size", 1));
  HETSIM_ASSIGN_OR_RETURN(l.etp, r.ParallelSize("expert-tensor-parallel-size", l.tp));  // Megatron's default: TP
  for (const v1::Island& i : cluster.islands()) {
    if (request.island.empty() ? cluster.islands_size() == 1 : i.name() == request.island) l.island = &i;
  }
  if (l.island == nullptr) {
    return r.Error(request.island.empty()
                       ? absl::StrFormat("--island: required: the cluster has %d islands", cluster.islands_size())
                       : absl::StrFormat("--island: no island \"%s\" in the cluster", request.island));
  }
  int64_t node_gpus = 0;
  for (const v1::NodeType& n : cluster.node_types()) {
    if (n.name() == l.island->node_type()) node_gpus = n.gpus_per_node();
  }
  l.nodes = request.nodes > 0 ? request.nodes : flags.launch.nnodes;
  if (l.nodes <= 0 && flags.launch.launcher == "deepspeed") {
    // DeepSpeed's runner without a host list or --num_gpus: /job/hostfile's hosts when the file exists, else
    // this node's GPUs (deepspeed/launcher/runner.py); which one the line cannot say.
    return r.Error(
        "--nodes: required: deepspeed without --num_gpus, --num_nodes or a host list runs on /job/hostfile's hosts "
        "when that file exists, else on the local node's GPUs (--nodes 1)");
  }
  if (l.nodes <= 0) return r.Error("--nodes: required (or torchrun's --nnodes in the launch line)");
  if (l.nodes > l.island->node_count()) {
    return r.Error(
        absl::StrFormat("--nodes %d: island \"%s\" has %d nodes", l.nodes, l.island->name(), l.island->node_count()));
  }
  l.gpus_per_node = request.gpus_per_node > 0         ? request.gpus_per_node
                    : flags.launch.nproc_per_node > 0 ? flags.launch.nproc_per_node
                                                      : node_gpus;
  if (l.gpus_per_node > node_gpus) {
    return r.Error(absl::StrFormat("--nproc_per_node %d: the nodes of island \"%s\" have %d GPUs", l.gpus_per_node,
                                   l.island->name(), node_gpus));
  }
  const int64_t world = l.nodes * l.gpus_per_node, model_parallel = l.tp * l.cp * l.pp;
  if (world % model_parallel != 0) {
    return r.Error(absl::StrFormat(
        "--tensor-model-parallel-size %d x --context-parallel-size %d x --pipeline-model-parallel-size %d = %d does "
        "not divide the %d GPUs (%d nodes x %d)",
        l.tp, l.cp, l.pp, model_parallel, world, l.nodes, l.gpus_per_node));
  }
  l.dp = world / model_parallel;
  // MoE parallel folding (Megatron-LM's initialize_model_parallel): the experts lay each stage's
  // TP x CP x DP GPUs out again as ETP x EP x expert-DP.
  const int64_t stage_gpus = l.tp * l.cp * l.dp;
  if (r.Has("num-experts") && stage_gpus % (l.ep * l.etp) != 0) {
    return r.Error(absl::StrFormat(
        "--expert-model-parallel-size %d x --expert-tensor-parallel-size %d does not divide a pipeline stage's %d GPUs "
        "(--tensor-model-parallel-size %d x --context-parallel-size %d x data-parallel %d)",
        l.ep, l.etp, stage_gpus, l.tp, l.cp, l.dp));
  }
  if (r.Has("num-experts") && l.tp > 1 && !r.Has("sequence-parallel")) {
    return r.Error(absl::StrFormat(
        "--num-experts with --tensor-model-parallel-size %d needs --sequence-parallel (Megatron-LM's MoE layer "
        "refuses tensor parallelism without it)",
        l.tp));
  }
  return l;
}

// The tokenizer's vocabulary, before padding: --vocab-size (NullTokenizer's), else the size of the
// tokenizer --tokenizer-type / --tokenizer-model name, else GPT-2's with a note that says why.
absl::StatusOr<int64_t> ReadVocabulary(const Reader& r, std::vector<std::string>& notes) {
  if (r.Has("vocab-size")) return r.Int("vocab-size", 0);
  const std::string type = r.Value("tokenizer-type");
  // Megatron-DeepSpeed's PretrainedFromHF names its Hugging Face tokenizer with --tokenizer-name-or-path.
  const std::string model = r.Has("tokenizer-model") ? r.Value("tokenizer-model") : r.Value("tokenizer-name-or-path");
  const std::string named = absl::StrCat(type, model.empty() || type.empty() ? "" : " ", model);
  if (type == "NullTokenizer") return r.Error("--tokenizer-type NullTokenizer: --vocab-size is required");
  if (named.empty() || type == "GPT2BPETokenizer") {
    notes.push_back(absl::StrFormat("vocabulary: %s's %d tokens (GPT-2's BPE)",
                                    named.empty() ? "no --tokenizer-type: Megatron's GPT examples' tokenizer" : type,
                                    kGpt2Vocab));
    return kGpt2Vocab;
  }
  if (std::optional<int64_t> known = KnownTokenizerVocab(absl::StrCat(type, " ", model))) {
    notes.push_back(absl::StrFormat("vocabulary: %d tokens, the size of %s", *known, named));
    return *known;
  }
  notes.push_back(
      absl::StrFormat("vocabulary: the tokenizer %s is not known to hetsim; GPT-2's %d tokens "
                      "assumed: pass --vocab-size N for the right size",
                      named, kGpt2Vocab));
  return kGpt2Vocab;
}

absl::StatusOr<v1::DType> ReadDType(const Reader& r) {
  if (r.Has("fp16") && r.Has("bf16")) return r.Contradict("--fp16", "--bf16");
  if (r.Has("fp8-format")) {
    const std::string f = r.Value("fp8-format");
    if (f != "hybrid" && f != "e4m3") return r.Error(absl::StrFormat("--fp8-format: \"%s\" is not hybrid or e4m3", f));
    return v1::FP8;
  }
  return r.Has("fp16") ? v1::FP16 : r.Has("bf16") ? v1::BF16 : v1::FP32;
}

// Megatron-LM's arguments.py for a --bf16 run (an FP8 run with --bf16 too): --grad-reduce-in-bf16 keeps
// the gradients in BF16 whatever else the line says; otherwise it accumulates and reduces them in FP32
// unless --main-grads-dtype bf16. An FP16 run does so only with --accumulate-allreduce-grads-in-fp32;
// an FP32 run's gradients are 4 bytes anyway (the field stays off, as export writes it).
absl::StatusOr<bool> ReadGradReduceInFp32(const Reader& r) {
  std::string main_grads = "fp32";
  if (r.Has("main-grads-dtype")) {
    main_grads = r.Value("main-grads-dtype");
    if (main_grads != "fp32" && main_grads != "bf16") {
      return r.Error(absl::StrFormat("--main-grads-dtype: \"%s\" is not fp32 or bf16", main_grads));
    }
  }
  if (r.Has("bf16")) {
    if (r.Has("grad-reduce-in-bf16")) return false;
    if (r.Has("accumulate-allreduce-grads-in-fp32") && main_grads == "bf16") {
      return r.Contradict("--accumulate-allreduce-grads-in-fp32", "--main-grads-dtype bf16");
    }
    return r.Has("accumulate-allreduce-grads-in-fp32") || main_grads == "fp32";
  }
  return r.Has("fp16") && r.Has("accumulate-allreduce-grads-in-fp32");
}

// Mixture of experts: the experts, their router and widths, shared experts, which blocks are MoE.
// GPT-OSS's attention and MLP variants (Megatron-LM's TransformerConfig: softmax_type, glu_linear_offset,
// activation_func_clamp_value). Off-by-one adds 1 to the softmax's denominator, learnable adds a learned sink
// logit per head: the attention's GEMMs are the same, so the vanilla softmax is priced, said in a note. The
// offset and the clamp are elementwise on the gated MLP's activation: its GEMMs are SwiGLU's.
absl::Status NoteSoftmaxAndGlu(const Reader& r, std::vector<std::string>& notes) {
  if (r.Has("softmax-type")) {
    const std::string type = r.Value("softmax-type");
    if (type != "vanilla" && type != "off-by-one" && type != "learnable") {
      return r.Error(absl::StrFormat("--softmax-type %s: Megatron-LM's are vanilla, off-by-one, learnable", type));
    }
    if (type != "vanilla") {
      notes.push_back(absl::StrFormat(
          "--softmax-type %s: a softmax with a sink, priced as the vanilla softmax (the same GEMMs)", type));
    }
  }
  for (const char* flag : {"glu-linear-offset", "activation-func-clamp-value"}) {
    if (r.Has(flag)) {
      notes.push_back(
          absl::StrFormat("--%s %s: elementwise on the gated MLP's activation, priced as SwiGLU's (the same GEMMs)",
                          flag, r.Value(flag)));
    }
  }
  return absl::OkStatus();
}

absl::Status ReadMoe(const Reader& r, v1::Transformer& t, std::vector<std::string>& notes) {
  if (r.Has("num-experts")) {
    HETSIM_ASSIGN_OR_RETURN(int64_t experts, r.Int("num-experts", 0));
    HETSIM_ASSIGN_OR_RETURN(int64_t topk, r.Int("moe-router-topk", 2));
    t.set_num_experts(static_cast<uint32_t>(experts));
    t.set_moe_top_k(static_cast<uint32_t>(topk));
    if (r.Has("moe-ffn-hidden-size")) {
      HETSIM_ASSIGN_OR_RETURN(int64_t expert_ffn, r.Int("moe-ffn-hidden-size", 0));
      t.set_expert_ffn_hidden_size(expert_ffn);
    }
    if (r.Has("moe-shared-expert-intermediate-size")) {
      HETSIM_ASSIGN_OR_RETURN(int64_t shared, r.Int("moe-shared-expert-intermediate-size", 0));
      t.set_moe_shared_expert_ffn_hidden_size(shared);
    }
    if (r.Has("moe-layer-freq")) {
      absl::StatusOr<MoeLayout> layout = ParseMoeLayerFreq(r.Value("moe-layer-freq"), t.num_layers());
      if (!layout.ok()) return r.Error(layout.status().message());
      t.set_moe_first_dense_layers(layout->first_dense);
      t.set_moe_layer_freq(layout->freq > 1 ? layout->freq : 0);
    }
    t.set_moe_grouped_gemm(r.Has("moe-grouped-gemm"));
    // Megatron's default dispatcher gathers; DeepEP's flex dispatcher sends each token once per node.
    const std::string dispatcher =
        r.Has("moe-token-dispatcher-type") ? r.Value("moe-token-dispatcher-type") : "allgather";
    if (dispatcher == "allgather") {
      t.set_moe_token_dispatcher(v1::MOE_DISPATCHER_ALL_GATHER);
    } else if (dispatcher == "flex") {
      notes.push_back("not modelled: --moe-token-dispatcher-type flex (priced as alltoall)");
    } else if (dispatcher != "alltoall") {
      return r.Error(
          absl::StrFormat("--moe-token-dispatcher-type: \"%s\" is not allgather, alltoall or flex", dispatcher));
    }
  } else {
    for (const char* flag : {"moe-router-topk", "moe-ffn-hidden-size", "moe-shared-expert-intermediate-size",
                             "moe-layer-freq", "moe-grouped-gemm", "moe-token-dispatcher-type"}) {
      if (r.Has(flag)) notes.push_back(absl::StrFormat("--%s: no effect without --num-experts", flag));
    }
  }
  return absl::OkStatus();
}

// DeepSeek's multi-latent attention (--multi-latent-attention and its widths) into `t`.
absl::Status ReadMla(const Reader& r, v1::Transformer& t, std::vector<std::string>& notes) {
  if (r.Has("multi-latent-attention")) {
    // Megatron-LM's defaults for the widths the line leaves out (no Q compression without --q-lora-rank).
    v1::MultiLatentAttention& mla = *t.mutable_mla();
    if (r.Has("q-lora-rank")) {
      HETSIM_ASSIGN_OR_RETURN(int64_t q, r.Int("q-lora-rank", 0));
      mla.set_q_lora_rank(static_cast<uint32_t>(q));
    }
    HETSIM_ASSIGN_OR_RETURN(int64_t kv, r.Int("kv-lora-rank", 32));
    HETSIM_ASSIGN_OR_RETURN(int64_t qk, r.Int("qk-head-dim", 128));
    HETSIM_ASSIGN_OR_RETURN(int64_t pos, r.Int("qk-pos-emb-head-dim", 64));
    HETSIM_ASSIGN_OR_RETURN(int64_t v, r.Int("v-head-dim", 128));
    mla.set_kv_lora_rank(static_cast<uint32_t>(kv));
    mla.set_qk_head_dim(static_cast<uint32_t>(qk));
    mla.set_qk_pos_emb_head_dim(static_cast<uint32_t>(pos));
    mla.set_v_head_dim(static_cast<uint32_t>(v));
    if (t.num_kv_heads() != 0 || t.head_dim() != 0) {
      notes.push_back("--num-query-groups / --kv-channels: no effect with --multi-latent-attention (its widths say)");
    }
    t.clear_num_kv_heads();
    t.clear_head_dim();
  } else {
    for (const char* flag : {"q-lora-rank", "kv-lora-rank", "qk-head-dim", "qk-pos-emb-head-dim", "v-head-dim"}) {
      if (r.Has(flag)) notes.push_back(absl::StrFormat("--%s: no effect without --multi-latent-attention", flag));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Model> ReadModel(const Reader& r, const Layout& l, std::vector<std::string>& notes) {
  v1::Model m;
  HETSIM_ASSIGN_OR_RETURN(v1::DType dtype, ReadDType(r));
  m.set_dtype(dtype);
  v1::Transformer& t = *m.mutable_transformer();
  t.set_granularity(v1::BLOCK);
  HETSIM_ASSIGN_OR_RETURN(int64_t layers, r.Int("num-layers", 0));
  HETSIM_ASSIGN_OR_RETURN(int64_t hidden, r.Int("hidden-size", 0));
  HETSIM_ASSIGN_OR_RETURN(int64_t heads, r.Int("num-attention-heads", 0));
  HETSIM_ASSIGN_OR_RETURN(int64_t seq, r.Int("seq-length", 0));
  t.set_num_layers(static_cast<uint32_t>(layers));
  t.set_hidden_size(hidden);
  t.set_num_attention_heads(static_cast<uint32_t>(heads));
  t.set_seq_length(seq);
  const int64_t default_ffn = r.Has("swiglu") ? (4 * hidden * 2 / 3) / 64 * 64 : 4 * hidden;  // Megatron's rule
  HETSIM_ASSIGN_OR_RETURN(int64_t ffn, r.Int("ffn-hidden-size", default_ffn));
  t.set_ffn_hidden_size(ffn);
  // quick-GeGLU is gated too (Megatron keeps the 4h default FFN for it): SwiGLU's GEMMs, another
  // elementwise activation.
  t.set_gated_mlp(r.Has("swiglu") || r.Has("quick-geglu"));
  if (r.Has("quick-geglu")) notes.push_back("--quick-geglu: a gated MLP, priced as SwiGLU's (the same GEMMs)");
  for (const char* activation : {"squared-relu", "openai-gelu"}) {
    if (r.Has(activation)) {
      notes.push_back(
          absl::StrFormat("--%s: an elementwise activation, priced as GeLU's (the same GEMMs)", activation));
    }
  }
  HETSIM_RETURN_IF_ERROR(NoteSoftmaxAndGlu(r, notes));
  t.set_tied_embeddings(!r.Has("untie-embeddings-and-output-weights"));
  t.set_qk_layernorm(r.Has("qk-layernorm"));  // no effect under MLA, whose norms are its latents'
  if (r.Has("group-query-attention")) {
    HETSIM_ASSIGN_OR_RETURN(int64_t groups, r.Int("num-query-groups", 1));
    if (groups != heads) t.set_num_kv_heads(static_cast<uint32_t>(groups));  // as many groups as heads: MHA
  } else if (r.Has("num-key-value-heads")) {
    // Megatron-DeepSpeed's spelling of the groups, with no switch (microsoft/Megatron-DeepSpeed f4157be,
    // megatron/arguments.py: --num-key-value-heads, None meaning one per attention head).
    HETSIM_ASSIGN_OR_RETURN(int64_t groups, r.Int("num-key-value-heads", 1));
    if (groups != heads) t.set_num_kv_heads(static_cast<uint32_t>(groups));
  } else if (r.Has("num-query-groups")) {
    notes.push_back("--num-query-groups: ignored without --group-query-attention, as Megatron does");
  }
  if (r.Has("kv-channels")) {
    HETSIM_ASSIGN_OR_RETURN(int64_t kv, r.Int("kv-channels", 0));
    if (static_cast<uint64_t>(kv) > proto::limits::kMaxHiddenSize) {
      return r.Error(absl::StrFormat("--kv-channels %d: more than %d", kv, proto::limits::kMaxHiddenSize));
    }
    t.set_head_dim(static_cast<uint32_t>(kv));
  }
  const std::string pe = r.Has("position-embedding-type")          ? r.Value("position-embedding-type")
                         : r.Has("use-rotary-position-embeddings") ? "rope"
                                                                   : "learned_absolute";
  if (pe == "learned_absolute" && r.Has("max-position-embeddings")) {
    HETSIM_ASSIGN_OR_RETURN(int64_t max_pos, r.Int("max-position-embeddings", 0));
    if (max_pos < seq) {
      return r.Contradict(absl::StrFormat("--seq-length %d", seq),
                          absl::StrFormat("--max-position-embeddings %d", max_pos),
                          "learned position embeddings must cover the sequence");
    }
  }
  HETSIM_ASSIGN_OR_RETURN(const int64_t vocab, ReadVocabulary(r, notes));
  if (r.Has("pad-vocab-size-to")) {  // Megatron's exact size, instead of the multiple below
    HETSIM_ASSIGN_OR_RETURN(const int64_t padded, r.Int("pad-vocab-size-to", 0));
    if (padded < vocab) {
      return r.Contradict(absl::StrFormat("--pad-vocab-size-to %d", padded),
                          absl::StrFormat("the tokenizer's %d tokens", vocab), "the padded size must hold them");
    }
    t.set_vocab_size(static_cast<uint64_t>(padded));
  } else {
    HETSIM_ASSIGN_OR_RETURN(int64_t divisible, r.Int("make-vocab-size-divisible-by", 128));
    const int64_t multiple = divisible * l.tp;  // Megatron pads the vocabulary to a multiple of this
    t.set_vocab_size((vocab + multiple - 1) / multiple * multiple);
  }
  HETSIM_RETURN_IF_ERROR(ReadMoe(r, t, notes));
  HETSIM_RETURN_IF_ERROR(ReadMla(r, t, notes));
  if (r.Has("mtp-num-layers") && r.Value("mtp-num-layers") != "0") {  // Megatron takes 0 as off
    HETSIM_ASSIGN_OR_RETURN(const int64_t mtp, r.Int("mtp-num-layers", 1));
    if (mtp > t.num_layers()) {
      return r.Error(absl::StrFormat("--mtp-num-layers %d: more modules than the %d blocks", mtp, t.num_layers()));
    }
    t.set_mtp_num_layers(static_cast<uint32_t>(mtp));
  }
  if (r.Has("attention-backend")) {
    const std::string b = r.Value("attention-backend");
    if (b == "flash" || b == "fused" || b == "auto") {
      t.set_attention(v1::ATTENTION_FLASH);
    } else if (b != "unfused" && b != "local") {
      return r.Error(absl::StrFormat("--attention-backend: \"%s\" is not flash, fused, unfused, local or auto", b));
    } else if (r.Has("use-flash-attn")) {
      return r.Contradict("--use-flash-attn", absl::StrCat("--attention-backend ", b));
    }
  }
  // The switch of Megatron-LM before --attention-backend (still read by its later releases).
  if (r.Has("use-flash-attn")) t.set_attention(v1::ATTENTION_FLASH);
  m.set_name(absl::StrFormat("megatron-%dl-%dh", layers, hidden));
  return m;
}

absl::StatusOr<v1::Recompute> ReadGranularity(const Reader& r) {
  const std::string g = r.Value("recompute-granularity");
  if (r.Has("checkpoint-activations")) {  // the 2021 flag: every layer's activations recomputed
    if (r.Has("recompute-activations")) return r.Contradict("--checkpoint-activations", "--recompute-activations");
    if (r.Has("recompute-granularity") && g != "full") {
      return r.Contradict("--checkpoint-activations", "--recompute-granularity " + g);
    }
    return v1::RECOMPUTE_FULL;
  }
  if (r.Has("recompute-activations") && r.Has("recompute-granularity") && g != "selective") {
    return r.Contradict("--recompute-activations", "--recompute-granularity " + g);
  }
  if (r.Has("recompute-method") && (g == "selective" || r.Has("recompute-activations"))) {
    return r.Contradict(
        absl::StrCat("--recompute-method ", r.Value("recompute-method")),
        r.Has("recompute-activations") ? "--recompute-activations" : "--recompute-granularity selective",
        "a recompute method applies to full recomputation only");
  }
  if (g == "full") return v1::RECOMPUTE_FULL;
  if (g == "selective" || r.Has("recompute-activations")) return v1::RECOMPUTE_SELECTIVE;
  if (r.Has("recompute-granularity")) {
    return r.Error(absl::StrFormat("--recompute-granularity: \"%s\" is not full or selective", g));
  }
  return v1::RECOMPUTE_NONE;
}

struct RecomputeChoice {
  v1::Recompute recompute = v1::RECOMPUTE_NONE;
  uint32_t num_layers = 0;  // Stage.recompute_num_layers: the block method's N; 0 = every block
};

// Full recomputation's method: `block` recomputes the first --recompute-num-layers blocks of each
// model chunk and keeps the others' activations; `uniform` (and no method) recomputes every block,
// checkpointing groups of N (hetsim keeps one input per block: the compute is the same, the group's
// memory saving is not modelled).
absl::StatusOr<RecomputeChoice> ReadRecompute(const Reader& r, std::vector<std::string>& notes) {
  RecomputeChoice out;
  HETSIM_ASSIGN_OR_RETURN(out.recompute, ReadGranularity(r));
  const std::string method = r.Value("recompute-method");
  if (r.Has("recompute-method") && method != "block" && method != "uniform") {
    return r.Error(absl::StrFormat("--recompute-method: \"%s\" is not block or uniform", method));
  }
  if (out.recompute != v1::RECOMPUTE_FULL) {
    if (r.Has("recompute-num-layers")) {
      return r.Contradict(absl::StrCat("--recompute-num-layers ", r.Value("recompute-num-layers")),
                          out.recompute == v1::RECOMPUTE_NONE ? "the absence of --recompute-granularity full"
                                                              : "selective recomputation",
                          "it counts the layers of full recomputation");
    }
    if (r.Has("recompute-method")) {
      notes.push_back(absl::StrFormat("--recompute-method %s: no effect without --recompute-granularity full", method));
    }
    return out;
  }
  if (!r.Has("recompute-method") && !r.Has("checkpoint-activations")) {
    notes.push_back("--recompute-granularity full without --recompute-method: every block recomputed (uniform)");
  }
  if (method == "block" && !r.Has("recompute-num-layers")) {
    notes.push_back("--recompute-method block without --recompute-num-layers: the first block of each chunk");
  }
  HETSIM_ASSIGN_OR_RETURN(int64_t n, r.Int("recompute-num-layers", 1));
  if (n > proto::limits::kMaxListLayers) {
    return r.Error(absl::StrFormat("--recompute-num-layers %d: more than %d", n, proto::limits::kMaxListLayers));
  }
  if (method == "block") {
    // At or above a chunk's blocks every block recomputes, as Megatron does.
    out.num_layers = static_cast<uint32_t>(n);
  } else if (n > 1) {
    notes.push_back(
        absl::StrFormat("--recompute-method uniform --recompute-num-layers %d: every block recomputed; the memory of "
                        "checkpointing %d blocks as one group is taken as one input per block",
                        n, n));
  }
  return out;
}

// --cp-comm-type: one type for every layer, or one per layer (all the same here: a plan has one).
// Transformer Engine takes "all_gather"; Megatron's help text spells it "allgather": both are read.
absl::StatusOr<v1::ContextParallelComm> ReadCpCommType(const Reader& r, int64_t cp, std::vector<std::string>& notes) {
  const std::vector<std::string> types = r.Values("cp-comm-type");
  if (types.empty()) return v1::CP_COMM_P2P;
  const auto known = [](const std::string& t) {
    return t == "p2p" || t == "all_gather" || t == "allgather" || t == "a2a" || t == "a2a+p2p";
  };
  for (const std::string& t : types) {
    if (!known(t)) {
      return r.Error(absl::StrFormat("--cp-comm-type: \"%s\" is not p2p, all_gather, a2a or a2a+p2p", t));
    }
    if (t != types.front()) {
      return r.Error(absl::StrFormat("--cp-comm-type %s: one type per layer, mixed, is not modelled (a plan has one)",
                                     absl::StrJoin(types, " ")));
    }
  }
  const std::string& type = types.front();
  if (cp <= 1) {  // Megatron uses the type only with context parallelism
    notes.push_back(absl::StrFormat("--cp-comm-type %s: no effect with --context-parallel-size 1", type));
    return v1::CP_COMM_P2P;
  }
  if (type == "a2a+p2p") {
    return r.Error("--cp-comm-type a2a+p2p: not modelled (hetsim prices p2p, all_gather and a2a)");
  }
  if (type == "a2a") return v1::CP_COMM_ALL_TO_ALL;
  return type == "p2p" ? v1::CP_COMM_P2P : v1::CP_COMM_ALL_GATHER;
}

// Flags only Megatron-Core's releases (2023 on) know, and flags of 2022's (sequence parallelism,
// selective recomputation, the distributed optimizer): the version clues Plan.framework is read from.
constexpr const char* kCoreFlags[] = {"overlap-grad-reduce",
                                      "ddp-bucket-size",
                                      "attention-backend",
                                      "overlap-param-gather",
                                      "use-mcore-models",
                                      "tp-comm-overlap",
                                      "context-parallel-size",
                                      "use-torch-fsdp2",
                                      "use-megatron-fsdp",
                                      "use-custom-fsdp",
                                      "overlap-p2p-communication",
                                      "no-overlap-p2p-communication",
                                      "num-virtual-stages-per-pipeline-rank",
                                      "grad-reduce-in-bf16",
                                      "main-grads-dtype",
                                      "overlap-moe-expert-parallel-comm",
                                      "expert-model-parallel-size",
                                      "num-experts",
                                      "fp8-format"};
// --recompute-method and --recompute-num-layers are 2022's names of --activations-checkpoint-method and
// -num-layers (Megatron-LM commit bbab79f, May 2022, with selective recomputation): clues of 2022 too.
constexpr const char* k2022Flags[] = {"sequence-parallel", "recompute-activations", "recompute-granularity",
                                      "recompute-method", "recompute-num-layers", "use-distributed-optimizer",
                                      "no-async-tensor-model-parallel-allreduce",
                                      // removed 2023-09-07 (34ac1ad, "Document, clean, and refactor
                                      // megatron/data for GPT"), before Megatron-Core's models were the default
                                      "data-impl"};

// Megatron-LM of 2021 as the SC'21 artifact ran it: --checkpoint-activations and no later flag.
bool Code2021(const Reader& r) {
  return r.Has("checkpoint-activations") && !r.Has("sequence-parallel") && !r.Has("recompute-granularity") &&
         !r.Has("recompute-activations") && !r.Has("use-distributed-optimizer");
}

// Plan.framework from the line's version clues (docs/frameworks.md): DeepSpeed's engine, 2021's code,
// Megatron-Core for a line with a flag of its releases (or none of 2022's: today's Megatron), Megatron-LM
// 2022 otherwise. Its defaults are the ones the import assumes for what the line leaves out.
v1::Framework LineFramework(const Reader& r, const MegatronSplit& split) {
  const auto any = [&](const auto& flags) {
    for (const char* f : flags) {
      if (r.Has(f)) return true;
    }
    return false;
  };
  if (r.DeepSpeed()) return v1::MEGATRON_DEEPSPEED;
  // An Accelerate FSDP or DDP run (accelerate_config.h): PyTorch's runtime.
  if (!r.flags().pytorch_runtime.empty()) return v1::FSDP2_TORCHTITAN;
  if (Code2021(r)) return v1::MEGATRON_LM_2021;
  if (!r.flags().pre_core_model.empty()) return v1::MEGATRON_LM_2022;
  const bool core = split.later_releases() || any(kCoreFlags);
  return core || !any(k2022Flags) ? v1::MEGATRON_CORE : v1::MEGATRON_LM_2022;
}

// Pipeline sends: Megatron-LM of May 2023 overlapped them with --overlap-p2p-communication (off by
// default); from October 2023 (commit 4eeff55, "Make overlap_p2p_comm the default") the interleaved
// schedule overlaps them unless --no-overlap-p2p-communication, and the others never do. A Megatron-Core
// line takes the later default; 2021-2022 lines and DeepSpeed's engine block.
bool BlockingP2p(const Reader& r, v1::Framework framework, int64_t chunks, std::vector<std::string>& notes) {
  if (r.Has("overlap-p2p-communication")) return false;
  if (r.Has("no-overlap-p2p-communication")) return true;
  if (framework == v1::MEGATRON_CORE && chunks > 1) {
    notes.push_back(
        "pipeline sends overlap the interleaved schedule's compute (blocking_p2p false): Megatron-Core's default "
        "since October 2023; --no-overlap-p2p-communication blocks them");
    return false;
  }
  return true;
}

// Megatron-LM of 2021-2022 with --DDP-impl torch (its SC'21 runs up to 18.4B): PyTorch's DDP; `local`,
// the default, is Megatron's own, which reduces after the backward.
bool TorchDdp(const Reader& r) { return r.Value("DDP-impl") == "torch"; }

// Megatron-LM v2's FP16 step (Plan.megatron_v2_fp16_optimizer) and local DDP's copies (megatron_local_ddp_copies),
// on a line the import reads as 2021's code (v2.0-v2.5: --checkpoint-activations and no later flag) that runs
// Megatron's own optimizer on FP16 gradients. Float16OptimizerWithFloat16Params casts every FP16 gradient to an
// FP32 copy (main_grad.float() or grad.float(): with FP16 buffers too), whatever the DDP; --DDP-impl local without
// --use-contiguous-buffers-in-ddp flattens, divides and copies back the gradients around the all-reduce
// (megatron/model/distributed.py at v2.5). A 2020 line (--model-parallel-size, --batch-size: names v2.0 replaced)
// runs v1's fp16/fp16.py optimizer instead, not priced by these fields. docs/megatron.md.
void SetMegatronV2Fp16Step(const Reader& r, v1::Framework framework, const v1::Model& model, v1::Plan& plan,
                           std::vector<std::string>& notes) {
  if (framework != v1::MEGATRON_LM_2021 || model.dtype() != v1::FP16 || plan.grad_reduce_in_fp32()) return;
  for (const std::string& renamed : r.flags().renamed) {
    if (absl::StartsWith(renamed, "--model-parallel-size ") || absl::StartsWith(renamed, "--batch-size ")) return;
  }
  plan.set_megatron_v2_fp16_optimizer(true);
  notes.push_back(
      "Megatron-LM v2's FP16 step (megatron_v2_fp16_optimizer): FP16 gradients cast to FP32 copies for the "
      "optimizer and the FP32 masters copied back (--fp16 without --accumulate-allreduce-grads-in-fp32)");
  if (TorchDdp(r)) return;
  if (r.Has("use-contiguous-buffers-in-ddp")) {
    notes.push_back(
        "--use-contiguous-buffers-in-ddp: gradients added into FP16 main_grad buffers by a hook a microbatch and "
        "reduced in place (not priced); local DDP's flatten and copy-back not counted");
    return;
  }
  plan.set_megatron_local_ddp_copies(true);
  notes.push_back(
      "--DDP-impl local without contiguous buffers (megatron_local_ddp_copies): gradients flattened, divided and "
      "copied back around their all-reduce");
}

// Megatron-Core's DDP buckets: with --overlap-grad-reduce, --ddp-bucket-size parameters, by default
// max(40M, 1M x DP) (distributed_data_parallel.py); without it one bucket, as Megatron sets none. In
// bytes of the reduced gradients (FP32 with grad_reduce_in_fp32). Megatron buckets the first pipeline
// stage's first model chunk only; hetsim's plan has one size for all (noted).
absl::Status SetDdpBuckets(const Reader& r, const Layout& l, const v1::Model& model, v1::Plan& plan,
                           std::vector<std::string>& notes) {
  if (r.Has("DDP-impl") && r.Value("DDP-impl") != "torch" && r.Value("DDP-impl") != "local") {
    return r.Error(absl::StrFormat("--DDP-impl: \"%s\" is not local or torch", r.Value("DDP-impl")));
  }
  if (TorchDdp(r)) {
    // PyTorch's DistributedDataParallel: 25 MiB buckets (bucket_cap_mb) all-reduced during the backward.
    plan.set_grad_bucket_bytes(25u << 20);
    notes.push_back(
        "--DDP-impl torch: PyTorch's DistributedDataParallel, gradients all-reduced during the backward in 25 MiB "
        "buckets (overlap_grad_reduce, grad_bucket_bytes)");
    return absl::OkStatus();
  }
  if (!r.Has("overlap-grad-reduce") || r.DeepSpeed()) {
    if (r.Has("ddp-bucket-size")) notes.push_back("--ddp-bucket-size: no effect without --overlap-grad-reduce");
    return absl::OkStatus();
  }
  HETSIM_ASSIGN_OR_RETURN(const int64_t params,
                          r.Int("ddp-bucket-size", std::max<int64_t>(40'000'000, 1'000'000 * l.dp), INT64_MAX / 8));
  const int64_t element_bytes = plan.grad_reduce_in_fp32() || model.dtype() == v1::FP32 ? 4 : 2;
  plan.set_grad_bucket_bytes(static_cast<uint64_t>(params * element_bytes));
  notes.push_back(absl::StrFormat(
      "gradient buckets of %d M parameters (%s; %d MB of %d-byte gradients), on every stage: Megatron buckets the "
      "first pipeline stage's first model chunk and reduces the others' in one",
      params / 1'000'000, r.Has("ddp-bucket-size") ? "--ddp-bucket-size" : "Megatron-Core's default max(40M, 1M x DP)",
      params * element_bytes / 1'000'000, element_bytes));
  return absl::OkStatus();
}

// Megatron-DeepSpeed: the stage of DeepSpeed's ZeRO (--zero-stage, or the config's); with pipelines,
// DeepSpeed's pipeline engine, which runs ZeRO stages 0 and 1 only.
absl::StatusOr<int> ReadDeepSpeedZeroStage(const Reader& r, const Layout& l) {
  int64_t stage = 0;
  if (r.Has("zero-stage") && (!absl::SimpleAtoi(r.Value("zero-stage"), &stage) || stage < 0 || stage > 3)) {
    return r.Error(absl::StrFormat("--zero-stage: \"%s\" is not 0, 1, 2 or 3", r.Value("zero-stage")));
  }
  if (r.Has("no-pipeline-parallel") && l.pp > 1) {
    return r.Contradict("--no-pipeline-parallel", absl::StrFormat("--pipeline-model-parallel-size %d", l.pp));
  }
  if (l.pp > 1 && stage > 1) {
    return r.Contradict(absl::StrFormat("ZeRO stage %d", stage),
                        absl::StrFormat("--pipeline-model-parallel-size %d", l.pp),
                        "DeepSpeed's pipeline engine runs ZeRO stages 0 and 1 only");
  }
  for (const char* megatron : {"use-distributed-optimizer", "use-torch-fsdp2", "use-megatron-fsdp"}) {
    if (r.Has(megatron)) return r.Contradict("--deepspeed", absl::StrCat("--", megatron));
  }
  return static_cast<int>(stage);
}

// The ZeRO stage of the data-parallel sharding: Megatron's distributed optimizer shards the optimizer
// state (1); Megatron-FSDP shards what --data-parallel-sharding-strategy says (its default no_shard
// shards nothing: gradients all-reduced, though Megatron-FSDP wants --use-distributed-optimizer too);
// PyTorch FSDP2 shards everything (3), and Megatron refuses it beside its own optimizer, pipelines and
// experts.
absl::StatusOr<int> ReadZeroStage(const Reader& r, const Layout& l, std::vector<std::string>& notes) {
  const bool megatron_fsdp = r.Has("use-megatron-fsdp") || r.Has("use-custom-fsdp");
  const int distributed_optimizer = r.Has("use-distributed-optimizer") ? 1 : 0;
  if (r.Has("use-torch-fsdp2")) {
    if (megatron_fsdp) return r.Contradict("--use-torch-fsdp2", "--use-megatron-fsdp");
    for (const char* other : {"use-distributed-optimizer", "overlap-param-gather"}) {
      if (r.Has(other)) return r.Contradict("--use-torch-fsdp2", absl::StrCat("--", other));
    }
    if (l.pp > 1) return r.Contradict("--use-torch-fsdp2", absl::StrFormat("--pipeline-model-parallel-size %d", l.pp));
    if (l.ep > 1) return r.Contradict("--use-torch-fsdp2", absl::StrFormat("--expert-model-parallel-size %d", l.ep));
    return 3;
  }
  if (r.DeepSpeed()) return ReadDeepSpeedZeroStage(r, l);
  if (!r.flags().pytorch_runtime.empty()) {  // FSDP's sharding strategy, from an Accelerate config: 0, 2 or 3
    int64_t stage = 0;
    if (!absl::SimpleAtoi(r.flags().Value("zero-stage").value_or("0"), &stage) || stage < 0 || stage > 3) {
      return r.Error("--zero-stage: not 0, 1, 2 or 3");
    }
    if (l.pp > 1 || l.tp > 1)
      return r.Error("Accelerate's FSDP runs data parallel only: no --tensor or pipeline sizes");
    return static_cast<int>(stage);
  }
  if (!megatron_fsdp) {
    if (r.Has("data-parallel-sharding-strategy")) {
      notes.push_back(absl::StrFormat("--data-parallel-sharding-strategy %s: no effect without --use-megatron-fsdp",
                                      r.Value("data-parallel-sharding-strategy")));
    }
    return distributed_optimizer;
  }
  const std::string strategy =
      r.Has("data-parallel-sharding-strategy") ? r.Value("data-parallel-sharding-strategy") : "no_shard";
  if (strategy == "no_shard") return 0;
  if (strategy == "optim") return 1;
  if (strategy == "optim_grads") return 2;
  if (strategy == "optim_grads_params") return 3;
  return r.Error(absl::StrFormat(
      "--data-parallel-sharding-strategy: \"%s\" is not no_shard, optim, optim_grads or optim_grads_params", strategy));
}

// What every stage shares: parallelism degrees, ZeRO, recomputation, sequence parallelism.
v1::Stage CommonStage(const Reader& r, const Layout& l, int zero_stage, const RecomputeChoice& recompute,
                      std::vector<std::string>& notes) {
  v1::Stage common;
  common.set_tensor_parallel(static_cast<uint32_t>(l.tp));
  common.set_data_parallel(static_cast<uint32_t>(l.dp));
  if (l.ep > 1) common.set_expert_parallel(static_cast<uint32_t>(l.ep));
  if (r.Has("num-experts") && l.etp != l.tp) common.set_expert_tensor_parallel(static_cast<uint32_t>(l.etp));
  common.set_zero_stage(static_cast<uint32_t>(zero_stage));
  common.set_recompute(recompute.recompute);
  if (recompute.num_layers > 0) common.set_recompute_num_layers(recompute.num_layers);
  if (r.Has("sequence-parallel") && l.tp == 1) {
    notes.push_back("--sequence-parallel: no effect with --tensor-model-parallel-size 1 (Megatron turns it off)");
  }
  common.set_sequence_parallel(r.Has("sequence-parallel") && l.tp > 1);
  return common;
}

// The split's flags (megatron_split.h), checked against each other and the model.
// --pipeline-model-parallel-layout: Megatron's own checks (the embedding first, the loss last, each
// once, every block placed, PP dividing the virtual stages) and hetsim's (the MTP modules with the loss,
// whose layer holds them; no virtual stage without a layer); the blocks of each pipeline stage.
absl::StatusOr<std::vector<int64_t>> ReadLayout(const Reader& r, const Layout& l, int64_t num_layers, int64_t mtp,
                                                MegatronSplit& split) {
  const std::string layout = r.Value("pipeline-model-parallel-layout");
  for (const char* other : {"decoder-first-pipeline-num-layers", "decoder-last-pipeline-num-layers",
                            "account-for-embedding-in-pipeline-split", "account-for-loss-in-pipeline-split",
                            "num-layers-per-virtual-pipeline-stage", "num-virtual-stages-per-pipeline-rank"}) {
    if (r.Has(other)) return r.Contradict("--pipeline-model-parallel-layout", absl::StrCat("--", other));
  }
  absl::StatusOr<std::vector<LayoutStage>> stages = ParsePipelineLayout(layout);
  if (!stages.ok()) return r.Error(stages.status().message());
  const auto fail = [&](const std::string& problem) {
    return r.Error(absl::StrFormat("--pipeline-model-parallel-layout %s: %s", layout, problem));
  };
  const int64_t k_total = static_cast<int64_t>(stages->size());
  if (k_total % l.pp != 0) {
    return fail(absl::StrFormat("%d virtual stages do not divide by --pipeline-model-parallel-size %d", k_total, l.pp));
  }
  if (l.pp == 1 && k_total > 1) return fail("interleaving needs a pipeline (--pipeline-model-parallel-size 1)");
  LayoutStage sum;
  std::vector<int64_t> blocks(static_cast<size_t>(l.pp), 0);
  for (int64_t k = 0; k < k_total; ++k) {
    const LayoutStage& s = (*stages)[static_cast<size_t>(k)];
    sum.embedding += s.embedding, sum.blocks += s.blocks, sum.mtp += s.mtp, sum.loss += s.loss;
    blocks[static_cast<size_t>(k % l.pp)] += s.blocks;
    if (s.Layers() == 0) {
      return fail(
          absl::StrFormat("virtual stage %d has no embedding, block or loss (not modelled: hetsim's "
                          "virtual stages hold a layer at least)",
                          k));
    }
    split.layout_layers.push_back(s.Layers());
  }
  const LayoutStage& first = stages->front();
  const LayoutStage& last = stages->back();
  if (sum.embedding != 1 || !first.embedding_first) return fail("the embedding (E) must come once, first");
  if (sum.loss != 1 || !last.loss_last) return fail("the loss (L) must come once, last");
  if (sum.blocks != num_layers) {
    return fail(absl::StrFormat("%d blocks (t), but --num-layers %d", sum.blocks, num_layers));
  }
  if (sum.mtp != mtp) return fail(absl::StrFormat("%d MTP modules (m), but --mtp-num-layers %d", sum.mtp, mtp));
  if (last.mtp != mtp) {
    return fail("MTP modules (m) apart from the loss: not modelled (hetsim runs them in the head's layer)");
  }
  return blocks;  // every pipeline stage holds a layer: no virtual stage is empty
}

// Megatron-DeepSpeed's --pp-partition-method, DeepSpeed's PipelineModule partition_method
// (deepspeed/runtime/pipe/module.py): "type:REGEX" balances the layers whose class name matches. Its
// GPT's default "type:transformer" balances the blocks, hetsim's even split; BigScience's
// "type:transformer|embedding" (BLOOM) also counts the input embedding and the tied output embedding
// as a layer each, Megatron's --account-for-embedding/loss-in-pipeline-split both. Other methods
// ("parameters", "uniform") are noted and the blocks split evenly.
void ReadDeepSpeedPartition(const Reader& r, MegatronSplit& split, std::vector<std::string>& notes) {
  if (!r.Has("pp-partition-method")) return;
  const std::string method = absl::AsciiStrToLower(r.Value("pp-partition-method"));
  if (method == "type:transformer") return;
  if (method == "type:transformer|embedding" || method == "type:embedding|transformer") {
    split.account_embedding = true;
    split.account_loss = true;
    return;
  }
  notes.push_back(
      absl::StrFormat("--pp-partition-method %s: DeepSpeed's split by %s is not modelled: the blocks are split evenly",
                      method, method));
}

absl::StatusOr<std::vector<int64_t>> ReadSplit(const Reader& r, const Layout& l, int64_t num_layers, int64_t mtp,
                                               MegatronSplit& split, std::vector<std::string>& notes) {
  if (r.Has("pipeline-model-parallel-layout")) return ReadLayout(r, l, num_layers, mtp, split);
  ReadDeepSpeedPartition(r, split, notes);
  if (r.Has("decoder-first-pipeline-num-layers")) {
    HETSIM_ASSIGN_OR_RETURN(split.first_blocks, r.Int("decoder-first-pipeline-num-layers", 0));
  }
  if (r.Has("decoder-last-pipeline-num-layers")) {
    HETSIM_ASSIGN_OR_RETURN(split.last_blocks, r.Int("decoder-last-pipeline-num-layers", 0));
  }
  split.account_embedding = split.account_embedding || r.Has("account-for-embedding-in-pipeline-split");
  split.account_loss = split.account_loss || r.Has("account-for-loss-in-pipeline-split");
  absl::StatusOr<std::vector<int64_t>> blocks = StageBlocks(split, num_layers, l.pp);
  if (!blocks.ok()) return r.Error(blocks.status().message());
  return blocks;
}

// Interleaving: --num-layers-per-virtual-pipeline-stage N (layers of a chunk, the embedding and loss
// counted when the split accounts for them) or --num-virtual-stages-per-pipeline-rank V (chunks); 1 =
// not interleaved.
absl::StatusOr<int64_t> ReadVirtualStages(const Reader& r, const Layout& l, const MegatronSplit& split,
                                          int64_t num_layers, const std::vector<int64_t>& stage_blocks) {
  if (!split.layout_layers.empty()) return static_cast<int64_t>(split.layout_layers.size()) / l.pp;
  const bool per_chunk_given = r.Has("num-layers-per-virtual-pipeline-stage");
  const bool chunks_given = r.Has("num-virtual-stages-per-pipeline-rank");
  if (!per_chunk_given && !chunks_given) return 1;
  if (per_chunk_given && chunks_given) {
    return r.Contradict("--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank");
  }
  const std::string flag =
      per_chunk_given ? "num-layers-per-virtual-pipeline-stage" : "num-virtual-stages-per-pipeline-rank";
  const std::string given = absl::StrCat("--", flag, " ", r.Value(flag));
  if (l.pp == 1) return r.Contradict(given, "--pipeline-model-parallel-size 1", "interleaving needs a pipeline");
  if (chunks_given) {
    HETSIM_ASSIGN_OR_RETURN(int64_t chunks, r.Int("num-virtual-stages-per-pipeline-rank", 0));
    // Megatron cuts every stage's share evenly: the uneven split's blocks, or the layers a stage holds.
    for (size_t p = 0; p < stage_blocks.size(); ++p) {
      const int64_t share = split.uneven() ? stage_blocks[p] : split.LayersPerStage(num_layers, l.pp);
      if (share % chunks != 0) {
        return r.Error(absl::StrFormat("%s does not divide the %d %s of pipeline stage %d", given, share,
                                       split.uneven() ? "blocks" : "layers", p));
      }
    }
    return chunks;
  }
  HETSIM_ASSIGN_OR_RETURN(int64_t per_chunk, r.Int("num-layers-per-virtual-pipeline-stage", 0));
  if (split.uneven()) {
    return r.Contradict(given, "--decoder-first/last-pipeline-num-layers",
                        "Megatron counts an uneven pipeline's chunks with --num-virtual-stages-per-pipeline-rank");
  }
  const int64_t per_stage = split.LayersPerStage(num_layers, l.pp);
  if (per_stage % per_chunk != 0) {
    return r.Error(absl::StrFormat("%s does not divide the %d layers of a pipeline stage", given, per_stage));
  }
  return per_stage / per_chunk;
}

// A stage's mesh: `node_count` nodes x `gpus_per_node` GPUs, stages tiled side by side on each node.
struct StageTiling {
  int64_t node_count = 1, gpus_per_node = 1;
};

// Megatron's rank order puts stage p on ranks [p G, (p+1) G): whole nodes, or part of one. A stage of
// G GPUs that does neither (TP 4 x DP 3 = 12 on 8-GPU nodes: 1.5 nodes) is not a rectangle of nodes x
// GPUs, which a hetsim mesh is: it is placed on G / d nodes x d GPUs instead (d the largest divisor of
// the node holding whole TP x CP groups and tiling the stages), noted. Tensor-parallel groups stay
// inside nodes as in Megatron; pipeline and data-parallel transfers take other links.
absl::StatusOr<StageTiling> TileStages(const Reader& r, const Layout& l, int64_t g, std::vector<std::string>& notes) {
  const int64_t gpn = l.gpus_per_node;
  const int64_t group = l.tp * l.cp;  // ranks that stay together, innermost in Megatron's order
  if (g % gpn == 0 && (group % gpn == 0 || gpn % group == 0)) return StageTiling{g / gpn, gpn};
  if (gpn % g == 0) return StageTiling{1, g};
  for (int64_t d = gpn; d >= 1; --d) {
    // Whole groups inside a node row, or groups of whole rows (TP 12 as 3 x 4 GPUs; not one GPU a node).
    const bool whole_groups = group <= d ? d % group == 0 : d > 1 && group % d == 0;
    if (gpn % d != 0 || g % d != 0 || !whole_groups || l.pp % (gpn / d) != 0) continue;
    notes.push_back(absl::StrFormat(
        "a pipeline stage of %d GPUs neither fills whole nodes of %d GPUs nor divides one (Megatron puts stage p "
        "on ranks p x %d ..): placed on %d nodes x %d GPUs, %d stages side by side, which hetsim meshes can "
        "say; tensor-parallel groups stay inside nodes",
        g, gpn, g, g / d, d, gpn / d));
    return StageTiling{g / d, d};
  }
  return r.Error(
      absl::StrFormat("a pipeline stage of %d GPUs neither fills whole nodes of %d GPUs nor divides one, and no "
                      "rectangle of nodes x GPUs holds it with whole tensor-parallel groups",
                      g, gpn));
}

// Stage p holds its blocks (megatron_split.h) on ranks [p G, (p+1) G), G = TP CP DP ranks filling nodes
// in order (tiled where that is not a rectangle: TileStages); the embedding joins the first stage and
// the head the last.
absl::Status AddStages(const Reader& r, const Layout& l, const std::vector<int64_t>& blocks, const v1::Stage& common,
                       v1::Plan& plan, std::vector<std::string>& notes) {
  const int64_t g = l.tp * l.cp * l.dp;
  HETSIM_ASSIGN_OR_RETURN(const StageTiling tiling, TileStages(r, l, g, notes));
  int64_t first_layer = 0;
  for (int64_t p = 0; p < l.pp; ++p) {
    v1::Stage& s = *plan.add_stages();
    s = common;
    s.set_first_layer(static_cast<uint32_t>(first_layer));
    s.set_num_layers(static_cast<uint32_t>(blocks[p] + (p == 0) + (p == l.pp - 1)));
    first_layer += s.num_layers();
    v1::Mesh& m = *s.mutable_mesh();
    m.set_island(l.island->name());
    const int64_t slots = l.gpus_per_node / tiling.gpus_per_node;  // stages side by side on the same nodes
    m.set_first_node(static_cast<uint32_t>(p / slots * tiling.node_count));
    m.set_node_count(static_cast<uint32_t>(tiling.node_count));
    m.set_first_gpu(static_cast<uint32_t>(p % slots * tiling.gpus_per_node));
    m.set_gpus_per_node(static_cast<uint32_t>(tiling.gpus_per_node));
  }
  return absl::OkStatus();
}

}  // namespace

// Flags hetsim prices only at one value: that value says nothing, any other is noted as not modelled
// with what hetsim prices instead.
// Megatron's checks on --overlap-moe-expert-parallel-comm (combined 1F1B), by flag.
absl::Status CheckMoeOverlap(const Reader& r, const Layout& l, int64_t chunks, const v1::Model& model) {
  if (l.ep <= 1) {
    return r.Error("--overlap-moe-expert-parallel-comm: needs --expert-model-parallel-size > 1");
  }
  if (model.transformer().moe_token_dispatcher() == v1::MOE_DISPATCHER_ALL_GATHER) {
    return r.Error(
        "--overlap-moe-expert-parallel-comm: needs --moe-token-dispatcher-type alltoall or flex (allgather is "
        "Megatron's default)");
  }
  if (l.pp > 1 && chunks <= 1) {
    return r.Error(absl::StrFormat(
        "--overlap-moe-expert-parallel-comm: needs a virtual pipeline with --pipeline-model-parallel-size %d", l.pp));
  }
  if (r.Has("recompute-granularity") && r.Value("recompute-granularity") == "full") {
    return r.Contradict("--overlap-moe-expert-parallel-comm", "--recompute-granularity full",
                        "Megatron's combined 1F1B does not run with full recomputation");
  }
  return absl::OkStatus();
}

void NoteSettingsPricedOtherwise(const Reader& r, const Layout& l, const RecomputeChoice& recompute,
                                 std::vector<std::string>& notes) {
  if (r.Has("optimizer") && absl::AsciiStrToLower(r.Value("optimizer")) != "adam") {
    notes.push_back(
        absl::StrFormat("--optimizer %s: priced as Adam's states (two moments a parameter)", r.Value("optimizer")));
  }
  if (r.Has("delay-wgrad-compute")) {
    notes.push_back(
        "not modelled: --delay-wgrad-compute (the weight gradients it defers would hide more of the experts' "
        "dispatch under --overlap-moe-expert-parallel-comm)");
  }
  if (r.Has("fp8-recipe")) {
    const std::string recipe = r.Value("fp8-recipe");
    if (!r.Has("fp8-format")) {
      notes.push_back(absl::StrFormat("--fp8-recipe %s: no effect without --fp8-format", recipe));
    } else if (recipe != "tensorwise" && recipe != "delayed") {
      notes.push_back(absl::StrFormat(
          "not modelled: --fp8-recipe %s (its block scales' quantization; priced as per-tensor FP8)", recipe));
    }
  }
  if (r.Has("expert-tensor-parallel-size") && !r.Has("num-experts")) {
    notes.push_back(absl::StrFormat("--expert-tensor-parallel-size %d: no effect without --num-experts", l.etp));
  }
  const std::vector<std::string> modules = r.Values("recompute-modules");
  if (!modules.empty()) {
    const std::string list = absl::StrJoin(modules, " ");
    if (recompute.recompute != v1::RECOMPUTE_SELECTIVE) {
      notes.push_back(
          absl::StrFormat("--recompute-modules %s: no effect without --recompute-granularity selective", list));
    } else if (list != "core_attn") {
      notes.push_back(absl::StrFormat(
          "not modelled: --recompute-modules %s (priced as Megatron's default, the attention core)", list));
    }
  }
}

// Megatron-LM reduces input gradients asynchronously from v2.6 on. 2022-23's
// --no-async-tensor-model-parallel-allreduce turns it off, except under sequence parallelism, whose
// reduce-scatter is always asynchronous. A line with the 2021 flag --checkpoint-activations and none
// of the later ones is taken as 2021's code (the SC'21 artifact), which did not overlap. Pipeline
// sends block as BlockingP2p says.
void SetPassOverlaps(const Reader& r, const Layout& l, v1::Framework framework, int64_t chunks, v1::Plan& plan,
                     std::vector<std::string>& notes) {
  const bool sp = r.Has("sequence-parallel");
  // BigScience's fork of Megatron-DeepSpeed (its flag --pp-partition-method) reduces the input gradients
  // after the weight gradients, as 2021's code (its megatron/mpu/layers.py has no asynchronous all-reduce).
  const bool code_2021 = Code2021(r) || r.Has("pp-partition-method");
  plan.set_tp_backward_overlap(l.tp > 1 && !code_2021 && (sp || !r.Has("no-async-tensor-model-parallel-allreduce")));
  if (code_2021 && l.tp > 1 && !Code2021(r)) {
    notes.push_back(
        "--pp-partition-method: BigScience's fork of Megatron-DeepSpeed, whose backward does not overlap the "
        "tensor-parallel reductions (tp_backward_overlap false)");
  } else if (code_2021 && l.tp > 1) {
    notes.push_back(
        "--checkpoint-activations without later flags: taken as Megatron-LM of 2021, whose backward did not "
        "overlap the tensor-parallel reductions (tp_backward_overlap false)");
  }
  plan.set_blocking_p2p(l.pp > 1 && BlockingP2p(r, framework, chunks, notes));
}

// The defaults of the release a line's framework stands for, as the import applies them.
const char* AssumedDefaults(v1::Framework framework) {
  switch (framework) {
    case v1::MEGATRON_CORE:
      return "Megatron-Core's of 2024-2025 (attention backend auto, interleaved pipeline sends overlapped since "
             "October 2023, DDP buckets of max(40M, 1M x DP) parameters with --overlap-grad-reduce)";
    case v1::MEGATRON_LM_2022:
      return "Megatron-LM 2022's (unfused attention, blocking pipeline sends, one gradient all-reduce per stage)";
    case v1::MEGATRON_LM_2021:
      return "Megatron-LM 2021's, v2.5 (unfused attention, blocking pipeline sends, synchronous TP backward)";
    case v1::MEGATRON_DEEPSPEED:
      return "DeepSpeed's engine (its pipeline engine's blocking sends, gradients reduced after the backward)";
    case v1::FSDP2_TORCHTITAN:
      return "PyTorch's (an Accelerate FSDP or DDP run: eager kernels, SDPA flash attention; FSDP's per-block "
             "gradient reduce-scatter in the mixed precision's type, DDP's FP32 buckets)";
    case v1::FRAMEWORK_UNSPECIFIED:
    case v1::Framework_INT_MIN_SENTINEL_DO_NOT_USE_:
    case v1::Framework_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  return "the plan's fields";
}

// Plan.framework named (LineFramework); the profile's behaviours the flags leave off go into
// framework_off, so the plan runs exactly as the flags say.
// `deepspeed_off`: the profile's behaviours the line's DeepSpeed config switches off (MegatronFlags.deepspeed_off).
void SetFramework(v1::Framework framework, const v1::Model& model, const std::vector<std::string>& deepspeed_off,
                  v1::Plan& plan, std::vector<std::string>& notes) {
  plan.set_framework(framework);
  // v2.x's layers norm with its own build of apex's FusedLayerNormAffineFunction whatever the flags say
  // (megatron/model/fused_layer_norm.py; the persistent kernel came in 2022): its backward's extra pass.
  if (framework == v1::MEGATRON_LM_2021) plan.set_layer_norm_weight_grad_pass(true);
  // Megatron-DeepSpeed's behaviours are its engine's, not flags of the line: its profile applies whole.
  const spec::FrameworkProfile& profile = plan.framework() == v1::MEGATRON_DEEPSPEED
                                              ? spec::ProfileOf(proto::FrameworkOf(plan.framework()))
                                              : KeepBehavioursUnderFramework(plan.framework(), model, plan);
  if (framework == v1::MEGATRON_DEEPSPEED) {
    const spec::ProfileContext context = proto::ProfileContextOf(plan, model);
    for (const auto& [field, value] : profile.Behaviours()) {
      if (std::find(deepspeed_off.begin(), deepspeed_off.end(), field) != deepspeed_off.end() &&
          spec::ProfileTurnsOn(field, value, context)) {
        plan.add_framework_off(field);
      }
    }
  }
  notes.push_back(absl::StrFormat(
      "framework %s (%s), read from the line's flags%s; defaults assumed for what the line leaves "
      "out: %s",
      profile.name, profile.enum_name,
      plan.framework_off().empty() ? ""
                                   : absl::StrCat("; the flags switch off ", absl::StrJoin(plan.framework_off(), ", ")),
      AssumedDefaults(framework)));
}

// The attention kernel a line that names none runs: Megatron-Core's layers (Transformer Engine's, the
// default --transformer-impl) pick flash or fused attention (--attention-backend auto, the default
// since Megatron-Core 0.10; TE's DotProductAttention chose them before); Megatron's own local layers
// and the releases before Megatron-Core run the unfused path.
void DefaultAttention(const Reader& r, v1::Framework framework, v1::Model& model, std::vector<std::string>& notes) {
  if ((r.Has("attention-backend") && r.Value("attention-backend") != "auto") || r.Has("use-flash-attn") ||
      framework != v1::MEGATRON_CORE) {
    return;
  }
  if (r.Value("transformer-impl") == "local") {
    notes.push_back("attention: --transformer-impl local runs Megatron's unfused attention");
    return;
  }
  if (r.Has("use-legacy-models")) {
    notes.push_back(
        "attention: --use-legacy-models runs Megatron-LM's pre-Core model, whose attention is unfused unless "
        "--use-flash-attn (megatron/legacy/model/transformer.py)");
    return;
  }
  // Transformer Engine's DotProductAttention picks its backend from the environment's NVTE_FLASH_ATTN and
  // NVTE_FUSED_ATTN (each "1" by default; transformer_engine/pytorch/attention/dot_product_attention/utils.py,
  // get_attention_backend): with both "0" only its unfused path is left.
  const LaunchContext& launch = r.flags().launch;
  if (launch.EnvironmentOff("NVTE_FLASH_ATTN") && launch.EnvironmentOff("NVTE_FUSED_ATTN")) {
    model.mutable_transformer()->set_attention(v1::ATTENTION_UNFUSED);
    notes.push_back(
        "attention: NVTE_FLASH_ATTN=0 and NVTE_FUSED_ATTN=0 in the launch's environment: Transformer Engine runs "
        "its unfused attention (--attention-backend auto)");
    return;
  }
  model.mutable_transformer()->set_attention(v1::ATTENTION_FLASH);
  if (r.Has("attention-backend")) return;  // auto, said
  notes.push_back(
      "attention: Megatron-Core's default, --attention-backend auto (flash or fused attention); "
      "--attention-backend unfused prices the unfused path");
}

// Flags only Megatron-LM's vision-language trainings take (examples/multimodal, MIMO, pretrain_vlm.py):
// the image size, the patch size and the two towers' types.
constexpr const char* kVisionFlags[] = {"img-h", "img-w", "patch-dim", "vision-model-type", "language-model-type"};

// The first vision-language flag of the line as written ("--img-h 336"), or nullopt.
std::optional<std::string> VisionFlagOf(const MegatronFlags& flags) {
  for (const char* name : kVisionFlags) {
    if (flags.Has(name)) return absl::StrCat("--", name, " ", absl::StrJoin(flags.Values(name), " "));
  }
  return std::nullopt;
}

// Megatron-DeepSpeed's trainings of more than one GPT: a teacher beside the student, or MoE layers of
// several sizes (PR-MoE). hetsim's model has one decoder and one expert count.
absl::Status RefuseDeepSpeedVariants(const Reader& r, const MegatronFlags& flags) {
  if (flags.Has("kd")) {
    return r.Error(
        "--kd: knowledge distillation (Megatron-DeepSpeed: the teacher of --num-layers-teacher runs a forward on "
        "every micro-batch beside the student) is not modelled; without --kd the line is the student's own "
        "training");
  }
  if (flags.Values("num-experts").size() > 1) {
    return r.Error(absl::StrFormat(
        "--num-experts %s: an expert count per layer group (Megatron-DeepSpeed's pyramid MoE, PR-MoE) is not "
        "modelled (hetsim's MoE layers all have one expert count)",
        absl::StrJoin(flags.Values("num-experts"), " ")));
  }
  if (flags.Value("mlp-type") == std::optional<std::string>("residual")) {
    return r.Error(
        "--mlp-type residual: Residual MoE (a dense MLP beside every MoE layer, DeepSpeed's PR-MoE) is not "
        "modelled; --mlp-type standard is plain MoE");
  }
  return absl::OkStatus();
}

// Models and schedules hetsim cannot describe: pricing them as GPT decoders under 1F1B would be silently
// wrong.
absl::Status RefuseOtherModels(const Reader& r, const MegatronFlags& flags) {
  HETSIM_RETURN_IF_ERROR(RefuseDeepSpeedVariants(r, flags));
  if (MegatronEntryPoint(flags) && (flags.launch.script != "main.py" || flags.Has("task"))) {
    if (std::optional<std::string> other = OtherModelEntryPoint(flags.launch.script)) {
      std::optional<std::string> task = flags.Value("task");
      return r.Error(task ? absl::StrCat("--task ", *task, ": ", *other) : *other);
    }
  }
  // Megatron-LM's MIMO trainer (examples/mimo/train.py: multimodal in, multimodal out) builds its model from
  // --model-provider (mock, llava_vlm, video_llava_vlm, llava_avlm: encoders beside the language model).
  if (std::optional<std::string> provider = flags.Value("model-provider")) {
    return r.Error(absl::StrFormat(
        "--model-provider %s: Megatron-LM's MIMO trainer (examples/mimo/train.py) builds a multimodal model (its "
        "encoders and projections beside the language model) from the provider, which hetsim does not model (it "
        "prices GPT-style decoders)",
        *provider));
  }
  if (std::optional<std::string> vision = VisionFlagOf(flags)) {
    return r.Error(absl::StrFormat(
        "%s: a vision-language model (Megatron-LM's multimodal training, %s), which hetsim does not model (it "
        "prices GPT-style decoders; the vision encoder and its image tokens are not in the line's decoder flags)",
        *vision, flags.launch.script.empty() ? "a vision encoder before the language model" : flags.launch.script));
  }
  // DeepSpeed's FPDT (Ulysses with attention in chunks, offloaded to host memory): priced as plain
  // Ulysses, a run that fits only so would be out of memory.
  if (flags.Has("ds-sequence-parallel-fpdt")) {
    return r.Error(
        "--ds-sequence-parallel-fpdt: DeepSpeed's fully pipelined distributed transformer (attention in chunks, "
        "offloaded to host memory) is not modelled; without the flag the line is priced as DeepSpeed-Ulysses");
  }
  if (flags.Has("window-size")) {
    return r.Error(absl::StrFormat(
        "--window-size %s: sliding-window attention is not modelled (hetsim prices full causal attention, "
        "which costs more at long sequences); drop the flag for an upper bound",
        flags.Value("window-size").value_or("")));
  }
  // Megatron-DeepSpeed's zero-bubble schedule defers weight gradients into the bubbles: not 1F1B.
  if (flags.Has("enable-zbh1-pipeline")) {
    return r.Error(
        "--enable-zbh1-pipeline: the zero-bubble schedule (ZB-H1: weight gradients deferred into the pipeline's "
        "bubbles) is not modelled (hetsim runs 1F1B, interleaved 1F1B, GPipe and HAPT's schedules); without the "
        "flag the line is DeepSpeed's 1F1B");
  }
  // Megatron's BERT without its binary (sentence-order) head: arguments.py's --bert-no-binary-head
  // (dest bert_binary_head), read by BERT's model provider alone. Its functional-test configs write it
  // where only the recipe names examples/bert/pretrain_bert.py.
  if (flags.Has("bert-no-binary-head")) {
    return r.Error(
        "--bert-no-binary-head: a BERT flag (Megatron's BERT, pretrain_bert.py, without its sentence-order head), "
        "and hetsim does not model BERT (it prices GPT-style decoders)");
  }
  // Megatron's T5 (pretrain_t5.py) sizes its encoder and decoder apart; a GPT line has neither.
  for (const char* name : {"encoder-num-layers", "decoder-num-layers", "decoder-seq-length"}) {
    if (!flags.Has(name)) continue;
    return r.Error(absl::StrFormat(
        "--%s: an encoder-decoder model (Megatron's T5, pretrain_t5.py), which hetsim does not model (it prices "
        "GPT-style decoders)",
        name));
  }
  for (const auto& [name, value] : flags.flags) {
    if (absl::StartsWith(name, "mamba-") || name == "hybrid-override-pattern" || name == "hybrid-layer-pattern" ||
        name == "hybrid-attention-ratio" || name == "hybrid-mlp-ratio" || name == "is-hybrid-model") {
      return r.Error(
          absl::StrFormat("--%s: Mamba and hybrid Mamba models are not modelled (hetsim prices transformers)", name));
    }
  }
  return absl::OkStatus();
}

namespace {

// Overlap flags Megatron honours only with others.
absl::Status CheckOverlapFlags(const Reader& r, int zero_stage) {
  const bool megatron_fsdp = r.Has("use-megatron-fsdp") || r.Has("use-custom-fsdp");
  if (r.Has("overlap-param-gather") && zero_stage == 0 && !megatron_fsdp) {
    return r.Contradict("--overlap-param-gather", "the absence of --use-distributed-optimizer",
                        "parameters are gathered only by the distributed optimizer (or a sharded FSDP)");
  }
  if (r.Has("overlap-param-gather") && !r.Has("overlap-grad-reduce")) {
    return r.Contradict("--overlap-param-gather", "the absence of --overlap-grad-reduce",
                        "Megatron overlaps the parameter gather only with the gradient reduce overlapped");
  }
  if (r.Has("tp-comm-overlap") && !r.Has("sequence-parallel")) {
    return r.Contradict("--tp-comm-overlap", "the absence of --sequence-parallel",
                        "Megatron overlaps tensor-parallel communication only with sequence parallelism");
  }
  return absl::OkStatus();
}

// Megatron's micro-batch; a DeepSpeed config without train_micro_batch_size_per_gpu gives it as
// DeepSpeed derives it: train_batch_size / (gradient_accumulation_steps x data parallel).
absl::StatusOr<int64_t> MicroBatch(const Reader& r, const Layout& l, std::vector<std::string>& notes) {
  // A script that builds its model itself (a Hugging Face one under accelerate or torchrun) sets its batch
  // itself unless its line says it: the flag that says it there, not Megatron's.
  if (!r.Has("micro-batch-size") && !(r.Has("global-batch-size") && r.DeepSpeed()) && !MegatronEntryPoint(r.flags())) {
    return r.Error(absl::StrFormat(
        "%s sets its batch itself, not on its line: give the batch per GPU on the line as the Hugging Face Trainer's "
        "--per_device_train_batch_size N (or --micro-batch-size N)",
        r.flags().launch.script));
  }
  if (r.Has("micro-batch-size") || !r.Has("global-batch-size") || !r.DeepSpeed()) return r.Int("micro-batch-size", 0);
  HETSIM_ASSIGN_OR_RETURN(const int64_t global, r.Int("global-batch-size", 0));
  HETSIM_ASSIGN_OR_RETURN(const int64_t accumulation, r.Int("gradient-accumulation-steps", 1));
  if (global % (accumulation * l.dp) != 0) {
    return r.Error(absl::StrFormat(
        "the DeepSpeed config's train_batch_size %d is not a multiple of gradient_accumulation_steps %d x data "
        "parallel %d (DeepSpeed's rule): no micro-batch per GPU fits",
        global, accumulation, l.dp));
  }
  notes.push_back(absl::StrFormat(
      "micro-batch per GPU %d: train_batch_size %d / (gradient_accumulation_steps %d x data parallel %d), as "
      "DeepSpeed derives it",
      global / (accumulation * l.dp), global, accumulation, l.dp));
  return global / (accumulation * l.dp);
}

// --step-batch-size-schedule "THRESHOLD:BATCH ..." (Megatron-Core's num_microbatches_calculator.py, since Megatron-LM
// 532ad92 of 2026-04: thresholds in samples, or tokens with a K, M, B or T suffix): the batch of its last step, what
// the run trains at once it passes the last threshold; 0 without the flag. Beside --global-batch-size it is refused, as
// Megatron's arguments.py (validate_args, since 532ad92) raises "Cannot specify both --step-batch-size-schedule and
// --global-batch-size"; its own examples/gpt3 script of 2026 writes both, a line Megatron does not run.
absl::StatusOr<int64_t> ScheduledBatch(const Reader& r, std::vector<std::string>& notes) {
  if (!r.Has("step-batch-size-schedule")) return 0;
  const std::string schedule = r.Value("step-batch-size-schedule");
  double last_threshold = -1;
  int64_t batch = 0;
  for (absl::string_view step : absl::StrSplit(schedule, ' ', absl::SkipEmpty())) {
    const std::vector<absl::string_view> parts = absl::StrSplit(step, ':');
    absl::string_view at = parts.front();
    double scale = 1;
    if (!at.empty() && absl::string_view("KMBT").find(at.back()) != absl::string_view::npos) {
      scale = std::pow(1e3, 1 + static_cast<int>(absl::string_view("KMBT").find(at.back())));
      at.remove_suffix(1);
    }
    double threshold = 0;
    int64_t size = 0;
    if (parts.size() != 2 || !absl::SimpleAtod(at, &threshold) || !absl::SimpleAtoi(parts[1], &size) || size <= 0 ||
        size > INT32_MAX) {
      return r.Error(absl::StrFormat(
          "--step-batch-size-schedule: \"%s\": \"%s\" is not THRESHOLD:BATCH (Megatron-Core's format, e.g. "
          "\"0:768 250B:1536\")",
          schedule, step));
    }
    if (threshold * scale >= last_threshold) {
      last_threshold = threshold * scale;
      batch = size;
    }
  }
  if (batch == 0) return r.Error("--step-batch-size-schedule: empty");
  if (r.Has("global-batch-size")) {
    return r.Contradict(absl::StrFormat("--step-batch-size-schedule \"%s\"", schedule),
                        absl::StrCat("--global-batch-size ", r.Value("global-batch-size")),
                        "Megatron refuses the pair (arguments.py: \"Cannot specify both --step-batch-size-schedule "
                        "and --global-batch-size\"); keep one: the schedule's last batch is what hetsim prices");
  }
  notes.push_back(absl::StrFormat(
      "--step-batch-size-schedule \"%s\": the global batch of its last step, %d (the steps before run smaller "
      "batches)",
      schedule, batch));
  return batch;
}

// The global batch and hetsim's microbatch (Megatron's micro-batch on every data-parallel replica).
absl::Status ReadBatch(const Reader& r, const Layout& l, v1::Plan& plan, std::vector<std::string>& notes) {
  HETSIM_ASSIGN_OR_RETURN(int64_t micro, MicroBatch(r, l, notes));
  HETSIM_ASSIGN_OR_RETURN(const int64_t scheduled, ScheduledBatch(r, notes));
  // DeepSpeed's config (or the Trainer's line) may give the accumulation steps instead of the batch.
  HETSIM_ASSIGN_OR_RETURN(const int64_t accumulation, r.Int("gradient-accumulation-steps", 1));
  if (!r.Has("global-batch-size") && scheduled == 0) {
    notes.push_back(
        absl::StrFormat("--global-batch-size not given: --micro-batch-size x data parallel%s = %d, Megatron's default",
                        accumulation > 1 ? absl::StrFormat(" x %d accumulation steps", accumulation) : "",
                        micro * l.dp * accumulation));
  }
  HETSIM_ASSIGN_OR_RETURN(int64_t global,
                          r.Int("global-batch-size", scheduled > 0 ? scheduled : micro * l.dp * accumulation));
  if (r.Has("gradient-accumulation-steps") && global != micro * l.dp * accumulation) {
    return r.Contradict(absl::StrFormat("the global batch %d", global),
                        absl::StrFormat("the DeepSpeed config's gradient_accumulation_steps %d", accumulation),
                        absl::StrFormat("micro-batch %d x data parallel %d x %d steps = %d", micro, l.dp, accumulation,
                                        micro * l.dp * accumulation));
  }
  if (global % (micro * l.dp) != 0) {
    return r.Contradict(
        absl::StrFormat("--global-batch-size %d", global), absl::StrFormat("--micro-batch-size %d", micro),
        absl::StrFormat("the global batch must be a multiple of micro-batch x data parallel (%d)", micro * l.dp));
  }
  plan.set_global_batch_size(global);
  plan.set_micro_batch_size(micro * l.dp);  // hetsim's microbatch spans the data-parallel replicas
  return absl::OkStatus();
}

// What the import did with the flags it did not price.
void AddFlagNotes(const MegatronFlags& flags, std::vector<std::string>& notes) {
  for (const std::string& n : flags.launch.notes) notes.push_back(n);
  for (const std::string& n : flags.launch.defaults) notes.push_back(n);
  for (const std::string& f : flags.renamed) notes.push_back(absl::StrCat("read as renamed: ", f));
  if (!flags.no_effect.empty()) {
    notes.push_back(absl::StrCat("no effect on an iteration's cost: ", absl::StrJoin(flags.no_effect, ", ")));
  }
  for (const std::string& f : flags.not_modelled) notes.push_back(absl::StrCat("not modelled (ignored): ", f));
  for (const std::string& f : flags.unknown) notes.push_back(absl::StrCat("unknown (ignored): ", f));
}

// Megatron's fusions switched off by the line, kernel by kernel (Plan.unfused_kernels): the bias
// before the activation follows --no-bias-swiglu-fusion on --swiglu lines and --no-bias-gelu-fusion on
// the others (Megatron's core_transformer_config_from_args), so there the other flag does nothing; the
// masked softmax runs only in unfused attention. Its fused kernels take 16-bit scores only:
// FusedScaleMaskSoftmax.is_kernel_available asks `input_in_float16` (--fp16 or --bf16; megatron/model/
// fused_softmax.py of 2021-08 and 2022-09, megatron/core/fusions/fused_softmax.py today; `input_in_fp16`
// in 2020's forward), so an FP32 line runs forward_torch_softmax, the unfused mask, with or without
// --no-masked-softmax-fusion.
// The code that decides whether a 16-bit line's fused softmax kernel runs (fused_softmax_internal.h), by
// the line's framework and layers; nullopt where hetsim has not read it (NeMo's legacy model: Apex's).
std::optional<SoftmaxKernelCheck> LineSoftmaxCheck(const Reader& r, v1::Framework framework) {
  if (!r.flags().pre_core_model.empty()) return std::nullopt;
  switch (framework) {
    case v1::MEGATRON_LM_2021: return SoftmaxKernelCheck::kMegatron2021;
    case v1::MEGATRON_LM_2022:
    case v1::MEGATRON_DEEPSPEED: return SoftmaxKernelCheck::kMegatron;
    case v1::MEGATRON_CORE:
      if (r.Has("use-legacy-models")) return SoftmaxKernelCheck::kMegatronLegacyModel;
      return r.Value("transformer-impl") == "local" ? SoftmaxKernelCheck::kMegatron
                                                    : SoftmaxKernelCheck::kTransformerEngine;
    case v1::FSDP2_TORCHTITAN:  // PyTorch's SDPA: no scores written
    case v1::FRAMEWORK_UNSPECIFIED:
    case v1::Framework_INT_MIN_SENTINEL_DO_NOT_USE_:
    case v1::Framework_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  return std::nullopt;
}

// Why the line's fused softmax kernel does not run for its shapes (16-bit scores, the kernel asked for),
// or nullopt.
std::optional<std::string> SoftmaxFallback(const Reader& r, v1::Framework framework, const Layout& l,
                                           const v1::Model& model, const v1::Plan& plan) {
  const std::optional<SoftmaxKernelCheck> check = LineSoftmaxCheck(r, framework);
  if (!check) return std::nullopt;
  const SoftmaxShape shape{.micro_batch = static_cast<int64_t>(plan.micro_batch_size()) / l.dp,
                           .heads_per_rank = model.transformer().num_attention_heads() / l.tp,
                           .seq_length = static_cast<int64_t>(model.transformer().seq_length())};
  std::optional<std::string> why = FusedSoftmaxFallback(*check, shape);
  if (why) *why = absl::StrCat(SoftmaxKernelCheckName(*check), ": ", *why);
  return why;
}

void SetUnfusedKernels(const Reader& r, v1::Framework framework, const Layout& l, const v1::Model& model,
                       v1::Plan& plan, std::vector<std::string>& notes) {
  const bool swiglu = r.Has("swiglu");
  const std::string activation_flag = swiglu ? "no-bias-swiglu-fusion" : "no-bias-gelu-fusion";
  const std::string other_flag = swiglu ? "no-bias-gelu-fusion" : "no-bias-swiglu-fusion";
  if (r.Has(other_flag)) {
    notes.push_back(absl::StrFormat("no effect: --%s (the bias-activation fusion of %s lines is --%s)", other_flag,
                                    swiglu ? "--swiglu" : "GeLU", activation_flag));
  }
  const bool flash = model.transformer().attention() == v1::ATTENTION_FLASH;
  if (r.Has("no-masked-softmax-fusion") && flash) {
    notes.push_back("no effect: --no-masked-softmax-fusion (flash or fused attention never writes the scores)");
  }
  // Transformer Engine's unfused attention (Megatron-Core's default layers) softmaxes in TE's own
  // FusedScaleMaskSoftmax, which follows the environment's NVTE_MASKED_SOFTMAX_FUSION (default 1, in every
  // TE release) and never Megatron's masked_softmax_fusion: TEDotProductAttention does not pass it on.
  const bool te_layers = LineSoftmaxCheck(r, framework) == SoftmaxKernelCheck::kTransformerEngine;
  // TE's FusedScaleMaskSoftmax reads NVTE_MASKED_SOFTMAX_FUSION (softmax.py: bool(int(os.environ.get(..., "1")))).
  const bool te_env_off = r.flags().launch.EnvironmentOff("NVTE_MASKED_SOFTMAX_FUSION");
  const bool te_unfused = te_layers && !flash;  // Transformer Engine's unfused attention writes the scores
  if (te_env_off && !te_unfused) {
    notes.push_back(
        absl::StrFormat("no effect: NVTE_MASKED_SOFTMAX_FUSION=0 in the launch's environment (%s)",
                        flash ? "flash or fused attention never writes the scores"
                              : "only Transformer Engine's unfused attention reads it; Megatron's own layers follow "
                                "--no-masked-softmax-fusion"));
  }
  const bool no_fusion = (r.Has("no-masked-softmax-fusion") && !te_layers) || (te_env_off && te_unfused);
  if (te_env_off && te_unfused) {
    notes.push_back(
        "NVTE_MASKED_SOFTMAX_FUSION=0 in the launch's environment: Transformer Engine's unfused attention masks "
        "and softmaxes the scores apart (unfused_kernels.masked_softmax)");
  }
  if (r.Has("no-masked-softmax-fusion") && te_unfused && !te_env_off) {
    notes.push_back(
        "no effect: --no-masked-softmax-fusion (Transformer Engine's unfused attention fuses its softmax unless "
        "NVTE_MASKED_SOFTMAX_FUSION=0 is set in the environment; Megatron's flag reaches only its local layers, "
        "--transformer-impl local)");
  }
  std::vector<std::string> unfused;
  v1::UnfusedKernels u;
  // Without the linears' biases (--disable-bias-linear) Megatron's MLP runs the GeLU alone, the one pass the
  // fused bias-GeLU kernel makes (megatron/core/transformer/mlp.py: bias_activation_fusion without a bias calls
  // the activation function): nothing apart to price. SwiGLU's SiLU and product apart stay priced as the row.
  const bool no_bias_gelu = r.Has("disable-bias-linear") && !swiglu && r.Has(activation_flag);
  if (no_bias_gelu) {
    notes.push_back(
        "no effect: --no-bias-gelu-fusion with --disable-bias-linear (no bias to add: the GeLU runs alone, the pass "
        "the fused kernel makes)");
  }
  u.set_bias_activation(r.Has(activation_flag) && !no_bias_gelu);
  if (u.bias_activation()) unfused.push_back("the bias add before the activation");
  u.set_bias_dropout_add(r.Has("no-bias-dropout-fusion"));
  if (u.bias_dropout_add()) unfused.push_back("the bias and residual adds apart from dropout");
  const bool fp32_scores = model.dtype() == v1::FP32 || model.dtype() == v1::TF32;
  const std::optional<std::string> fallback =
      no_fusion || fp32_scores || flash ? std::nullopt : SoftmaxFallback(r, framework, l, model, plan);
  u.set_masked_softmax((no_fusion || fp32_scores || fallback) && !flash);
  if (u.masked_softmax()) unfused.push_back("the causal mask before the softmax");
  if (fallback) {
    notes.push_back(absl::StrCat("the fused softmax kernel does not run (", *fallback,
                                 "): PyTorch masks and softmaxes the scores apart (forward_torch_softmax), as under "
                                 "--no-masked-softmax-fusion"));
  } else if (u.masked_softmax() && !no_fusion) {
    notes.push_back(
        "FP32 scores (no --fp16 or --bf16): Megatron's fused mask-and-softmax kernels take 16-bit scores only "
        "(FusedScaleMaskSoftmax.is_kernel_available), so the unfused attention masks and softmaxes apart, as under "
        "--no-masked-softmax-fusion");
  }
  if (unfused.empty()) return;
  // All three is Plan.unfused_elementwise, the one spelling plans written back use.
  if (unfused.size() == 3) {
    plan.set_unfused_elementwise(true);
  } else {
    *plan.mutable_unfused_kernels() = u;
  }
  notes.push_back(
      absl::StrCat("unfused kernels (Plan.unfused_kernels), each a pass of its own: ", absl::StrJoin(unfused, ", ")));
}

// What the unfused attention core runs besides its GEMMs and softmax (the two fields of the Sailor set,
// docs/cost-model.md, "GPU time"). Dropout on the probabilities: none at --attention-dropout 0 (Megatron's
// CoreAttention calls torch's dropout, which returns its input at p = 0; its default is 0.1). The causal
// mask in place on a view of the scores: Megatron's FusedScaleMaskSoftmax.forward_torch_softmax (its path
// under --no-masked-softmax-fusion) masks its input as it comes, a .view() of baddbmm's output, when the
// scores are FP32 (not cast) and no scale is set, that is without query-key layer scaling: on by default
// in Megatron-LM to 2023 and in Megatron-DeepSpeed (--no-query-key-layer-scaling turns it off), opt-in
// with --apply-query-key-layer-scaling in Megatron-Core's releases (arguments.py of each).
void SetAttentionCore(const Reader& r, v1::Framework framework, v1::Model& model, v1::Plan& plan,
                      std::vector<std::string>& notes) {
  if (model.transformer().attention() != v1::ATTENTION_UNFUSED || framework == v1::FSDP2_TORCHTITAN) return;
  double dropout = 0.1;
  if (r.Has("attention-dropout") && absl::SimpleAtod(r.Value("attention-dropout"), &dropout) && dropout == 0) {
    model.mutable_transformer()->set_no_attention_dropout(true);
    notes.push_back(
        "--attention-dropout 0: the unfused attention core runs no dropout on the probabilities "
        "(Transformer.no_attention_dropout)");
  }
  const bool masked = plan.unfused_elementwise() || plan.unfused_kernels().masked_softmax();
  const bool fp32 = model.dtype() == v1::FP32 || model.dtype() == v1::TF32;
  const bool scaled =
      framework == v1::MEGATRON_CORE ? r.Has("apply-query-key-layer-scaling") : !r.Has("no-query-key-layer-scaling");
  if (!masked || !fp32 || scaled) return;
  plan.mutable_unfused_kernels()->set_masked_fill_on_view(true);
  notes.push_back(
      "the causal mask runs in place on a view of the FP32 scores, unscaled (unfused_kernels.masked_fill_on_view: "
      "autograd's CopySlices in the backward)");
}

absl::StatusOr<MegatronImport> ImportFlags(const MegatronFlags& flags, const v1::Cluster& cluster,
                                           const MegatronImportRequest& request, absl::string_view source) {
  const Reader r(flags, source);
  HETSIM_RETURN_IF_ERROR(RefuseOtherModels(r, flags));
  // Megatron's --use-checkpoint-args reads the model's shape from the checkpoint it loads (arguments.py,
  // load_args_from_checkpoint): a line without it (LLM360's CrystalCoder fine-tuning) has none to read.
  if (flags.Has("use-checkpoint-args") && !flags.Has("num-layers")) {
    return r.Error(
        "--use-checkpoint-args without --num-layers: the model's shape (--num-layers, --hidden-size, "
        "--num-attention-heads ...) is the checkpoint's, which Megatron reads from the --load directory and hetsim "
        "cannot: write the checkpoint's sizes on the line (or give the model with --model)");
  }
  MegatronImport out;
  HETSIM_ASSIGN_OR_RETURN(Layout l, ReadLayout(r, flags, cluster, request));
  HETSIM_ASSIGN_OR_RETURN(out.model, ReadModel(r, l, out.notes));
  MegatronSplit split;
  HETSIM_ASSIGN_OR_RETURN(const std::vector<int64_t> stage_blocks,
                          ReadSplit(r, l, out.model.transformer().num_layers(),
                                    out.model.transformer().mtp_num_layers(), split, out.notes));
  HETSIM_ASSIGN_OR_RETURN(RecomputeChoice recompute, ReadRecompute(r, out.notes));
  NoteSettingsPricedOtherwise(r, l, recompute, out.notes);
  HETSIM_ASSIGN_OR_RETURN(const int zero_stage, ReadZeroStage(r, l, out.notes));
  HETSIM_RETURN_IF_ERROR(CheckOverlapFlags(r, zero_stage));
  v1::Plan& plan = out.plan;
  HETSIM_RETURN_IF_ERROR(ReadBatch(r, l, plan, out.notes));
  plan.set_schedule(v1::ONE_F_ONE_B);
  HETSIM_ASSIGN_OR_RETURN(const int64_t chunks,
                          ReadVirtualStages(r, l, split, out.model.transformer().num_layers(), stage_blocks));
  if (chunks > 1) {
    plan.set_schedule(v1::INTERLEAVED_1F1B);
    plan.set_virtual_stages(static_cast<uint32_t>(chunks));
    for (int64_t layers : split.layout_layers) plan.add_virtual_stage_layers(static_cast<uint32_t>(layers));
  }
  plan.set_overlap_grad_reduce(r.Has("overlap-grad-reduce") || TorchDdp(r));
  plan.set_moe_a2a_overlap(r.Has("overlap-moe-expert-parallel-comm"));
  if (plan.moe_a2a_overlap()) HETSIM_RETURN_IF_ERROR(CheckMoeOverlap(r, l, chunks, out.model));
  // Sharded parameters (FSDP) are gathered layer by layer, the next one's while a layer computes (both
  // FSDPs prefetch): ZeRO-3's own gathers, not the distributed optimizer's after the step.
  plan.set_overlap_param_gather(r.Has("overlap-param-gather") && (zero_stage == 1 || zero_stage == 2));
  plan.set_zero3_prefetch(zero_stage == 3);
  // Megatron-FSDP, PyTorch's FSDP2 and DeepSpeed's ZeRO-3 issue each module's gather as the rank reaches it,
  // in one order on one stream: a mixed stage's layers in lock-step (docs/heterogeneous.md).
  plan.set_zero3_lock_step(zero_stage == 3);
  HETSIM_ASSIGN_OR_RETURN(const bool fp32_gradients, ReadGradReduceInFp32(r));
  plan.set_grad_reduce_in_fp32(fp32_gradients);
  plan.set_tp_comm_overlap(r.Has("tp-comm-overlap"));
  // Transformer Engine's current scaling (its gathered tensors' amax reductions); Megatron's default
  // --fp8-recipe is delayed.
  plan.set_fp8_current_scaling(r.Has("fp8-format") && r.Has("fp8-recipe") && r.Value("fp8-recipe") == "tensorwise");
  const v1::Framework framework = LineFramework(r, split);
  SetPassOverlaps(r, l, framework, chunks, plan, out.notes);
  HETSIM_RETURN_IF_ERROR(SetDdpBuckets(r, l, out.model, plan, out.notes));
  SetMegatronV2Fp16Step(r, framework, out.model, plan, out.notes);
  const v1::Stage common = CommonStage(r, l, zero_stage, recompute, out.notes);
  if (l.cp > 1) plan.set_context_parallel(static_cast<uint32_t>(l.cp));  // mesh ranks: TP, then CP, then DP
  HETSIM_ASSIGN_OR_RETURN(const v1::ContextParallelComm cp_comm, ReadCpCommType(r, l.cp, out.notes));
  plan.set_cp_comm_type(cp_comm);
  HETSIM_RETURN_IF_ERROR(AddStages(r, l, stage_blocks, common, plan, out.notes));
  if (!flags.pytorch_runtime.empty())
    SetAcceleratePyTorchRuntime(flags.pytorch_runtime == "ddp", l.dp, plan, out.notes);
  SetFramework(framework, out.model, flags.deepspeed_off, plan, out.notes);
  // Megatron's apex norms (Megatron-LM 2022's legacy model, megatron/model/fused_layer_norm.py; Megatron-Core's
  // local layer spec, megatron/core/fusions/fused_layer_norm.py) run apex's FusedLayerNormAffineFunction under
  // --no-persist-layer-norm (apex.contrib's persistent FastLayerNormFN without it), whose backward computes the
  // weight gradients in a pass of its own. Transformer Engine's norms ignore the flag.
  if (r.Has("no-persist-layer-norm") &&
      (plan.framework() == v1::MEGATRON_LM_2022 || r.flags().Value("transformer-impl") == "local")) {
    plan.set_layer_norm_weight_grad_pass(true);
    out.notes.push_back(
        "--no-persist-layer-norm: apex's FusedLayerNormAffineFunction (Megatron's own norm, not Transformer "
        "Engine's), its weight-gradient pass priced (layer_norm_weight_grad_pass)");
  }
  DefaultAttention(r, plan.framework(), out.model, out.notes);
  SetUnfusedKernels(r, plan.framework(), l, out.model, plan, out.notes);
  SetAttentionCore(r, plan.framework(), out.model, plan, out.notes);
  const std::string cp_name = l.cp > 1 ? absl::StrFormat("-cp%d", l.cp) : "";
  plan.set_name(request.name.empty() ? absl::StrFormat("megatron-tp%d%s-pp%d-dp%d", l.tp, cp_name, l.pp, l.dp)
                                     : request.name);
  *plan.mutable_model() = out.model;

  AddFlagNotes(flags, out.notes);

  HETSIM_RETURN_IF_ERROR(ValidateImported(cluster, out.model, plan, source));
  return out;
}

}  // namespace

namespace {

// What the line says of its run, for a refusal that asks for the model: "a DeepSpeed run of
// finetune_zero3.py (ZeRO stage 3, BF16, batch 4 from its config)".
std::string RunWithoutModel(const MegatronFlags& flags) {
  std::vector<std::string> known;
  if (flags.Has("zero-stage")) known.push_back(absl::StrCat("ZeRO stage ", flags.Value("zero-stage").value_or("")));
  if (flags.Has("bf16")) known.push_back("BF16");
  if (flags.Has("fp16")) known.push_back("FP16");
  if (flags.Has("global-batch-size"))
    known.push_back(absl::StrCat("batch ", flags.Value("global-batch-size").value_or("")));
  const bool deepspeed = flags.launch.launcher == "deepspeed" || flags.Has("deepspeed") ||
                         flags.Has("deepspeed_config") || flags.Has("deepspeed-config");
  const std::string launcher = deepspeed                       ? "DeepSpeed"
                               : flags.launch.launcher.empty() ? "Python"
                                                               : flags.launch.launcher;
  const bool vowel = absl::StrContains("aeiouAEIOU", launcher.front());
  return absl::StrFormat(
      "%s %s run of %s%s", vowel ? "an" : "a", launcher, flags.launch.script,
      known.empty() ? "" : absl::StrCat(" (", absl::StrJoin(known, ", "), " from its config and flags)"));
}

// A line whose script builds its model itself (a DeepSpeed or Hugging Face training script: the model
// comes from a name, not from --num-layers ...): the model of the request, as flags, or the refusal
// that says what is missing and how to give it.
absl::StatusOr<MegatronFlags> WithRequestModel(MegatronFlags flags, const MegatronImportRequest& request,
                                               absl::string_view source) {
  static constexpr const char* kShape[] = {"num-layers", "hidden-size", "num-attention-heads"};
  const bool shaped = std::any_of(std::begin(kShape), std::end(kShape), [&](const char* f) { return flags.Has(f); });
  if (request.model.has_value()) {
    if (shaped) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: --model and the line's --num-layers / --hidden-size / --num-attention-heads contradict each other: "
          "give the model one way",
          source));
    }
    std::vector<std::string> written;
    ModelFlags(*request.model, written);
    HETSIM_ASSIGN_OR_RETURN(MegatronFlags model,
                            ParseMegatronWords(ShellTokens(absl::StrJoin(written, " ")), "--model"));
    const bool dtype_given = flags.Has("fp16") || flags.Has("bf16") || flags.Has("fp8-format");
    for (const auto& [name, value] : model.flags) {
      if (dtype_given && (name == "fp16" || name == "bf16" || name == "fp8-format")) continue;
      flags.flags.try_emplace(name, value);
    }
    flags.launch.notes.push_back(absl::StrFormat("the model: %s (--model)", request.model->name()));
    return flags;
  }
  if (shaped || MegatronEntryPoint(flags)) return flags;
  std::vector<std::string> named;
  for (const char* f : {"model_name_or_path", "model_name", "model-name", "model", "model_type", "config_name"}) {
    if (flags.Has(f)) named.push_back(absl::StrCat("--", f, " ", flags.Value(f).value_or("")));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: %s: the script builds its model itself%s, so the line has no model shape (--num-layers, "
      "--hidden-size, --num-attention-heads, --seq-length): give the model with --model MODEL.pbtxt (a hetsim "
      "Model file such as examples/model-gpt39b.pbtxt); the layout, batch and ZeRO stage then come from the line",
      source, RunWithoutModel(flags), named.empty() ? "" : absl::StrCat(" (", absl::StrJoin(named, ", "), ")")));
}

// Megatron-DeepSpeed's MoE scripts pass --num-experts 1 for their dense runs (its default: a dense MLP).
MegatronFlags OneExpertIsDense(MegatronFlags flags) {
  if (flags.Value("num-experts") == std::optional<std::string>("1")) {
    flags.flags.erase("num-experts");
    flags.launch.notes.push_back("--num-experts 1: one expert is a dense MLP (Megatron-DeepSpeed's default)");
  }
  return flags;
}

// Megatron-DeepSpeed's MoE is DeepSpeed-MoE: --moe-expert-parallel-size N spreads the experts over N of
// the data-parallel ranks (Megatron's --expert-model-parallel-size) and --topk K routes each token to K
// experts, 1 by default (Switch routing; Megatron's default is 2). Both were "unknown" before session 26,
// so the experts were priced all on every GPU, each token sent to two.
MegatronFlags DeepSpeedMoe(MegatronFlags flags) {
  if (!flags.Has("deepspeed") || !flags.Has("num-experts")) return flags;
  const auto rename = [&flags](const char* from, const char* to) {
    auto it = flags.flags.find(from);
    if (it == flags.flags.end() || flags.Has(to)) return;
    flags.flags.emplace(to, it->second);
    flags.flags.erase(it);
    std::erase_if(flags.unknown,
                  [from](const std::string& f) { return absl::StartsWith(f, absl::StrCat("--", from)); });
  };
  rename("moe-expert-parallel-size", "expert-model-parallel-size");
  rename("topk", "moe-router-topk");
  if (!flags.Has("moe-router-topk")) {
    flags.flags.emplace("moe-router-topk", FlagValue{{"1"}, 0});
    flags.launch.notes.push_back("--topk not given: DeepSpeed-MoE routes each token to 1 expert (its default)");
  }
  return flags;
}

// DeepSpeed-Ulysses (Megatron-DeepSpeed's --ds-sequence-parallel-size N): each sequence split over N
// GPUs, all-to-alls around the attention, and data parallel = world / (TP x PP x N). That is
// Megatron's context parallelism of type a2a (Transformer Engine's, after Ulysses): read as
// --context-parallel-size N --cp-comm-type a2a.
MegatronFlags UlyssesAsContextParallel(MegatronFlags flags) {
  const std::optional<std::string> n = flags.Value("ds-sequence-parallel-size");
  if (!n || flags.Has("context-parallel-size")) return flags;
  flags.flags.erase("ds-sequence-parallel-size");
  if (*n == "1") return flags;
  flags.flags.emplace("context-parallel-size", FlagValue{{*n}, 0});
  flags.flags.emplace("cp-comm-type", FlagValue{{"a2a"}, 0});
  flags.launch.notes.push_back(absl::StrFormat(
      "--ds-sequence-parallel-size %s: DeepSpeed-Ulysses, priced as context parallelism %s with all-to-alls "
      "(cp_comm_type CP_COMM_ALL_TO_ALL)",
      *n, *n));
  return flags;
}

// Megatron-DeepSpeed's FlashAttention switches (microsoft/Megatron-DeepSpeed megatron/arguments.py:
// --use-flash-attn-v1 (alias of --use-flash-attn), --use-flash-attn-v2, --use-flash-attn-triton and
// --use-flash-attn-builder; megatron/model/transformer.py runs the flash kernel for each): all flash
// attention, read as --use-flash-attn. Before session 36 the last three were "unknown", and a
// Megatron-DeepSpeed line was priced with its default, unfused attention.
MegatronFlags DeepSpeedFlashAttention(MegatronFlags flags) {
  for (const char* variant :
       {"--use-flash-attn-v1", "--use-flash-attn-v2", "--use-flash-attn-triton", "--use-flash-attn-builder"}) {
    if (std::erase(flags.unknown, std::string(variant)) == 0) continue;
    flags.flags.try_emplace("use-flash-attn", FlagValue{{}, 0});
    flags.launch.notes.push_back(
        absl::StrCat(variant, ": Megatron-DeepSpeed's FlashAttention, read as --use-flash-attn"));
  }
  return flags;
}

}  // namespace

// LoRA on a training script's own line (DeepSpeed-Chat's main.py --lora_dim 128, 0 meaning off; a --use_lora
// or --lora switch): only the low-rank adapters train, so the gradients, their reduction and the optimizer
// state are the adapters', not the model's that hetsim prices (as a DeepSpeed config's lora section).
absl::Status RefuseLoraFlags(const MegatronFlags& flags, absl::string_view source) {
  for (const std::string& written : flags.unknown) {
    const std::vector<std::string> words = absl::StrSplit(written, ' ');
    if (!absl::StartsWith(words[0], "--")) continue;
    std::string name = absl::AsciiStrToLower(words[0].substr(2));
    std::replace(name.begin(), name.end(), '_', '-');
    const bool rank =
        (name == "lora-dim" || name == "lora-r" || name == "lora-rank") && words.size() == 2 && words[1] != "0";
    const bool on = (name == "use-lora" || name == "lora" || name == "use-peft") && words.size() == 1;
    if (!rank && !on) continue;
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s: LoRA fine-tuning (only low-rank adapters trained: their gradients and optimizer state, not the "
        "model's) is not modelled; hetsim prices training every weight",
        source, written));
  }
  return absl::OkStatus();
}

// DeepSpeed-Chat's step 3 (training/step3_rlhf_finetuning/main.py: --actor_model_name_or_path and
// --critic_model_name_or_path): PPO trains an actor and a critic, runs a reference and a reward model forward
// and generates the actor's answers each step; hetsim prices one model's training, so no --model stands for it.
absl::Status RefuseRlhfFlags(const MegatronFlags& flags, absl::string_view source) {
  std::string actor, critic;
  for (const std::string& written : flags.unknown) {
    const std::string name = absl::AsciiStrToLower(written.substr(0, written.find(' ')));
    if (name == "--actor_model_name_or_path" || name == "--actor-model-name-or-path") actor = written;
    if (name == "--critic_model_name_or_path" || name == "--critic-model-name-or-path") critic = written;
  }
  if (actor.empty() || critic.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: %s and %s: RLHF with PPO (DeepSpeed-Chat's step 3: an actor and a critic trained, a reference and a "
      "reward model run forward, the actor's answers generated every step) is not modelled; hetsim prices the "
      "training of one model",
      source, actor, critic));
}

// A training script that builds a vision encoder beside its language model from a name (DeepSpeed-VisualChat's
// main.py --vision_model_name_or_path openai/clip-vit-large-patch14; LLaVA's train.py --vision_tower): a
// vision-language model, refused before --model could price its language model alone.
absl::Status RefuseVisionEncoderFlags(const MegatronFlags& flags, absl::string_view source) {
  for (const char* name : {"vision_model_name_or_path", "vision_tower"}) {
    if (!flags.Has(name)) continue;
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: --%s %s: a vision-language model (%s builds a vision encoder beside its language model, whose image "
        "tokens the language model reads), which hetsim does not model (it prices GPT-style decoders)",
        source, name, flags.Value(name).value_or(""), flags.launch.script));
  }
  return absl::OkStatus();
}

// A flag hetsim does not know that sets a parallel size (a trainer's own --model_parallel_size 4 or
// --pipe_parallel_size 2, eth-easl/fmengine's scripts): the layout it asks for is not read, so the GPUs
// would be priced as data parallel. Above 1 it is refused; at 1 it changes nothing (noted as unknown).
absl::Status RefuseUnknownParallelSizes(const MegatronFlags& flags, absl::string_view source) {
  for (const std::string& written : flags.unknown) {
    const std::vector<std::string> words = absl::StrSplit(written, ' ');
    if (words.size() != 2 || !absl::StartsWith(words[0], "--")) continue;
    std::string name = absl::AsciiStrToLower(words[0].substr(2));
    std::replace(name.begin(), name.end(), '_', '-');
    const bool size = absl::EndsWith(name, "parallel-size") || absl::EndsWith(name, "parallel-degree");
    if (!size || words[1] == "1") continue;
    // epfLLM/Megatron-LLM's fork spells Megatron's flags with underscores (its arguments.py:
    // --tensor_model_parallel_size, --use_rms_norm, --glu_activation swiglu), its model flags its own.
    if (MegatronEntryPoint(flags) && absl::StrContains(words[0], '_') &&
        (name == "tensor-model-parallel-size" || name == "pipeline-model-parallel-size")) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s: Megatron's --%s as epfLLM/Megatron-LLM's fork spells its flags (with underscores), whose model "
          "flags are its own (--use_rms_norm, --glu_activation, --no_tie_embed_logits, --parallel_attn ...), "
          "which hetsim does not read: pricing the line would leave them out; write the line with Megatron-LM's "
          "flags (--normalization RMSNorm, --swiglu, --untie-embeddings-and-output-weights ...)",
          source, written, name));
    }
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s: a parallel size hetsim does not know (not Megatron's or DeepSpeed's flag): how the script splits "
        "the model over it is not read, and pricing its GPUs as data parallel would be wrong; write the layout "
        "with Megatron's flags (--tensor-model-parallel-size, --pipeline-model-parallel-size) or plan it in hetsim",
        source, written));
  }
  return absl::OkStatus();
}

// DeepSpeed-Chat's main.py (--data_split: its split of the data over steps 1 to 3, dschat/utils/data) trains one
// model in step 1 (SFT) and step 2 (reward model), as priced. Its DPO step (step2_dpo_finetuning/main.py) runs a
// frozen reference model forward on every batch besides (deepspeed.initialize(model=ref_model)), and its scripts
// pass no flag that tells the steps apart.
void NoteDeepSpeedChatStep(MegatronFlags& flags) {
  if (!flags.Has("data_split") || MegatronEntryPoint(flags)) return;
  flags.launch.notes.push_back(
      "DeepSpeed-Chat's main.py (--data_split): priced as training one model, its step 1 (supervised fine-tuning) "
      "and step 2 (reward model); its DPO step (step2_dpo_finetuning/main.py) also runs a frozen reference model "
      "forward on every batch, which is not priced, and its scripts' lines do not tell the steps apart");
}

// TRL's DPOTrainer run by its scripts (trl/scripts/dpo.py, examples/scripts/dpo.py; alignment-handbook's
// scripts/run_dpo.py; a user's train_dpo.py as TRL's documentation names it): besides the policy, the trainer
// keeps a frozen copy of the model as the reference (prepared as the policy is: DeepSpeed or FSDP shards it the
// same) and runs it forward on every batch (DPOTrainer.compute_ref_log_probs), unless the reference's
// log-probabilities are computed once before training (--precompute_ref_log_probs). Its batch arguments count
// preference pairs, and concatenated_forward runs each pair's chosen and rejected sequences in one batch:
// two sequences a pair, the plan's microbatch. True when the line is such a run, its micro-batch doubled.
bool ReadTrlDpo(MegatronFlags& flags) {
  static constexpr const char* kScripts[] = {"dpo.py", "run_dpo.py", "train_dpo.py"};
  if (MegatronEntryPoint(flags) ||
      std::find(std::begin(kScripts), std::end(kScripts), flags.launch.script) == std::end(kScripts)) {
    return false;
  }
  const std::string precompute = absl::AsciiStrToLower(flags.Value("precompute_ref_log_probs").value_or("false"));
  if (flags.Has("precompute_ref_log_probs") && precompute != "false") {
    flags.launch.notes.push_back(absl::StrFormat(
        "%s: TRL's DPOTrainer with --precompute_ref_log_probs: the reference model's log-probabilities are computed "
        "once before training, not in the step: priced as training the policy alone",
        flags.launch.script));
    return false;
  }
  if (auto micro = flags.flags.find("micro-batch-size");
      micro != flags.flags.end() && micro->second.values.size() == 1) {
    int64_t pairs = 0;
    if (absl::SimpleAtoi(micro->second.values[0], &pairs) && pairs > 0) {
      micro->second.values[0] = absl::StrCat(2 * pairs);
      flags.launch.notes.push_back(absl::StrFormat(
          "%s: TRL's DPOTrainer: %d preference pairs a GPU's batch are %d sequences (chosen and rejected, "
          "concatenated_forward), the micro-batch priced; the frozen reference model runs forward on each, its "
          "weights on the GPU beside the policy's (reference_policy, docs/cost-model.md)",
          flags.launch.script, pairs, 2 * pairs));
      return true;
    }
  }
  return false;
}

// A refusal also says what the script left undecided: the unset variable or the command not run is
// usually why a flag's value is missing.
namespace {
// A refusal that names a flag the line gave under its old name (--activations-checkpoint-num-layers, read as
// --recompute-num-layers: MegatronFlags::renamed) says which flag of the line that is.
absl::Status WithRenamedFlags(const absl::Status& status, const std::vector<std::string>& renamed) {
  std::vector<std::string> named;
  for (const std::string& r : renamed) {  // "--old (today --new)"
    const size_t today = r.find(" (today ");
    if (today == std::string::npos || !absl::EndsWith(r, ")")) continue;
    const std::string now = r.substr(today + 8, r.size() - today - 9);
    if (absl::StrContains(status.message(), absl::StrCat(now, ":")) ||
        absl::StrContains(status.message(), absl::StrCat(now, " "))) {
      named.push_back(absl::StrFormat("%s is the line's %s, read under today's name", now, r.substr(0, today)));
    }
  }
  if (named.empty()) return status;
  return absl::Status(status.code(), absl::StrCat(status.message(), "\n  ", absl::StrJoin(named, "\n  ")));
}
}  // namespace

absl::StatusOr<MegatronImport> ImportMegatron(const MegatronFlags& flags, const v1::Cluster& cluster,
                                              const MegatronImportRequest& request, absl::string_view source) {
  HETSIM_RETURN_IF_ERROR(RefuseLoraFlags(flags, source));
  HETSIM_RETURN_IF_ERROR(RefuseRlhfFlags(flags, source));
  HETSIM_RETURN_IF_ERROR(RefuseVisionEncoderFlags(flags, source));
  HETSIM_ASSIGN_OR_RETURN(MegatronFlags with_config, WithMegatronYaml(flags, source));
  HETSIM_ASSIGN_OR_RETURN(with_config, WithAccelerateConfig(with_config, source));
  const size_t before_json = with_config.launch.notes.size();
  HETSIM_ASSIGN_OR_RETURN(with_config, WithDeepSpeedConfig(with_config, source));
  // What the DeepSpeed JSON's reading said (a config the script writes only in a branch it does not decide is
  // not read): a refusal for the batch or ZeRO stage it would have given says so too.
  std::vector<std::string> notes = flags.launch.notes;
  notes.insert(notes.end(), with_config.launch.notes.begin() + static_cast<std::ptrdiff_t>(before_json),
               with_config.launch.notes.end());
  HETSIM_ASSIGN_OR_RETURN(with_config, WithRequestModel(std::move(with_config), request, source));
  std::vector<std::string> files_read = with_config.launch.files_read;
  MegatronFlags read =
      DeepSpeedFlashAttention(UlyssesAsContextParallel(DeepSpeedMoe(OneExpertIsDense(std::move(with_config)))));
  if (!MegatronEntryPoint(read)) HETSIM_RETURN_IF_ERROR(FoldTrainerArguments(read));
  const bool trl_dpo = ReadTrlDpo(read);
  NoteDeepSpeedChatStep(read);
  HETSIM_RETURN_IF_ERROR(RefuseUnknownParallelSizes(read, source));
  const std::vector<std::string> renamed = read.renamed;
  absl::StatusOr<MegatronImport> out = ImportFlags(std::move(read), cluster, request, source);
  if (out.ok()) out->files_read = std::move(files_read);
  if (out.ok() && trl_dpo) out->plan.mutable_reference_policy()->set_cpu_weight_swap(false);
  if (!out.ok()) out = WithRenamedFlags(out.status(), renamed);
  if (out.ok() || notes.empty()) return out;
  return absl::Status(out.status().code(), absl::StrCat(out.status().message(), "\n  reading the script: ",
                                                        absl::StrJoin(notes, "\n  reading the script: ")));
}

const spec::FrameworkProfile& KeepBehavioursUnderFramework(v1::Framework framework, const v1::Model& model,
                                                           v1::Plan& plan) {
  plan.set_framework(framework);
  // Every framework an importer names runs its collectives through NCCL beside the computation, and no
  // flag of theirs changes that (docs/cost-model.md, "NCCL beside the computation").
  plan.set_nccl_sm_contention(true);
  const spec::FrameworkProfile& profile = spec::ProfileOf(proto::FrameworkOf(framework));
  const spec::ProfileContext context = proto::ProfileContextOf(plan, model);
  const google::protobuf::Reflection& reflection = *plan.GetReflection();
  for (const auto& [field, value] : profile.Behaviours()) {
    const google::protobuf::FieldDescriptor* f = v1::Plan::descriptor()->FindFieldByName(field);
    if (spec::ProfileTurnsOn(field, value, context) && !reflection.GetBool(plan, f)) plan.add_framework_off(field);
  }
  return profile;
}

absl::Status ValidateImported(const v1::Cluster& cluster, const v1::Model& model, const v1::Plan& plan,
                              absl::string_view source) {
  proto::PlanInputs inputs;
  inputs.cluster = cluster;
  inputs.model = model;
  inputs.plan = plan;
  inputs.plan_path = std::string(source);
  return proto::ValidatePlanInputs(inputs);
}

}  // namespace hetsim::interop
