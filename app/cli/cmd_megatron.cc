// `hetsim import megatron` and `hetsim export megatron`: Megatron-LM launch lines to plans and back
// (service/interop/megatron_*.h, docs/megatron.md).
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"

#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "app/cli/cmd_megatron.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/output_files.h"
#include "proto/validate_cluster.h"
#include "service/interop/megatron_export.h"
#include "service/interop/megatron_flags.h"
#include "service/interop/megatron_import.h"
#include "service/interop/nemo_import.h"
#include "service/interop/torchtitan_import.h"

namespace hetsim::cli {
namespace {

// Launch lines, launch scripts and training configs (TOML, YAML) are kilobytes; the parsers' cost
// grows with the file, so the import reads at most this much (text inputs may otherwise be 64 MiB).
constexpr size_t kMaxConfigBytes = size_t{4} << 20;

const CommandInfo kMegatronImportInfo = {
    "import",
    "hetsim import megatron LAUNCH_LINE_FILE | --line 'FLAGS' --cluster C [--model M] [--nodes N] [--island I] "
    "[--name NAME] [--strict] [--out PLAN]\n"
    "       hetsim import torchtitan CONFIG.toml --cluster C [--nodes N] [--island I] [--name NAME] [--strict] "
    "[--out PLAN]\n"
    "       hetsim import nemo CONFIG.yaml --cluster C [--nodes N] [--island I] [--name NAME] [--out PLAN]",
    "Reads a Megatron-LM launch line (torchrun ... pretrain_gpt.py --num-layers ... as a shell reads it), a\n"
    "torchtitan training config (its TOML train_configs, llama flavors) or a NeMo 1.x config (its Hydra\n"
    "YAML, megatron_gpt_config.yaml and the launcher's), and writes the plan (model\n"
    "inline) on the cluster's island, ranks laid out as the framework does (TP innermost, then CP, DP,\n"
    "PP). Prints the plan's layout and every flag or key it did not apply: no effect on an iteration's\n"
    "cost, not modelled, unknown. --strict makes unknown and not-modelled ones an error. Contradictory\n"
    "flags are an error naming both. A DeepSpeed or Hugging Face script that builds its model from a name\n"
    "gets it from --model (a hetsim Model file); the line gives the layout, batch and ZeRO stage.\n"
    "docs/megatron.md, docs/frameworks.md."};

const CommandInfo kMegatronExportInfo = {
    "export", "hetsim export megatron PLAN --cluster C [--out FILE]",
    "Prints the Megatron-LM launch line (torchrun node counts and training flags) of a homogeneous plan;\n"
    "for a plan Megatron's flags cannot express, lists every difference (exit 2). docs/megatron.md."};

// Writes an imported plan (when asked) and prints its layout and the importer's notes. With `strict`,
// notes of keys not applied are an error (the Megatron path checks its flags itself, before importing).
int WriteImported(const hetsim::v1::Plan& plan, const std::vector<std::string>& notes, bool strict,
                  const std::string& source, const std::string& out, std::vector<std::string> inputs) {
  if (strict) {
    std::string list;
    for (const std::string& n : notes) {
      if (absl::StartsWith(n, "not applied") || absl::StartsWith(n, "torch.compile")) {
        absl::StrAppend(&list, list.empty() ? "" : "; ", n);
      }
    }
    if (!list.empty()) {
      return ReportFailure(kMegatronImportInfo,
                           absl::InvalidArgumentError(absl::StrFormat("%s: --strict: not applied: %s", source, list)));
    }
  }
  if (!out.empty()) {
    if (absl::Status s = proto::SaveOutputFile(out, plan, std::move(inputs)); !s.ok()) {
      return ReportFailure(kMegatronImportInfo, s);
    }
  }
  const hetsim::v1::Stage& s0 = plan.stages(0);
  absl::PrintF(
      "imported \"%s\": %d pipeline stages x TP %d x DP %d on island \"%s\", %s, micro-batch %d per "
      "replica, global batch %d\n",
      plan.name(), plan.stages_size(), s0.tensor_parallel(), s0.data_parallel(), s0.mesh().island(),
      hetsim::v1::Schedule_Name(plan.schedule()), plan.micro_batch_size() / s0.data_parallel(),
      plan.global_batch_size());
  for (const std::string& note : notes) std::printf("  %s\n", note.c_str());
  if (!out.empty()) std::printf("wrote %s\n", out.c_str());
  return kExitOk;
}

int MegatronImport(const Args& args) {
  po::options_description options("options");
  std::string format, line_file, line_text, cluster_path, model_path, out;
  interop::MegatronImportRequest request;
  options.add_options()("format", po::value(&format)->required(), "megatron")(
      "file", po::value(&line_file), "file holding the launch line")("line", po::value(&line_text)->value_name("FLAGS"),
                                                                     "the launch line itself")(
      "cluster,c", po::value(&cluster_path)->required()->value_name("C"), "cluster file")(
      "model", po::value(&model_path)->value_name("M"), "the model of a line that builds its own (megatron)")(
      "nodes", po::value(&request.nodes)->value_name("N"), "nodes (default: torchrun's --nnodes)")(
      "gpus-per-node", po::value(&request.gpus_per_node)->value_name("G"),
      "default: --nproc_per_node, else the node's")("island", po::value(&request.island)->value_name("I"),
                                                    "island (default: the only one)")(
      "name", po::value(&request.name)->value_name("NAME"), "plan name")(
      "strict", "unknown and not-modelled flags are errors")("out,o", po::value(&out)->value_name("PLAN"),
                                                             "write the plan");
  po::positional_options_description positional;
  positional.add("format", 1).add("file", 1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kMegatronImportInfo, args, options, positional, &vm)) return *exit;
  if (format != "megatron" && format != "torchtitan" && format != "nemo")
    return UsageError(kMegatronImportInfo,
                      absl::StrFormat("\"%s\": only megatron, torchtitan and nemo are known", format));
  if (format != "megatron" && !line_text.empty())
    return UsageError(kMegatronImportInfo, "--line: a launch line is Megatron's; give the config file");
  if (format != "megatron" && !model_path.empty())
    return UsageError(kMegatronImportInfo,
                      "--model: only for a launch line (megatron); the config describes its model");
  if (line_file.empty() == line_text.empty())
    return UsageError(kMegatronImportInfo, "give a launch-line file or --line, one of them");
  if (request.nodes < 0 || request.gpus_per_node < 0)
    return UsageError(kMegatronImportInfo, "--nodes, --gpus-per-node: must be > 0");
  if (!out.empty()) {
    if (absl::StatusOr<proto::FileFormat> f = proto::FileFormatFromPath(out); !f.ok())
      return ReportFailure(kMegatronImportInfo, f.status());
  }
  std::string source = line_file.empty() ? "--line" : line_file;
  if (!line_file.empty()) {
    absl::StatusOr<std::string> text = proto::ReadInputFile(line_file, proto::InputKind::kText);
    if (!text.ok()) return ReportFailure(kMegatronImportInfo, text.status());
    if (text->size() > kMaxConfigBytes) {  // before the parse: yaml-cpp took 17 s and more on a 60 MB value
      return ReportFailure(kMegatronImportInfo,
                           absl::InvalidArgumentError(absl::StrFormat(
                               "%s: %d bytes is larger than 4 MiB, the limit for a launch line or training config "
                               "(docs/reliability.md)",
                               line_file, text->size())));
    }
    line_text = *std::move(text);
  }
  absl::StatusOr<hetsim::v1::Cluster> cluster = proto::LoadCluster(cluster_path);
  if (!cluster.ok()) return ReportFailure(kMegatronImportInfo, cluster.status());
  if (!model_path.empty()) {
    absl::StatusOr<hetsim::v1::Model> model = proto::LoadAs<hetsim::v1::Model>(model_path);
    if (!model.ok()) return ReportFailure(kMegatronImportInfo, model.status());
    request.model = *std::move(model);
  }
  if (format == "nemo") {
    absl::StatusOr<interop::MegatronImport> imported = interop::ImportNemo(line_text, *cluster, request, source);
    if (!imported.ok()) return ReportFailure(kMegatronImportInfo, imported.status());
    return WriteImported(imported->plan, imported->notes, false, source, out, {line_file, cluster_path});
  }
  if (format == "torchtitan") {
    absl::StatusOr<interop::TorchtitanImport> imported =
        interop::ImportTorchtitan(line_text, *cluster, request, source);
    if (!imported.ok()) return ReportFailure(kMegatronImportInfo, imported.status());
    return WriteImported(imported->plan, imported->notes, vm.count("strict") > 0, source, out,
                         {line_file, cluster_path});
  }
  absl::StatusOr<interop::MegatronFlags> flags = interop::ParseMegatronLaunchLine(line_text, source);
  if (!flags.ok()) return ReportFailure(kMegatronImportInfo, flags.status());
  if (vm.count("strict") && (!flags->unknown.empty() || !flags->not_modelled.empty())) {
    std::string list;
    for (const auto* v : {&flags->not_modelled, &flags->unknown}) {
      for (const std::string& f : *v) absl::StrAppend(&list, list.empty() ? "" : ", ", f);
    }
    return ReportFailure(kMegatronImportInfo, absl::InvalidArgumentError(absl::StrFormat(
                                                  "%s: --strict: flags not applied: %s", source, list)));
  }
  absl::StatusOr<interop::MegatronImport> imported = interop::ImportMegatron(*flags, *cluster, request, source);
  if (!imported.ok()) return ReportFailure(kMegatronImportInfo, imported.status());
  return WriteImported(imported->plan, imported->notes, false, source, out, {line_file, cluster_path});
}

int MegatronExport(const Args& args) {
  po::options_description options("options");
  std::string format, plan_path, cluster_path, out;
  options.add_options()("format", po::value(&format)->required(), "megatron")("plan", po::value(&plan_path)->required(),
                                                                              "plan file")(
      "cluster,c", po::value(&cluster_path)->required()->value_name("C"), "cluster file")(
      "out,o", po::value(&out)->value_name("FILE"), "write the launch line here");
  po::positional_options_description positional;
  positional.add("format", 1).add("plan", 1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kMegatronExportInfo, args, options, positional, &vm)) return *exit;
  if (format != "megatron")
    return UsageError(kMegatronExportInfo, absl::StrFormat("\"%s\": only megatron is known", format));
  absl::StatusOr<proto::PlanInputs> inputs = proto::LoadPlanInputs(plan_path, cluster_path);
  if (!inputs.ok()) return ReportFailure(kMegatronExportInfo, inputs.status());
  absl::StatusOr<interop::MegatronExport> exported = interop::ExportMegatron(*inputs);
  if (!exported.ok()) return ReportFailure(kMegatronExportInfo, exported.status());
  if (!out.empty()) {
    if (absl::Status s =
            proto::WriteOutputFile(out, exported->launch_line, {plan_path, cluster_path, inputs->model_path});
        !s.ok()) {
      return ReportFailure(kMegatronExportInfo, s);
    }
  }
  std::fputs(exported->launch_line.c_str(), stdout);
  for (const std::string& note : exported->notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  return kExitOk;
}

}  // namespace

int RunImport(const Args& args) {
  return RunGuarded(kMegatronImportInfo, [&] { return MegatronImport(args); });
}

int RunExportMegatron(const Args& args) {
  return RunGuarded(kMegatronExportInfo, [&] { return MegatronExport(args); });
}

}  // namespace hetsim::cli
