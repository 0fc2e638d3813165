#include "service/interop/deepspeed_config.h"

#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace hetsim::interop {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

const Value* Find(const Struct& s, absl::string_view key) {
  auto it = s.fields().find(std::string(key));
  return it == s.fields().end() ? nullptr : &it->second;
}

const Struct* Section(const Struct& s, absl::string_view key) {
  const Value* v = Find(s, key);
  return v != nullptr && v->has_struct_value() ? &v->struct_value() : nullptr;
}

// A whole number at `key` ("auto", as Hugging Face's integration writes, is left to the flags).
absl::StatusOr<std::optional<int64_t>> WholeNumber(const Struct& s, absl::string_view key, absl::string_view path,
                                                   int64_t min, absl::string_view source, DeepSpeedConfig& out) {
  const Value* v = Find(s, key);
  if (v == nullptr) return std::nullopt;
  if (v->has_string_value() && v->string_value() == "auto") {
    out.notes.push_back(absl::StrFormat("%s: \"auto\": left to the launch line's flags", path));
    return std::nullopt;
  }
  const double d = v->has_number_value() ? v->number_value() : NAN;
  if (!(d >= static_cast<double>(min) && d <= INT32_MAX && std::floor(d) == d)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s: must be a whole number of at least %d", source, path, min));
  }
  return static_cast<int64_t>(d);
}

bool Enabled(const Struct& s, absl::string_view key) {
  const Struct* section = Section(s, key);
  const Value* enabled = section == nullptr ? nullptr : Find(*section, "enabled");
  return enabled != nullptr && enabled->has_bool_value() && enabled->bool_value();
}

// ZeRO-Offload and ZeRO-Infinity keep the optimizer state or the parameters in host memory or on NVMe
// and move them over PCIe every step: priced without it, a run that fits only offloaded would be out
// of memory and its time that of another run (torchtitan's CPU offload is refused alike).
absl::Status RefuseOffload(const Struct& zero, absl::string_view key, absl::string_view source) {
  const Struct* offload = Section(zero, key);
  const Value* device = offload == nullptr ? nullptr : Find(*offload, "device");
  if (device != nullptr && device->has_string_value() && device->string_value() != "none") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: zero_optimization.%s.device \"%s\": ZeRO-Offload is not modelled (hetsim keeps the optimizer state "
        "and the parameters in GPU memory); set it to \"none\" to price the run without offload",
        source, key, device->string_value()));
  }
  return absl::OkStatus();
}

// One value the config sets into the flags: absent there, it is added; equal, nothing; else both named.
absl::Status Fold(MegatronFlags& flags, absl::string_view flag, int64_t value, absl::string_view key,
                  absl::string_view source) {
  const std::string text = absl::StrCat(value);
  auto it = flags.flags.find(std::string(flag));
  if (it == flags.flags.end()) {
    flags.flags.emplace(std::string(flag), FlagValue{{text}, 0});
    return absl::OkStatus();
  }
  if (it->second.values.size() == 1 && it->second.values[0] == text) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: --%s %s and the DeepSpeed config's %s %d contradict each other", source, flag,
                      absl::StrJoin(it->second.values, " "), key, value));
}

}  // namespace

absl::StatusOr<DeepSpeedConfig> ParseDeepSpeedConfig(absl::string_view json, absl::string_view source) {
  Struct root;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  // Protobuf 3.21 has a Status of its own.
  if (auto s = google::protobuf::util::JsonStringToMessage(std::string(json), &root, options); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: not a JSON object: %s", source, std::string(s.message())));
  }
  DeepSpeedConfig out;
  HETSIM_ASSIGN_OR_RETURN(out.train_batch_size,
                          WholeNumber(root, "train_batch_size", "train_batch_size", 1, source, out));
  HETSIM_ASSIGN_OR_RETURN(out.micro_batch_per_gpu, WholeNumber(root, "train_micro_batch_size_per_gpu",
                                                               "train_micro_batch_size_per_gpu", 1, source, out));
  HETSIM_ASSIGN_OR_RETURN(out.gradient_accumulation_steps, WholeNumber(root, "gradient_accumulation_steps",
                                                                       "gradient_accumulation_steps", 1, source, out));
  if (const Struct* zero = Section(root, "zero_optimization")) {
    HETSIM_ASSIGN_OR_RETURN(out.zero_stage, WholeNumber(*zero, "stage", "zero_optimization.stage", 0, source, out));
    if (out.zero_stage && *out.zero_stage > 3) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: zero_optimization.stage: %d is not 0, 1, 2 or 3", source, *out.zero_stage));
    }
    if (const Value* rs = Find(*zero, "reduce_scatter"); rs != nullptr) {
      if (rs->has_bool_value()) {
        out.reduce_scatter = rs->bool_value();
      } else {
        out.notes.push_back("zero_optimization.reduce_scatter: not true or false: DeepSpeed's default (true) taken");
      }
    }
    HETSIM_RETURN_IF_ERROR(RefuseOffload(*zero, "offload_optimizer", source));
    HETSIM_RETURN_IF_ERROR(RefuseOffload(*zero, "offload_param", source));
  }
  // A LoRA section (the training script's own key beside DeepSpeed's, as eth-easl/fmengine's configs/llama_lora.json):
  // only low-rank adapters are trained, so the gradients, their reduction and the optimizer state are the adapters',
  // not the model's that hetsim prices.
  for (const char* key : {"lora", "lora_config", "peft"}) {
    if (Section(root, key) != nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s: LoRA fine-tuning (only low-rank adapters trained: their gradients and optimizer state, not the "
          "model's) is not modelled; hetsim prices training every weight",
          source, key));
    }
  }
  out.fp16 = Enabled(root, "fp16");
  out.bf16 = Enabled(root, "bf16") || Enabled(root, "bfloat16");
  if (out.fp16 && out.bf16) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: fp16.enabled and bf16.enabled contradict each other", source));
  }
  if (const Struct* ac = Section(root, "activation_checkpointing")) {
    const Value* partition = Find(*ac, "partition_activations");
    if (partition != nullptr && partition->has_bool_value() && partition->bool_value()) {
      out.notes.push_back("not modelled (ignored): activation_checkpointing.partition_activations");
    }
  }
  return out;
}

absl::StatusOr<MegatronFlags> WithDeepSpeedConfig(const MegatronFlags& flags, absl::string_view source) {
  std::optional<std::string> path = flags.Value("deepspeed_config");
  if (!path) path = flags.Value("deepspeed-config");
  // A plain DeepSpeed script (no Megatron, so no --deepspeed) names its config all the same.
  if (!flags.Has("deepspeed") && !path) return flags;
  MegatronFlags out = flags;
  if (!path && flags.launch.launcher == "accelerate") return out;  // its Accelerate config gave the ZeRO stage
  if (!path) {
    out.launch.notes.push_back(
        "--deepspeed without --deepspeed_config: the batch, ZeRO stage and precision come from the flags");
    return out;
  }
  absl::StatusOr<LineFile> text = ReadLineFile(flags, *path, source);
  if (!text.ok() && !absl::IsNotFound(text.status())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: --deepspeed_config %s: %s", source, *path, text.status().message()));
  }
  if (!text.ok()) {
    // Scripts often make the config at run time from a template (sed ... > ds_config.json): the
    // flags still say the batch and, with --zero-stage, the ZeRO stage.
    out.launch.notes.push_back(absl::StrFormat(
        "--deepspeed_config %s: not written by the script and not readable (%s): the batch, ZeRO stage and "
        "precision come from the flags; put the JSON beside the script to read it",
        *path, text.status().message()));
    return out;
  }
  const std::string& json = text->text;
  const std::string& where = text->where;
  if (text->from_disk) out.launch.files_read.push_back(where);
  HETSIM_ASSIGN_OR_RETURN(const DeepSpeedConfig config, ParseDeepSpeedConfig(json, where));
  if (config.micro_batch_per_gpu) {
    HETSIM_RETURN_IF_ERROR(
        Fold(out, "micro-batch-size", *config.micro_batch_per_gpu, "train_micro_batch_size_per_gpu", source));
  }
  if (config.train_batch_size) {
    HETSIM_RETURN_IF_ERROR(Fold(out, "global-batch-size", *config.train_batch_size, "train_batch_size", source));
  }
  if (config.gradient_accumulation_steps) {
    HETSIM_RETURN_IF_ERROR(Fold(out, "gradient-accumulation-steps", *config.gradient_accumulation_steps,
                                "gradient_accumulation_steps", source));
  }
  if (config.zero_stage)
    HETSIM_RETURN_IF_ERROR(Fold(out, "zero-stage", *config.zero_stage, "zero_optimization.stage", source));
  for (const char* dtype : {"fp16", "bf16"}) {
    if ((dtype == std::string("fp16") ? config.fp16 : config.bf16) && !out.Has(dtype)) {
      out.flags.emplace(dtype, FlagValue{{}, 0});
    }
  }
  if (config.reduce_scatter == false) {
    out.deepspeed_off.emplace_back("zero_reduce_per_rank");
    out.launch.notes.push_back(
        "DeepSpeed config: zero_optimization.reduce_scatter false: ZeRO-1/2's buckets are all-reduced, not reduced "
        "once per data-parallel rank (zero_reduce_per_rank off); priced as ZeRO's reduce-scatter and all-gather");
  }
  out.launch.notes.push_back(absl::StrFormat("DeepSpeed config %s read", where));
  for (const std::string& n : config.notes) out.launch.notes.push_back(absl::StrCat("DeepSpeed config: ", n));
  return out;
}

}  // namespace hetsim::interop
