#include "interop/megatron_flags.h"

#include <array>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace hetsim::interop {
namespace {

// name -> (kind, number of values: 0 switch, 1 value, n values).
struct Spec {
  FlagKind kind;
  int arity;
};

const absl::flat_hash_map<std::string, Spec>& Table() {
  static const auto* table = new absl::flat_hash_map<std::string, Spec>{
      // What hetsim reads into the model or the plan.
      {"num-layers", {FlagKind::kModelled, 1}},
      {"hidden-size", {FlagKind::kModelled, 1}},
      {"ffn-hidden-size", {FlagKind::kModelled, 1}},
      {"num-attention-heads", {FlagKind::kModelled, 1}},
      {"group-query-attention", {FlagKind::kModelled, 0}},
      {"num-query-groups", {FlagKind::kModelled, 1}},
      {"kv-channels", {FlagKind::kModelled, 1}},
      {"seq-length", {FlagKind::kModelled, 1}},
      {"max-position-embeddings", {FlagKind::kModelled, 1}},
      {"position-embedding-type", {FlagKind::kModelled, 1}},
      {"vocab-size", {FlagKind::kModelled, 1}},
      {"make-vocab-size-divisible-by", {FlagKind::kModelled, 1}},
      {"micro-batch-size", {FlagKind::kModelled, 1}},
      {"global-batch-size", {FlagKind::kModelled, 1}},
      {"tensor-model-parallel-size", {FlagKind::kModelled, 1}},
      {"pipeline-model-parallel-size", {FlagKind::kModelled, 1}},
      {"num-layers-per-virtual-pipeline-stage", {FlagKind::kModelled, 1}},
      {"context-parallel-size", {FlagKind::kModelled, 1}},
      {"expert-model-parallel-size", {FlagKind::kModelled, 1}},
      {"sequence-parallel", {FlagKind::kModelled, 0}},
      {"recompute-granularity", {FlagKind::kModelled, 1}},
      {"recompute-activations", {FlagKind::kModelled, 0}},
      {"checkpoint-activations", {FlagKind::kModelled, 0}},  // Megatron-LM of 2021: full recomputation
      {"use-distributed-optimizer", {FlagKind::kModelled, 0}},
      {"fp16", {FlagKind::kModelled, 0}},
      {"bf16", {FlagKind::kModelled, 0}},
      {"fp8-format", {FlagKind::kModelled, 1}},
      {"swiglu", {FlagKind::kModelled, 0}},
      {"num-experts", {FlagKind::kModelled, 1}},
      {"moe-router-topk", {FlagKind::kModelled, 1}},
      {"moe-ffn-hidden-size", {FlagKind::kModelled, 1}},
      {"overlap-grad-reduce", {FlagKind::kModelled, 0}},
      {"tp-comm-overlap", {FlagKind::kModelled, 0}},
      {"untie-embeddings-and-output-weights", {FlagKind::kModelled, 0}},
      {"attention-backend", {FlagKind::kModelled, 1}},
      // Would change the cost; hetsim cannot express them yet (reported, not applied).
      {"recompute-method", {FlagKind::kNotModelled, 1}},
      {"recompute-num-layers", {FlagKind::kNotModelled, 1}},
      {"overlap-param-gather", {FlagKind::kNotModelled, 0}},
      {"overlap-p2p-communication", {FlagKind::kModelled, 0}},
      {"rampup-batch-size", {FlagKind::kNotModelled, 3}},
      {"grad-reduce-in-bf16", {FlagKind::kNotModelled, 0}},
      {"fp8-param-gather", {FlagKind::kNotModelled, 0}},
      {"moe-grouped-gemm", {FlagKind::kNotModelled, 0}},
      {"moe-token-dispatcher-type", {FlagKind::kNotModelled, 1}},
      {"decoder-first-pipeline-num-layers", {FlagKind::kNotModelled, 1}},
      {"decoder-last-pipeline-num-layers", {FlagKind::kNotModelled, 1}},
      {"cross-entropy-loss-fusion", {FlagKind::kNotModelled, 0}},
      {"disable-bias-linear", {FlagKind::kNotModelled, 0}},
      {"empty-unused-memory-level", {FlagKind::kNotModelled, 1}},
      // Learning rate, data, checkpoints, logging, numerics: an iteration costs the same.
      {"lr", {FlagKind::kNoEffect, 1}},
      {"min-lr", {FlagKind::kNoEffect, 1}},
      {"decoupled-lr", {FlagKind::kNoEffect, 1}},
      {"decoupled-min-lr", {FlagKind::kNoEffect, 1}},
      {"lr-decay-style", {FlagKind::kNoEffect, 1}},
      {"lr-decay-iters", {FlagKind::kNoEffect, 1}},
      {"lr-decay-samples", {FlagKind::kNoEffect, 1}},
      {"lr-warmup-fraction", {FlagKind::kNoEffect, 1}},
      {"lr-warmup-iters", {FlagKind::kNoEffect, 1}},
      {"lr-warmup-samples", {FlagKind::kNoEffect, 1}},
      {"train-iters", {FlagKind::kNoEffect, 1}},
      {"train-samples", {FlagKind::kNoEffect, 1}},
      {"weight-decay", {FlagKind::kNoEffect, 1}},
      {"adam-beta1", {FlagKind::kNoEffect, 1}},
      {"adam-beta2", {FlagKind::kNoEffect, 1}},
      {"adam-eps", {FlagKind::kNoEffect, 1}},
      {"clip-grad", {FlagKind::kNoEffect, 1}},
      {"init-method-std", {FlagKind::kNoEffect, 1}},
      {"attention-dropout", {FlagKind::kNoEffect, 1}},
      {"hidden-dropout", {FlagKind::kNoEffect, 1}},
      {"seed", {FlagKind::kNoEffect, 1}},
      {"data-path", {FlagKind::kNoEffect, 1}},
      {"vocab-file", {FlagKind::kNoEffect, 1}},
      {"merge-file", {FlagKind::kNoEffect, 1}},
      {"split", {FlagKind::kNoEffect, 1}},
      {"mock-data", {FlagKind::kNoEffect, 0}},
      {"tokenizer-type", {FlagKind::kNoEffect, 1}},
      {"tokenizer-model", {FlagKind::kNoEffect, 1}},
      {"tiktoken-pattern", {FlagKind::kNoEffect, 1}},
      {"data-cache-path", {FlagKind::kNoEffect, 1}},
      {"num-workers", {FlagKind::kNoEffect, 1}},
      {"no-create-attention-mask-in-dataloader", {FlagKind::kNoEffect, 0}},
      {"no-mmap-bin-files", {FlagKind::kNoEffect, 0}},
      {"save", {FlagKind::kNoEffect, 1}},
      {"load", {FlagKind::kNoEffect, 1}},
      {"save-interval", {FlagKind::kNoEffect, 1}},
      {"no-load-optim", {FlagKind::kNoEffect, 0}},
      {"no-load-rng", {FlagKind::kNoEffect, 0}},
      {"ckpt-format", {FlagKind::kNoEffect, 1}},
      {"log-interval", {FlagKind::kNoEffect, 1}},
      {"log-throughput", {FlagKind::kNoEffect, 0}},
      {"eval-interval", {FlagKind::kNoEffect, 1}},
      {"eval-iters", {FlagKind::kNoEffect, 1}},
      {"tensorboard-dir", {FlagKind::kNoEffect, 1}},
      {"wandb-project", {FlagKind::kNoEffect, 1}},
      {"wandb-exp-name", {FlagKind::kNoEffect, 1}},
      {"profile", {FlagKind::kNoEffect, 0}},
      {"profile-step-start", {FlagKind::kNoEffect, 1}},
      {"profile-step-end", {FlagKind::kNoEffect, 1}},
      {"distributed-backend", {FlagKind::kNoEffect, 1}},
      {"distributed-timeout-minutes", {FlagKind::kNoEffect, 1}},
      {"exit-duration-in-mins", {FlagKind::kNoEffect, 1}},
      {"manual-gc", {FlagKind::kNoEffect, 0}},
      {"use-mcore-models", {FlagKind::kNoEffect, 0}},
      {"normalization", {FlagKind::kNoEffect, 1}},
      {"rotary-base", {FlagKind::kNoEffect, 1}},
      {"rotary-percent", {FlagKind::kNoEffect, 1}},
      {"no-position-embedding", {FlagKind::kNoEffect, 0}},
      {"apply-layernorm-1p", {FlagKind::kNoEffect, 0}},
      {"no-masked-softmax-fusion", {FlagKind::kNoEffect, 0}},
      {"no-bias-gelu-fusion", {FlagKind::kNoEffect, 0}},
      {"no-bias-dropout-fusion", {FlagKind::kNoEffect, 0}},
      {"fp16-lm-cross-entropy", {FlagKind::kNoEffect, 0}},
      {"calculate-per-token-loss", {FlagKind::kNoEffect, 0}},
      {"fp8-amax-history-len", {FlagKind::kNoEffect, 1}},
      {"fp8-amax-compute-algo", {FlagKind::kNoEffect, 1}},
      {"moe-router-load-balancing-type", {FlagKind::kNoEffect, 1}},
      {"moe-aux-loss-coeff", {FlagKind::kNoEffect, 1}},
      {"DDP-impl", {FlagKind::kNoEffect, 1}},
  };
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

absl::StatusOr<MegatronFlags> ParseMegatronLaunchLine(absl::string_view line, absl::string_view source) {
  std::vector<std::string> tokens = ShellTokens(line);
  MegatronFlags out;
  size_t start = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!absl::EndsWith(tokens[i], ".py")) continue;
    // The launcher's own flags: torchrun --nproc_per_node N --nnodes M (also --nproc-per-node).
    for (size_t j = 0; j + 1 < i; ++j) {
      const std::string& t = tokens[j];
      int64_t* target = (t == "--nproc_per_node" || t == "--nproc-per-node") ? &out.launcher_nproc_per_node
                        : t == "--nnodes"                                   ? &out.launcher_nnodes
                                                                            : nullptr;
      if (target != nullptr && !absl::SimpleAtoi(tokens[j + 1], target)) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: %s: \"%s\" is not a whole number", source, t, tokens[j + 1]));
      }
    }
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
    auto spec = Table().find(name);
    const int arity = spec == Table().end() ? -1 : spec->second.arity;
    if (arity == -1) {
      // Unknown: its value, if any, is every following token up to the next flag.
      while (i + 1 < tokens.size() && !IsFlag(tokens[i + 1])) values.push_back(tokens[++i]);
    } else {
      while (static_cast<int>(values.size()) < arity && i + 1 < tokens.size() && !IsFlag(tokens[i + 1])) {
        values.push_back(tokens[++i]);
      }
      if (static_cast<int>(values.size()) != arity) {
        return absl::InvalidArgumentError(absl::StrFormat("%s: --%s: needs %d value%s, got %d", source, name, arity,
                                                          arity == 1 ? "" : "s", values.size()));
      }
    }
    const std::string written = values.empty() ? "--" + name : absl::StrCat("--", name, " ", absl::StrJoin(values, " "));
    const FlagKind kind = arity == -1 ? FlagKind::kUnknown : spec->second.kind;
    if (kind == FlagKind::kNoEffect) out.no_effect.push_back(written);
    if (kind == FlagKind::kNotModelled) out.not_modelled.push_back(written);
    if (kind == FlagKind::kUnknown) out.unknown.push_back(written);
    auto [it, inserted] = out.flags.try_emplace(name, FlagValue{values, static_cast<int>(i)});
    if (!inserted && it->second.values != values) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: --%s %s and --%s %s contradict each other", source, name, absl::StrJoin(it->second.values, " "), name,
          absl::StrJoin(values, " ")));
    }
  }
  return out;
}

}  // namespace hetsim::interop
