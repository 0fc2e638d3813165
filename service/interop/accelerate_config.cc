#include "service/interop/accelerate_config.h"

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "service/interop/megatron_yaml.h"

namespace hetsim::interop {
namespace {

// The YAML file with its name, for messages that name the key.
struct AccelerateFile {
  YAML::Node root;
  std::string where;

  absl::Status Error(absl::string_view key, absl::string_view problem) const {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s: %s", where, key, problem));
  }
  // The scalar at section.key (section "" for the top level); nullopt when absent or null.
  std::optional<std::string> Scalar(absl::string_view section, absl::string_view key) const {
    const YAML::Node parent = section.empty() ? root : root[std::string(section)];
    if (!parent.IsDefined() || !parent.IsMap()) return std::nullopt;
    const YAML::Node node = parent[std::string(key)];
    if (!node.IsDefined() || node.IsNull() || !node.IsScalar()) return std::nullopt;
    return node.Scalar();
  }
  absl::StatusOr<bool> Bool(absl::string_view section, absl::string_view key) const {
    const std::optional<std::string> v = Scalar(section, key);
    bool out = false;
    if (v && !absl::SimpleAtob(*v, &out)) {
      return Error(absl::StrCat(section, section.empty() ? "" : ".", key),
                   absl::StrFormat("\"%s\" is not true or false", *v));
    }
    return out;
  }
};

// Sets `flag` to `value` unless the line gives it (the line wins, as Accelerate's command-line options
// override its config file).
void Fold(MegatronFlags& out, const std::string& flag, const std::string& value) {
  if (!out.Has(flag))
    out.flags.emplace(flag, FlagValue{value.empty() ? std::vector<std::string>{} : std::vector{value}, 0});
}

// The config file the line names (--config_file, or the script's here document), read and parsed;
// nullopt when the line names none (Accelerate's default config lives on the machine that ran it).
absl::StatusOr<std::optional<AccelerateFile>> ReadConfig(MegatronFlags& out, absl::string_view source) {
  std::optional<std::string> path;
  for (const char* name : {"config_file", "config-file"}) {
    if (auto it = out.launch.options.find(name); it != out.launch.options.end()) path = it->second;
  }
  if (!path) return std::nullopt;
  if (path->empty()) {  // `--config_file train.py`: argparse would take the script as the config
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: accelerate launch --config_file: needs a file before the training script", source));
  }
  absl::StatusOr<LineFile> read = ReadLineFile(out, *path, source);
  if (!read.ok() && !absl::IsNotFound(read.status())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: accelerate launch --config_file %s: %s", source, *path, read.status().message()));
  }
  if (!read.ok()) {  // a path the script composes from its arguments, or a file not beside it
    out.launch.notes.push_back(absl::StrFormat(
        "accelerate launch --config_file %s: not readable (%s): the processes, precision and sharding come from "
        "the line's options; put the config where the line names it, relative to the script's folder",
        *path, read.status().message()));
    return std::nullopt;
  }
  if (read->from_disk) out.launch.files_read.push_back(read->where);
  AccelerateFile file;
  file.where = read->where;
  try {
    file.root = YAML::Load(read->text);
    HETSIM_RETURN_IF_ERROR(CheckYamlKeysOnce(file.root, file.where));
  } catch (const YAML::Exception& e) {
    return NotYaml(file.where, e);
  }
  if (!file.root.IsMap() || !file.root["distributed_type"]) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: distributed_type: required (an Accelerate config says how the run is distributed)", file.where));
  }
  return file;
}

// FSDP's sharding as a ZeRO stage: FULL_SHARD shards parameters, gradients and optimizer state (3),
// SHARD_GRAD_OP gradients and optimizer state (2), NO_SHARD nothing (DDP's all-reduce, 0). Accelerate
// writes the strategy's name or PyTorch's ShardingStrategy number (1-5); with fsdp_version 2,
// fsdp_reshard_after_forward true is FULL_SHARD and false SHARD_GRAD_OP.
absl::StatusOr<int> FsdpZeroStage(const AccelerateFile& f) {
  const std::optional<std::string> version = f.Scalar("fsdp_config", "fsdp_version");
  std::optional<std::string> strategy = f.Scalar("fsdp_config", "fsdp_sharding_strategy");
  if (version == "2") {
    HETSIM_ASSIGN_OR_RETURN(const bool reshard, f.Bool("fsdp_config", "fsdp_reshard_after_forward"));
    if (!f.Scalar("fsdp_config", "fsdp_reshard_after_forward")) return 3;  // FSDP2's default: True
    return reshard ? 3 : 2;
  }
  if (!strategy) strategy = f.Scalar("fsdp_config", "fsdp_reshard_after_forward");
  const std::string s = absl::AsciiStrToUpper(strategy.value_or("FULL_SHARD"));
  if (s == "FULL_SHARD" || s == "1") return 3;
  if (s == "SHARD_GRAD_OP" || s == "2") return 2;
  if (s == "NO_SHARD" || s == "3") return 0;
  if (s == "HYBRID_SHARD" || s == "4" || s == "HYBRID_SHARD_ZERO2" || s == "_HYBRID_SHARD_ZERO2" || s == "5") {
    return f.Error("fsdp_config.fsdp_sharding_strategy",
                   absl::StrFormat("%s (sharded within a node, replicated across nodes) is not modelled: hetsim shards "
                                   "over the whole data-parallel group",
                                   *strategy));
  }
  return f.Error("fsdp_config.fsdp_sharding_strategy",
                 absl::StrFormat("\"%s\" is not FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or HYBRID_SHARD", *strategy));
}

absl::Status FoldFsdp(const AccelerateFile& f, MegatronFlags& out) {
  HETSIM_ASSIGN_OR_RETURN(const bool offload, f.Bool("fsdp_config", "fsdp_offload_params"));
  if (offload) {
    return f.Error("fsdp_config.fsdp_offload_params",
                   "true: CPU offload of parameters and gradients is not modelled (hetsim keeps them in HBM)");
  }
  HETSIM_ASSIGN_OR_RETURN(const int stage, FsdpZeroStage(f));
  Fold(out, "zero-stage", absl::StrCat(stage));
  out.pytorch_runtime = "fsdp";
  HETSIM_ASSIGN_OR_RETURN(const bool checkpointing, f.Bool("fsdp_config", "fsdp_activation_checkpointing"));
  if (checkpointing) {  // Accelerate wraps each transformer layer in PyTorch's checkpoint_wrapper
    Fold(out, "recompute-granularity", "full");
    Fold(out, "recompute-method", "uniform");
    Fold(out, "recompute-num-layers", "1");
  }
  if (f.Scalar("fsdp_config", "fsdp_backward_prefetch") == "NO_PREFETCH") {
    out.launch.notes.push_back(
        "Accelerate config: fsdp_backward_prefetch NO_PREFETCH: priced with the next block's gather prefetched");
  }
  return absl::OkStatus();
}

// DeepSpeed under Accelerate: its JSON (deepspeed_config_file, read by the DeepSpeed reader) or the
// config's own keys.
absl::Status FoldDeepSpeed(const AccelerateFile& f, MegatronFlags& out) {
  Fold(out, "deepspeed", "");
  if (std::optional<std::string> json = f.Scalar("deepspeed_config", "deepspeed_config_file")) {
    Fold(out, "deepspeed_config", *json);
    return absl::OkStatus();
  }
  for (const char* device : {"offload_optimizer_device", "offload_param_device"}) {
    const std::optional<std::string> v = f.Scalar("deepspeed_config", device);
    if (v && *v != "none") {
      return f.Error(absl::StrCat("deepspeed_config.", device),
                     absl::StrFormat("%s: ZeRO-Offload is not modelled (hetsim keeps the state in HBM)", *v));
    }
  }
  if (std::optional<std::string> stage = f.Scalar("deepspeed_config", "zero_stage")) Fold(out, "zero-stage", *stage);
  if (std::optional<std::string> steps = f.Scalar("deepspeed_config", "gradient_accumulation_steps")) {
    Fold(out, "gradient-accumulation-steps", *steps);
  }
  return absl::OkStatus();
}

// Accelerate's ParallelismConfig (parallelism_config: dp_replicate, dp_shard, tp, cp and sp sizes,
// Accelerate 1.10 on): PyTorch's tensor and context parallelism and HSDP (replicas of a sharded group)
// are not read; a config that names sizes above 1 for them, or for a size hetsim does not know, is refused
// rather than priced as plain FSDP. Sequence parallelism on DeepSpeed's backend (sp_backend deepspeed,
// ALST's DeepSpeed-Ulysses: accelerate/parallelism_config.py, huggingface/accelerate 1.12) under a DeepSpeed
// run is Ulysses, read as --ds-sequence-parallel-size; data parallel is then the processes over it, as
// Accelerate requires (dp_replicate x dp_shard x sp = processes).
absl::Status ReadParallelismConfig(const AccelerateFile& f, MegatronFlags& out) {
  const YAML::Node section = f.root["parallelism_config"];
  if (!section.IsDefined() || !section.IsMap()) return absl::OkStatus();
  constexpr absl::string_view kPrefix = "parallelism_config_";
  for (const auto& kv : section) {
    const std::string key = kv.first.as<std::string>();
    if (!absl::EndsWith(key, "_size") || !kv.second.IsScalar() || kv.second.Scalar() == "1") continue;
    const std::string v = kv.second.Scalar();
    const std::string what(absl::StripPrefix(key, kPrefix));
    if (what == "dp_replicate_size" || what == "dp_shard_size") continue;
    if (what == "sp_size") {
      const std::string backend = f.Scalar("parallelism_config", "parallelism_config_sp_backend").value_or("deepspeed");
      const std::string type = absl::AsciiStrToUpper(f.Scalar("", "distributed_type").value_or(""));
      if (backend == "deepspeed" && type == "DEEPSPEED") {
        Fold(out, "ds-sequence-parallel-size", v);
        continue;
      }
      return f.Error(absl::StrCat("parallelism_config.", key),
                     absl::StrFormat("%s: sequence parallelism on backend %s under %s is not read (hetsim reads "
                                     "DeepSpeed-Ulysses, sp_backend deepspeed under distributed_type DEEPSPEED)",
                                     v, backend, type));
    }
    if (what == "tp_size" || what == "cp_size") {
      return f.Error(
          absl::StrCat("parallelism_config.", key),
          absl::StrFormat("%s: Accelerate's tensor or context parallelism (PyTorch DTensor) is not read", v));
    }
    return f.Error(absl::StrCat("parallelism_config.", key),
                   absl::StrFormat("%s: a parallelism hetsim does not read", v));
  }
  const std::optional<std::string> replicate = f.Scalar("parallelism_config", "parallelism_config_dp_replicate_size");
  const std::optional<std::string> shard = f.Scalar("parallelism_config", "parallelism_config_dp_shard_size");
  if (replicate && *replicate != "1" && shard && *shard != "1") {
    return f.Error("parallelism_config.parallelism_config_dp_replicate_size",
                   absl::StrFormat("%s replicas of a %s-way shard (HSDP) is not modelled: hetsim shards over the "
                                   "whole data-parallel group",
                                   *replicate, *shard));
  }
  return absl::OkStatus();
}

// num_machines and num_processes (all machines' processes), the line's options first.
absl::Status FoldProcesses(const AccelerateFile* f, MegatronFlags& out, absl::string_view source) {
  // The line's option when it is a number (an expression the script leaves unrendered is noted), else the
  // config's.
  const auto value = [&](const char* option) -> std::optional<std::string> {
    int64_t n = 0;
    if (auto it = out.launch.options.find(option); it != out.launch.options.end() && !it->second.empty()) {
      if (absl::SimpleAtoi(it->second, &n)) return it->second;
      out.launch.notes.push_back(
          absl::StrFormat("accelerate launch --%s %s: not a number; the config's or the "
                          "island's count decides",
                          option, it->second));
    }
    return f == nullptr ? std::nullopt : f->Scalar("", option);
  };
  int64_t machines = 1, processes = 0;
  if (std::optional<std::string> m = value("num_machines"); m && (!absl::SimpleAtoi(*m, &machines) || machines < 1)) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: num_machines: \"%s\" is not a positive number", source, *m));
  }
  std::optional<std::string> p = value("num_processes");
  if (p && (!absl::SimpleAtoi(*p, &processes) || processes < 1)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: num_processes: \"%s\" is not a positive number", source, *p));
  }
  if (out.launch.nnodes <= 0) out.launch.nnodes = machines;
  if (processes > 0 && out.launch.nproc_per_node <= 0) {
    if (processes % machines != 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: num_processes %d over num_machines %d: not the same number on every machine", source,
                          processes, machines));
    }
    out.launch.nproc_per_node = processes / machines;
  }
  return absl::OkStatus();
}

// mixed_precision: bf16 or fp16 (the line's --mixed_precision first); no is FP32; fp8 is refused.
absl::Status FoldPrecision(const AccelerateFile* f, MegatronFlags& out, absl::string_view source) {
  // The script's own --mixed_precision first: Accelerate's examples pass it to Accelerator(mixed_precision=),
  // which overrides the launcher's (accelerator.py: the environment's value is the default only).
  std::optional<std::string> precision = out.Value("mixed_precision");
  if (precision) {
    out.launch.notes.push_back(absl::StrFormat(
        "--mixed_precision %s: the script's, as Accelerate's examples pass it to Accelerator()", *precision));
  }
  if (auto it = out.launch.options.find("mixed_precision"); !precision && it != out.launch.options.end()) {
    precision = it->second;
  }
  if (!precision && f != nullptr) precision = f->Scalar("", "mixed_precision");
  const std::string p = absl::AsciiStrToLower(precision.value_or("no"));
  if (p == "bf16" || p == "fp16") {
    Fold(out, p, "");
  } else if (p == "fp8") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: mixed_precision fp8 (Transformer Engine or MS-AMP under Accelerate): not read; hetsim prices FP8 for "
        "Megatron's and torchtitan's recipes only",
        f != nullptr ? f->where : std::string(source)));
  } else if (p != "no" && !p.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: mixed_precision: \"%s\" is not no, fp16, bf16 or fp8", source, *precision));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MegatronFlags> WithAccelerateConfig(const MegatronFlags& flags, absl::string_view source) {
  if (flags.launch.launcher != "accelerate") return flags;
  MegatronFlags out = flags;
  HETSIM_ASSIGN_OR_RETURN(const std::optional<AccelerateFile> file, ReadConfig(out, source));
  const AccelerateFile* f = file ? &*file : nullptr;
  if (f == nullptr && !out.launch.options.contains("config_file") && !out.launch.options.contains("config-file")) {
    out.launch.notes.push_back(
        "accelerate launch without --config_file: Accelerate's default config (on the machine that ran it) is not "
        "known; the processes, precision and sharding come from the line's options");
  } else if (f != nullptr) {
    HETSIM_RETURN_IF_ERROR(ReadParallelismConfig(*f, out));
    const std::string type = absl::AsciiStrToUpper(f->Scalar("", "distributed_type").value_or(""));
    if (type == "FSDP") {
      HETSIM_RETURN_IF_ERROR(FoldFsdp(*f, out));
    } else if (type == "DEEPSPEED") {
      HETSIM_RETURN_IF_ERROR(FoldDeepSpeed(*f, out));
    } else if (type == "MULTI_GPU") {
      out.pytorch_runtime = "ddp";
    } else if (type != "NO") {
      return f->Error("distributed_type",
                      absl::StrFormat("%s: not read (hetsim reads NO, MULTI_GPU, FSDP and DEEPSPEED runs)", type));
    }
    out.launch.notes.push_back(absl::StrFormat("Accelerate config %s read (distributed_type %s)", f->where, type));
  }
  HETSIM_RETURN_IF_ERROR(FoldProcesses(f, out, source));
  HETSIM_RETURN_IF_ERROR(FoldPrecision(f, out, source));
  HETSIM_RETURN_IF_ERROR(FoldTrainerArguments(out));
  return out;
}

void SetAcceleratePyTorchRuntime(bool ddp, int64_t data_parallel, hetsim::v1::Plan& plan,
                                 std::vector<std::string>& notes) {
  bool sharded_params = false;
  for (const hetsim::v1::Stage& st : plan.stages()) sharded_params = sharded_params || st.zero_stage() == 3;
  plan.set_zero3_prefetch(sharded_params);  // FSDP's backward_prefetch / FSDP2's implicit prefetch
  // Every rank issues each unit's all-gather as it reaches it, in one order on one stream (docs/heterogeneous.md).
  plan.set_zero3_lock_step(sharded_params);
  plan.set_overlap_param_gather(false);
  // FSDP reduce-scatters (NO_SHARD: all-reduces) each wrapped block's gradients in its post-backward
  // hook while earlier blocks' backwards run; in the mixed precision's type, Accelerate's reduce_dtype
  // (accelerate/utils/dataclasses.py, FullyShardedDataParallelPlugin.set_mixed_precision).
  plan.set_overlap_grad_reduce(data_parallel > 1);
  plan.set_grad_reduce_in_fp32(ddp);                                   // DDP under autocast: FP32 gradients
  if (ddp && data_parallel > 1) plan.set_grad_bucket_bytes(25 << 20);  // DDP's bucket_cap_mb
  plan.set_tp_backward_overlap(false);
  plan.set_blocking_p2p(false);
  plan.set_eager_kernels(true);      // a Hugging Face model's PyTorch ops, uncompiled
  plan.set_flash_attention_2(true);  // attn_implementation "sdpa", Transformers' default: SDPA's flash backend
  notes.push_back(ddp ? "Accelerate DDP: PyTorch DDP on the script's model, priced with torchtitan's PyTorch profile "
                        "(eager kernels, SDPA flash attention), FP32 gradients all-reduced in 25 MiB buckets"
                      : "Accelerate FSDP: PyTorch FSDP on the script's model, priced with torchtitan's PyTorch profile "
                        "(eager kernels, SDPA flash attention, per-block gradient reduce-scatter, next block "
                        "prefetched) and gradients reduced in the mixed precision's type (Accelerate's reduce_dtype)");
}

namespace {
// The Trainer's own runtime under torchrun (TrainingArguments: --fsdp "full_shard auto_wrap", its options
// full_shard, shard_grad_op, hybrid_shard, no_shard, offload, auto_wrap; transformers' Trainer hands them to
// Accelerate's FullyShardedDataParallelPlugin): FSDP as an Accelerate config's FULL_SHARD (3) or
// SHARD_GRAD_OP (2); without --fsdp, DDP over its processes. A line of DeepSpeed's, or one whose Accelerate
// config set the runtime, is left as it is; so is a line without the Trainer's batch argument (not the Trainer).
absl::Status FoldTrainerRuntime(MegatronFlags& out) {
  if (!out.pytorch_runtime.empty() || out.Has("deepspeed") || out.Has("deepspeed_config") ||
      out.launch.launcher == "deepspeed" || out.launch.launcher == "accelerate" ||
      !out.Has("per_device_train_batch_size")) {
    return absl::OkStatus();
  }
  if (!out.Has("fsdp")) {
    out.pytorch_runtime = "ddp";
    out.launch.notes.push_back("the Trainer's arguments without --fsdp or --deepspeed: PyTorch DDP over its processes");
    return absl::OkStatus();
  }
  const std::string written = absl::StrJoin(out.Values("fsdp"), " ");
  int stage = -1;
  for (absl::string_view option : absl::StrSplit(absl::AsciiStrToLower(written), ' ', absl::SkipEmpty())) {
    if (option == "offload" || option == "hybrid_shard" || option == "_hybrid_shard_zero2") {
      return absl::InvalidArgumentError(
          absl::StrFormat("--fsdp %s: the Trainer's FSDP option %s is not modelled (%s)", written, option,
                          option == "offload" ? "hetsim keeps parameters and gradients in HBM"
                                              : "replicas of a sharded group, HSDP, are not read"));
    }
    if (option == "full_shard") stage = 3;
    if (option == "shard_grad_op") stage = 2;
    if (option == "no_shard") stage = 0;
  }
  if (stage < 0) return absl::OkStatus();  // --fsdp "" or only auto_wrap: the Trainer does not shard
  Fold(out, "zero-stage", absl::StrCat(stage));
  out.pytorch_runtime = "fsdp";
  std::erase_if(out.unknown, [](const std::string& u) { return absl::StartsWith(u, "--fsdp "); });
  out.launch.notes.push_back(
      absl::StrFormat("--fsdp %s: the Trainer's PyTorch FSDP, read as an Accelerate FSDP config's sharding "
                      "(ZeRO stage %d)",
                      written, stage));
  return absl::OkStatus();
}
}  // namespace

// The Hugging Face Trainer's batch arguments (TrainingArguments), as Megatron's batch flags; its
// --gradient_checkpointing (every decoder layer's activations recomputed, Transformers'
// gradient_checkpointing_enable) as the 2021 --checkpoint-activations; DeepSpeed-Chat's --zero_stage N
// (applications/DeepSpeed-Chat dschat/utils/ds_utils.py, get_train_ds_config) as --zero-stage.
absl::Status FoldTrainerArguments(MegatronFlags& out) {
  const std::tuple<const char*, const char*, const char*> names[] = {
      {"per_device_train_batch_size", "micro-batch-size", "the Trainer's"},
      {"gradient_accumulation_steps", "gradient-accumulation-steps", "the Trainer's"},
      {"zero_stage", "zero-stage", "DeepSpeed-Chat's"}};
  const auto read = [&out](const char* name) {  // read now: not also "unknown (ignored)"
    const std::string written = absl::StrCat("--", name);
    std::erase_if(out.unknown,
                  [&](const std::string& u) { return u == written || absl::StartsWith(u, written + " "); });
  };
  for (const auto& [hf, megatron, whose] : names) {
    const std::optional<std::string> v = out.Value(hf);
    if (!v || out.Has(megatron)) continue;
    out.flags.emplace(megatron, FlagValue{{*v}, 0});
    out.launch.notes.push_back(absl::StrFormat("--%s %s: %s, read as --%s", hf, *v, whose, megatron));
    read(hf);
  }
  HETSIM_RETURN_IF_ERROR(FoldTrainerRuntime(out));
  if (!out.Has("gradient_checkpointing")) return absl::OkStatus();
  const std::string v = absl::AsciiStrToLower(out.Value("gradient_checkpointing").value_or("true"));
  read("gradient_checkpointing");
  if (v != "true" && v != "1") return absl::OkStatus();
  out.flags.try_emplace("checkpoint-activations", FlagValue{{}, 0});
  out.launch.notes.push_back(
      "--gradient_checkpointing: every layer's activations recomputed, read as "
      "--checkpoint-activations");
  return absl::OkStatus();
}

}  // namespace hetsim::interop
