// Megatron-LM's `--yaml-cfg` file (megatron/training/yaml_arguments.py, examples/gpt3/gpt_config.yaml):
// the whole run's arguments in YAML, the model's under `language_model` (TransformerConfig's names), the
// parallelism and precision under `model_parallel` (ModelParallelConfig's), the rest at the top level
// under argparse's names. With it Megatron ignores the line's other arguments ("argparse arguments will
// be ignored", load_yaml), so hetsim reads the file as the line: each key written as the Megatron flag it
// is, for the Megatron importer's rules (docs/megatron.md, "Megatron-LM's --yaml-cfg").
#ifndef HETSIM_SERVICE_INTEROP_MEGATRON_YAML_H_
#define HETSIM_SERVICE_INTEROP_MEGATRON_YAML_H_

#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "service/interop/megatron_flags.h"

namespace hetsim::interop {

// OK when no mapping of `root` gives a key twice; else InvalidArgument naming `source`, the key's path
// and both lines. yaml-cpp keeps both entries and looks up the first, PyYAML (Megatron's --yaml-cfg,
// Accelerate's config) keeps the last, OmegaConf (NeMo) refuses the file: a key given twice is read
// differently by each, so it is refused. The walk stops at depth 256 and after 1,000,000 nodes (an
// alias bomb reaches the same nodes again and again; what it hides is not a second key).
absl::Status CheckYamlKeysOnce(const YAML::Node& root, absl::string_view source);

// Whether `yaml_text` is shaped as a --yaml-cfg file (a mapping with language_model and model_parallel) or as
// a Megatron-LM functional-test config (tests/functional_tests/test_cases/.../model_config.yaml: the flags
// under MODEL_ARGS, `--flag: value`), which MegatronYamlLine reads as the line its _run_training.sh builds.
bool IsMegatronYaml(absl::string_view yaml_text);

// The file as one launch line, "pretrain_gpt.py --num-layers 24 ...": the keys of its three parts mapped
// to their flags (a false switch and a null value write nothing; TransformerConfig's names to argparse's:
// add_bias_linear false is --disable-bias-linear, activation_func swiglu is --swiglu, num_moe_experts is
// --num-experts, ...), the other top-level scalars as --key-with-dashes when the importer knows the flag.
// InvalidArgument naming `source` and the key for malformed YAML and values that are not one word.
struct MegatronYamlRead {
  std::string line;
  // Top-level keys no Megatron flag of hetsim's table is named after (ignored, for one note).
  std::vector<std::string> unknown_keys;
  // What the reading assumed (a functional-test config's script and GPUs a node), for the import's notes.
  std::vector<std::string> notes;
  // A functional-test config's NVTE_* variables under ENV_VARS (the launch's environment, as a script's exports).
  std::map<std::string, std::string> environment;
};
absl::StatusOr<MegatronYamlRead> MegatronYamlLine(absl::string_view yaml_text, absl::string_view source);

// The reading's notes and environment added to the flags its line parsed into.
void ApplyMegatronYamlRead(const MegatronYamlRead& read, MegatronFlags& flags);

// InvalidArgument "source:line:column: not YAML: what yaml-cpp says", for the YAML readers (Megatron's, NeMo's,
// Accelerate's); a file nested past yaml-cpp's depth limit says so (yaml-cpp's own message is "bad file").
absl::Status NotYaml(absl::string_view source, const YAML::Exception& e);

// The note that lists `unknown_keys`, or "" for none.
std::string UnknownYamlKeysNote(const std::vector<std::string>& unknown_keys);

// A launch line with --yaml-cfg FILE (the file written by the script, else read relative to `source`):
// the flags the file gives, the line's launcher kept and its other flags dropped as Megatron drops them
// (noted). Other lines come back as they are.
absl::StatusOr<MegatronFlags> WithMegatronYaml(const MegatronFlags& flags, absl::string_view source);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_MEGATRON_YAML_H_
