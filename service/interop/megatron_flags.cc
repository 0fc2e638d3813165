#include "service/interop/megatron_flags.h"

#include <algorithm>
#include <map>
#include <utility>

#include <array>
#include <initializer_list>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "service/interop/launch_script.h"

namespace hetsim::interop {
namespace {

// name -> (kind, number of values: 0 switch, 1 value, n values).
struct Spec {
  FlagKind kind;
  int arity;
};

struct NamedFlag {
  const char* name;
  int arity;
};

// The arity of argparse's nargs='+': one value or more, up to the next flag.
constexpr int kOneOrMore = -2;

// What hetsim reads into the model or the plan.
constexpr NamedFlag kModelledFlags[] = {
    {"num-layers", 1},
    {"hidden-size", 1},
    {"ffn-hidden-size", 1},
    {"num-attention-heads", 1},
    {"group-query-attention", 0},
    {"num-query-groups", 1},
    {"num-key-value-heads", 1},  // Megatron-DeepSpeed's GQA (megatron/arguments.py; None: one per head)
    {"kv-channels", 1},
    {"seq-length", 1},
    {"max-position-embeddings", 1},
    {"position-embedding-type", 1},
    {"vocab-size", 1},
    {"make-vocab-size-divisible-by", 1},
    {"pad-vocab-size-to", 1},
    {"tokenizer-type", 1},
    {"tokenizer-model", 1},
    {"tokenizer-name-or-path", 1},  // Megatron-DeepSpeed's PretrainedFromHF: a Hugging Face tokenizer
    {"transformer-impl", 1},        // local: Megatron's own layers, unfused attention by default
    {"use-legacy-models", 0},       // the pre-Core model: its fused softmax's sequence limit (fused_softmax_internal.h)
    {"micro-batch-size", 1},
    {"global-batch-size", 1},
    {"step-batch-size-schedule", 1},  // "THRESHOLD:BATCH ...": its last batch (megatron_import.cc, ScheduledBatch)
    {"tensor-model-parallel-size", 1},
    {"pipeline-model-parallel-size", 1},
    {"num-layers-per-virtual-pipeline-stage", 1},
    {"pp-partition-method", 1},  // Megatron-DeepSpeed: DeepSpeed's layer split (type:transformer|embedding read)
    {"context-parallel-size", 1},
    {"pipeline-model-parallel-layout", 1},
    {"cp-comm-type", kOneOrMore},  // one type, or one per layer
    {"expert-model-parallel-size", 1},
    {"sequence-parallel", 0},
    {"recompute-granularity", 1},
    {"recompute-activations", 0},
    {"checkpoint-activations", 0},  // Megatron-LM of 2021: full recomputation
    {"use-distributed-optimizer", 0},
    {"use-megatron-fsdp", 0},
    {"use-custom-fsdp", 0},  // Megatron-FSDP's earlier name
    {"data-parallel-sharding-strategy", 1},
    {"use-torch-fsdp2", 0},
    {"grad-reduce-in-bf16", 0},
    {"accumulate-allreduce-grads-in-fp32", 0},
    {"main-grads-dtype", 1},
    {"fp16", 0},
    {"bf16", 0},
    {"fp8-format", 1},
    {"fp8-recipe", 1},                   // noted unless per-tensor scaling
    {"expert-tensor-parallel-size", 1},  // noted unless equal to TP
    {"recompute-modules", kOneOrMore},   // noted unless Megatron's default, core_attn
    {"swiglu", 0},
    // The fused elementwise kernels switched off one by one: Plan.unfused_kernels.
    {"no-masked-softmax-fusion", 0},
    // Query-key layer scaling: a scale on the scores, whose absence lets an FP32 unfused softmax mask them in
    // place on a view (megatron_import.cc, SetAttentionCore); the scale's numerics are otherwise the same work.
    {"no-query-key-layer-scaling", 0},
    {"apply-query-key-layer-scaling", 0},
    {"attention-dropout", 1},  // 0: no dropout on the probabilities of an unfused attention core
    {"no-bias-gelu-fusion", 0},
    {"no-bias-swiglu-fusion", 0},
    {"no-bias-dropout-fusion", 0},
    {"use-rotary-position-embeddings", 0},  // Megatron-DeepSpeed's --position-embedding-type rope
    {"quick-geglu", 0},                     // gated, as SwiGLU
    {"squared-relu", 0},                    // elementwise activations: GeLU's GEMMs
    {"openai-gelu", 0},
    // Today's Megatron-LM builds these from TransformerConfig's fields (arguments.py's
    // ArgumentGroupFactory): GPT-OSS's softmax with a sink and its clamped, offset SwiGLU.
    {"softmax-type", 1},                 // vanilla, off-by-one, learnable: the same GEMMs, noted
    {"glu-linear-offset", 1},            // elementwise, noted
    {"activation-func-clamp-value", 1},  // elementwise, noted
    {"window-size", 1},                  // sliding-window attention: refused (not modelled)
    {"num-experts", kOneOrMore},         // several: Megatron-DeepSpeed's pyramid MoE, refused
    {"mlp-type", 1},                     // Megatron-DeepSpeed: residual (PR-MoE) refused; standard
    {"kd", 0},                           // Megatron-DeepSpeed's knowledge distillation: refused
    {"moe-router-topk", 1},
    {"moe-token-dispatcher-type", 1},
    {"moe-ffn-hidden-size", 1},
    {"moe-shared-expert-intermediate-size", 1},
    {"moe-layer-freq", 1},
    {"moe-grouped-gemm", 0},
    {"multi-latent-attention", 0},
    {"q-lora-rank", 1},
    {"kv-lora-rank", 1},
    {"qk-head-dim", 1},
    {"qk-pos-emb-head-dim", 1},
    {"v-head-dim", 1},
    {"overlap-grad-reduce", 0},
    {"ddp-bucket-size", 1},                // Megatron-Core's DDP bucket, in parameters
    {"DDP-impl", 1},                       // Megatron-LM 2021-2022: torch (PyTorch's DDP, buckets) or local
    {"use-contiguous-buffers-in-ddp", 0},  // Megatron-LM v2.x until v2.6 made them local DDP's default
    {"ds-sequence-parallel-size", 1},      // DeepSpeed-Ulysses: read as context parallelism, all-to-all
    {"overlap-param-gather", 0},
    {"overlap-moe-expert-parallel-comm", 0},
    {"delay-wgrad-compute", 0},  // noted: the weight-gradient GEMMs it delays are not split out
    {"tp-comm-overlap", 0},
    {"untie-embeddings-and-output-weights", 0},
    {"qk-layernorm", 0},  // Transformer.qk_layernorm: a norm over each head's Q and K
    {"use-flash-attn", 0},
    {"no-persist-layer-norm",
     0},                       // apex's non-persistent LayerNorm (2022, Core's local spec): its weight-gradient pass
    {"attention-backend", 1},  // Would change the cost; hetsim cannot express them yet (reported, not applied).
    {"overlap-p2p-communication", 0},
    {"no-overlap-p2p-communication", 0},
    {"no-async-tensor-model-parallel-allreduce", 0},  // Megatron-LM 2022-23: the 2021 backward
    {"recompute-method", 1},
    {"recompute-num-layers", 1},
    {"decoder-first-pipeline-num-layers", 1},
    {"decoder-last-pipeline-num-layers", 1},
    {"account-for-embedding-in-pipeline-split", 0},
    {"account-for-loss-in-pipeline-split", 0},
    {"num-virtual-stages-per-pipeline-rank", 1},
    {"mtp-num-layers", 1},  // DeepSeek's multi-token prediction modules
    // Megatron-DeepSpeed (deepspeed_config.h): the engine, its JSON config and its ZeRO stage.
    {"deepspeed", 0},
    {"deepspeed_config", 1},
    {"deepspeed-config", 1},
    {"zero-stage", 1},
    {"no-pipeline-parallel", 0},
};

// Would change the cost; hetsim cannot express them yet (reported, not applied).
constexpr NamedFlag kNotModelledFlags[] = {
    {"distribute-saved-activations", 0},  // saved activations split over TP ranks (memory only)
    {"rampup-batch-size", 3},
    {"fp8-param-gather", 0},
    {"tp-comm-overlap-cfg", 1},  // a YAML file: Plan.tp_comm_overlap_config says what it sets
    {"cross-entropy-loss-fusion", 0},
    {"disable-bias-linear", 0},
    {"empty-unused-memory-level", 1},
    {"cpu-optimizer", 0},          // Megatron-DeepSpeed: the optimizer step on the host
    {"partition-activations", 0},  // DeepSpeed's checkpoints split over TP ranks (memory only)
    {"contigious-checkpointing", 0},
    {"checkpoint-in-cpu", 0},
    {"embed-layernorm", 0},  // BLOOM's LayerNorm after the embedding: priced without it (one LayerNorm)
    // BigScience's all-reduce of the LayerNorm weights every TP rank holds a copy of (kilobytes a step).
    {"sync-tp-duplicated-parameters", 0},
    {"no-rope-fusion", 0},                   // RoPE in eager ops over Q and K (priced fused)
    {"no-gradient-accumulation-fusion", 0},  // weight gradients written apart, then added to main_grad
    // DeepSpeed-MoE's capacity: tokens over it are dropped (or experts padded); priced as even routing.
    {"moe-train-capacity-factor", 1},
    {"moe-min-capacity", 1},
    {"disable-moe-token-dropping", 0},
    // Megatron-core's shared experts on a side stream beside the dispatcher's all-to-alls
    // (core_v0.11.0 shared_experts.py, token_dispatcher.py); priced in series with them (docs/validation.md,
    // "Session 35": on the MoE set's Qwen2 rows it would hide 0.5 ms a layer and pass).
    {"moe-shared-expert-overlap", 0},
    // Transformer Engine's fused permute and unpermute (TE >= 2.1): the same token copies in fewer
    // kernels, without the unfused path's masked_select; priced as the unfused passes.
    {"moe-permute-fusion", 0},
    // Megatron-Core's expert capacity (transformer_config.py: moe_expert_capacity_factor,
    // moe_pad_expert_input_to_capacity, moe_token_drop_policy): tokens over ceil(tokens x topk / experts x factor) are
    // dropped, and padding runs every expert at that capacity. Priced as even routing: the same at factor 1 with
    // padding, not above it.
    {"moe-expert-capacity-factor", 1},
    {"moe-pad-expert-input-to-capacity", 0},
    {"moe-token-drop-policy", 1},
    // Megatron's rank order tp-cp-ep-pp-dp instead of tp-cp-ep-dp-pp (arguments.py); hetsim lays ranks out TP,
    // CP, DP, then PP, so a line with it is priced with its pipeline stages' ranks apart.
    {"use-tp-pp-dp-mapping", 0},
    // The unfused softmax in FP32 for 16-bit scores (a cast pass before it); nothing with flash attention.
    {"attention-softmax-in-fp32", 0},
    // Deterministic kernels (NCCL and cuBLAS settings, no nondeterministic attention backward).
    {"deterministic-mode", 0},
    // The interleaved schedule's microbatch groups and its warm-up/flush sends overlapped; the parameter
    // all-gather overlapped with the optimizer step (priced with the forward's first layers).
    {"microbatch-group-size-per-virtual-pipeline-stage", 1},
    {"overlap-p2p-communication-warmup-flush", 0},
    {"overlap-param-gather-with-optimizer-step", 0},
    {"moe-router-dtype", 1},  // the router's GEMM and softmax in FP32
    // Megatron-FSDP's main parameters, main gradients and gradient communication in another type.
    {"megatron-fsdp-main-params-dtype", 1},
    {"megatron-fsdp-main-grads-dtype", 1},
    {"megatron-fsdp-grad-comm-dtype", 1},
};

// Learning rate, data, checkpoints, logging, numerics: an iteration costs the same.
constexpr NamedFlag kNoEffectFlags[] = {
    {"window-attn-skip-freq", 1},  // no effect without --window-size, which is refused
    // Megatron-LM's functional tests' logging and checkpointing (tests/functional_tests/test_cases).
    {"log-params-norm", 0},
    {"log-num-zeros-in-grad", 0},
    {"log-memory-to-tensorboard", 0},
    {"timing-log-level", 1},
    {"dist-ckpt-strictness", 1},
    {"dist-ckpt-optim-fully-reshardable", 0},
    {"async-save", 0},
    {"use-persistent-ckpt-worker", 0},
    {"save-retain-interval", 1},
    {"wandb-entity", 1},
    {"wandb-save-dir", 1},
    {"ckpt-fully-parallel-load", 0},
    {"ckpt-fully-parallel-save", 0},
    {"ckpt-assume-constant-structure", 0},
    {"async-strategy", 1},
    {"async-ckpt-use-cpu-shm", 0},
    {"use-checkpoint-opt_param-scheduler", 0},
    {"check-weight-hash-across-dp-replicas-interval", 1},  // a hash compared every N iterations, not each step
    {"ddp-average-in-collective", 0},                      // the same reduction, averaged inside it
    {"fim-data", 0},                                       // fill-in-the-middle data
    {"fim-rate", 1},
    {"fim-spm-rate", 1},
    // Megatron-LM of 2020 (v1.x, pretrain_gpt2.py): its data loader and warm-up.
    {"warmup", 1},
    {"resume-dataloader", 0},
    {"train-data", kOneOrMore},
    {"lazy-loader", 0},
    {"cache-dir", 1},
    // Megatron-DeepSpeed (BigScience's): Adam is the optimizer hetsim prices (another is noted), the
    // carbon logs, muP's multipliers (they scale values, not the work).
    {"optimizer", 1},
    {"codecarbon-dir", 1},
    {"mup", 0},
    {"mup-input-mult", 1},
    {"mup-output-mult", 1},
    {"mup-attn-mult", 1},
    // BigScience's Megatron-DeepSpeed: kernel checks, checkpoint format, a file that stops the run,
    // the loss normalised over target tokens (the same work).
    {"abort-on-unmet-fused-kernel-constraints", 0},
    {"universal-checkpoint", 0},
    {"kill-switch-path", 1},
    {"norm-target-loss", 0},
    // Its data: weighted split files, the validation loader, a progress reset; Megatron's loader type.
    {"train-weighted-split-paths-path", 1},
    {"valid-weighted-split-paths-path", 1},
    {"valid-num-workers", 1},
    {"reset-progress", 0},
    {"dataloader-type", 1},
    // The teacher of Megatron-DeepSpeed's distillation: no effect without --kd, which is refused.
    {"kd-beta-ce", 1},
    {"num-layers-teacher", 1},
    {"hidden-size-teacher", 1},
    {"num-attention-heads-teacher", 1},
    {"load-teacher", 1},
    // Megatron-DeepSpeed's schedules by tokens, its MoE loss and evaluation, its TensorBoard logging.
    {"override-opt_param-scheduler", 0},
    {"lr-decay-tokens", 1},
    {"lr-warmup-tokens", 1},
    {"train-tokens", 1},
    {"moe-loss-coeff", 1},
    {"create-moe-param-group", 0},  // the optimizer's parameter groups for the experts
    {"moe-eval-capacity-factor", 1},
    {"tensorboard-queue-size", 1},
    {"tensorboard-log-interval", 1},
    // The norm's epsilon (numerics only): --norm-epsilon, --layernorm-epsilon before Megatron-LM's 2023 rename.
    {"norm-epsilon", 1},
    {"layernorm-epsilon", 1},
    {"log-timers-to-tensorboard", 0},
    {"log-batch-size-to-tensorboard", 0},
    {"log-validation-ppl-to-tensorboard", 0},
    {"log-optimizer-states-to-tensorboard", 0},
    {"lr", 1},
    {"min-lr", 1},
    {"decoupled-lr", 1},
    {"decoupled-min-lr", 1},
    {"lr-decay-style", 1},
    {"lr-decay-iters", 1},
    {"lr-decay-samples", 1},
    {"lr-warmup-fraction", 1},
    {"lr-warmup-iters", 1},
    {"lr-warmup-samples", 1},
    {"train-iters", 1},
    {"train-samples", 1},
    {"weight-decay", 1},
    {"adam-beta1", 1},
    {"adam-beta2", 1},
    {"adam-eps", 1},
    {"clip-grad", 1},
    {"init-method-std", 1},
    {"hidden-dropout", 1},
    {"seed", 1},
    {"data-path", kOneOrMore},  // a blend: weight path weight path ...
    {"vocab-file", 1},
    {"merge-file", 1},
    {"split", 1},
    {"mock-data", 0},
    {"tiktoken-pattern", 1},
    {"data-cache-path", 1},
    {"num-workers", 1},
    {"no-create-attention-mask-in-dataloader", 0},
    {"no-mmap-bin-files", 0},
    {"save", 1},
    {"load", 1},
    {"save-interval", 1},
    {"no-load-optim", 0},
    {"no-load-rng", 0},
    {"ckpt-format", 1},
    {"log-interval", 1},
    {"log-throughput", 0},
    {"eval-interval", 1},
    {"eval-iters", 1},
    {"tensorboard-dir", 1},
    {"wandb-project", 1},
    {"wandb-exp-name", 1},
    {"profile", 0},
    {"profile-step-start", 1},
    {"profile-step-end", 1},
    {"distributed-backend", 1},
    {"distributed-timeout-minutes", 1},
    {"exit-duration-in-mins", 1},
    {"manual-gc", 0},
    {"use-mcore-models", 0},
    {"normalization", 1},
    {"rotary-base", 1},
    {"rotary-percent", 1},
    {"no-position-embedding", 0},
    {"apply-layernorm-1p", 0},
    {"finetune", 0},  // loads a checkpoint without its optimizer state
    {"repeated-dataloader", 0},
    {"fp16-lm-cross-entropy", 0},
    {"calculate-per-token-loss", 0},
    {"fp8-amax-history-len", 1},
    {"fp8-amax-compute-algo", 1},
    {"moe-router-load-balancing-type", 1},
    {"moe-aux-loss-coeff", 1},
    {"moe-router-pre-softmax", 0},  // softmax before the top-k: the router's numerics, not its work
    {"moe-z-loss-coeff", 1},        // the router's z-loss and input jitter: its numerics, not its work
    {"moe-input-jitter-eps", 1},
    {"loss-scale", 1},
    {"initial-loss-scale", 1},
    {"loss-scale-window", 1},
    {"hysteresis", 1},
    {"min-loss-scale", 1},
    {"exit-interval", 1},
    {"data-impl", 1},
    {"deepspeed-activation-checkpointing", 0},  // whose checkpointing runs, not whether: --checkpoint-activations says
};

const absl::flat_hash_map<std::string, Spec>& Table() {
  static const auto* table = [] {
    auto* t = new absl::flat_hash_map<std::string, Spec>;
    for (const NamedFlag& f : kModelledFlags) t->emplace(f.name, Spec{FlagKind::kModelled, f.arity});
    for (const NamedFlag& f : kNotModelledFlags) t->emplace(f.name, Spec{FlagKind::kNotModelled, f.arity});
    for (const NamedFlag& f : kNoEffectFlags) t->emplace(f.name, Spec{FlagKind::kNoEffect, f.arity});
    return t;
  }();
  return *table;
}

bool IsFlag(absl::string_view token) { return absl::StartsWith(token, "--") && token.size() > 2; }

}  // namespace

FlagKind KindOf(absl::string_view name) {
  auto it = Table().find(std::string(name));
  return it == Table().end() ? FlagKind::kUnknown : it->second.kind;
}

std::optional<std::string> MegatronFlags::Value(absl::string_view name) const {
  auto it = flags.find(std::string(name));
  if (it == flags.end() || it->second.values.empty()) return std::nullopt;
  return it->second.values.front();
}

std::vector<std::string> ShellTokens(absl::string_view line) {
  std::vector<std::string> tokens;
  std::string current;
  bool in_token = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        current += c;
      }
      continue;
    }
    if (c == '\\' && i + 1 < line.size() && (line[i + 1] == '\n' || line[i + 1] == '\r')) {
      ++i;
      if (line[i] == '\r' && i + 1 < line.size() && line[i + 1] == '\n') ++i;
      continue;  // a continued line: the shell joins it
    }
    if (c == '#' && !in_token) {
      while (i < line.size() && line[i] != '\n') ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_token) tokens.push_back(std::move(current));
      current.clear();
      in_token = false;
      continue;
    }
    in_token = true;
    if (c == '"' || c == '\'') {
      quote = c;
    } else {
      current += c;
    }
  }
  if (in_token) tokens.push_back(std::move(current));
  return tokens;
}

namespace {

// `deepspeed --num_gpus N script.py` with no host list (--hostfile, -H, --include, --exclude,
// --num_nodes, --master_addr): DeepSpeed's runner runs on the local GPUs alone, one node. Without
// --num_gpus the runner takes /job/hostfile's hosts when the file exists (Megatron-DeepSpeed's scripts
// count their GPUs over it with ds_ssh), else the local GPUs: the node count is left to --nodes.
void DeepSpeedLocalRun(const std::vector<std::string>& tokens, size_t script, MegatronFlags& out) {
  if (out.launch.launcher != "deepspeed" || out.launch.nnodes > 0 || out.launch.nproc_per_node <= 0) return;
  for (size_t j = 0; j < script; ++j) {
    for (const char* n : {"--hostfile", "-H", "--include", "-i", "--exclude", "-e", "--master_addr"}) {
      if (tokens[j] == n || absl::StartsWith(tokens[j], absl::StrCat(n, "="))) return;
    }
  }
  out.launch.nnodes = 1;
  out.launch.notes.push_back(
      absl::StrFormat("deepspeed --num_gpus %d without a host list: one node (DeepSpeed's runner runs on the local "
                      "GPUs when /job/hostfile is absent)",
                      out.launch.nproc_per_node));
}

// The launcher's own flags before the training script, "--flag value" or "--flag=value": torchrun's
// (and torch.distributed.launch's) --nproc_per_node and --nnodes, deepspeed's --num_gpus and
// --num_nodes, srun's --ntasks-per-node and --nodes/-N. An elastic range "1:4" reads its largest; a
// value that is not a number (`gpu`, an unset variable) is noted and left to --nodes or the island.
void ReadLauncher(const std::vector<std::string>& tokens, size_t script, MegatronFlags& out) {
  // Accelerate's launcher under another (`srun accelerate launch ...`, Accelerate's Slurm examples): its
  // options and config decide the run (accelerate_config.h).
  for (size_t j = 0; j + 1 < script; ++j) {
    const std::string& w = tokens[j];
    if (w.substr(w.find_last_of('/') + 1) == "accelerate" && tokens[j + 1] == "launch")
      out.launch.launcher = "accelerate";
  }
  for (size_t j = 0; j < script; ++j) {
    std::string name = tokens[j], value;
    if (const size_t eq = name.find('='); eq != std::string::npos && absl::StartsWith(name, "-")) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (j + 1 < script) {
      value = tokens[j + 1];
    }
    if (absl::StartsWith(name, "--") && name.size() > 2) {
      const bool has_value = absl::StrContains(tokens[j], "=") || (j + 1 < script && !absl::StartsWith(value, "-"));
      out.launch.options[name.substr(2)] = has_value ? value : "";
    }
    int64_t* target = nullptr;
    for (const char* n : {"--nproc_per_node", "--nproc-per-node", "--num_gpus", "--num-gpus", "--ntasks-per-node"}) {
      if (name == n) target = &out.launch.nproc_per_node;
    }
    for (const char* n : {"--nnodes", "--num_nodes", "--num-nodes", "--nodes", "-N"}) {
      if (name == n) target = &out.launch.nnodes;
    }
    if (target == nullptr) continue;
    absl::string_view number = value;
    if (const size_t colon = number.find(':'); colon != absl::string_view::npos) {
      number = number.substr(colon + 1);
      out.launch.notes.push_back(
          absl::StrFormat("%s %s: an elastic range; its largest, %s, is read", name, value, number));
    }
    if (!absl::SimpleAtoi(number, target) || *target <= 0) {
      *target = 0;
      out.launch.notes.push_back(
          absl::StrFormat("%s %s: not a number of GPUs or nodes; --nodes or the island's node decides", name, value));
    }
  }
  DeepSpeedLocalRun(tokens, script, out);
  // torchrun's defaults when the line gives neither (torch/distributed/run.py: --nnodes "1:1",
  // --nproc-per-node "1"): one process on one node, as Megatron-LM's single-GPU examples run.
  if (out.launch.launcher != "torchrun") return;
  const auto given = [&out](std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&out](const char* n) { return out.launch.options.contains(n); });
  };
  if (out.launch.nnodes <= 0 && !given({"nnodes", "num_nodes", "num-nodes"})) {
    out.launch.nnodes = 1;
    out.launch.defaults.push_back("torchrun without --nnodes: one node (torchrun's default)");
  }
  if (out.launch.nproc_per_node <= 0 && !given({"nproc_per_node", "nproc-per-node"})) {
    out.launch.nproc_per_node = 1;
    out.launch.defaults.push_back("torchrun without --nproc_per_node: one process (torchrun's default)");
  }
}

// The other scripts a script runs (`bash x.sh`, `sbatch job.sbatch`, `. CONFIG.sh`, `./run.sh`), in order,
// each once: the launch a script leaves to another is out of the importer's reach.
std::vector<std::string> NestedScripts(const std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  const auto is_script = [](absl::string_view w) {
    return absl::EndsWith(w, ".sh") || absl::EndsWith(w, ".sbatch") || absl::EndsWith(w, ".slurm");
  };
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& w = tokens[i];
    const bool runner = w == "bash" || w == "sh" || w == "sbatch" || w == "source" || w == ".";
    std::string script;
    if (runner && i + 1 < tokens.size() && is_script(tokens[i + 1])) script = tokens[i + 1];
    if (absl::StartsWith(w, "./") && is_script(w)) script = w;
    if (!script.empty() && std::find(out.begin(), out.end(), script) == out.end()) out.push_back(script);
  }
  return out;
}

// NeMo-Framework-Launcher's launcher_scripts/main.py takes Hydra overrides ("training=llama/llama3_70b
// training.trainer.num_nodes=8"), not flags: the run's shape is in the training config it names. Why
// hetsim does not read such a line and how to import the run, or nullopt for any other line.
std::optional<std::string> NemoLauncherRun(const std::vector<std::string>& words) {
  const auto py =
      std::find_if(words.begin(), words.end(), [](const std::string& w) { return absl::EndsWith(w, ".py"); });
  if (py == words.end() || py + 1 == words.end()) return std::nullopt;
  // A NeMo or NeMo-Aligner training script run by Hydra (@hydra_runner: --config-path, --config-name, then
  // key=value overrides; NeMo-Aligner's tests/functional/dpo.sh runs train_gpt_dpo.py so): its model and
  // run are the named config's.
  std::string config_name;
  for (auto it = py + 1; it != words.end(); ++it) {
    if (absl::StartsWith(*it, "--config-name=")) config_name = it->substr(std::string("--config-name=").size());
    if (*it == "--config-name" && it + 1 != words.end()) config_name = *(it + 1);
  }
  if (!config_name.empty()) {
    return absl::StrFormat(
        "%s runs with Hydra's --config-name %s and key=value overrides, not Megatron's flags: import that NeMo "
        "config, hetsim import nemo %s.yaml (with --model CHECKPOINT_MODEL.yaml when it restores a checkpoint, as "
        "NeMo-Aligner's do), its overrides written into a copy",
        *py, config_name, config_name);
  }
  if (py->substr(py->find_last_of('/') + 1) != "main.py") return std::nullopt;
  std::string config;
  std::vector<std::string> training;
  for (auto it = py + 1; it != words.end(); ++it) {
    const size_t eq = it->find('=');
    if (eq == std::string::npos || absl::StartsWith(*it, "-")) return std::nullopt;  // a flag: not Hydra's
    const std::string key = absl::StrCat(absl::StripPrefix(it->substr(0, eq), "+"));
    if (key == "training") config = it->substr(eq + 1);
    if (absl::StartsWith(key, "training.") || absl::StrContains(key, "@training.")) training.push_back(*it);
  }
  if (config.empty()) return std::nullopt;
  return absl::StrFormat(
      "%s is NeMo-Framework-Launcher's, run with Hydra overrides, not a training script's flags: import the "
      "training config it names, hetsim import nemo launcher_scripts/conf/training/%s.yaml --nodes N, with its "
      "overrides written into that YAML (%s)",
      *py, config, training.empty() ? "none of training.*" : absl::StrJoin(training, " "));
}

// Another training script configured by key=value overrides after its name (Hydra's or OmegaConf's: the DPO
// reference implementation's train.py `model=blank_model loss=dpo batch_size=32`, LLM360's ambersafe/dpo.sh;
// ChatLearn's `chatlearn_entrypoint.py grpo --config-file X runtime_args.train_global_batch_size=2048`, Pai-
// Megatron-Patch): its model, layout and batch are the config's those overrides complete, not flags. Why hetsim
// does not read the line, naming a preference or reinforcement-learning run by its override, or nullopt.
std::optional<std::string> OverridesRun(const std::vector<std::string>& words) {
  const auto py =
      std::find_if(words.begin(), words.end(), [](const std::string& w) { return absl::EndsWith(w, ".py"); });
  if (py == words.end() || absl::StartsWith(py->substr(py->find_last_of('/') + 1), "pretrain_")) return std::nullopt;
  // An override's key is a dotted name (`model.name_or_path`, `+trainer.x`, `datasets`), never a path or an
  // expansion left as written (a flag's value `.../gbs512_g$(nvidia-smi --format=csv)` holds an `=` too).
  const auto override_key = [](absl::string_view key) {
    key = absl::StripPrefix(absl::StripPrefix(key, "+"), "~");
    return !key.empty() && (absl::ascii_isalpha(key[0]) || key[0] == '_') &&
           std::all_of(key.begin(), key.end(),
                       [](char c) { return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '@' || c == '-'; });
  };
  std::vector<std::string> overrides;
  std::string method;  // dpo, grpo, ppo: a bare word (ChatLearn's subcommand) or an override's value
  for (auto it = py + 1; it != words.end(); ++it) {
    const size_t eq = it->find('=');
    const std::string value = absl::AsciiStrToLower(eq == std::string::npos ? *it : it->substr(eq + 1));
    if (method.empty() && (value == "dpo" || value == "grpo" || value == "ppo")) method = value;
    if (eq == std::string::npos || !override_key(absl::string_view(*it).substr(0, eq))) continue;
    overrides.push_back(*it);
  }
  if (overrides.size() < 2) return std::nullopt;  // one `a=b` may be a flag's value
  const std::string shown =
      absl::StrJoin(overrides.begin(), overrides.begin() + std::min<size_t>(3, overrides.size()), " ");
  const std::string what =
      method == "dpo"  ? "; it is DPO, whose every step also runs a frozen reference model's forward (a plan prices it "
                         "with reference_policy, docs/cost-model.md)"
      : method.empty() ? ""
                       : absl::StrFormat(
                             "; it is reinforcement learning (%s: generation by the policy, other "
                             "models' forwards, then its training), which hetsim does not model",
                             absl::AsciiStrToUpper(method));
  return absl::StrFormat(
      "%s runs with key=value overrides (%s ...), not flags: its model, layout and batch are in the config those "
      "overrides complete, which hetsim does not read; write the model as a hetsim Model and plan it with that "
      "config's sizes%s",
      *py, shown, what);
}

}  // namespace

std::string YamlPlace(absl::string_view source, int line, int column) {
  if (line < 0 || column < 0) return std::string(source);
  return absl::StrFormat("%s:%d:%d", source, line + 1, column + 1);
}

absl::StatusOr<LineFile> ReadLineFile(const MegatronFlags& flags, const std::string& path, absl::string_view source) {
  LineFile out;
  if (auto written = flags.launch.written_files.find(path); written != flags.launch.written_files.end()) {
    out.text = written->second;
    out.where = absl::StrFormat("%s (written by the script)", path);
    return out;
  }
  out.where = source == "--line" ? path : proto::ResolveRelativeTo(source, path);
  HETSIM_ASSIGN_OR_RETURN(out.text, proto::ReadInputFile(out.where, proto::InputKind::kText));
  out.from_disk = true;
  return out;
}

std::optional<std::string> OtherModelEntryPoint(absl::string_view script) {
  // pretrain_hybrid.py is pretrain_mamba.py's name in today's Megatron-LM.
  if (script == "pretrain_mamba.py" || script == "pretrain_hybrid.py") {
    return absl::StrCat(script, ": Mamba and hybrid Mamba models are not modelled (hetsim prices transformers)");
  }
  static constexpr std::pair<const char*, const char*> kOtherEntryPoints[] = {
      {"pretrain_bert.py", "trains BERT (an encoder with bidirectional attention and its MLM and NSP heads)"},
      {"pretrain_t5.py", "trains T5 (an encoder-decoder with cross-attention)"},
      {"pretrain_ict.py", "trains the inverse cloze task's two BERT towers"},
      {"pretrain_retro.py", "trains RETRO (a decoder with chunked cross-attention to retrieved neighbours)"},
      {"pretrain_vlm.py", "trains a vision-language model"},
      {"pretrain_vision_classify.py", "trains a vision transformer"},
      {"pretrain_vision_dino.py", "trains a vision transformer"},
      {"pretrain_vision_inpaint.py", "trains a vision transformer"},
      {"run_text_generation_server.py", "serves a model for inference"},
      {"main.py", "runs a fine-tuning or evaluation task (tasks/main.py)"},
  };
  for (const auto& [name, what] : kOtherEntryPoints) {
    if (script == name) {
      return absl::StrFormat("%s %s, which hetsim does not model (it prices GPT-style decoders, pretrain_gpt.py)", name,
                             what);
    }
  }
  return std::nullopt;
}

// Megatron-Bridge's launcher (NVIDIA-NeMo/Megatron-Bridge scripts/training/run_recipe.py --recipe NAME
// key=value ...; its examples/models/*/slurm_pretrain.sh build it as a string inside a loop): the model is
// the recipe's, a Python function, with the overrides as OmegaConf keys, not Megatron's flags.
namespace {
std::optional<std::string> MegatronBridgeRun(const std::vector<std::string>& tokens) {
  for (const std::string& t : tokens) {
    if (!absl::StrContains(t, "run_recipe.py")) continue;
    return "it runs Megatron-Bridge's run_recipe.py, whose model is a Python recipe (--recipe NAME, "
           "megatron/bridge/recipes) with key=value overrides, not a launch line of Megatron's flags: hetsim does "
           "not read recipes; write the model as a hetsim Model and plan it with the recipe's sizes";
  }
  return std::nullopt;
}
}  // namespace

namespace {
// A file that only sets variables of flags for another script to splice into its launch line (Megatron-LM's
// examples/post_training/modelopt/conf/*/*.sh set MODEL_ARGS; finetune.sh sources one and adds the
// parallel sizes from TP, PP, EP ... of the environment): the model's flags without the run's layout.
std::string FlagsOnlyFile(const std::map<std::string, std::vector<std::string>>& variables, absl::string_view source) {
  std::vector<std::string> names, lacks;
  bool moe = false;
  absl::flat_hash_set<std::string> given;
  for (const auto& [name, words] : variables) {
    names.push_back(absl::StrCat("$", name));
    for (const std::string& w : words) {
      given.insert(w.substr(0, w.find('=')));
      moe = moe || w == "--num-experts";
    }
  }
  for (const char* flag : {"--tensor-model-parallel-size", "--pipeline-model-parallel-size",
                           "--expert-model-parallel-size", "--micro-batch-size", "--global-batch-size"}) {
    if (!given.contains(flag) && (moe || absl::string_view(flag) != "--expert-model-parallel-size")) {
      lacks.push_back(flag);
    }
  }
  const std::string name = variables.begin()->first;
  return absl::StrFormat(
      "%s: the file runs no training script: it only sets %s, flags for the script that sources it to add to its "
      "launch line (as Megatron-LM's ModelOpt finetune.sh sources conf/*/*.sh for MODEL_ARGS). It lacks the "
      "training command, the node count%s%s; pass its flags with them: hetsim import megatron --line "
      "\"$(bash -c 'source %s; echo $%s') %s%s\" --nodes N --cluster C (Megatron's defaults are 1 for a parallel "
      "size, and micro-batch x data parallel for the global batch)",
      source, absl::StrJoin(names, ", "), lacks.empty() ? "" : " and ", absl::StrJoin(lacks, ", "), source, name,
      absl::StrJoin(lacks, " N "), lacks.empty() ? "" : " N");
}
}  // namespace

absl::StatusOr<MegatronFlags> ParseMegatronLaunchLine(absl::string_view line, absl::string_view source) {
  HETSIM_ASSIGN_OR_RETURN(RenderedLaunch rendered, RenderLaunchScript(line, source));
  // run_recipe.py anywhere in the file: the training is Megatron-Bridge's, whatever command the rendering
  // reached first (Bridge's gemma4 slurm_pretrain.sh converts the checkpoint with torchrun first).
  std::vector<std::string> tokens = ShellTokens(line);
  for (const std::vector<std::string>* words : {&rendered.words, &tokens}) {
    if (std::optional<std::string> bridge = MegatronBridgeRun(*words)) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": ", *bridge));
    }
  }
  if (rendered.words.empty()) {
    // No command runs a .py script: a line of flags alone, or a script whose launch is out of reach.
    if (tokens.empty() || IsFlag(tokens[0])) return ParseMegatronWords(tokens, source);
    const std::vector<std::string> nested = NestedScripts(tokens);
    // A training script named inside the branches of an undecided if (NVLM's `if [[ $BATCH -eq 0 ]]; then
    // torchrun ... train.py`, an `if [ -f config.json ]` around a deepspeed run): running the script, even
    // under bash -x, would start that training, so the advice is to decide the condition instead.
    std::string branch_py;
    for (const std::string& t : tokens) {  // a word of a token: a command kept in a string (CMD="deepspeed x.py")
      for (absl::string_view w : absl::StrSplit(t, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
        if (branch_py.empty() && absl::EndsWith(w, ".py")) branch_py = std::string(w);
      }
    }
    if (branch_py.empty() && nested.empty() && !rendered.flag_variables.empty()) {
      return absl::InvalidArgumentError(FlagsOnlyFile(rendered.flag_variables, source));
    }
    const bool undecided_if = std::any_of(rendered.notes.begin(), rendered.notes.end(),
                                          [](const std::string& n) { return absl::StrContains(n, "is not decided"); });
    const std::string advice =
        !branch_py.empty() && undecided_if && nested.empty()
            ? absl::StrFormat(
                  "%s is run inside the branches of that if: set what its condition reads (a variable "
                  "of the environment, a file) in a copy of the script, or write out the launch line of "
                  "the branch you run (running the script, even under bash -x, would start the training),",
                  branch_py)
        : nested.empty() ? absl::StrFormat("render the command it runs (bash -x %s 2>&1 | grep pretrain)", source)
                         : absl::StrFormat(
                               "it runs %s, which hetsim does not follow (nor runs: it may submit jobs); "
                               "render the training command that script builds",
                               absl::StrJoin(nested, ", "));
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: no command of the script runs a Python training script (pretrain_gpt.py ...)%s%s; %s and import that "
        "line",
        source, rendered.notes.empty() ? "" : ": ", absl::StrJoin(rendered.notes, "; "), advice));
  }
  if (std::optional<std::string> nemo = NemoLauncherRun(rendered.words)) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", *nemo));
  }
  if (std::optional<std::string> overrides = OverridesRun(rendered.words)) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", *overrides));
  }
  absl::StatusOr<MegatronFlags> parsed = ParseMegatronWords(rendered.words, source);
  if (!parsed.ok()) {
    // A model hetsim does not price is refused as such, before any flag of its line (a Mamba script
    // whose sizes a `case` sets was refused for an empty size). The training script is the first
    // `.py` word; a `main.py` may be DeepSpeed's, which the import tells apart.
    const auto py = std::find_if(rendered.words.begin(), rendered.words.end(),
                                 [](const std::string& w) { return absl::EndsWith(w, ".py"); });
    const std::string script = py == rendered.words.end() ? "" : py->substr(py->find_last_of('/') + 1);
    if (std::optional<std::string> other = OtherModelEntryPoint(script); other && script != "main.py") {
      return absl::InvalidArgumentError(absl::StrCat(source, ": ", *other));
    }
    // A flag without its value: usually a variable the script leaves empty (an argument, a branch
    // not taken); the rendering's notes say which.
    if (rendered.notes.empty()) return parsed.status();
    return absl::Status(parsed.status().code(),
                        absl::StrCat(parsed.status().message(), "\n  reading the script: ",
                                     absl::StrJoin(rendered.notes, "\n  reading the script: ")));
  }
  MegatronFlags flags = *std::move(parsed);
  for (auto it = rendered.notes.rbegin(); it != rendered.notes.rend(); ++it) {
    flags.launch.notes.insert(flags.launch.notes.begin(), absl::StrCat("script ", *it));
  }
  flags.launch.written_files = std::move(rendered.written_files);
  flags.launch.environment = std::move(rendered.environment);
  // srun inherits the batch allocation: the header's node count when the launch gives none.
  if (flags.launch.nnodes == 0 && rendered.sbatch_nodes > 0) {
    flags.launch.nnodes = rendered.sbatch_nodes;
    flags.launch.notes.push_back(absl::StrFormat("nodes: %d, from the Slurm header (#SBATCH, script line %d)",
                                                 rendered.sbatch_nodes, rendered.sbatch_line));
  }
  return flags;
}

absl::StatusOr<MegatronFlags> ParseMegatronWords(const std::vector<std::string>& tokens, absl::string_view source) {
  MegatronFlags out;
  size_t start = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!absl::EndsWith(tokens[i], ".py")) continue;
    const size_t slash = tokens[i].find_last_of('/');
    out.launch.script = slash == std::string::npos ? tokens[i] : tokens[i].substr(slash + 1);
    if (i > 0) out.launch.launcher = tokens[0].substr(tokens[0].find_last_of('/') + 1);  // npos + 1 = 0
    ReadLauncher(tokens, i, out);
    start = i + 1;
    break;
  }
  for (size_t i = start; i < tokens.size(); ++i) {
    if (!IsFlag(tokens[i])) {
      out.unknown.push_back(tokens[i]);  // a stray word: not a flag, not a flag's value
      continue;
    }
    std::string name = tokens[i].substr(2);
    std::vector<std::string> values;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      values.push_back(name.substr(eq + 1));
      name = name.substr(0, eq);
    }
    // Flags Megatron-LM renamed in 2020 and 2022, still in published scripts (its own SC'21 ones): read
    // under today's names. Then, a recompute method alone meant full recomputation.
    static const std::map<std::string, std::string, std::less<>> kRenamed = {
        {"activations-checkpoint-method", "recompute-method"},
        {"activations-checkpoint-num-layers", "recompute-num-layers"},
        {"distribute-checkpointed-activations", "distribute-saved-activations"},
        // Megatron-LM before v2.0 (2020): tensor parallelism was "model parallelism", and --batch-size
        // the batch of one model replica, today's micro-batch (its global batch: that times DP).
        {"model-parallel-size", "tensor-model-parallel-size"},
        {"batch-size", "micro-batch-size"}};
    if (auto renamed = kRenamed.find(name); renamed != kRenamed.end()) {
      out.renamed.push_back(absl::StrFormat("--%s (today --%s)", name, renamed->second));
      if (name == "activations-checkpoint-method")
        out.flags.try_emplace("recompute-granularity", FlagValue{{"full"}, 0});
      name = renamed->second;
    }
    auto spec = Table().find(name);
    const int arity = spec == Table().end() ? -1 : spec->second.arity;
    if (arity == -1 || arity == kOneOrMore) {
      // Unknown: its value, if any, is every following token up to the next flag.
      while (i + 1 < tokens.size() && !IsFlag(tokens[i + 1])) values.push_back(tokens[++i]);
      if (arity == kOneOrMore && values.empty() && spec->second.kind == FlagKind::kNoEffect) {
        out.no_effect.push_back(absl::StrFormat("--%s (without its value)", name));
        continue;
      }
      if (arity == kOneOrMore && values.empty()) {
        return absl::InvalidArgumentError(absl::StrFormat("%s: --%s: needs at least one value", source, name));
      }
    } else {
      // The Hugging Face Trainer's switches take a value (`--bf16 True`, `--gradient_checkpointing False`:
      // HfArgumentParser's booleans); no Megatron flag does. True is the switch given, False the switch absent.
      if (arity == 0 && i + 1 < tokens.size() && (tokens[i + 1] == "True" || tokens[i + 1] == "False")) {
        if (tokens[++i] == "False") {
          out.no_effect.push_back(absl::StrFormat("--%s False (off)", name));
          continue;
        }
      }
      while (static_cast<int>(values.size()) < arity && i + 1 < tokens.size() && !IsFlag(tokens[i + 1])) {
        values.push_back(tokens[++i]);
      }
      // A flag without effect on the cost whose value is missing (a placeholder path the script
      // leaves empty) is noted, not refused: its value changes nothing.
      if (static_cast<int>(values.size()) != arity && spec->second.kind == FlagKind::kNoEffect) {
        out.no_effect.push_back(absl::StrFormat("--%s (without its value)", name));
        continue;
      }
      if (static_cast<int>(values.size()) != arity) {
        return absl::InvalidArgumentError(absl::StrFormat("%s: --%s: needs %d value%s, got %d", source, name, arity,
                                                          arity == 1 ? "" : "s", values.size()));
      }
    }
    const std::string written =
        values.empty() ? "--" + name : absl::StrCat("--", name, " ", absl::StrJoin(values, " "));
    const FlagKind kind = arity == -1 ? FlagKind::kUnknown : spec->second.kind;
    if (kind == FlagKind::kNoEffect) out.no_effect.push_back(written);
    if (kind == FlagKind::kNotModelled) out.not_modelled.push_back(written);
    if (kind == FlagKind::kUnknown) out.unknown.push_back(written);
    auto [it, inserted] = out.flags.try_emplace(name, FlagValue{values, static_cast<int>(i)});
    if (!inserted && it->second.values != values) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: --%s %s and --%s %s contradict each other", source, name,
                                                        absl::StrJoin(it->second.values, " "), name,
                                                        absl::StrJoin(values, " ")));
    }
  }
  out.launch.megatron_main = out.launch.script == "main.py" && out.Has("num-layers");
  return out;
}

}  // namespace hetsim::interop
