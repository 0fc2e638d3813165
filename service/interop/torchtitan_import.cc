#include "service/interop/torchtitan_import.h"

// toml++'s parser asserts (TOML_ASSERT_ASSUME) conditions that hostile text breaks before its own
// error path reports them: a control character opening a table header ("[\x11model]") aborts a build
// without NDEBUG (the sanitized and fuzz builds), since toml++ is compiled here header-only
// (cmake/static_deps.cmake). Its release behaviour, a parse error with the position, in every build:
#define TOML_ASSERT(expr) static_cast<void>(0)
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "proto/inputs.h"
#include "proto/limits.h"
#include "service/interop/megatron_flags.h"
#include "service/interop/torchtitan_flavors.h"
#include "service/interop/torchtitan_models_internal.h"

namespace hetsim::interop {
namespace {

namespace v1 = hetsim::v1;

// Sections whose keys change nothing an iteration costs (logging, data, checkpoints, the optimizer's
// hyperparameters: AdamW's step costs what Adam's does).
constexpr const char* kNoEffectSections[] = {"job",
                                             "profiling",
                                             "metrics",
                                             "optimizer",
                                             "lr_scheduler",
                                             "checkpoint",
                                             "validation",
                                             "comm",
                                             "fault_tolerance",
                                             "memory_estimation",
                                             "debug",
                                             "dataloader",
                                             "experimental.custom_import"};
constexpr const char* kNoEffectKeys[] = {
    "training.dataset", "training.dataset_path", "training.steps", "training.max_norm", "training.gc_freq",
    "training.gc_debug", "training.seed", "training.deterministic", "model.hf_assets_path", "model.tokenizer_path",
    "model.norm_type", "training.warmup_steps", "training.data_parallel_type", "parallelism.disable_loss_parallel",
    "parallelism.fsdp_reshard_after_forward",
    // No effect on dense models (read for the MoE flavors: torchtitan_models_internal.h).
    "parallelism.expert_parallel_degree", "parallelism.expert_tensor_parallel_degree"};

// The keys of a parsed config, each read at most once; what was never read is reported.
class TomlReader {
 public:
  TomlReader(const toml::table& root, absl::string_view source) : root_(root), source_(source) {}

  absl::Status Error(absl::string_view key, absl::string_view problem) const {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s: %s", source_, key, problem));
  }
  // The first of `keys` present (a key's older names after it); nullopt when none is.
  absl::StatusOr<std::optional<int64_t>> Int(std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
      const toml::node* n = Find(key);
      if (n == nullptr) continue;
      if (!n->is_integer()) return Error(key, "not an integer");
      // Every size lands in a 32-bit field of the plan (as a launch line's flags do), and the degrees
      // multiply: bounded here, where they are read (a degree of 2^32 times another wrapped to zero).
      const int64_t v = n->as_integer()->get();
      if (v > INT32_MAX || v < -INT32_MAX) {
        return Error(key, absl::StrFormat("%d is not a whole number within +-%d, the most hetsim reads", v, INT32_MAX));
      }
      return v;
    }
    return std::nullopt;
  }
  absl::StatusOr<std::optional<std::string>> String(std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
      const toml::node* n = Find(key);
      if (n == nullptr) continue;
      if (!n->is_string()) return Error(key, "not a string");
      const std::string& value = n->as_string()->get();
      // A NUL ("\u0000") cut the message that quotes the value before its problem (session 36).
      const auto control = absl::c_find_if(value, [](unsigned char c) { return c < 0x20 || c == 0x7f; });
      if (control != value.end()) {
        return Error(key, absl::StrFormat("holds the control character 0x%02x at byte %d (no torchtitan name has one)",
                                          static_cast<unsigned char>(*control), control - value.begin()));
      }
      return value;
    }
    return std::nullopt;
  }
  absl::StatusOr<bool> Bool(std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
      const toml::node* n = Find(key);
      if (n == nullptr) continue;
      if (!n->is_boolean()) return Error(key, "not true or false");
      return n->as_boolean()->get();
    }
    return false;
  }
  absl::StatusOr<std::vector<std::string>> Strings(const char* key) {
    std::vector<std::string> out;
    const toml::node* n = Find(key);
    if (n == nullptr) return out;
    // torchtitan's config_manager of 2024-2025 (string_list, check_string_list_argument) took these keys as one
    // comma-separated string too: `converters = "float8"` is ["float8"].
    if (n->is_string()) {
      for (absl::string_view s : absl::StrSplit(n->as_string()->get(), ',')) {
        s = absl::StripAsciiWhitespace(s);
        if (!s.empty()) out.emplace_back(s);
      }
      return out;
    }
    if (!n->is_array()) return Error(key, "not a list of strings");
    for (const toml::node& e : *n->as_array()) {
      if (!e.is_string()) return Error(key, "not a list of strings");
      out.push_back(e.as_string()->get());
    }
    return out;
  }
  // The leaf keys never read and outside the no-effect sections, as "section.key".
  std::vector<std::string> Unread() const {
    std::vector<std::string> out;
    CollectUnread(root_, "", out);
    return out;
  }
  std::vector<std::string> NoEffect() const { return no_effect_; }

 private:
  const toml::node* Find(const char* key) {
    read_.insert(key);
    return root_.at_path(key).node();
  }
  void CollectUnread(const toml::table& t, const std::string& prefix, std::vector<std::string>& out) const {
    for (const auto& [k, v] : t) {
      const std::string key = prefix.empty() ? std::string(k.str()) : absl::StrCat(prefix, ".", std::string(k.str()));
      if (v.is_table()) {
        CollectUnread(*v.as_table(), key, out);
        continue;
      }
      if (read_.contains(key)) continue;
      bool no_effect = false;
      for (const char* s : kNoEffectSections) no_effect |= absl::StartsWith(key, absl::StrCat(s, "."));
      for (const char* s : kNoEffectKeys) no_effect |= key == s;
      (no_effect ? const_cast<std::vector<std::string>&>(no_effect_) : out).push_back(key);
    }
  }

  const toml::table& root_;
  std::string source_;
  absl::flat_hash_set<std::string> read_;
  std::vector<std::string> no_effect_;
};

// torchtitan's SFT experiment (experiments/sft, pytorch/torchtitan 655e5ec, December 2025): model.name
// "sft.llama3" is torchtitan.experiments.sft.llama3's train spec, models/llama3's Transformer and flavors
// trained on a chat dataset with its own loss and tokenizer: the model's compute is llama3's.
constexpr absl::string_view kSftPrefix = "sft.";

// A llama flavor as the shape the importer prices.
TitanModel FromLlama(const LlamaFlavor& l, absl::string_view model) {
  return TitanShape(model, l.name, l.dim, l.layers, l.heads, l.kv_heads, l.FfnHidden(), l.vocab);
}

absl::StatusOr<TitanModel> ReadFlavor(TomlReader& r, std::vector<std::string>& notes) {
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> name, r.String({"model.name"}));
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> flavor, r.String({"model.flavor"}));
  std::string model = name.value_or("llama3");
  if (absl::StartsWith(model, kSftPrefix)) {
    const std::string inner = model.substr(kSftPrefix.size());
    if (inner == "llama3" || inner == "llama2") {
      notes.push_back(
          absl::StrFormat("model.name \"%s\": torchtitan's SFT experiment, read as its model %s (the "
                          "dataset, loss and tokenizer change no compute)",
                          model, inner));
      model = inner;
    }
  }
  if (model != "llama3" && model != "llama2" && !IsOtherTitanModel(model)) {
    return r.Error("model.name", absl::StrFormat("\"%s\": only torchtitan's llama3, llama2, qwen3, llama4 and "
                                                 "deepseek_v3 models are known to this importer (write the model as a "
                                                 "hetsim Model and plan it instead)",
                                                 model));
  }
  // Attention variants (_flex_attn, _varlen) have the same shapes.
  const std::string f = flavor.value_or("debugmodel");
  std::vector<std::string> known;
  if (IsOtherTitanModel(model)) {
    if (std::optional<TitanModel> m = OtherTitanFlavor(model, f, known)) return *std::move(m);
  } else {
    for (const LlamaFlavor& l : model == "llama3" ? std::span(kLlama3Flavors) : std::span(kLlama2Flavors)) {
      if (f == l.name || absl::StartsWith(f, absl::StrCat(l.name, "_"))) return FromLlama(l, model);
      known.push_back(l.name);
    }
  }
  return r.Error("model.flavor",
                 absl::StrFormat("\"%s\": not a %s flavor (known: %s)", f, model, absl::StrJoin(known, ", ")));
}

struct Degrees {
  int64_t replicate = 1, shard = -1, tp = 1, pp = 1, cp = 1;
  int64_t Dp() const { return replicate * shard; }
};

absl::StatusOr<Degrees> ReadDegrees(TomlReader& r) {
  Degrees d;
  auto read = [&](int64_t& out, std::initializer_list<const char*> keys, int64_t dflt) -> absl::Status {
    HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> v, r.Int(keys));
    out = v.value_or(dflt);
    if (out < 1 && !(out == -1 && &out == &d.shard)) return r.Error(*keys.begin(), absl::StrCat(out, ": must be >= 1"));
    return absl::OkStatus();
  };
  HETSIM_RETURN_IF_ERROR(
      read(d.replicate, {"parallelism.data_parallel_replicate_degree", "training.data_parallel_replicate_degree"}, 1));
  HETSIM_RETURN_IF_ERROR(read(d.shard,
                              {"parallelism.data_parallel_shard_degree", "training.data_parallel_shard_degree",
                               "training.data_parallel_degree"},
                              -1));
  HETSIM_RETURN_IF_ERROR(read(d.tp, {"parallelism.tensor_parallel_degree", "training.tensor_parallel_degree"}, 1));
  HETSIM_RETURN_IF_ERROR(
      read(d.pp, {"parallelism.pipeline_parallel_degree", "experimental.pipeline_parallel_degree"}, 1));
  HETSIM_RETURN_IF_ERROR(
      read(d.cp, {"parallelism.context_parallel_degree", "experimental.context_parallel_degree"}, 1));
  // Their product, checked factor by factor against the most GPUs a cluster has, so that it stays in int64.
  int64_t gpus = 1;
  for (const int64_t degree : {d.replicate, d.shard == -1 ? 1 : d.shard, d.tp, d.pp, d.cp}) {
    gpus *= degree;
    if (gpus > proto::limits::kMaxGpus) {
      return r.Error("parallelism", absl::StrFormat("the degrees multiply to more than %d GPUs, the most a cluster has",
                                                    proto::limits::kMaxGpus));
    }
  }
  return d;
}

// The world the degrees run on: the product of the degrees, or with data_parallel_shard_degree -1 the
// nodes asked for (else the island's), the shard degree taking what the others leave.
absl::StatusOr<MegatronImportRequest> PlaceWorld(TomlReader& r, Degrees& d, const v1::Cluster& cluster,
                                                 MegatronImportRequest request) {
  const v1::Island* island = nullptr;
  for (const v1::Island& i : cluster.islands()) {
    if (request.island.empty() ? cluster.islands_size() == 1 : i.name() == request.island) island = &i;
  }
  if (island == nullptr) {
    return r.Error("--island", request.island.empty()
                                   ? absl::StrFormat("required: the cluster has %d islands", cluster.islands_size())
                                   : absl::StrFormat("no island \"%s\" in the cluster", request.island));
  }
  int64_t node_gpus = 0;
  for (const v1::NodeType& n : cluster.node_types()) {
    if (n.name() == island->node_type()) node_gpus = n.gpus_per_node();
  }
  const int64_t gpn = request.gpus_per_node > 0 ? request.gpus_per_node : node_gpus;
  // Within the island, as the Megatron importer requires (--nodes 2^63 times the node's GPUs overflowed).
  if (request.nodes > static_cast<int64_t>(island->node_count())) {
    return r.Error("--nodes", absl::StrFormat("%d: island \"%s\" has %d nodes", request.nodes, island->name(),
                                              island->node_count()));
  }
  if (gpn > node_gpus) {
    return r.Error("--gpus-per-node",
                   absl::StrFormat("%d: the nodes of island \"%s\" have %d GPUs", gpn, island->name(), node_gpus));
  }
  const int64_t others = d.replicate * d.tp * d.pp * d.cp;
  int64_t world = 0;
  if (d.shard == -1) {
    world = (request.nodes > 0 ? request.nodes : island->node_count()) * gpn;
    if (world % others != 0) {
      return r.Error(
          "parallelism.data_parallel_shard_degree",
          absl::StrFormat("-1 (the rest): the other degrees' product %d does not divide the %d GPUs", others, world));
    }
    d.shard = world / others;
  } else {
    world = others * d.shard;
  }
  request.gpus_per_node = std::min(gpn, world);
  if (world % request.gpus_per_node != 0) {
    return r.Error("parallelism", absl::StrFormat("%d GPUs do not fill nodes of %d", world, request.gpus_per_node));
  }
  request.nodes = world / request.gpus_per_node;
  return request;
}

struct Batch {
  int64_t local = 8, global = 0, micro = 1, seq = 2048;
};

absl::StatusOr<Batch> ReadBatch(TomlReader& r, const Degrees& d) {
  Batch b;
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> local, r.Int({"training.local_batch_size", "training.batch_size"}));
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> global, r.Int({"training.global_batch_size"}));
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> seq, r.Int({"training.seq_len"}));
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> micro, r.Int({"parallelism.pipeline_parallel_microbatch_size",
                                                               "experimental.pipeline_parallel_microbatch_size"}));
  // 2024: the number of microbatches the local batch is split into (default: one per pipeline stage).
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> count, r.Int({"experimental.pipeline_parallel_microbatches"}));
  b.local = local.value_or(8);
  b.seq = seq.value_or(2048);
  if (b.local < 1) return r.Error("training.local_batch_size", "must be >= 1");
  if (b.seq < 1) return r.Error("training.seq_len", "must be >= 1");
  if (count && (*count < 1 || b.local % *count != 0)) {
    return r.Error("experimental.pipeline_parallel_microbatches",
                   absl::StrFormat("%d does not divide the local batch %d", *count, b.local));
  }
  // Without pipelines the local batch is one microbatch; with them, pipeline_parallel_microbatch_size
  // (2025) or the local batch over pipeline_parallel_microbatches (2024).
  b.micro = d.pp == 1 ? b.local : micro ? *micro : count ? b.local / *count : 1;
  if (b.micro < 1) return r.Error("parallelism.pipeline_parallel_microbatch_size", "must be >= 1");
  if (b.local % b.micro != 0) {
    return r.Error("parallelism.pipeline_parallel_microbatch_size",
                   absl::StrFormat("%d does not divide training.local_batch_size %d", b.micro, b.local));
  }
  b.global = global.value_or(-1) > 0 ? *global : b.local * d.Dp();
  // Named here, in the config's keys: the plan's own check would name Plan.global_batch_size.
  if (static_cast<uint64_t>(b.global) > proto::limits::kMaxGlobalBatch) {
    return global.value_or(-1) > 0
               ? r.Error("training.global_batch_size",
                         absl::StrFormat("%d is more than %d samples", b.global, proto::limits::kMaxGlobalBatch))
               : r.Error("training.local_batch_size",
                         absl::StrFormat("%d x data parallel %d = %d samples per iteration, more than %d", b.local,
                                         d.Dp(), b.global, proto::limits::kMaxGlobalBatch));
  }
  if (b.global % (b.local * d.Dp()) != 0) {
    return r.Error(
        "training.global_batch_size",
        absl::StrFormat("%d is not a multiple of local_batch_size x data parallel = %d", b.global, b.local * d.Dp()));
  }
  return b;
}

// torchtitan's activation checkpointing as Megatron's recompute flags.
absl::StatusOr<std::string> RecomputeFlags(TomlReader& r, std::vector<std::string>& notes) {
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> mode, r.String({"activation_checkpoint.mode"}));
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> option, r.String({"activation_checkpoint.selective_ac_option"}));
  const std::string m = mode.value_or("selective");
  if (m == "none") return std::string();
  if (m == "full")
    return std::string(" --recompute-granularity full --recompute-method uniform --recompute-num-layers 1");
  if (m == "selective") {
    notes.push_back(absl::StrFormat(
        "activation_checkpoint selective (%s): priced as Megatron's selective recomputation (the attention core "
        "recomputed), torchtitan's policy saves and recomputes other operators",
        option.value_or("2")));
    return std::string(" --recompute-granularity selective");
  }
  return r.Error("activation_checkpoint.mode", absl::StrFormat("\"%s\" is not none, selective or full", m));
}

// The schedule and, for looped schedules, the flag of chunks per rank.
absl::StatusOr<std::string> ScheduleFlags(TomlReader& r, const Degrees& d, const TitanModel& f,
                                          std::vector<std::string>& notes) {
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> schedule, r.String({"parallelism.pipeline_parallel_schedule",
                                                                         "experimental.pipeline_parallel_schedule"}));
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> per_stage, r.Int({"parallelism.pipeline_parallel_layers_per_stage"}));
  // torchtitan divides the layers by it: 0 or less was ignored under 1F1B without a word (session 33).
  if (per_stage && *per_stage < 1) {
    return r.Error("parallelism.pipeline_parallel_layers_per_stage", absl::StrFormat("%d: must be >= 1", *per_stage));
  }
  // 2024: the stages as split points ("layers.10", ...): their count sets the chunks per rank; hetsim
  // splits the layers evenly.
  HETSIM_ASSIGN_OR_RETURN(std::vector<std::string> split_points,
                          r.Strings("experimental.pipeline_parallel_split_points"));
  if (!split_points.empty()) {
    notes.push_back(absl::StrFormat("pipeline_parallel_split_points: %d stages, layers split evenly among them",
                                    split_points.size() + 1));
    if (!per_stage && (split_points.size() + 1) % d.pp == 0) {
      per_stage = f.layers / static_cast<int64_t>(split_points.size() + 1);
    }
  }
  const std::string s = schedule.value_or("1F1B");
  if (d.pp == 1) return std::string();
  if (s == "1F1B" || s == "GPipe") return std::string();  // GPipe's order is set on the plan

  if (s == "Interleaved1F1B") {
    // torchtitan's default for looped schedules: two stages per rank unless layers per stage are given.
    const int64_t stages = per_stage ? (f.layers + *per_stage - 1) / *per_stage : 2 * d.pp;
    if (stages % d.pp != 0) {  // torchtitan's pipeline split refuses it too (stages a multiple of the ranks)
      return r.Error("parallelism.pipeline_parallel_layers_per_stage",
                     absl::StrFormat("%d: %d layers make %d stages of at most %d, which do not divide over %d "
                                     "pipeline ranks",
                                     *per_stage, f.layers, stages, *per_stage, d.pp));
    }
    const int64_t chunks = stages / d.pp;
    if (!per_stage) notes.push_back("Interleaved1F1B: 2 model chunks per rank, torchtitan's default");
    if (chunks < 2 || f.layers % (d.pp * chunks) != 0) {
      return r.Error(
          "parallelism.pipeline_parallel_layers_per_stage",
          absl::StrFormat("%d chunks per rank do not split %d layers over %d ranks evenly", chunks, f.layers, d.pp));
    }
    return absl::StrFormat(" --num-layers-per-virtual-pipeline-stage %d", f.layers / (d.pp * chunks));
  }
  return r.Error("parallelism.pipeline_parallel_schedule",
                 absl::StrFormat("\"%s\": not modelled (hetsim runs 1F1B, GPipe and Interleaved1F1B)", s));
}

// What the flavor's train spec and attention allow, and its experts' layout as Megatron flags: torchtitan's
// expert mesh (parallel_dims.py) puts ep x etp ranks in dp_shard x cp x tp, etp 1 or TP (the experts not split
// by TP, or split as the dense MLP), as Megatron's MoE parallel folding does; with ep 1 the experts are
// TP-sharded as the dense MLP (Megatron's default ETP). Notes what the flavor prices otherwise.
absl::StatusOr<std::string> TitanModelChecks(TomlReader& r, const TitanModel& m, const Degrees& d, const Batch& b,
                                             std::vector<std::string>& notes) {
  if (!m.pipelines && d.pp > 1) {
    return r.Error("parallelism.pipeline_parallel_degree",
                   absl::StrFormat("%d: torchtitan's %s train spec has no pipelining_fn (torchtitan refuses pipeline "
                                   "parallelism for it)",
                                   d.pp, m.model));
  }
  if (m.attention_block > 0 && b.seq > m.attention_block) {
    return r.Error("model.flavor",
                   absl::StrFormat("\"%s\": iRoPE's chunked attention (three of four layers attend within blocks of "
                                   "%d tokens) at seq_len %d is not modelled (a shorter seq_len, or the flavor without "
                                   "_irope, is)",
                                   m.flavor, m.attention_block, b.seq));
  }
  if (m.attention_block > 0) {
    notes.push_back(absl::StrFormat(
        "%s: iRoPE's chunked attention is causal attention at seq_len %d (not above its %d-token blocks)", m.flavor,
        b.seq, m.attention_block));
  }
  if (m.kv_lora_rank > 0) {
    notes.push_back("DeepSeek-V3's block-causal flex attention priced as causal attention over the whole sequence");
  }
  for (const std::string& n : m.notes) notes.push_back(n);
  if (m.experts == 0) return std::string();
  HETSIM_ASSIGN_OR_RETURN(const std::optional<int64_t> ep, r.Int({"parallelism.expert_parallel_degree"}));
  HETSIM_ASSIGN_OR_RETURN(const std::optional<int64_t> etp, r.Int({"parallelism.expert_tensor_parallel_degree"}));
  if (ep.value_or(1) < 1) {
    return r.Error("parallelism.expert_parallel_degree", absl::StrFormat("%d: must be >= 1", *ep));
  }
  if (ep.value_or(1) == 1) {
    if (etp.value_or(1) != 1) notes.push_back("no effect: parallelism.expert_tensor_parallel_degree without EP");
    return std::string();
  }
  if (etp.value_or(1) != 1 && *etp != d.tp) {
    return r.Error(
        "parallelism.expert_tensor_parallel_degree",
        absl::StrFormat("%d: torchtitan runs 1 or the tensor-parallel degree %d (parallel_dims.py)", *etp, d.tp));
  }
  return absl::StrFormat(" --expert-model-parallel-size %d --expert-tensor-parallel-size %d", *ep, etp.value_or(1));
}

// The model, the layout and the batch as Megatron flags: the Megatron importer lays ranks out in
// torchtitan's mesh order and prices the llama blocks; torchtitan's runtime is set on the plan after it.
std::string MegatronLine(const TitanModel& flavor, const Degrees& d, const Batch& b, bool bf16, bool float8) {
  std::string line = absl::StrFormat(
      "pretrain_gpt.py --num-layers %d --hidden-size %d --num-attention-heads %d --ffn-hidden-size %d --swiglu "
      "%s--position-embedding-type rope --normalization RMSNorm --vocab-size %d "
      "--make-vocab-size-divisible-by 1 --seq-length %d --max-position-embeddings %d --use-flash-attn "
      "--micro-batch-size %d --global-batch-size %d --tensor-model-parallel-size %d --pipeline-model-parallel-size %d "
      "--context-parallel-size %d",
      flavor.layers, flavor.dim, flavor.heads, flavor.ffn, flavor.tied ? "" : "--untie-embeddings-and-output-weights ",
      flavor.vocab, b.seq, b.seq, b.micro, b.global, d.tp, d.pp, d.cp);
  absl::StrAppend(&line, OtherTitanModelFlags(flavor));
  if (flavor.kv_heads != flavor.heads)
    absl::StrAppend(&line, " --group-query-attention --num-query-groups ", flavor.kv_heads);
  if (bf16) absl::StrAppend(&line, " --bf16");
  if (float8) absl::StrAppend(&line, " --fp8-format hybrid");
  if (d.tp > 1) absl::StrAppend(&line, " --sequence-parallel");  // torchtitan's TP plan shards the norms' sequence
  return line;
}

// torchtitan's runtime on the imported plan.
// What torchtitan's kernels and recipes do (docs/cost-model.md, "PyTorch-native kernels"): eager ops
// unless compiled, the per-op checkpointing policy, Float8Linear's dynamic casts, PyTorch's async TP.
struct TorchtitanKernels {
  bool compiled = false, op_sac = false, float8 = false;
};

void SetTorchtitanRuntime(const Degrees& d, bool fp32_reduce, bool async_tp, const TorchtitanKernels& k,
                          v1::Plan& plan) {
  // torchtitan's runtime: FSDP2 shards parameters, gradients and optimizer state over the shard
  // degree (and CP), prefetching the next block's gather; gradients reduce-scattered per block as the
  // backward produces them, in FP32 by default; pipeline sends are non-blocking; no asynchronous
  // input-gradient reduction in TP (async TP, when on, overlaps both passes' TP collectives).
  const bool fsdp = d.shard > 1 || d.cp > 1;
  for (v1::Stage& st : *plan.mutable_stages()) st.set_zero_stage(fsdp ? 3 : 0);
  plan.set_zero3_prefetch(fsdp);
  plan.set_zero3_lock_step(fsdp);  // FSDP2 gathers each block as the rank reaches it, one order, one stream
  plan.set_overlap_param_gather(false);
  plan.set_overlap_grad_reduce(d.Dp() * d.cp > 1);
  plan.set_grad_reduce_in_fp32(fp32_reduce);
  plan.set_tp_backward_overlap(false);
  plan.set_tp_comm_overlap(async_tp && d.tp > 1);
  plan.set_blocking_p2p(false);
  if (!fsdp && d.replicate > 1) plan.set_grad_bucket_bytes(25 << 20);  // DDP's bucket_cap_mb
  plan.set_eager_kernels(!k.compiled);
  plan.set_op_selective_recompute(k.op_sac);
  plan.set_fp8_dynamic_casts(k.float8);
  plan.set_pytorch_async_tp(async_tp && d.tp > 1);
  plan.set_attention_repeats_kv(true);  // torchtitan's Llama repeats K and V before SDPA
  plan.set_pytorch_context_parallel(true);
  plan.set_flash_attention_2(true);  // SDPA's flash backend: FlashAttention-2's kernels
}

// Whether the blocks are checkpointed with torchtitan's per-op policy (selective, option "op").
absl::StatusOr<bool> PerOpCheckpointing(TomlReader& r) {
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> mode, r.String({"activation_checkpoint.mode"}));
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> option, r.String({"activation_checkpoint.selective_ac_option"}));
  return mode.value_or("selective") == "selective" && option == "op";
}

// Context parallelism's K/V exchange: torchtitan's `allgather` rotater (the default) is PyTorch's ring
// attention with an all-gather (pytorch_context_parallel); `alltoall` passes K/V around the ring.
absl::Status SetCpRotation(TomlReader& r, const Degrees& d, v1::Plan& plan) {
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> rotate, r.String({"parallelism.context_parallel_rotate_method",
                                                                       "experimental.context_parallel_rotate_method"}));
  const std::string method = rotate.value_or("allgather");
  if (method != "allgather" && method != "alltoall") {
    return r.Error("parallelism.context_parallel_rotate_method",
                   absl::StrFormat("\"%s\" is not allgather or alltoall", method));
  }
  if (d.cp > 1) plan.set_cp_comm_type(method == "allgather" ? v1::CP_COMM_ALL_GATHER : v1::CP_COMM_P2P);
  return absl::OkStatus();
}

void AddKernelNotes(const TorchtitanKernels& k, bool async_tp, bool fp8_gather, std::vector<std::string>& notes) {
  if (async_tp) notes.push_back("async TP: PyTorch's micro-pipelined TP collectives of the forward (pytorch_async_tp)");
  if (k.float8) {
    notes.push_back(
        "float8 linears: the blocks' linears in FP8 (dtype FP8) with dynamic tensorwise casts (fp8_dynamic_casts)");
  }
  if (fp8_gather) notes.push_back("enable_fsdp_float8_all_gather: not modelled; parameters are gathered in BF16");
  if (k.compiled) notes.push_back("torch.compile: the blocks' elementwise ops fused (eager_kernels off)");
}

// OK when `root` holds one of torchtitan's JobConfig sections (torchtitan/config/job_config.py). Every
// key has a default in torchtitan, so an empty file (or one of other tools' tables only) would import
// as the debug model: refused, it is not a training config.
absl::Status CheckTorchtitanTables(const toml::table& root, absl::string_view source) {
  static constexpr const char* kSections[] = {"job",
                                              "profiling",
                                              "metrics",
                                              "model",
                                              "optimizer",
                                              "lr_scheduler",
                                              "training",
                                              "parallelism",
                                              "checkpoint",
                                              "activation_checkpoint",
                                              "compile",
                                              "float8",
                                              "mx",
                                              "quantize",
                                              "comm",
                                              "memory_estimation",
                                              "fault_tolerance",
                                              "experimental",
                                              "validation"};
  for (const char* section : kSections) {
    if (root.contains(section)) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: no torchtitan table ([model], [training], [parallelism], [job], ...): not a torchtitan training config "
      "(an empty file?)",
      source));
}

// torchft's semi-synchronous training (torchtitan's fault_tolerance.semi_sync_method: DiLoCo or local
// SGD, torchtitan/components/ft): the replicas train apart and sync every sync_steps steps.
absl::Status RefuseSemiSynchronous(TomlReader& r) {
  HETSIM_ASSIGN_OR_RETURN(const bool fault_tolerant, r.Bool({"fault_tolerance.enable"}));
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> semi_sync, r.String({"fault_tolerance.semi_sync_method"}));
  if (!fault_tolerant || !semi_sync || semi_sync->empty()) return absl::OkStatus();
  return r.Error("fault_tolerance.semi_sync_method",
                 absl::StrFormat("\"%s\": torchft's semi-synchronous training (DiLoCo or local SGD) syncs the "
                                 "replicas every fault_tolerance.sync_steps steps, not every step; not modelled "
                                 "(hetsim reduces the gradients every iteration)",
                                 *semi_sync));
}

// torchtitan's configs are Python since 2026-02 (pytorch/torchtitan 9810191, "Config System Refactor: TOML to Python
// Dataclass Registry"): a function returning Trainer.Config. hetsim runs no Python; the refusal says how to render one
// as the TOML this importer reads (scripts/torchtitan_config.py reads it with Python's ast, running nothing).
absl::Status RefusePythonConfig(absl::string_view text, absl::string_view source) {
  const bool python =
      absl::EndsWith(source, ".py") || (absl::StrContains(text, "Trainer.Config") && absl::StrContains(text, "\ndef "));
  if (!python) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: a torchtitan Python config (a function returning Trainer.Config, torchtitan's format since 2026-02), not "
      "a TOML job config; render the function you run (torchtitan's --config) as TOML with `python3 "
      "scripts/torchtitan_config.py %s FUNCTION > job.toml` (Python's ast reads the file; nothing is run; a config "
      "derived from another file's function needs --with THAT_FILE), then import job.toml",
      source, source));
}

}  // namespace

absl::StatusOr<TorchtitanImport> ImportTorchtitan(absl::string_view toml_text, const v1::Cluster& cluster,
                                                  const MegatronImportRequest& request, absl::string_view source) {
  HETSIM_RETURN_IF_ERROR(RefusePythonConfig(toml_text, source));
  toml::table root;
  try {
    // absl::string_view is not std::string_view in Debian's Abseil.
    root = toml::parse(std::string_view(toml_text.data(), toml_text.size()), std::string(source));
  } catch (const toml::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrFormat("%s:%d:%d: not TOML: %s", source, e.source().begin.line,
                                                      e.source().begin.column, e.description()));
  }
  HETSIM_RETURN_IF_ERROR(CheckTorchtitanTables(root, source));
  TomlReader r(root, source);
  TorchtitanImport out;
  HETSIM_RETURN_IF_ERROR(RefuseSemiSynchronous(r));
  HETSIM_ASSIGN_OR_RETURN(const TitanModel flavor, ReadFlavor(r, out.notes));
  HETSIM_ASSIGN_OR_RETURN(Degrees d, ReadDegrees(r));
  HETSIM_ASSIGN_OR_RETURN(MegatronImportRequest placed, PlaceWorld(r, d, cluster, request));
  HETSIM_ASSIGN_OR_RETURN(const Batch b, ReadBatch(r, d));
  HETSIM_ASSIGN_OR_RETURN(const std::string model_flags, TitanModelChecks(r, flavor, d, b, out.notes));
  HETSIM_ASSIGN_OR_RETURN(const std::string recompute, RecomputeFlags(r, out.notes));
  HETSIM_ASSIGN_OR_RETURN(const std::string schedule_flags, ScheduleFlags(r, d, flavor, out.notes));
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> param_dtype, r.String({"training.mixed_precision_param"}));
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> reduce_dtype, r.String({"training.mixed_precision_reduce"}));
  HETSIM_ASSIGN_OR_RETURN(std::vector<std::string> converters, r.Strings("model.converters"));
  HETSIM_ASSIGN_OR_RETURN(const bool float8_2024,
                          r.Bool({"float8.enable_float8_linear", "training.enable_float8_linear"}));
  HETSIM_ASSIGN_OR_RETURN(const bool async_tp, r.Bool({"parallelism.enable_async_tensor_parallel",
                                                       "experimental.enable_async_tensor_parallel"}));
  HETSIM_ASSIGN_OR_RETURN(const bool compiled, r.Bool({"compile.enable", "training.compile"}));
  HETSIM_RETURN_IF_ERROR(r.Strings("compile.components").status());  // what is compiled: not modelled either way
  HETSIM_ASSIGN_OR_RETURN(const bool fp8_gather, r.Bool({"quantize.linear.float8.enable_fsdp_float8_all_gather",
                                                         "float8.enable_fsdp_float8_all_gather"}));
  // Which linears stay in BF16 (the output head, by default) and how scales are computed: hetsim runs
  // every GEMM of an FP8 model in FP8.
  HETSIM_RETURN_IF_ERROR(r.Strings("quantize.linear.float8.filter_fqns").status());
  HETSIM_RETURN_IF_ERROR(r.Strings("float8.filter_fqns").status());
  HETSIM_RETURN_IF_ERROR(r.Bool({"quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp",
                                 "float8.precompute_float8_dynamic_scale_for_fsdp"})
                             .status());
  HETSIM_ASSIGN_OR_RETURN(const bool cpu_offload, r.Bool({"training.enable_cpu_offload"}));
  if (cpu_offload) return r.Error("training.enable_cpu_offload", "CPU offloading of FSDP is not modelled");
  const bool float8 = float8_2024 || std::find(converters.begin(), converters.end(), "float8") != converters.end();
  const std::string dtype = param_dtype.value_or("bfloat16");
  if (dtype != "bfloat16" && dtype != "float32") {
    return r.Error("training.mixed_precision_param", absl::StrFormat("\"%s\" is not bfloat16 or float32", dtype));
  }

  const std::string line =
      MegatronLine(flavor, d, b, dtype == "bfloat16", float8) + model_flags + recompute + schedule_flags;
  HETSIM_ASSIGN_OR_RETURN(const MegatronFlags flags, ParseMegatronLaunchLine(line, source));
  HETSIM_ASSIGN_OR_RETURN(MegatronImport imported, ImportMegatron(flags, cluster, placed, source));
  out.model = std::move(imported.model);
  out.model.set_name(absl::StrCat(flavor.model, "-", flavor.flavor));
  v1::Plan& plan = out.plan;
  plan = std::move(imported.plan);
  *plan.mutable_model() = out.model;
  plan.set_name(request.name.empty()
                    ? absl::StrFormat("torchtitan-%s-tp%d-pp%d-cp%d-dp%d", out.model.name(), d.tp, d.pp, d.cp, d.Dp())
                    : request.name);
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> schedule, r.String({"parallelism.pipeline_parallel_schedule",
                                                                         "experimental.pipeline_parallel_schedule"}));
  if (d.pp > 1 && schedule.value_or("1F1B") == "GPipe") plan.set_schedule(v1::GPIPE);

  HETSIM_ASSIGN_OR_RETURN(const bool op_sac, PerOpCheckpointing(r));
  const TorchtitanKernels kernels{.compiled = compiled, .op_sac = op_sac, .float8 = float8};
  SetTorchtitanRuntime(d, dtype == "bfloat16" && reduce_dtype.value_or("float32") == "float32", async_tp, kernels,
                       plan);
  HETSIM_RETURN_IF_ERROR(SetCpRotation(r, d, plan));
  const bool fsdp = d.shard > 1 || d.cp > 1;
  if (d.replicate > 1 && d.shard > 1) {
    out.notes.push_back(absl::StrFormat(
        "HSDP (replicate %d x shard %d): priced as FSDP over all %d data-parallel ranks (hetsim shards over the "
        "whole group)",
        d.replicate, d.shard, d.Dp()));
  }
  AddKernelNotes(kernels, async_tp && d.tp > 1, fp8_gather && float8 && fsdp, out.notes);
  for (const std::string& n : imported.notes) {
    // The Megatron importer's notes name flags the user never wrote; keep those about the layout.
    if (absl::StrContains(n, "not given") || absl::StartsWith(n, "no effect") || absl::StartsWith(n, "unknown") ||
        absl::StartsWith(n, "framework "))
      continue;
    out.notes.push_back(n);
  }
  const std::vector<std::string> unread = r.Unread(), no_effect = r.NoEffect();  // Unread() sorts them
  if (!no_effect.empty())
    out.notes.push_back(absl::StrCat("no effect on an iteration's cost: ", absl::StrJoin(no_effect, ", ")));
  for (const std::string& k : unread) out.notes.push_back(absl::StrCat("not applied (unknown to this importer): ", k));

  plan.clear_framework_off();  // the Megatron import's, for Megatron's profile
  KeepBehavioursUnderFramework(v1::FSDP2_TORCHTITAN, out.model, plan);
  out.notes.push_back(
      absl::StrCat("framework FSDP2 / torchtitan",
                   plan.framework_off().empty()
                       ? ""
                       : absl::StrCat("; the config switches off ", absl::StrJoin(plan.framework_off(), ", "))));
  HETSIM_RETURN_IF_ERROR(ValidateImported(cluster, out.model, plan, source));
  return out;
}

}  // namespace hetsim::interop
