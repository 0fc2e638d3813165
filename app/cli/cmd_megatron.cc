// `hetsim import megatron` and `hetsim export megatron`: Megatron-LM launch lines to plans and back
// (service/interop/megatron_*.h, docs/megatron.md).
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "app/cli/cmd_megatron.h"
#include "base/status_macros.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/output_files.h"
#include "service/interop/import_command.h"
#include "service/interop/megatron_export.h"

namespace hetsim::cli {
namespace {

const CommandInfo kMegatronImportInfo = {
    "import",
    "hetsim import megatron LAUNCH_LINE_FILE | --line 'FLAGS' --cluster C [--model M] [--nodes N] [--island I] "
    "[--name NAME] [--strict] [--out PLAN]\n"
    "       hetsim import torchtitan CONFIG.toml --cluster C [--nodes N] [--island I] [--name NAME] [--strict] "
    "[--out PLAN]\n"
    "       hetsim import nemo CONFIG.yaml --cluster C [--model CHECKPOINT_MODEL.yaml] [--nodes N] [--island I] "
    "[--name NAME] [--out PLAN]",
    "Reads a Megatron-LM launch line (torchrun ... pretrain_gpt.py --num-layers ... as a shell reads it), a\n"
    "torchtitan training config (its TOML train_configs, llama flavors) or a NeMo 1.x config (its Hydra\n"
    "YAML, megatron_gpt_config.yaml and the launcher's), and writes the plan (model\n"
    "inline) on the cluster's island, ranks laid out as the framework does (TP innermost, then CP, DP,\n"
    "PP). Prints the plan's layout and every flag or key it did not apply: no effect on an iteration's\n"
    "cost, not modelled, unknown. --strict makes unknown and not-modelled ones an error. Contradictory\n"
    "flags are an error naming both. A DeepSpeed or Hugging Face script that builds its model from a name\n"
    "gets it from --model (a hetsim Model file); the line gives the layout, batch and ZeRO stage. A NeMo\n"
    "config that restores a checkpoint (fine-tuning, NeMo-Aligner's DPO) is merged over the checkpoint's\n"
    "model config given with --model (the .nemo file's model_config.yaml).\n"
    "docs/megatron.md, docs/frameworks.md."};

const CommandInfo kMegatronExportInfo = {
    "export", "hetsim export megatron PLAN --cluster C [--out FILE]",
    "Prints the Megatron-LM launch line (torchrun node counts and training flags) of a homogeneous plan;\n"
    "for a plan Megatron's flags cannot express, lists every difference (exit 2). docs/megatron.md."};

// Writes an imported plan (when asked) and prints its layout and the importer's notes.
absl::Status WriteImported(const interop::ImportResponse& imported, const std::string& out,
                           std::vector<std::string> inputs) {
  const hetsim::v1::Plan& plan = imported.plan;
  if (!out.empty()) HETSIM_RETURN_IF_ERROR(proto::SaveOutputFile(out, plan, std::move(inputs)));
  const hetsim::v1::Stage& s0 = plan.stages(0);
  absl::PrintF(
      "imported \"%s\": %d pipeline stages x TP %d x DP %d on island \"%s\", %s, micro-batch %d per "
      "replica, global batch %d\n",
      plan.name(), plan.stages_size(), s0.tensor_parallel(), s0.data_parallel(), s0.mesh().island(),
      hetsim::v1::Schedule_Name(plan.schedule()), plan.micro_batch_size() / s0.data_parallel(),
      plan.global_batch_size());
  for (const std::string& note : imported.notes) std::printf("  %s\n", note.c_str());
  if (!out.empty()) std::printf("wrote %s\n", out.c_str());
  return absl::OkStatus();
}

int MegatronImport(const Args& args) {
  po::options_description options("options");
  std::string cluster_path, out;
  interop::ImportRequest request;
  interop::MegatronImportRequest& layout = request.layout;
  options.add_options()("format", po::value(&request.format)->required(), "megatron")("file", po::value(&request.file),
                                                                                      "file holding the launch line")(
      "line", po::value(&request.line)->value_name("FLAGS"), "the launch line itself")(
      "cluster,c", po::value(&cluster_path)->required()->value_name("C"), "cluster file")(
      "model", po::value(&request.model_path)->value_name("M"),
      "the model of a line that builds its own (megatron), or the checkpoint's model config a NeMo config is merged "
      "over (nemo)")("nodes", po::value(&layout.nodes)->value_name("N"), "nodes (default: torchrun's --nnodes)")(
      "gpus-per-node", po::value(&layout.gpus_per_node)->value_name("G"), "default: --nproc_per_node, else the node's")(
      "island", po::value(&layout.island)->value_name("I"), "island (default: the only one)")(
      "name", po::value(&layout.name)->value_name("NAME"), "plan name")(
      "strict", "unknown and not-modelled flags are errors")("out,o", po::value(&out)->value_name("PLAN"),
                                                             "write the plan");
  po::positional_options_description positional;
  positional.add("format", 1).add("file", 1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kMegatronImportInfo, args, options, positional, &vm)) return *exit;
  request.cluster = proto::Source::File(cluster_path);
  request.strict = vm.count("strict") > 0;
  if (absl::Status s = interop::CheckImportRequest(request); !s.ok()) {
    return UsageError(kMegatronImportInfo, s.message());
  }
  if (!out.empty()) {
    if (absl::StatusOr<proto::FileFormat> f = proto::FileFormatFromPath(out); !f.ok())
      return ReportFailure(kMegatronImportInfo, f.status());
  }
  absl::StatusOr<interop::ImportResponse> imported = interop::ImportPlan(request);
  if (!imported.ok()) return ReportFailure(kMegatronImportInfo, imported.status());
  std::vector<std::string> read = imported->files_read;
  read.push_back(cluster_path);
  if (absl::Status s = WriteImported(*imported, out, std::move(read)); !s.ok()) {
    return ReportFailure(kMegatronImportInfo, s);
  }
  return kExitOk;
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
