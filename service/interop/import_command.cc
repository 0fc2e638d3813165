#include "service/interop/import_command.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "proto/io.h"
#include "proto/validate_cluster.h"
#include "service/interop/megatron_flags.h"
#include "service/interop/megatron_yaml.h"
#include "service/interop/nemo_import.h"
#include "service/interop/torchtitan_import.h"

namespace hetsim::interop {
namespace {

// Launch lines, launch scripts and training configs (TOML, YAML) are kilobytes; the parsers' cost
// grows with the file, so the import reads at most this much (text inputs may otherwise be 64 MiB).
constexpr size_t kMaxConfigBytes = size_t{4} << 20;

// A launch line's file, a training config or a NeMo checkpoint's model config (nemo --model).
absl::StatusOr<std::string> ReadConfigText(const std::string& path) {
  HETSIM_ASSIGN_OR_RETURN(std::string text, proto::ReadInputFile(path, proto::InputKind::kText));
  if (text.size() > kMaxConfigBytes) {  // before the parse: yaml-cpp took 17 s and more on a 60 MB value
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d bytes is larger than 4 MiB, the limit for a launch line or training config (docs/reliability.md)", path,
        text.size()));
  }
  return text;
}

absl::StatusOr<std::string> ReadLaunchText(const ImportRequest& r) {
  if (r.file.empty()) return r.line;
  return ReadConfigText(r.file);
}

// torchtitan's notes of keys not applied, refused under --strict.
absl::Status CheckStrictNotes(const std::vector<std::string>& notes, const std::string& source) {
  std::string list;
  for (const std::string& n : notes) {
    if (absl::StartsWith(n, "not applied") || absl::StartsWith(n, "torch.compile")) {
      absl::StrAppend(&list, list.empty() ? "" : "; ", n);
    }
  }
  if (list.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s: --strict: not applied: %s", source, list));
}

// Megatron's flags not applied, refused under --strict before the import.
absl::Status CheckStrictFlags(const MegatronFlags& flags, const std::string& source) {
  if (flags.unknown.empty() && flags.not_modelled.empty()) return absl::OkStatus();
  std::string list;
  for (const auto* v : {&flags.not_modelled, &flags.unknown}) {
    for (const std::string& f : *v) absl::StrAppend(&list, list.empty() ? "" : ", ", f);
  }
  return absl::InvalidArgumentError(absl::StrFormat("%s: --strict: flags not applied: %s", source, list));
}

}  // namespace

absl::Status CheckImportRequest(const ImportRequest& r) {
  if (r.format != "megatron" && r.format != "torchtitan" && r.format != "nemo")
    return absl::InvalidArgumentError(
        absl::StrFormat("\"%s\": only megatron, torchtitan and nemo are known", r.format));
  if (r.format != "megatron" && !r.line.empty())
    return absl::InvalidArgumentError("--line: a launch line is Megatron's; give the config file");
  if (r.format == "torchtitan" && !r.model_path.empty())
    return absl::InvalidArgumentError(
        "--model: only for a launch line (megatron) or a NeMo config's checkpoint (nemo); the config describes its "
        "model");
  if (r.file.empty() == r.line.empty())
    return absl::InvalidArgumentError("give a launch-line file or --line, one of them");
  if (r.layout.nodes < 0 || r.layout.gpus_per_node < 0)
    return absl::InvalidArgumentError("--nodes, --gpus-per-node: must be > 0");
  // The plan's name: a plan whose name is not UTF-8 was written, and then refused by every command.
  if (!proto::IsValidUtf8(r.layout.name)) return absl::InvalidArgumentError("--name: not valid UTF-8");
  return absl::OkStatus();
}

absl::StatusOr<ImportResponse> ImportPlan(const ImportRequest& r) {
  HETSIM_RETURN_IF_ERROR(CheckImportRequest(r));
  ImportResponse out;
  out.source = r.file.empty() ? "--line" : r.file;
  out.files_read = {r.file, r.model_path};
  HETSIM_ASSIGN_OR_RETURN(const std::string text, ReadLaunchText(r));
  HETSIM_ASSIGN_OR_RETURN(const hetsim::v1::Cluster cluster, proto::LoadCluster(r.cluster));
  MegatronImportRequest layout = r.layout;
  if (!r.model_path.empty() && r.format != "nemo") {
    HETSIM_ASSIGN_OR_RETURN(layout.model, proto::LoadAs<hetsim::v1::Model>(r.model_path));
  }
  if (r.format == "torchtitan") {
    HETSIM_ASSIGN_OR_RETURN(TorchtitanImport imported, ImportTorchtitan(text, cluster, layout, out.source));
    if (r.strict) {
      HETSIM_RETURN_IF_ERROR(CheckStrictNotes(imported.notes, out.source));
    }
    out.plan = std::move(imported.plan);
    out.notes = std::move(imported.notes);
    return out;
  }
  MegatronImport imported;
  if (r.format == "nemo") {
    // --model: the checkpoint's model config the NeMo config is merged over (NemoBaseModel).
    std::string base_yaml;
    if (!r.model_path.empty()) {
      HETSIM_ASSIGN_OR_RETURN(base_yaml, ReadConfigText(r.model_path));
    }
    HETSIM_ASSIGN_OR_RETURN(imported,
                            ImportNemo(text, cluster, layout, out.source, NemoBaseModel{base_yaml, r.model_path}));
  } else {
    // A Megatron-LM --yaml-cfg file given for the line: the file is the whole line (megatron_yaml.h).
    MegatronYamlRead yaml{text, {}, {}, {}};
    // A .yaml or .yml file is read as YAML whatever its shape: its errors are YAML's, never "no command of the script".
    if (!r.file.empty() && (IsMegatronYaml(text) || absl::EndsWithIgnoreCase(r.file, ".yaml") ||
                            absl::EndsWithIgnoreCase(r.file, ".yml"))) {
      HETSIM_ASSIGN_OR_RETURN(yaml, MegatronYamlLine(text, out.source));
    }
    HETSIM_ASSIGN_OR_RETURN(MegatronFlags flags, ParseMegatronLaunchLine(yaml.line, out.source));
    ApplyMegatronYamlRead(yaml, flags);
    if (r.strict) {
      HETSIM_RETURN_IF_ERROR(CheckStrictFlags(flags, out.source));
    }
    HETSIM_ASSIGN_OR_RETURN(imported, ImportMegatron(flags, cluster, layout, out.source));
  }
  out.plan = std::move(imported.plan);
  out.notes = std::move(imported.notes);
  out.files_read.insert(out.files_read.end(), imported.files_read.begin(), imported.files_read.end());
  return out;
}

}  // namespace hetsim::interop
