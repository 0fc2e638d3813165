#include "service/interop/nemo_import.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "service/interop/megatron_flags.h"
#include "service/interop/megatron_yaml.h"
#include "service/interop/tokenizer_vocab_internal.h"

namespace hetsim::interop {
namespace {

constexpr int kMaxInterpolationDepth = 16;

// The config's values by dotted key, with OmegaConf's key interpolations followed.
class YamlConfig {
 public:
  YamlConfig(YAML::Node root, YAML::Node model, YAML::Node trainer, std::string model_path, std::string source)
      : root_(std::move(root)),
        model_(std::move(model)),
        trainer_(std::move(trainer)),
        model_path_(std::move(model_path)),
        source_(std::move(source)) {}

  absl::Status Error(absl::string_view key, absl::string_view problem) const {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s: %s", SourceOf(key), key, problem));
  }
  // The model keys merged over a checkpoint's model config (--model, NemoBaseModel): the config's own model
  // section and that file's name, so that a key the config does not give is blamed on the file that does.
  void SetBase(YAML::Node own_model, std::string base_source) {
    own_model_ = std::move(own_model);
    base_source_ = std::move(base_source);
  }
  const std::string& source() const { return source_; }
  // The file a dotted key's value comes from: the checkpoint's model config for a model key the config itself
  // does not give, else the config.
  const std::string& SourceOf(absl::string_view key) const {
    if (base_source_.empty() || !absl::StartsWith(key, "model.")) return source_;
    const std::vector<std::string> parts = absl::StrSplit(key, '.');
    std::optional<YAML::Node> node(own_model_);
    for (size_t i = 1; i < parts.size(); ++i) {
      if (!node->IsMap()) return source_;  // a value of the config's own replaces the section below it
      const YAML::Node child = (*node)[parts[i]];
      node.emplace(child);
      if (!node->IsDefined()) return base_source_;
    }
    return source_;
  }
  // The scalar at `key` of the model ("model.x") or the trainer ("trainer.x") section; nullopt when
  // absent or null.
  absl::StatusOr<std::optional<std::string>> Scalar(absl::string_view key) const {
    HETSIM_ASSIGN_OR_RETURN(const YAML::Node node, At(key));
    return Resolve(node, key, 0);
  }
  // A model section with neither of NeMo's num_layers and hidden_size is another trainer's (OLMo's
  // d_model, n_layers): the refusal that says so, for when the import fails.
  absl::Status ForeignModel() const {
    // NeMo's fine-tuning configs (tuning/conf/megatron_gpt_finetuning_config.yaml, megatron_t0_config.yaml)
    // take the model from the .nemo checkpoint they restore (MegatronGPTSFTModel.merge_cfg_with).
    // NeMo-Aligner's configs (examples/nlp/gpt/conf/gpt_dpo.yaml) merge their model section over the model config
    // of the checkpoint at pretrained_checkpoint.restore_from_path (train_gpt_dpo.py, load_and_override_model_config).
    const YAML::Node aligner = root_["pretrained_checkpoint"] && root_["pretrained_checkpoint"].IsMap()
                                   ? root_["pretrained_checkpoint"]["restore_from_path"]
                                   : YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node restore = model_["restore_from_path"];
    if (restore.IsDefined() || aligner.IsDefined()) {
      const YAML::Node& at = restore.IsDefined() ? restore : aligner;
      std::string path = at.IsScalar() && !at.IsNull() ? at.Scalar() : "null";
      if (path == "???") path = "???, left to the command line";
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: model: no num_layers or hidden_size: %s, whose model is the checkpoint's at %s (%s), not written here; "
          "give that checkpoint's model config (the model_config.yaml inside the .nemo file, or the config it was "
          "trained with) with --model, and this config's model keys are merged over it, as NeMo does",
          source_, restore.IsDefined() ? "a NeMo fine-tuning config" : "a NeMo-Aligner config",
          restore.IsDefined() ? "model.restore_from_path" : "pretrained_checkpoint.restore_from_path", path));
    }
    // Megatron-Bridge's YAML overrides (tutorials/recipes/llama/conf/llama32_1b_pretrain.yaml): sections of its
    // ConfigContainer (train, optimizer, scheduler, checkpoint, ...) over a recipe, a Python function that builds
    // the model (megatron/bridge/recipes); the model section holds only the parallel sizes it overrides.
    if (root_["train"] && (root_["optimizer"] || root_["scheduler"] || root_["checkpoint"])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: model: no num_layers or hidden_size: a Megatron-Bridge override config (train, optimizer, ... over a "
          "recipe): its model is the Python recipe's it overrides (a run_recipe.py --recipe NAME), which hetsim "
          "does not read; write the model as a hetsim Model and plan it with these sizes",
          source_));
    }
    std::vector<std::string> keys;
    for (const auto& kv : model_) {
      if (keys.size() < 6) keys.push_back(kv.first.as<std::string>());
    }
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: model: no num_layers or hidden_size: not a NeMo model config (its model section has %s, ...: another "
        "trainer's config, which hetsim does not read; write the model as a hetsim Model and plan it instead)",
        source_, absl::StrJoin(keys, ", ")));
  }
  bool NemoShaped() const { return model_["num_layers"].IsDefined() || model_["hidden_size"].IsDefined(); }
  // Whether `key` ("trainer.dpo", "model.dpo") is a section (a mapping).
  bool HasSection(absl::string_view key) const {
    const absl::StatusOr<YAML::Node> node = At(key);
    return node.ok() && node->IsMap();
  }
  // The model section's keys that start with `prefix`, in the file's order.
  std::vector<std::string> ModelKeys(absl::string_view prefix) const {
    std::vector<std::string> keys;
    for (const auto& kv : model_) {
      const std::string key = kv.first.as<std::string>();
      if (absl::StartsWith(key, prefix)) keys.push_back(key);
    }
    return keys;
  }
  // The values of a list at `key` (model.moe_layer_freq: [1, 0, 1, ...]); nullopt when it is not a list.
  absl::StatusOr<std::optional<std::vector<std::string>>> List(absl::string_view key) const {
    HETSIM_ASSIGN_OR_RETURN(const YAML::Node node, At(key));
    if (!node.IsDefined() || !node.IsSequence()) return std::nullopt;
    std::vector<std::string> values;
    for (const YAML::Node& item : node) {
      int64_t n = 0;
      if (!item.IsScalar() || !absl::SimpleAtoi(item.Scalar(), &n)) return Error(key, "not a list of whole numbers");
      values.push_back(item.Scalar());
    }
    return values;
  }
  // Whether `key` holds OmegaConf's ??? (a value the config leaves to the command line).
  bool LeftOpen(absl::string_view key) const {
    const absl::StatusOr<YAML::Node> node = At(key);
    return node.ok() && node->IsDefined() && node->IsScalar() && node->Scalar() == "???";
  }
  // A scalar that becomes one word of the Megatron line the config is read as: nothing the line's shell
  // rendering would split, expand or quote ("24 --tensor-model-parallel-size 8" set a flag of another
  // key; "'" was an unterminated quote of a line the user never wrote).
  absl::StatusOr<std::optional<std::string>> Word(absl::string_view key) const {
    HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> v, Scalar(key));
    if (!v) return std::nullopt;
    const bool word = !v->empty() && std::all_of(v->begin(), v->end(), [](char ch) {
      return absl::ascii_isalnum(static_cast<unsigned char>(ch)) ||
             absl::string_view("._+-/:=,@%").find(ch) != absl::string_view::npos;
    });
    if (!word)
      return Error(key, absl::StrFormat("\"%s\" is not a single value (a number or a name)", absl::CHexEscape(*v)));
    return v;
  }
  absl::StatusOr<std::optional<int64_t>> Int(absl::string_view key) const {
    HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> v, Scalar(key));
    if (!v) return std::nullopt;
    int64_t out = 0;
    if (!absl::SimpleAtoi(*v, &out)) return Error(key, absl::StrFormat("\"%s\" is not an integer", *v));
    return out;
  }
  absl::StatusOr<bool> Bool(absl::string_view key) const {
    HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> v, Scalar(key));
    if (!v) return false;
    bool out = false;
    if (!absl::SimpleAtob(*v, &out)) return Error(key, absl::StrFormat("\"%s\" is not true or false", *v));
    return out;
  }

 private:
  absl::StatusOr<YAML::Node> At(absl::string_view key) const {
    const std::vector<std::string> parts = absl::StrSplit(key, '.');
    // yaml-cpp's Node::operator= (and reset() from a missing key) writes into the node it refers to:
    // walk by constructing a fresh node at each step.
    std::optional<YAML::Node> node(parts[0] == "trainer" ? trainer_ : model_);
    for (size_t i = 1; i < parts.size() && node->IsDefined(); ++i) {
      if (!node->IsMap()) return Error(key, "not a section");
      const YAML::Node child = (*node)[parts[i]];
      node.emplace(child);
    }
    return *node;
  }
  absl::StatusOr<std::optional<std::string>> Resolve(const YAML::Node& node, absl::string_view key, int depth) const {
    if (!node.IsDefined() || node.IsNull()) return std::nullopt;
    if (!node.IsScalar()) return Error(key, "not a single value");
    const std::string v = node.Scalar();
    if (v == "???") return Error(key, "??? (a value the config leaves to the command line): give it in the file");
    if (!absl::StartsWith(v, "${") || !absl::EndsWith(v, "}")) return v;
    if (depth > kMaxInterpolationDepth) return Error(key, "interpolations nest too deep (a cycle?)");
    // ${.x}: a key of the same section; ${a.b.c}: from the root. Resolvers (${multiply:...}) are not.
    const std::string target = v.substr(2, v.size() - 3);
    if (absl::StartsWith(target, "multiply:")) return Multiply(target.substr(9), key, depth);
    if (absl::StrContains(target, ":")) {
      return Error(key, absl::StrFormat("%s: an OmegaConf resolver hetsim does not know; write the value instead", v));
    }
    std::optional<YAML::Node> next;
    if (absl::StartsWith(target, ".")) {
      const YAML::Node in_model = model_[target.substr(1)], in_trainer = trainer_[target.substr(1)];
      next.emplace(in_model.IsDefined() ? in_model : in_trainer);
    } else {
      next.emplace(root_);
      for (absl::string_view part : absl::StrSplit(target, '.')) {
        if (!next->IsMap()) return Error(key, absl::StrFormat("%s: no such key", v));
        const YAML::Node child = (*next)[std::string(part)];
        next.emplace(child);
        if (!next->IsDefined()) break;
      }
    }
    if (!next->IsDefined()) return Error(key, absl::StrFormat("%s: no such key", v));
    return Resolve(*next, key, depth + 1);
  }

  // NeMo's `multiply` resolver: the product of its arguments, each a number or an interpolation.
  absl::StatusOr<std::optional<std::string>> Multiply(absl::string_view args, absl::string_view key, int depth) const {
    std::vector<std::string> parts;
    int nesting = 0;
    std::string current;
    for (char ch : args) {
      nesting += ch == '{' ? 1 : ch == '}' ? -1 : 0;
      if (ch == ',' && nesting == 0) {
        parts.push_back(std::string(absl::StripAsciiWhitespace(current)));
        current.clear();
      } else {
        current += ch;
      }
    }
    parts.push_back(std::string(absl::StripAsciiWhitespace(current)));
    double product = 1;
    for (const std::string& part : parts) {
      HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> v, Resolve(YAML::Node(part), key, depth + 1));
      double x = 0;
      if (!v || !absl::SimpleAtod(*v, &x)) {
        return Error(key, absl::StrFormat("${multiply:%s}: \"%s\" is not a number", args, part));
      }
      product *= x;
    }
    return absl::StrCat(product);
  }

  YAML::Node root_, model_, trainer_, own_model_;
  std::string model_path_, source_, base_source_;
};

// A NeMo model key and the Megatron flag it is: `value` copies its value; a switch is set when true.
struct KeyFlag {
  const char* key;
  const char* flag;
  bool value;
};
constexpr KeyFlag kKeyFlags[] = {
    {"model.num_layers", "num-layers", true},
    {"model.hidden_size", "hidden-size", true},
    {"model.ffn_hidden_size", "ffn-hidden-size", true},
    {"model.num_attention_heads", "num-attention-heads", true},
    {"model.kv_channels", "kv-channels", true},
    {"model.max_position_embeddings", "max-position-embeddings", true},
    {"model.micro_batch_size", "micro-batch-size", true},
    {"model.global_batch_size", "global-batch-size", true},
    {"model.tensor_model_parallel_size", "tensor-model-parallel-size", true},
    {"model.pipeline_model_parallel_size", "pipeline-model-parallel-size", true},
    {"model.context_parallel_size", "context-parallel-size", true},
    {"model.expert_model_parallel_size", "expert-model-parallel-size", true},
    {"model.num_moe_experts", "num-experts", true},
    {"model.moe_router_topk", "moe-router-topk", true},
    {"model.make_vocab_size_divisible_by", "make-vocab-size-divisible-by", true},
    {"model.attention_dropout", "attention-dropout", true},  // 0: no dropout in an unfused attention core
    {"model.sequence_parallel", "sequence-parallel", false},
    {"model.qk_layernorm", "qk-layernorm", false},  // NeMo's Megatron-Core GPT passes it to its TransformerConfig
    {"model.ub_tp_comm_overlap", "tp-comm-overlap", false},
    {"model.overlap_p2p_comm", "overlap-p2p-communication", false},
    {"model.optim.overlap_grad_sync", "overlap-grad-reduce", false},
    {"model.optim.overlap_param_sync", "overlap-param-gather", false},
    // NeMo's Megatron-Core GPT (since NeMo 1.22): Megatron-LM's switch of the same meaning, 2023-2024.
    {"model.mcore_gpt", "use-mcore-models", false},
};

// NeMo model families that are not GPT-style decoders, by the config's `name` ("megatron_bert"), and
// what they are: priced as a decoder, they would be silently wrong.
constexpr std::pair<const char*, const char*> kOtherFamilies[] = {
    {"bert", "BERT (an encoder with bidirectional attention and its MLM head)"},
    {"t5", "T5 (an encoder-decoder with cross-attention)"},
    // NeMo-Framework-Launcher's conf/training/mt5/*.yaml: `name: megatron_mt5`.
    {"mt5", "mT5 (a multilingual T5 encoder-decoder with cross-attention)"},
    {"bart", "BART (an encoder-decoder with cross-attention)"},
    {"retro", "RETRO (a decoder with chunked cross-attention to retrieved neighbours)"},
    {"clip", "CLIP (a vision and a text encoder)"},
    {"vit", "a vision transformer"},
    {"neva", "a vision-language model"},
    {"imagen", "a diffusion model"},
    {"diffusion", "a diffusion model"},
    {"dreambooth", "a diffusion model"},
    {"controlnet", "a diffusion model"},
    {"mamba", "Mamba (or a hybrid Mamba model)"},
    {"jamba", "Jamba (a hybrid of Mamba and attention blocks)"},
    // NeMo's examples/nlp/language_modeling/conf (NVIDIA/NeMo 8cfedd7): megatron_griffin_config.yaml
    // (RecurrentGemma), megatron_gpt_config_hyena.yaml, megatron_t0_config.yaml, megatron_ul2_config.yaml.
    {"griffin", "Griffin (RecurrentGemma: recurrent blocks beside local attention)"},
    {"hyena", "Hyena (long convolutions in place of attention)"},
    {"t0", "T0 (a T5 encoder-decoder fine-tuned on prompts)"},
    {"ul2", "UL2 (a T5 encoder-decoder trained on mixed denoisers)"},
};

// The family a config's name (the run's `name`, or `model.name`, NeMo's layer-spec key) says, when it is
// one of kOtherFamilies.
absl::Status RefuseFamilyByName(const YAML::Node& name, absl::string_view key, absl::string_view source) {
  if (!name || !name.IsScalar()) return absl::OkStatus();
  const std::string lower = absl::AsciiStrToLower(name.Scalar());
  for (const auto& [family, what] : kOtherFamilies) {
    for (absl::string_view part : absl::StrSplit(lower, absl::ByAnyChar("_-"))) {
      if (part != family) continue;
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s: %s: NeMo's %s, which hetsim does not model (it prices GPT-style decoders: "
                          "megatron_gpt, megatron_llama, ...)",
                          source, key, name.Scalar(), what));
    }
  }
  return absl::OkStatus();
}

// Hydra's `defaults` list placing a config at model.encoder and model.decoder (`.@model.encoder:
// megatron_model_base_config`, NeMo's T5, BART and UL2 configs): the model is an encoder-decoder.
absl::Status RefuseEncoderDecoder(const YAML::Node& root, const YAML::Node& base, absl::string_view source) {
  // The launcher's T5 and mT5 configs write the two stacks out: model.encoder and model.decoder sections.
  if (base["model"]["encoder"] && base["model"]["encoder"].IsMap() && base["model"]["decoder"] &&
      base["model"]["decoder"].IsMap()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: model.encoder and model.decoder: an encoder-decoder (NeMo's T5, mT5, BART or UL2 style), which hetsim "
        "does not model (it prices GPT-style decoders)",
        source));
  }
  const YAML::Node defaults = root["defaults"];
  if (!defaults || !defaults.IsSequence()) return absl::OkStatus();
  for (const YAML::Node& entry : defaults) {
    if (!entry.IsMap()) continue;
    for (const auto& kv : entry) {
      const std::string key = kv.first.as<std::string>();
      if (!absl::EndsWith(key, "@model.encoder") && !absl::EndsWith(key, "@model.decoder")) continue;
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: defaults: %s: the config builds model.encoder and model.decoder, an encoder-decoder (NeMo's T5, BART "
          "or UL2 style), which hetsim does not model (it prices GPT-style decoders)",
          source, key));
    }
  }
  return absl::OkStatus();
}

absl::Status RefuseOtherFamilies(const YAML::Node& root, const YAML::Node& base, absl::string_view source) {
  HETSIM_RETURN_IF_ERROR(RefuseFamilyByName(base["name"], "name", source));
  HETSIM_RETURN_IF_ERROR(RefuseFamilyByName(base["model"]["name"], "model.name", source));
  HETSIM_RETURN_IF_ERROR(RefuseEncoderDecoder(root, base, source));
  // NeMo's multimodal models (NeVA, Video-NeVA: NeMo-Framework-Launcher's conf/training/neva/) carry their
  // vision encoder and projector in model.mm_cfg; their run is named run.name (neva_llama3_8b_chat).
  if (base["model"]["mm_cfg"] && base["model"]["mm_cfg"].IsMap()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: model.mm_cfg: a multimodal model (a vision encoder and its projector beside the language model, "
        "NeMo's NeVA), which hetsim does not model (it prices GPT-style decoders)",
        source));
  }
  // NeMo's knowledge distillation (examples/nlp/language_modeling/conf/megatron_llama_distill.yaml) runs the
  // teacher at model.kd_teacher_restore_from_path forward beside the student's step.
  if (base["model"]["kd_teacher_restore_from_path"]) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: model.kd_teacher_restore_from_path: knowledge distillation (a teacher model's forward beside the "
        "student's training step), which hetsim does not model (it prices training one model)",
        source));
  }
  // NeMo-Aligner's preference trainings (examples/nlp/gpt/conf/gpt_dpo.yaml, gpt_kto.yaml, gpt_spin.yaml at af2b3bd):
  // before each step the reference policy's log-probabilities over the batch come from a forward-only pass with its
  // weights copied in from a CPU state dict and back (megatron_gpt_dpo_model.py get_ref_policy_logprobs,
  // cpu_weight_swap; dpo.py augment_dataloader). DPO's is priced (Plan.reference_policy, ImportNemoConfig); KTO's
  // and SPIN's steps are other loops (SPIN generates its rejected responses each epoch), not priced.
  for (const char* algorithm : {"dpo", "kto", "spin"}) {
    const auto section_has = [&](const char* section) {
      const YAML::Node s = base[section];
      return s && s.IsMap() && s[algorithm] && s[algorithm].IsMap();
    };
    const bool trainer = section_has("trainer");
    if (!trainer && !section_has("model")) continue;
    const std::string at = absl::StrCat(trainer ? "trainer" : "model", ".", algorithm);
    if (std::string(algorithm) != "dpo") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s: NeMo-Aligner's %s, whose every step also runs the frozen reference policy forward over the "
          "batch (its weights swapped in from a CPU copy) in a loop of its own, which hetsim does not price (it "
          "prices DPO's, trainer.dpo)",
          source, at, absl::AsciiStrToUpper(algorithm)));
    }
    // With adapters (model.peft.peft_scheme lora) only the adapters train and the reference is the base model
    // with them switched off (adapter_control): a step hetsim does not price (it trains every weight).
    const YAML::Node peft = base["model"]["peft"];
    const YAML::Node scheme = peft && peft.IsMap() ? peft["peft_scheme"] : YAML::Node();
    if (scheme && scheme.IsScalar() && !scheme.IsNull() && absl::AsciiStrToLower(scheme.Scalar()) != "none") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: model.peft.peft_scheme: %s: DPO of adapters (only the adapters train; the reference is the model "
          "with them off), which hetsim does not price (it prices training every weight; peft_scheme none is "
          "priced)",
          source, scheme.Scalar()));
    }
  }
  // NeMo builds Hyena's mixer in place of attention from model.hyena (get_specs: te_gpt_hyena).
  if (base["model"]["hyena"] && base["model"]["hyena"].IsMap()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: model.hyena: Hyena operators (long convolutions in place of attention), which hetsim does not model "
        "(it prices attention)",
        source));
  }
  return absl::OkStatus();
}

// The vocabulary: NeMo reads it from the tokenizer, which the config names (GPT-2's BPE, a Hugging
// Face model, a SentencePiece file); the known tokenizers' sizes, else GPT-2's with a note.
absl::StatusOr<std::string> VocabularyFlag(const YamlConfig& c, std::vector<std::string>& notes) {
  // model.override_vocab_size replaces the tokenizer's size before NeMo pads it (megatron_base_model.py).
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> override_size, c.Int("model.override_vocab_size"));
  if (override_size) return absl::StrCat(" --vocab-size ", *override_size);
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> library, c.Scalar("model.tokenizer.library"));
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> type, c.Scalar("model.tokenizer.type"));
  // A tokenizer file left to the command line (NeMo's examples/ configs: `model: ???`) names no tokenizer;
  // the model itself is all there.
  std::optional<std::string> file;
  if (c.LeftOpen("model.tokenizer.model")) {
    notes.push_back(absl::StrFormat(
        "model.tokenizer.model: ??? (left to the command line): the tokenizer's size is not known, GPT-2's %d "
        "assumed (set model.override_vocab_size to its size)",
        kGpt2Vocab));
    return absl::StrCat(" --vocab-size ", kGpt2Vocab);
  }
  HETSIM_ASSIGN_OR_RETURN(file, c.Scalar("model.tokenizer.model"));
  const std::string name = absl::AsciiStrToLower(absl::StrCat(type.value_or(""), " ", file.value_or("")));
  if (std::optional<int64_t> vocab = KnownTokenizerVocab(name)) return absl::StrCat(" --vocab-size ", *vocab);
  notes.push_back(absl::StrFormat("model.tokenizer (%s %s): size unknown to hetsim, GPT-2's 50257 assumed",
                                  library.value_or("?"), type.value_or(file.value_or("?"))));
  return absl::StrCat(" --vocab-size 50257");
}

// The values NeMo spells differently from Megatron.
// model.apply_query_key_layer_scaling on NeMo's legacy GPTModel (mcore_gpt false): megatron_gpt_model.py passes
// cfg.get('apply_query_key_layer_scaling', True) to it, and its CoreAttention scales the scores by the layer
// number (coeff) inside the softmax, as Megatron-LM did before Megatron-Core: false is Megatron-LM's
// --no-query-key-layer-scaling. On Megatron-Core's GPT NeMo keeps it only under FP16
// (megatron_base_model.py, build_transformer_config), where it changes no pass hetsim prices.
absl::StatusOr<std::string> QueryKeyScalingFlag(const YamlConfig& c, bool mcore) {
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> v, c.Scalar("model.apply_query_key_layer_scaling"));
  if (mcore || !v) return std::string();
  bool on = true;
  if (!absl::SimpleAtob(*v, &on)) {
    return c.Error("model.apply_query_key_layer_scaling", absl::StrFormat("\"%s\" is not true or false", *v));
  }
  return std::string(on ? "" : " --no-query-key-layer-scaling");
}

absl::StatusOr<std::string> TranslatedFlags(const YamlConfig& c, std::vector<std::string>& notes) {
  std::string line;
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> seq, c.Word("model.encoder_seq_length"));
  if (!seq) {
    HETSIM_ASSIGN_OR_RETURN(seq, c.Word("model.seq_length"));
  }
  if (seq) absl::StrAppend(&line, " --seq-length ", *seq);
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> groups, c.Int("model.num_query_groups"));
  if (groups) absl::StrAppend(&line, " --group-query-attention --num-query-groups ", *groups);
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> norm, c.Scalar("model.normalization"));
  if (norm && (*norm == "rmsnorm" || *norm == "RMSNorm")) absl::StrAppend(&line, " --normalization RMSNorm");
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> activation, c.Scalar("model.activation"));
  if (activation && absl::StrContains(*activation, "swiglu")) absl::StrAppend(&line, " --swiglu");
  // NeMo's other gated units (geglu, reglu, fast-geglu, fast-reglu) have SwiGLU's three matrices: gated.
  const bool other_glu =
      activation && absl::StrContains(*activation, "glu") && !absl::StrContains(*activation, "swiglu");
  if (other_glu) {
    absl::StrAppend(&line, " --quick-geglu");
  } else if (activation && *activation != "gelu" && !absl::StrContains(*activation, "swiglu")) {
    notes.push_back(absl::StrFormat("model.activation %s: priced as GeLU's FLOPs", *activation));
  }
  // NeMo builds Falcon's layer (model.name megatron_falcon_gpt) from mcore_customization_config; other
  // models' configs carry the section (the launcher's Mistral 7B) without effect.
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> model_name, c.Scalar("model.name"));
  HETSIM_ASSIGN_OR_RETURN(const bool parallel, c.Bool("model.mcore_customization_config.parallel_attention"));
  if (parallel && model_name == "megatron_falcon_gpt") {
    notes.push_back(
        "model.mcore_customization_config.parallel_attention (Falcon's block: attention and MLP side by side): priced "
        "as a sequential block, the same FLOPs and weights");
  }
  // NeMo builds Megatron-Core's GPT from Transformer Engine's layers only with model.transformer_engine
  // true (megatron_gpt_model.py: cfg.get('transformer_engine', False) -> get_specs(use_te)); otherwise
  // from Megatron-Core's local layers, whose attention is unfused: Megatron's --transformer-impl local.
  // model.use_flash_attention reaches NeMo's legacy GPTModel only (megatron_gpt_model.py, NVIDIA/NeMo
  // 8cfedd7: model_provider_func passes it to GPTModel, flash_attn's kernels in its CoreAttention, and
  // not to MCoreGPTModel, whose layer spec decides): with mcore_gpt and no transformer_engine,
  // Megatron-Core's local DotProductAttention runs, unfused, whatever the key says.
  // NeMo picks the layer spec by model.name first (get_specs, spec_name = cfg.name): Falcon's and the
  // full-TE autocast layer are Transformer Engine's whatever transformer_engine says (falcon_spec.py:
  // TEDotProductAttention); Gemma 2's attention is its own, unfused (gemma2_spec.py, for its logit
  // soft-capping); the others follow transformer_engine.
  HETSIM_ASSIGN_OR_RETURN(const bool mcore, c.Bool("model.mcore_gpt"));
  HETSIM_ASSIGN_OR_RETURN(bool te, c.Bool("model.transformer_engine"));
  HETSIM_ASSIGN_OR_RETURN(const bool flash, c.Bool("model.use_flash_attention"));
  te = te || model_name == "megatron_falcon_gpt" || model_name == "megatron_gpt_full_te_layer_autocast";
  if (mcore && model_name == "megatron_gemma2") absl::StrAppend(&line, " --attention-backend unfused");
  if (mcore && !te) absl::StrAppend(&line, " --transformer-impl local");
  HETSIM_ASSIGN_OR_RETURN(const std::string qk_scaling, QueryKeyScalingFlag(c, mcore));
  absl::StrAppend(&line, qk_scaling);
  if (mcore && (!te || model_name == "megatron_gemma2") && flash) {
    notes.push_back(
        "model.use_flash_attention: no effect with mcore_gpt (it reaches NeMo's legacy GPTModel only); the layer "
        "spec's "
        "attention is unfused (Megatron-Core's local layers without transformer_engine, or Gemma 2's): unfused "
        "attention priced");
  } else if (flash) {
    absl::StrAppend(&line, " --use-flash-attn");
  } else if (!mcore && te) {
    // NeMo's legacy GPTModel with transformer_engine builds Transformer Engine's TransformerLayer
    // (AutocastTransformerLayer in nemo/collections/nlp/modules/common/megatron/transformer.py, NVIDIA/NeMo
    // 8cfedd7), whose DotProductAttention runs flash or fused attention.
    absl::StrAppend(&line, " --use-flash-attn");
    notes.push_back(
        "model.transformer_engine without mcore_gpt: NeMo's legacy GPTModel on Transformer Engine's layers, flash or "
        "fused attention priced");
  }
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> position, c.Word("model.position_embedding_type"));
  if (position) absl::StrAppend(&line, " --position-embedding-type ", *position);
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> shared, c.Scalar("model.share_embeddings_and_output_weights"));
  if (shared && *shared == "false") absl::StrAppend(&line, " --untie-embeddings-and-output-weights");
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> bias, c.Scalar("model.bias"));
  if (bias && *bias == "false") absl::StrAppend(&line, " --disable-bias-linear");
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> precision, c.Scalar("trainer.precision"));
  const std::string p = precision.value_or("32");
  if (absl::StartsWith(p, "bf16")) absl::StrAppend(&line, " --bf16");
  if (p == "16" || absl::StartsWith(p, "16-")) absl::StrAppend(&line, " --fp16");
  HETSIM_ASSIGN_OR_RETURN(const bool fp8, c.Bool("model.fp8"));
  HETSIM_ASSIGN_OR_RETURN(const bool fp8_hybrid, c.Bool("model.fp8_hybrid"));
  if (fp8) absl::StrAppend(&line, " --fp8-format ", fp8_hybrid ? "hybrid" : "e4m3");
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> optimizer, c.Scalar("model.optim.name"));
  if (optimizer && (*optimizer == "distributed_fused_adam" || *optimizer == "mcore_distributed_optim")) {
    absl::StrAppend(&line, " --use-distributed-optimizer");
  }
  HETSIM_ASSIGN_OR_RETURN(const std::string vocab, VocabularyFlag(c, notes));
  absl::StrAppend(&line, vocab);
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> grad_dtype, c.Scalar("model.optim.grad_sync_dtype"));
  if (grad_dtype && *grad_dtype == "bf16") absl::StrAppend(&line, " --grad-reduce-in-bf16");
  return line;
}

// NeMo's Megatron-Core GPT hands Megatron-Core every model key named after a TransformerConfig field
// (megatron_base_model.py, build_transformer_config: `for field in fields(TransformerConfig)` takes
// cfg[field.name]; megatron_gpt_model.py adds moe_router_topk, moe_grouped_gemm, moe_aux_loss_coeff, ...
// with its defaults, NVIDIA/NeMo 8cfedd7), and Megatron-LM names its MoE flags after the same fields
// (moe_grouped_gemm is --moe-grouped-gemm, moe_token_dispatcher_type --moe-token-dispatcher-type). Each
// moe_* key is read as its flag, which the Megatron importer applies, notes or refuses; a key no Megatron
// flag is named after is noted as not applied. A true switch is the flag; false is Megatron-Core's default.
absl::StatusOr<std::string> MoeFlags(const YamlConfig& c, std::vector<std::string>& notes) {
  std::string line;
  for (const std::string& key : c.ModelKeys("moe_")) {
    if (key == "moe_router_topk") continue;  // kKeyFlags
    const std::string path = absl::StrCat("model.", key), flag = absl::StrReplaceAll(key, {{"_", "-"}});
    HETSIM_ASSIGN_OR_RETURN(std::optional<std::vector<std::string>> list, c.List(path));
    std::optional<std::string> v;
    if (list) {
      v = absl::StrCat("'[", absl::StrJoin(*list, ","), "]'");  // Megatron's --moe-layer-freq '[1,0,1]'
    } else {
      HETSIM_ASSIGN_OR_RETURN(v, c.Word(path));
    }
    if (!v) continue;  // null: Megatron-Core's default
    if (KindOf(flag) == FlagKind::kUnknown) {
      notes.push_back(
          absl::StrFormat("%s %s: not applied (no Megatron-LM flag --%s that hetsim reads)", path, *v, flag));
      continue;
    }
    bool on = false;
    if (!absl::ascii_isdigit(static_cast<unsigned char>((*v)[0])) && absl::SimpleAtob(*v, &on)) {
      if (on) absl::StrAppend(&line, " --", flag);
      continue;
    }
    absl::StrAppend(&line, " --", flag, " ", *v);
  }
  return line;
}

// NeMo's fusion switches set false, as Megatron's --no-...-fusion flags (Plan.unfused_kernels). NeMo's
// bias_activation_fusion covers GeLU and SwiGLU alike; Megatron spells it by the activation.
absl::StatusOr<std::string> FusionFlags(const YamlConfig& c) {
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> activation, c.Scalar("model.activation"));
  const bool swiglu = activation && absl::StrContains(*activation, "swiglu");
  const std::pair<const char*, const char*> switches[] = {
      {"model.bias_activation_fusion", swiglu ? "no-bias-swiglu-fusion" : "no-bias-gelu-fusion"},
      {"model.bias_dropout_add_fusion", "no-bias-dropout-fusion"},
      {"model.masked_softmax_fusion", "no-masked-softmax-fusion"},
      {"model.persist_layer_norm", "no-persist-layer-norm"},
      {"model.gradient_accumulation_fusion", "no-gradient-accumulation-fusion"},
      {"model.apply_rope_fusion", "no-rope-fusion"}};
  std::string line;
  for (const auto& [key, flag] : switches) {
    HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> v, c.Scalar(key));
    if (!v) continue;  // NeMo's default: fused
    bool on = true;
    if (!absl::SimpleAtob(*v, &on)) return c.Error(key, absl::StrFormat("\"%s\" is not true or false", *v));
    if (!on) absl::StrAppend(&line, " --", flag);
  }
  return line;
}

// activations_checkpoint_* as Megatron's recompute flags; the virtual pipeline size as layers per chunk.
absl::StatusOr<std::string> RecomputeAndChunks(const YamlConfig& c) {
  std::string line;
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> granularity, c.Word("model.activations_checkpoint_granularity"));
  if (granularity) {
    absl::StrAppend(&line, " --recompute-granularity ", *granularity);
    if (*granularity == "full") {
      HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> method, c.Word("model.activations_checkpoint_method"));
      HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> layers, c.Int("model.activations_checkpoint_num_layers"));
      absl::StrAppend(&line, " --recompute-method ", method.value_or("uniform"), " --recompute-num-layers ",
                      layers.value_or(1));
    }
  }
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> chunks, c.Int("model.virtual_pipeline_model_parallel_size"));
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> layers, c.Int("model.num_layers"));
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> pp, c.Int("model.pipeline_model_parallel_size"));
  // Without num_layers, or with a pipeline size below 1, the Megatron importer names the flag at fault.
  if (chunks && *chunks > 1 && layers && pp.value_or(1) >= 1) {
    const int64_t stages = pp.value_or(1);
    // Checked by division first: the product of two values from the file could overflow.
    const int64_t per = *chunks > *layers / stages ? 0 : *layers / (stages * *chunks);
    if (per < 1 || per * stages * *chunks != *layers) {
      return c.Error("model.virtual_pipeline_model_parallel_size",
                     absl::StrFormat("%d chunks per stage do not split model.num_layers %d over %d stages evenly",
                                     *chunks, *layers, stages));
    }
    absl::StrAppend(&line, " --num-layers-per-virtual-pipeline-stage ", per);
  }
  return line;
}

// A YAML file without NeMo's model section: what it is when its keys tell (an Accelerate config, a
// Megatron-LM --yaml-cfg file), and that it is no NeMo config.
absl::Status NotNemo(const YAML::Node& root, absl::string_view source) {
  if (root["distributed_type"] || root["compute_environment"]) {
    const YAML::Node type = root["distributed_type"];
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: an Accelerate config (distributed_type: %s): it says how `accelerate launch` runs a script, not the "
        "model the script builds; import the launch line that names it (`accelerate launch --config_file FILE "
        "script.py ...`) with `hetsim import megatron LAUNCH.sh --model MODEL.pbtxt`, which reads this file",
        source, type && type.IsScalar() ? type.Scalar() : "?"));
  }
  if (root["language_model"] && root["model_parallel"]) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: a Megatron-LM --yaml-cfg config (language_model, model_parallel), not NeMo's: import it with `hetsim "
        "import megatron FILE.yaml --nodes N` (or the launch line that names it with --yaml-cfg)",
        source));
  }
  // Transformer Engine's userbuffers settings for overlapping tensor-parallel communication, one section per
  // GEMM (transformer_engine/pytorch/module/base.py, initialize_ub: qkv_fprop, fc1_dgrad, ...), the files of
  // NeMo-Framework-Launcher's conf/training/tp_overlap/ that a training config names in ub_tp_comm_overlap_cfg.
  for (const char* gemm : {"qkv_fprop", "qkv_dgrad", "proj_fprop", "fc1_fprop", "fc2_fprop"}) {
    if (!root[gemm]) continue;
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: a Transformer Engine userbuffers config (%s, ...: how each GEMM overlaps its tensor-parallel "
        "communication), not a model: import the NeMo training config that names it in "
        "model.ub_tp_comm_overlap_cfg (its tp_comm_overlap is read as --tp-comm-overlap)",
        source, gemm));
  }
  return absl::InvalidArgumentError(absl::StrCat(source, ": model: required: a NeMo config's model section"));
}

// The Megatron importer names the flags the config was read as: say which of the config's keys each is
// ("--tensor-model-parallel-size: \"0\" is not a positive whole number" names no NeMo key).
absl::Status WithNemoKeys(const absl::Status& status, const YamlConfig& config) {
  std::vector<std::string> keys;
  auto named = [&](absl::string_view flag, absl::string_view key) {
    const std::string f = absl::StrCat("--", flag);
    for (size_t at = status.message().find(f); at != absl::string_view::npos; at = status.message().find(f, at + 1)) {
      const size_t end = at + f.size();
      if (end == status.message().size() || status.message()[end] == ':' || status.message()[end] == ' ') {
        const std::string& file = config.SourceOf(key);
        keys.push_back(file == config.source() ? absl::StrFormat("%s is %s", f, key)
                                               : absl::StrFormat("%s is %s, from %s (--model)", f, key, file));
        return;
      }
    }
  };
  for (const KeyFlag& k : kKeyFlags) named(k.flag, k.key);
  named("seq-length", "model.encoder_seq_length (or model.seq_length)");
  named("num-query-groups", "model.num_query_groups");
  named("use-flash-attn", "model.use_flash_attention");
  named("nodes", "trainer.num_nodes");
  named("nproc_per_node", "trainer.devices");
  if (keys.empty()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(status.message(), "\n  in the NeMo config: ", absl::StrJoin(keys, "; ")));
}

// `over`'s keys written onto `base`, section by section (OmegaConf.merge: a key of both that is a section in both
// merges, any other of `over`'s replaces `base`'s).
void MergeOver(YAML::Node base, const YAML::Node& over) {
  for (const auto& kv : over) {
    const std::string key = kv.first.as<std::string>();
    YAML::Node into = base[key];
    if (into.IsMap() && kv.second.IsMap()) {
      MergeOver(into, kv.second);
    } else {
      base[key] = YAML::Clone(kv.second);
    }
  }
}

// The checkpoint's model config given with --model (NemoBaseModel): a .nemo file's model_config.yaml (the model's
// keys at the top) or a training config (under model:, or training.model: as the launcher's), parsed.
absl::StatusOr<YAML::Node> BaseModelSection(const NemoBaseModel& base_model) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(base_model.yaml));
    HETSIM_RETURN_IF_ERROR(CheckYamlKeysOnce(root, base_model.source));
  } catch (const YAML::Exception& e) {
    return NotYaml(base_model.source, e);
  }
  // The launcher's conf/training/*.yaml nest it under training:, as ParseConfig reads them.
  const YAML::Node run = root.IsMap() && !root["model"] && root["training"] ? root["training"] : root;
  const YAML::Node model = run.IsMap() && run["model"] && run["model"].IsMap() ? run["model"] : root;
  if (!model.IsMap() || !(model["num_layers"] || model["hidden_size"])) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: model: no num_layers or hidden_size: not a NeMo model config (a .nemo file's model_config.yaml, or a "
        "training config with a model section)",
        base_model.source));
  }
  return YAML::Clone(model);
}

absl::StatusOr<YamlConfig> ParseConfig(absl::string_view text, absl::string_view source,
                                       const NemoBaseModel& base_model) {
  // NeMo 2's recipes (nemo/collections/llm/recipes/*.py) are Python that builds a nemo_run config.
  if (absl::StrContains(text, "import nemo_run") || absl::StrContains(text, "from nemo.collections")) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: a NeMo 2 recipe (Python building a nemo_run config), not a NeMo 1 YAML config: hetsim does not run "
        "Python; write the model as a hetsim Model and plan it with the recipe's sizes",
        source));
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
    HETSIM_RETURN_IF_ERROR(CheckYamlKeysOnce(root, source));
  } catch (const YAML::Exception& e) {
    return NotYaml(source, e);
  }
  if (!root.IsMap())
    return absl::InvalidArgumentError(absl::StrCat(source, ": not a NeMo config (no mapping at the top)"));
  // The launcher's conf/training/*.yaml nest the run under `training:`.
  YAML::Node base = root["model"] ? root : root["training"];
  if (!base || !base.IsMap() || !base["model"] || !base["model"].IsMap()) return NotNemo(root, source);
  YAML::Node own_model;
  if (!base_model.yaml.empty()) {
    // The config's model keys over the checkpoint's, as NeMo-Aligner's load_and_override_model_config and NeMo's
    // fine-tuning (MegatronGPTSFTModel.merge_cfg_with) merge them.
    HETSIM_ASSIGN_OR_RETURN(YAML::Node merged, BaseModelSection(base_model));
    own_model = YAML::Clone(base["model"]);
    MergeOver(merged, base["model"]);
    base["model"] = merged;
  }
  HETSIM_RETURN_IF_ERROR(RefuseOtherFamilies(root, base, source));
  YAML::Node trainer = base["trainer"] && base["trainer"].IsMap() ? base["trainer"] : YAML::Node(YAML::NodeType::Map);
  YamlConfig config(root, base["model"], trainer, root["model"] ? "model" : "training.model", std::string(source));
  if (!base_model.yaml.empty()) config.SetBase(own_model, std::string(base_model.source));
  return config;
}

// model.optim.overlap_param_sync without overlap_grad_sync: Apex's DistributedFusedAdam gathers the parameters
// overlapped with the next forward either way; a plan's overlap_param_gather is that, under ZeRO-1/2 only.
void SetParamSyncAlone(hetsim::v1::Plan& plan, std::vector<std::string>& notes) {
  const bool sharded = std::all_of(plan.stages().begin(), plan.stages().end(), [](const hetsim::v1::Stage& s) {
    return s.zero_stage() == 1 || s.zero_stage() == 2;
  });
  plan.set_overlap_param_gather(sharded);
  notes.push_back(absl::StrFormat(
      "model.optim.overlap_param_sync true with overlap_grad_sync false: %s",
      sharded ? "the parameter gather overlaps the next forward (overlap_param_gather), the gradient reduce does not"
              : "no effect (no distributed optimizer: the step gathers no parameters)"));
}

// NeMo-Aligner's DPO batches count pairs: each microbatch runs its chosen and rejected sequences together
// (megatron_gpt_dpo_model.py: torch.cat((batch["chosen"], batch["rejected"])); get_logprob_batch: "each
// minibatch has 2 comparisons so tensor shape will be mbs * 2"), so model.micro_batch_size and
// model.global_batch_size are read as twice their value in sequences. Other keys, and other configs, as written.
absl::StatusOr<std::optional<std::string>> DpoSequences(const YamlConfig& config, absl::string_view key, bool dpo,
                                                        std::optional<std::string> value) {
  if (!dpo || !value || (key != "model.micro_batch_size" && key != "model.global_batch_size")) return value;
  HETSIM_ASSIGN_OR_RETURN(const std::optional<int64_t> pairs, config.Int(key));
  if (!pairs || *pairs < 1 || *pairs > std::numeric_limits<int32_t>::max()) return value;  // the line's check says why
  return absl::StrCat(2 * *pairs);
}

// NeMo-Aligner's DPO step (trainer.dpo): the reference policy's forward over every microbatch, its weights swapped
// in from host memory and back (Plan.reference_policy.cpu_weight_swap: peft_scheme none, the only one priced).
absl::Status SetReferencePolicy(const YamlConfig& config, hetsim::v1::Plan& plan, std::vector<std::string>& notes) {
  plan.mutable_reference_policy()->set_cpu_weight_swap(true);
  HETSIM_ASSIGN_OR_RETURN(const std::optional<int64_t> global, config.Int("model.global_batch_size"));
  HETSIM_ASSIGN_OR_RETURN(const std::optional<int64_t> micro, config.Int("model.micro_batch_size"));
  notes.push_back(absl::StrFormat(
      "trainer.dpo: NeMo-Aligner's DPO: model.global_batch_size %d and micro_batch_size %d count chosen/rejected "
      "pairs, read as %d and %d sequences; each step also runs the frozen reference policy forward over them "
      "(reference_policy), its weights copied in from host memory and back (cpu_weight_swap: priced at each GPU "
      "type's efficiency.pinned_copy_gbytes_per_s, not priced where that is unset)",
      global.value_or(0), micro.value_or(0), 2 * global.value_or(0), 2 * micro.value_or(0)));
  // The reference's forward runs in microbatches of dpo.log_prob_forward_micro_batch_size pairs (its default the
  // training's, ${model.micro_batch_size}); hetsim prices it at the training's.
  HETSIM_ASSIGN_OR_RETURN(const std::optional<int64_t> forward,
                          config.Int("model.dpo.log_prob_forward_micro_batch_size"));
  if (forward && micro && *forward != *micro) {
    notes.push_back(absl::StrFormat(
        "not modelled: model.dpo.log_prob_forward_micro_batch_size %d: the reference's forward is priced in the "
        "training's microbatches of %d pairs",
        *forward, *micro));
  }
  return absl::OkStatus();
}

absl::StatusOr<MegatronImport> ImportNemoConfig(absl::string_view yaml_text, const hetsim::v1::Cluster& cluster,
                                                const MegatronImportRequest& request, absl::string_view source,
                                                const NemoBaseModel& base_model) {
  HETSIM_ASSIGN_OR_RETURN(const YamlConfig config, ParseConfig(yaml_text, source, base_model));
  std::vector<std::string> notes;
  std::string line = "pretrain_gpt.py";
  const bool dpo = config.HasSection("trainer.dpo") || config.HasSection("model.dpo");
  bool overlap_param_sync_alone = false;
  HETSIM_ASSIGN_OR_RETURN(const bool grad_sync, config.Bool("model.optim.overlap_grad_sync"));
  for (const KeyFlag& k : kKeyFlags) {
    if (k.value) {
      HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> v, config.Word(k.key));
      HETSIM_ASSIGN_OR_RETURN(v, DpoSequences(config, k.key, dpo, v));
      if (v) absl::StrAppend(&line, " --", k.flag, " ", *v);
    } else {
      HETSIM_ASSIGN_OR_RETURN(const bool on, config.Bool(k.key));
      // Apex's DistributedFusedAdam (optim.name distributed_fused_adam) overlaps its parameter gather without
      // the gradient reduce overlapped, which Megatron's flags refuse: the plan gets it after the import.
      const bool param_sync_alone = std::string(k.key) == "model.optim.overlap_param_sync" && !grad_sync;
      if (on && param_sync_alone) {
        overlap_param_sync_alone = true;
      } else if (on) {
        absl::StrAppend(&line, " --", k.flag);
      }
    }
  }
  HETSIM_ASSIGN_OR_RETURN(const std::string translated, TranslatedFlags(config, notes));
  HETSIM_ASSIGN_OR_RETURN(const std::string recompute, RecomputeAndChunks(config));
  HETSIM_ASSIGN_OR_RETURN(const std::string fusions, FusionFlags(config));
  HETSIM_ASSIGN_OR_RETURN(const std::string moe, MoeFlags(config, notes));
  absl::StrAppend(&line, translated, recompute, fusions, moe);
  MegatronImportRequest placed = request;
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> nodes, config.Int("trainer.num_nodes"));
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> devices, config.Int("trainer.devices"));
  // 0 GPUs per node (PyTorch Lightning: no GPU) or nodes read as "unset", the import ran on the node's
  // GPUs without a word (session 33); -1 is Lightning's "every GPU of the node", the default here.
  if (nodes && *nodes < 1) return config.Error("trainer.num_nodes", absl::StrFormat("%d: must be >= 1", *nodes));
  if (devices && (*devices == 0 || *devices < -1)) {
    return config.Error("trainer.devices",
                        absl::StrFormat("%d: must be >= 1 GPUs per node (or -1, every GPU)", *devices));
  }
  if (placed.nodes <= 0 && nodes) placed.nodes = *nodes;
  if (placed.gpus_per_node <= 0 && devices && *devices > 0) placed.gpus_per_node = *devices;
  absl::StatusOr<MegatronFlags> flags = ParseMegatronLaunchLine(line, source);
  if (!flags.ok()) return WithNemoKeys(flags.status(), config);
  // NeMo builds Megatron-Core's GPT only with model.mcore_gpt true (megatron_gpt_model.py:
  // cfg.get('mcore_gpt', False)); otherwise its legacy GPTModel, NeMo's copy of Megatron-LM's model before
  // Megatron-Core (NeMo 1.x's configs of 2022-2023 have no such key).
  HETSIM_ASSIGN_OR_RETURN(const bool mcore, config.Bool("model.mcore_gpt"));
  if (!mcore) {
    flags->pre_core_model = "model.mcore_gpt false";
    notes.push_back(
        "model.mcore_gpt false or absent (NeMo's default): NeMo's legacy GPTModel, its copy of Megatron-LM's model "
        "before Megatron-Core, priced with Megatron-LM 2022's profile (unfused attention unless use_flash_attention "
        "or transformer_engine, blocking pipeline sends); set mcore_gpt: true for Megatron-Core's");
  }
  absl::StatusOr<MegatronImport> imported = ImportMegatron(*flags, cluster, placed, source);
  if (!imported.ok() && !config.NemoShaped()) return config.ForeignModel();
  if (!imported.ok()) return WithNemoKeys(imported.status(), config);
  MegatronImport out = *std::move(imported);
  // The Megatron importer's notes name flags; say which NeMo keys they came from.
  std::vector<std::string> kept;
  for (const std::string& n : out.notes) {
    if (absl::StartsWith(n, "no effect") || absl::StartsWith(n, "unknown")) continue;
    kept.push_back(n);
  }
  kept.insert(kept.end(), notes.begin(), notes.end());
  if (dpo) HETSIM_RETURN_IF_ERROR(SetReferencePolicy(config, out.plan, kept));
  if (overlap_param_sync_alone) SetParamSyncAlone(out.plan, kept);
  kept.push_back(absl::StrCat("read as the Megatron flags:", line.substr(std::string("pretrain_gpt.py").size())));
  out.notes = std::move(kept);
  return out;
}

}  // namespace

absl::StatusOr<MegatronImport> ImportNemo(absl::string_view yaml_text, const hetsim::v1::Cluster& cluster,
                                          const MegatronImportRequest& request, absl::string_view source,
                                          const NemoBaseModel& base_model) {
  // yaml-cpp reports a wrong shape (a list where a value should be) by throwing.
  try {
    return ImportNemoConfig(yaml_text, cluster, request, source, base_model);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: not a NeMo config: %s", YamlPlace(source, e.mark.line, e.mark.column), e.msg));
  }
}

}  // namespace hetsim::interop
