#include "service/interop/megatron_yaml.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
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

namespace hetsim::interop {
namespace {

// A key of a section and the flag it is: `value` copies its value, else a true switch sets the flag;
// `when_false` is the flag a false value sets (TransformerConfig's true default, argparse's --no-...).
struct YamlFlag {
  const char* section;  // "" for the top level
  const char* key;
  const char* flag;
  bool value;
  const char* when_false = nullptr;
};

// TransformerConfig's and ModelParallelConfig's names (yaml_arguments.py,
// core_transformer_config_from_yaml) as Megatron's argparse flags.
constexpr YamlFlag kYamlFlags[] = {
    {"language_model", "num_layers", "num-layers", true},
    {"language_model", "hidden_size", "hidden-size", true},
    {"language_model", "num_attention_heads", "num-attention-heads", true},
    {"language_model", "num_query_groups", "num-query-groups", true},
    {"language_model", "ffn_hidden_size", "ffn-hidden-size", true},
    {"language_model", "kv_channels", "kv-channels", true},
    {"language_model", "add_bias_linear", "", false, "disable-bias-linear"},
    {"language_model", "qk_layernorm", "qk-layernorm", false},
    {"language_model", "num_moe_experts", "num-experts", true},

    {"language_model", "moe_grouped_gemm", "moe-grouped-gemm", false},
    {"language_model", "window_size", "window-size", true},
    {"language_model", "normalization", "normalization", true},
    {"language_model", "recompute_granularity", "recompute-granularity", true},
    {"language_model", "recompute_method", "recompute-method", true},
    {"language_model", "recompute_num_layers", "recompute-num-layers", true},
    {"language_model", "fp8", "fp8-format", true},
    {"language_model", "masked_softmax_fusion", "", false, "no-masked-softmax-fusion"},
    {"language_model", "bias_dropout_fusion", "", false, "no-bias-dropout-fusion"},
    {"language_model", "apply_rope_fusion", "", false, "no-rope-fusion"},
    {"language_model", "persist_layer_norm", "", false, "no-persist-layer-norm"},
    {"model_parallel", "tensor_model_parallel_size", "tensor-model-parallel-size", true},
    {"model_parallel", "pipeline_model_parallel_size", "pipeline-model-parallel-size", true},
    {"model_parallel", "context_parallel_size", "context-parallel-size", true},
    {"model_parallel", "expert_model_parallel_size", "expert-model-parallel-size", true},
    {"model_parallel", "sequence_parallel", "sequence-parallel", false},
    {"model_parallel", "fp16", "fp16", false},
    {"model_parallel", "bf16", "bf16", false},
    {"model_parallel", "gradient_accumulation_fusion", "", false, "no-gradient-accumulation-fusion"},
    {"model_parallel", "tp_comm_overlap", "tp-comm-overlap", false},
    {"model_parallel", "cpu_offloading", "cpu-offloading", false},
};

// Top-level switches (argparse's store_true flags of the same name); any other top-level boolean is
// a switch of argparse's own default or spelling and writes nothing.
constexpr const char* kTopSwitches[] = {"untie_embeddings_and_output_weights",
                                        "swiglu",
                                        "squared_relu",
                                        "openai_gelu",
                                        "use_flash_attn",
                                        "use_distributed_optimizer",
                                        "overlap_grad_reduce",
                                        "overlap_param_gather",
                                        "use_legacy_models",
                                        "group_query_attention",
                                        "accumulate_allreduce_grads_in_fp32",
                                        "use_mcore_models",
                                        "sequence_parallel"};

bool Truth(const YAML::Node& node, bool* out) {
  std::string v = absl::AsciiStrToLower(node.Scalar());
  return absl::SimpleAtob(v, out);
}

// A mapping key's name; `? [a, b]`, `? {x: 1}` or an alias of one is refused: no config names a key so.
absl::StatusOr<std::string> KeyName(const YAML::Node& key, absl::string_view path, absl::string_view source) {
  if (key.IsScalar()) return key.Scalar();
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s: a key that is not a name (a list or a mapping)",
                                                    YamlPlace(source, key.Mark().line, key.Mark().column),
                                                    path.empty() ? "(the top level)" : path));
}

// A value given as one scalar: nullopt when the key is absent or null; an error naming `key` for a list or
// a mapping (a value hetsim would otherwise skip, pricing the default in its place).
absl::StatusOr<std::optional<YAML::Node>> ScalarAt(const YAML::Node& node, absl::string_view key,
                                                   absl::string_view source) {
  if (!node.IsDefined() || node.IsNull()) return std::nullopt;
  if (!node.IsScalar()) return absl::InvalidArgumentError(absl::StrFormat("%s: %s: not a single value", source, key));
  return node;
}

// A switch: nullopt when absent or null, else its truth; an error naming `key` for anything but true or false.
absl::StatusOr<std::optional<bool>> SwitchAt(const YAML::Node& node, absl::string_view key, absl::string_view source) {
  HETSIM_ASSIGN_OR_RETURN(const std::optional<YAML::Node> scalar, ScalarAt(node, key, source));
  if (!scalar) return std::nullopt;
  bool on = false;
  if (!Truth(*scalar, &on)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s: \"%s\" is not true or false", source, key, absl::CHexEscape(scalar->Scalar())));
  }
  return on;
}

// One word of the line a value becomes: nothing a shell rendering would split or quote.
absl::StatusOr<std::string> Word(const YAML::Node& node, absl::string_view key, absl::string_view source) {
  const std::string v = node.Scalar();
  const bool word = !v.empty() && std::all_of(v.begin(), v.end(), [](char ch) {
    return absl::ascii_isalnum(static_cast<unsigned char>(ch)) ||
           absl::string_view("._+-/:=,@%").find(ch) != absl::string_view::npos;
  });
  if (!word) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s: \"%s\" is not a single value (a number or a name)", source, key, absl::CHexEscape(v)));
  }
  return v;
}

// Whether `root` has a mapping under `key` (yaml-cpp throws on the type of a key that is not there).
bool IsSection(const YAML::Node& root, const char* key) {
  const YAML::Node node = root[key];
  return node.IsDefined() && node.IsMap();
}

absl::Status AppendMapped(const YAML::Node& root, absl::string_view source, std::string& line) {
  for (const YamlFlag& f : kYamlFlags) {
    const YAML::Node section = root[f.section];
    if (!section.IsDefined() || !section.IsMap()) continue;
    const YAML::Node node = section[f.key];
    const std::string key = absl::StrCat(f.section, ".", f.key);
    HETSIM_ASSIGN_OR_RETURN(const std::optional<YAML::Node> scalar, ScalarAt(node, key, source));
    if (!scalar) continue;
    if (f.value) {
      HETSIM_ASSIGN_OR_RETURN(const std::string v, Word(*scalar, key, source));
      absl::StrAppend(&line, " --", f.flag, " ", v);
      continue;
    }
    HETSIM_ASSIGN_OR_RETURN(const std::optional<bool> on, SwitchAt(*scalar, key, source));
    if (*on && f.flag[0] != '\0') absl::StrAppend(&line, " --", f.flag);
    if (!*on && f.when_false != nullptr) absl::StrAppend(&line, " --", f.when_false);
  }
  return absl::OkStatus();
}

// virtual_pipeline_model_parallel_size as layers per chunk (--num-layers-per-virtual-pipeline-stage), unless the
// file gives that itself. The sizes are bounded before they multiply: a huge value wrapped the product to 0 (a
// division by zero) or to a negative count.
absl::Status AppendVirtualStages(const YAML::Node& root, absl::string_view source, std::string& line) {
  constexpr absl::string_view kKey = "model_parallel.virtual_pipeline_model_parallel_size";
  const YAML::Node per = root["num_layers_per_virtual_pipeline_stage"];
  if (per.IsDefined() && !per.IsNull()) return absl::OkStatus();
  HETSIM_ASSIGN_OR_RETURN(const std::optional<YAML::Node> vp,
                          ScalarAt(root["model_parallel"]["virtual_pipeline_model_parallel_size"], kKey, source));
  if (!vp) return absl::OkStatus();
  int64_t chunks = 0, n = 0, stages = 1;
  if (!absl::SimpleAtoi(vp->Scalar(), &chunks) || chunks < 1 || chunks > 1'000'000) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s: \"%s\" is not a whole number in [1, 1000000]", source,
                                                      kKey, absl::CHexEscape(vp->Scalar())));
  }
  const YAML::Node layers = root["language_model"]["num_layers"];
  const YAML::Node pp = root["model_parallel"]["pipeline_model_parallel_size"];
  // A malformed num_layers or pipeline size is refused by its own flag; nothing to derive from it here.
  if (chunks == 1 || !layers.IsDefined() || !layers.IsScalar() || !absl::SimpleAtoi(layers.Scalar(), &n) || n < 1 ||
      n > INT32_MAX) {
    return absl::OkStatus();
  }
  if (pp.IsDefined() && !pp.IsNull() && (!pp.IsScalar() || !absl::SimpleAtoi(pp.Scalar(), &stages) || stages < 1)) {
    return absl::OkStatus();
  }
  if (stages > n || chunks > n || n % (stages * chunks) != 0) {  // both <= n <= INT32_MAX: no overflow
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s: %d chunks x %d pipeline stages do not divide num_layers %d (Megatron-LM gives every chunk the "
        "same layers)",
        source, kKey, chunks, stages, n));
  }
  absl::StrAppend(&line, " --num-layers-per-virtual-pipeline-stage ", n / (stages * chunks));
  return absl::OkStatus();
}

// activation_func (swiglu, squaredrelu, gelu) and the swiglu's bias fusion; the virtual pipeline size
// as layers per chunk; the overlapped pipeline sends.
absl::Status AppendDerived(const YAML::Node& root, absl::string_view source, std::string& line) {
  const YAML::Node lm = root["language_model"];
  HETSIM_ASSIGN_OR_RETURN(const std::optional<YAML::Node> activation,
                          ScalarAt(lm["activation_func"], "language_model.activation_func", source));
  const std::string act = activation ? activation->Scalar() : "gelu";
  if (act == "swiglu") absl::StrAppend(&line, " --swiglu");
  if (act == "squaredrelu") absl::StrAppend(&line, " --squared-relu");
  if (act != "swiglu" && act != "squaredrelu" && act != "gelu") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: language_model.activation_func: \"%s\" is not swiglu, squaredrelu or gelu (Megatron's three)", source,
        act));
  }
  const std::string fusion_key = act == "swiglu" ? "bias_swiglu_fusion" : "bias_activation_fusion";
  HETSIM_ASSIGN_OR_RETURN(const std::optional<bool> fused,
                          SwitchAt(lm[fusion_key], absl::StrCat("language_model.", fusion_key), source));
  if (fused && !*fused) {
    absl::StrAppend(&line, act == "swiglu" ? " --no-bias-swiglu-fusion" : " --no-bias-gelu-fusion");
  }
  const YAML::Node experts = lm["num_moe_experts"];
  HETSIM_ASSIGN_OR_RETURN(const std::optional<YAML::Node> topk,
                          ScalarAt(lm["moe_router_topk"], "language_model.moe_router_topk", source));
  if (experts.IsDefined() && !experts.IsNull() && topk) {
    HETSIM_ASSIGN_OR_RETURN(const std::string k, Word(*topk, "language_model.moe_router_topk", source));
    absl::StrAppend(&line, " --moe-router-topk ", k);  // Megatron reads it with experts only
  }
  HETSIM_RETURN_IF_ERROR(AppendVirtualStages(root, source, line));
  HETSIM_ASSIGN_OR_RETURN(const std::optional<bool> overlap, SwitchAt(root["model_parallel"]["overlap_p2p_comm"],
                                                                      "model_parallel.overlap_p2p_comm", source));
  if (overlap) absl::StrAppend(&line, *overlap ? " --overlap-p2p-communication" : " --no-overlap-p2p-communication");
  return absl::OkStatus();
}

// The top level: argparse's own names, scalars as --key-with-dashes values, known switches when true; a key
// no flag of hetsim's table is named after is listed in `unknown`.
absl::Status AppendTopLevel(const YAML::Node& root, absl::string_view source, std::string& line,
                            std::vector<std::string>& unknown) {
  for (const auto& kv : root) {
    HETSIM_ASSIGN_OR_RETURN(const std::string key, KeyName(kv.first, "", source));
    const YAML::Node& node = kv.second;
    if (key == "language_model" || key == "model_parallel" || !node.IsScalar() || node.IsNull()) continue;
    if (node.Scalar().empty() || node.Scalar() == "null") continue;
    const std::string flag = absl::StrReplaceAll(key, {{"_", "-"}});
    bool on = false;
    if (Truth(node, &on) && !absl::ascii_isdigit(static_cast<unsigned char>(node.Scalar()[0]))) {
      const bool known = std::find(std::begin(kTopSwitches), std::end(kTopSwitches), key) != std::end(kTopSwitches);
      if (on && known) absl::StrAppend(&line, " --", flag);
      continue;
    }
    absl::StatusOr<std::string> v = Word(node, key, source);
    if (!v.ok()) continue;  // a free-text value (a W&B name, a data split with spaces): never a cost
    if (KindOf(flag) == FlagKind::kUnknown) {
      unknown.push_back(key);
      continue;
    }
    absl::StrAppend(&line, " --", flag, " ", *v);
  }
  return absl::OkStatus();
}

// Megatron-LM's functional tests (tests/functional_tests/test_cases/<family>/<case>/model_config.yaml): the
// flags under MODEL_ARGS, each `--flag: value`, made into the line as its _run_training.sh makes them (yq, then
// bash): true is the switch alone, an empty value nothing, a value in [ ] its words, any other value one word.
// false writes nothing (the script would pass "--flag false", which argparse refuses for a switch).
// A functional-test config: MODEL_ARGS a mapping, or empty (the checkpoint-converter tests pass none).
bool IsTestCase(const YAML::Node& root) {
  if (!root.IsMap()) return false;
  const YAML::Node args = root["MODEL_ARGS"];
  return args.IsDefined() && (args.IsMap() || args.IsNull());
}

// What the test runs besides pretraining: tests/functional_tests/shell_test_utils/run_ci_test.sh reads
// `MODE` (`yq '.MODE // "pretraining"'`); the inference tests' recipes run examples/inference/, the `rl`
// tests' GRPO (generation and training alternating). A config with no MODEL_ARGS passes no training flags.
absl::Status RefuseTestMode(const YAML::Node& root, absl::string_view source) {
  const YAML::Node mode = root["MODE"];
  if (mode.IsDefined() && mode.IsScalar() && mode.Scalar() != "pretraining") {
    const std::string what =
        mode.Scalar() == "inference" ? "inference (its recipe runs Megatron's examples/inference, not a training step)"
        : mode.Scalar() == "rl"      ? "reinforcement learning (GRPO: the policy generates, then trains, each step)"
                                     : "not pretraining";
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: MODE: %s: a Megatron-LM functional test of %s (run_ci_test.sh reads MODE, pretraining by default), "
        "which hetsim does not model (it prices training steps)",
        source, mode.Scalar(), what));
  }
  if (!root["MODEL_ARGS"].IsMap() || root["MODEL_ARGS"].size() == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: MODEL_ARGS: empty: the functional test passes no training flags (its recipe runs another script, "
        "e.g. a checkpoint converter), so there is no training line to import",
        source));
  }
  return absl::OkStatus();
}

std::string ShellQuoted(absl::string_view v) {
  return absl::StrCat("'", absl::StrReplaceAll(v, {{"'", "'\\''"}}), "'");
}

absl::Status AppendTestArg(const std::string& key, const YAML::Node& node, absl::string_view source,
                           std::string& line) {
  if (node.IsNull()) return absl::OkStatus();
  if (node.IsSequence()) {
    absl::StrAppend(&line, " ", key);
    for (const YAML::Node& e : node) {
      if (!e.IsScalar()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: MODEL_ARGS.%s: a list of other than values", source, key));
      }
      absl::StrAppend(&line, " ", ShellQuoted(e.Scalar()));
    }
    return absl::OkStatus();
  }
  if (!node.IsScalar()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: MODEL_ARGS.%s: not a value or a list of values", source, key));
  }
  const std::string v = node.Scalar();
  const std::string lower = absl::AsciiStrToLower(v);
  if (v.empty() || lower == "false") return absl::OkStatus();
  if (lower == "true") {
    absl::StrAppend(&line, " ", key);
    return absl::OkStatus();
  }
  absl::StrAppend(&line, " ", key);
  if (v.size() > 1 && v.front() == '[' && v.back() == ']') {  // the script strips the brackets and splits
    for (absl::string_view w : absl::StrSplit(absl::string_view(v).substr(1, v.size() - 2), ' ', absl::SkipEmpty())) {
      absl::StrAppend(&line, " ", ShellQuoted(w));
    }
    return absl::OkStatus();
  }
  absl::StrAppend(&line, " ", ShellQuoted(v));
  return absl::OkStatus();
}

// Megatron's tools/preprocess_data.py names its output PREFIX_KEY_LEVEL, the level `sentence` under
// --split-sentences and `document` otherwise. Sentence-split data is what Megatron's BERT trains on (its
// sentence pairs): in Megatron-LM's functional tests only the BERT configs read it, and their recipe
// (tests/test_utils/recipes/h100/bert.yaml) runs examples/bert/pretrain_bert.py, which the file does not name.
absl::Status RefuseSentenceData(const YAML::Node& args, absl::string_view source) {
  const YAML::Node data = args["--data-path"];
  if (!data) return absl::OkStatus();
  std::vector<std::string> words;
  if (data.IsScalar()) {
    words = absl::StrSplit(data.Scalar(), ' ', absl::SkipEmpty());
  } else if (data.IsSequence()) {
    for (const YAML::Node& e : data) {
      if (e.IsScalar()) words.push_back(e.Scalar());
    }
  }
  for (const std::string& w : words) {
    if (!absl::EndsWith(w, "_sentence")) continue;
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: MODEL_ARGS.--data-path: %s is sentence-split data (tools/preprocess_data.py --split-sentences), which "
        "Megatron's BERT trains on: Megatron-LM's BERT functional tests read it, run by their recipe as "
        "examples/bert/pretrain_bert.py, not the pretrain_gpt.py a config is otherwise read as; hetsim does not "
        "model BERT (it prices GPT-style decoders)",
        source, w));
  }
  return absl::OkStatus();
}

// The test's ENV_VARS, the variables its run sets in the training's environment: Transformer Engine's NVTE_*
// switches are read as a launch script's exported ones (LaunchContext::environment); the others are not read.
absl::Status ReadTestEnvironment(const YAML::Node& vars, absl::string_view source, MegatronYamlRead& out) {
  if (!vars.IsDefined() || vars.IsNull()) return absl::OkStatus();
  if (!vars.IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: ENV_VARS: not a mapping of variables (`NVTE_FLASH_ATTN: 0`)", source));
  }
  for (const auto& kv : vars) {
    HETSIM_ASSIGN_OR_RETURN(const std::string name, KeyName(kv.first, "ENV_VARS", source));
    if (!absl::StartsWith(name, "NVTE_")) continue;
    const std::string key = absl::StrCat("ENV_VARS.", name);
    HETSIM_ASSIGN_OR_RETURN(const std::optional<YAML::Node> value, ScalarAt(kv.second, key, source));
    if (value) out.environment[name] = value->Scalar();
  }
  return absl::OkStatus();
}

absl::StatusOr<MegatronYamlRead> TestCaseLine(const YAML::Node& root, absl::string_view source) {
  HETSIM_RETURN_IF_ERROR(RefuseSentenceData(root["MODEL_ARGS"], source));
  MegatronYamlRead out;
  HETSIM_RETURN_IF_ERROR(ReadTestEnvironment(root["ENV_VARS"], source, out));
  // _run_training.sh: torchrun --nproc_per_node ${GPUS_PER_NODE:-8} --nnodes $NUM_NODES $TRAINING_SCRIPT_PATH.
  out.line = "torchrun --nproc_per_node 8 pretrain_gpt.py";
  std::vector<std::string> overrides;
  for (const auto& kv : root["MODEL_ARGS"]) {
    HETSIM_ASSIGN_OR_RETURN(const std::string key, KeyName(kv.first, "MODEL_ARGS", source));
    if (!absl::StartsWith(key, "--")) {
      overrides.push_back(key);
      continue;
    }
    HETSIM_RETURN_IF_ERROR(AppendTestArg(key, kv.second, source, out.line));
  }
  if (out.line == "torchrun --nproc_per_node 8 pretrain_gpt.py" && !overrides.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: MODEL_ARGS: %s, ...: overrides of a NeMo 2 recipe (trainer.*, model.config.*, data.*: Megatron-LM's "
        "functional tests of NeMo run NeMo's llm recipes), not Megatron flags; hetsim does not read NeMo 2 recipes: "
        "write the model as a hetsim Model and plan it with these sizes",
        source, overrides.front()));
  }
  if (!overrides.empty()) {
    out.notes.push_back(
        absl::StrFormat("MODEL_ARGS keys that are not flags, ignored: %s", absl::StrJoin(overrides, ", ")));
  }
  out.notes.push_back(
      "a Megatron-LM functional-test config (MODEL_ARGS) read as the line its _run_training.sh builds; the test's "
      "recipe (tests/test_utils/recipes), not the file, names the script and the nodes: pretrain_gpt.py and 8 GPUs "
      "a node assumed, the nodes from --nodes");
  return out;
}

struct KeysWalk {
  absl::string_view source;
  int64_t nodes_left = 1'000'000;
};

absl::Status KeysOnce(const YAML::Node& node, const std::string& path, int depth, KeysWalk& walk) {
  if (depth > 256 || --walk.nodes_left < 0) return absl::OkStatus();
  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      HETSIM_RETURN_IF_ERROR(KeysOnce(node[i], absl::StrFormat("%s[%d]", path, i), depth + 1, walk));
    }
    return absl::OkStatus();
  }
  if (!node.IsMap()) return absl::OkStatus();
  std::map<std::string, int> lines;  // key -> its first line (0-based)
  for (const auto& kv : node) {
    const int line = kv.first.Mark().line;
    HETSIM_ASSIGN_OR_RETURN(const std::string key, KeyName(kv.first, path, walk.source));
    const std::string here = path.empty() ? key : absl::StrCat(path, ".", key);
    auto [it, added] = lines.emplace(key, line);
    if (!added) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s: given twice (lines %d and %d); YAML readers differ on which one counts (PyYAML the last, "
          "OmegaConf refuses the file), so give it once",
          walk.source, here, it->second + 1, line + 1));
    }
    HETSIM_RETURN_IF_ERROR(KeysOnce(kv.second, here, depth + 1, walk));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckYamlKeysOnce(const YAML::Node& root, absl::string_view source) {
  KeysWalk walk{source};
  return KeysOnce(root, "", 0, walk);
}

bool IsMegatronYaml(absl::string_view yaml_text) {
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_text));
    return IsTestCase(root) || (root.IsMap() && IsSection(root, "language_model") && IsSection(root, "model_parallel"));
  } catch (const YAML::Exception&) {
    return false;
  }
}

absl::Status NotYaml(absl::string_view source, const YAML::Exception& e) {
  const std::string place = YamlPlace(source, e.mark.line, e.mark.column);
  if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e); deep != nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: not YAML hetsim reads: nested %d levels deep, past yaml-cpp's limit (a config is a few levels)", place,
        deep->depth()));
  }
  return absl::InvalidArgumentError(absl::StrFormat("%s: not YAML: %s", place, e.msg));
}

std::string UnknownYamlKeysNote(const std::vector<std::string>& unknown_keys) {
  if (unknown_keys.empty()) return "";
  return absl::StrFormat("--yaml-cfg keys that name no Megatron flag hetsim knows, ignored: %s",
                         absl::StrJoin(unknown_keys, ", "));
}

namespace {

// Where a stream's second document starts (its first node), read event by event and never past it.
class SecondDocument : public YAML::EventHandler {
 public:
  bool found() const { return documents_ > 1; }
  const YAML::Mark& mark() const { return mark_; }
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ == 2) mark_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override { Node(mark); }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Node(mark);
  }
  void OnMapEnd() override {}

 private:
  void Node(const YAML::Mark& mark) {
    if (documents_ == 2 && !node_seen_) {
      node_seen_ = true;
      mark_ = mark;
    }
  }
  int documents_ = 0;
  bool node_seen_ = false;
  YAML::Mark mark_;
};

// The file's one YAML document (Null for an empty file); a second one is refused: PyYAML's safe_load, which
// reads both kinds of file for Megatron, refuses a stream of several, where yaml-cpp's Load reads the first.
// Not YAML::LoadAll: on some malformed streams it returns document after document without end (a fuzzer's
// input grew to 2 GB), so the stream is read at most two documents far.
absl::StatusOr<YAML::Node> OneDocument(absl::string_view yaml_text, absl::string_view source) {
  const YAML::Node root = YAML::Load(std::string(yaml_text));
  std::istringstream in{std::string(yaml_text)};
  YAML::Parser parser(in);
  SecondDocument second;
  for (int i = 0; i < 2 && !second.found() && parser.HandleNextDocument(second); ++i) {
  }
  if (second.found()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: a second YAML document (after ---): a config is one document (PyYAML's safe_load, as Megatron-LM "
        "reads it, refuses the file)",
        YamlPlace(source, second.mark().line, second.mark().column)));
  }
  return root;
}

// A mapping that is neither kind of Megatron YAML file: what each has, and where NeMo's configs go.
absl::Status NeitherKind(const YAML::Node& root, absl::string_view source) {
  if (root.IsMap() && root["MODEL_ARGS"].IsDefined()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: MODEL_ARGS: not a mapping of flags (`--num-layers: 24`, as Megatron-LM's functional tests write them)",
        source));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: neither a Megatron-LM functional-test config (flags under MODEL_ARGS) nor a --yaml-cfg file (its "
      "language_model and model_parallel sections); a NeMo config is read by hetsim import nemo",
      source));
}

}  // namespace

absl::StatusOr<MegatronYamlRead> MegatronYamlLine(absl::string_view yaml_text, absl::string_view source) {
  try {
    HETSIM_ASSIGN_OR_RETURN(const YAML::Node root, OneDocument(yaml_text, source));
    // What a functional test runs comes first: a key given twice among an RL test's flags is not its reason.
    if (IsTestCase(root)) HETSIM_RETURN_IF_ERROR(RefuseTestMode(root, source));
    HETSIM_RETURN_IF_ERROR(CheckYamlKeysOnce(root, source));
    if (IsTestCase(root)) return TestCaseLine(root, source);
    if (!root.IsMap() || root["MODEL_ARGS"].IsDefined() ||
        (!root["language_model"].IsDefined() && !root["model_parallel"].IsDefined())) {
      return NeitherKind(root, source);
    }
    for (const char* section : {"language_model", "model_parallel"}) {
      if (IsSection(root, section)) continue;
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s: %s; a Megatron-LM --yaml-cfg file has its language_model and model_parallel sections", source,
          section, root[section].IsDefined() ? "not a section" : "required"));
    }
    MegatronYamlRead out;
    out.line = "pretrain_gpt.py";
    HETSIM_RETURN_IF_ERROR(AppendMapped(root, source, out.line));
    HETSIM_RETURN_IF_ERROR(AppendDerived(root, source, out.line));
    HETSIM_RETURN_IF_ERROR(AppendTopLevel(root, source, out.line, out.unknown_keys));
    return out;
  } catch (const YAML::Exception& e) {
    return NotYaml(source, e);
  }
}

void ApplyMegatronYamlRead(const MegatronYamlRead& read, MegatronFlags& flags) {
  if (!read.unknown_keys.empty()) flags.launch.notes.push_back(UnknownYamlKeysNote(read.unknown_keys));
  flags.launch.notes.insert(flags.launch.notes.end(), read.notes.begin(), read.notes.end());
  for (const auto& [name, value] : read.environment) flags.launch.environment[name] = value;
}

absl::StatusOr<MegatronFlags> WithMegatronYaml(const MegatronFlags& flags, absl::string_view source) {
  if (!flags.Has("yaml-cfg")) return flags;
  const std::vector<std::string> given = flags.Values("yaml-cfg");
  if (given.size() != 1 || given.front().empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: --yaml-cfg: needs one file, got %d values (Megatron's argparse takes one path)", source, given.size()));
  }
  const std::optional<std::string> path = given.front();
  absl::StatusOr<LineFile> file = ReadLineFile(flags, *path, source);
  if (!file.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: --yaml-cfg %s: %s (with --yaml-cfg Megatron reads every argument from the file; put it where the line "
        "names it, relative to the script's folder)",
        source, *path, file.status().message()));
  }
  const std::string& text = file->text;
  const std::string& where = file->where;
  HETSIM_ASSIGN_OR_RETURN(const MegatronYamlRead read, MegatronYamlLine(text, where));
  HETSIM_ASSIGN_OR_RETURN(MegatronFlags out, ParseMegatronWords(ShellTokens(read.line), where));
  std::vector<std::string> dropped;
  for (const auto& [name, value] : flags.flags) {
    if (name != "yaml-cfg") dropped.push_back(absl::StrCat("--", name));
  }
  out.launch = flags.launch;  // the line's launcher, script, files and notes: the file replaces its flags only
  if (file->from_disk) out.launch.files_read.push_back(where);
  out.launch.notes.push_back(absl::StrFormat("--yaml-cfg %s read: every argument from the file", where));
  if (!read.unknown_keys.empty()) out.launch.notes.push_back(UnknownYamlKeysNote(read.unknown_keys));
  if (!dropped.empty()) {
    out.launch.notes.push_back(
        absl::StrFormat("the line's %s: ignored, as Megatron ignores argparse's arguments with "
                        "--yaml-cfg (yaml_arguments.py, load_yaml)",
                        absl::StrJoin(dropped, " ")));
  }
  return out;
}

}  // namespace hetsim::interop
