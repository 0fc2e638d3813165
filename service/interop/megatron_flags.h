// A Megatron-LM launch line read into flags: `torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py
// --num-layers 24 --fp16 ...` (backslash-newlines, # comments and quotes as a shell reads them;
// `--flag=value` too). Tokens before the training script (the first token ending in .py) belong to
// the launcher: torchrun's --nproc_per_node and --nnodes are kept. Every Megatron flag is looked up in
// a table: modelled (it changes the plan or the model), no effect (learning rate, data, logging: an
// iteration costs the same), not modelled (it would change the cost, hetsim cannot express it yet) or
// unknown. docs/megatron.md lists the table.
#ifndef HETSIM_SERVICE_INTEROP_MEGATRON_FLAGS_H_
#define HETSIM_SERVICE_INTEROP_MEGATRON_FLAGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hetsim::interop {

enum class FlagKind { kModelled, kNoEffect, kNotModelled, kUnknown };

struct FlagValue {
  std::vector<std::string> values;  // empty for a switch
  int position = 0;                 // token index, for messages
};

// What the launch around the training script decided: the launcher and its options, the files the
// script read and wrote, and the notes of reading it. A route that re-reads the flags from elsewhere
// (--yaml-cfg: every argument from a file) keeps this whole context in one assignment.
struct LaunchContext {
  // The launcher's program ("torchrun", "deepspeed", "srun", "python"): the first word's file name;
  // empty for a line of flags alone.
  std::string launcher;
  std::string script;  // the training script's file name ("pretrain_gpt.py"); empty without one
  // A main.py whose own line gives Megatron's model flags (--num-layers; a fork's pretraining entry point,
  // LLM360's K2 `python main.py --num-layers 80 ...`), as read before a --model's flags are merged in.
  bool megatron_main = false;
  int64_t nproc_per_node = 0;  // the launcher's processes per node; 0 = not given
  int64_t nnodes = 0;          // the launcher's nodes; 0 = not given
  // The launcher's own options before the script, by name without "--" ("config_file" -> "fsdp.yaml";
  // "" for a switch): `accelerate launch`'s, read with its config (accelerate_config.h).
  std::map<std::string, std::string> options;
  // What reading a script (launch_script.h) and its launcher could not decide, one line each.
  std::vector<std::string> notes;
  // What the launcher's own defaults decided (torchrun's one node): notes of an imported plan, not
  // reasons of a refusal.
  std::vector<std::string> defaults;
  // Files read from disk besides the script (a DeepSpeed config): the import must not write over one.
  std::vector<std::string> files_read;
  // Files the script writes before it launches (a DeepSpeed config in a here document), by path.
  std::map<std::string, std::string> written_files;
  // Transformer Engine's NVTE_* variables in the launch's environment (RenderedLaunch::environment).
  std::map<std::string, std::string> environment;
  // Whether the environment sets `name` to "0" (Transformer Engine's switches default to "1").
  bool EnvironmentOff(const std::string& name) const {
    const auto it = environment.find(name);
    return it != environment.end() && it->second == "0";
  }
};

struct MegatronFlags {
  std::map<std::string, FlagValue> flags;                     // by name without the leading "--"
  std::vector<std::string> no_effect, not_modelled, unknown;  // "--lr 1e-4" as written, in order
  std::vector<std::string> renamed;  // "--activations-checkpoint-method uniform (today --recompute-method)"
  LaunchContext launch;              // the launcher, its options, the script's files and notes
  // PyTorch runs the script's own model data parallel (an Accelerate config's distributed_type FSDP or
  // MULTI_GPU): "fsdp" (its ZeRO stage is --zero-stage) or "ddp"; its runtime is PyTorch's
  // (accelerate_config.h), not Megatron's. Empty otherwise.
  std::string pytorch_runtime;
  // The line stands for a model built by code older than Megatron-Core (NeMo's legacy GPTModel, a copy of
  // Megatron-LM's pre-Core model, when a NeMo config leaves model.mcore_gpt false): priced with Megatron-LM
  // 2022's profile whatever later flags the translation wrote. Empty otherwise; the text says why.
  std::string pre_core_model;
  // Behaviours of Megatron-DeepSpeed's profile the line's DeepSpeed config switches off
  // (zero_optimization.reduce_scatter false: zero_reduce_per_rank; deepspeed_config.h).
  std::vector<std::string> deepspeed_off;

  bool Has(absl::string_view name) const { return flags.contains(std::string(name)); }
  // The single value of `name`; nullopt when absent.
  std::optional<std::string> Value(absl::string_view name) const;
  // Every value of `name` (a list flag); empty when absent.
  std::vector<std::string> Values(absl::string_view name) const {
    auto it = flags.find(std::string(name));
    return it == flags.end() ? std::vector<std::string>{} : it->second.values;
  }
};

// A file a launch line names (a DeepSpeed or Accelerate config, a --yaml-cfg file): the script's here
// document of that path, else the file relative to `source`'s folder (the path as given for "--line").
// `where` names it for messages; `from_disk` when it was read from disk. The read's error otherwise
// (NotFound when there is no such file).
struct LineFile {
  std::string text, where;
  bool from_disk = false;
};
absl::StatusOr<LineFile> ReadLineFile(const MegatronFlags& flags, const std::string& path, absl::string_view source);

// Megatron's entry points that train something other than a GPT decoder (BERT, T5, Mamba, ...): why
// hetsim does not price them ("pretrain_t5.py trains T5 (...), which hetsim does not model ..."), or
// nullopt. `script` is the file name; Megatron's `main.py` is its tasks' (fine-tuning, evaluation).
std::optional<std::string> OtherModelEntryPoint(absl::string_view script);

// The kind of a Megatron flag name (without "--").
FlagKind KindOf(absl::string_view name);

// Renders `line` as a launch script (launch_script.h: variables, arrays, if branches, here documents)
// and reads the flags of the command that runs the training script; a line without one (flags alone)
// is split as written. InvalidArgument naming `source` when a flag needs a
// value and has none, or when one flag is given twice with different values ("--fp16 ... --fp16" is
// fine; "--num-layers 24 and --num-layers 32 contradict each other").
absl::StatusOr<MegatronFlags> ParseMegatronLaunchLine(absl::string_view line, absl::string_view source);

// The flags of a command already split into words, launcher first.
absl::StatusOr<MegatronFlags> ParseMegatronWords(const std::vector<std::string>& tokens, absl::string_view source);

// Where a YAML file's problem is, for messages: "source:line:column" from yaml-cpp's mark (0-based), or
// `source` alone when the mark is unset (-1: the error of a node looked up that is not there, which has no
// place in the file).
std::string YamlPlace(absl::string_view source, int line, int column);

// Shell-like tokens of `line`: whitespace-separated, quotes group, backslash-newline joins lines, an
// unquoted # at the start of a token comments out the rest of its line.
std::vector<std::string> ShellTokens(absl::string_view line);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_MEGATRON_FLAGS_H_
