// `hetsim export nemo PLAN --cluster C [--model M] [--out FILE.yaml]`: the NeMo training config (YAML) of a
// plan (service/interop/nemo_export.h, docs/megatron.md); `export` hands its `nemo` form here.
#include <cstdio>
#include <string>

#include "app/cli/cli.h"
#include "app/cli/cmd_megatron.h"
#include "proto/inputs.h"
#include "proto/output_files.h"
#include "service/interop/nemo_export.h"

namespace hetsim::cli {
namespace {

const CommandInfo kNemoExportInfo = {
    "export", "hetsim export nemo PLAN --cluster C [--model M] [--out FILE.yaml]",
    "Prints the NeMo training config (the YAML of NeMo's megatron_gpt_config.yaml: trainer devices, num_nodes\n"
    "and precision; model parallel sizes, virtual pipeline, sequence parallel, batch, the model's shape,\n"
    "activation recomputation, the distributed optimizer, overlaps, FP8) that runs PLAN as `hetsim import\n"
    "nemo` reads it back; --model gives the model of a plan that names none. A plan NeMo's config cannot\n"
    "express (pipelines of different shapes, mixed replica groups, stages that differ, an uneven split,\n"
    "ZeRO-2/3, ...) lists every difference (exit 2, no file); settings NeMo's runtime fixes are notes on\n"
    "stderr. docs/megatron.md."};

int NemoExport(const Args& args) {
  po::options_description options("options");
  std::string format, plan_path, cluster_path, model_path, out;
  options.add_options()("format", po::value(&format)->required(), "nemo")("plan", po::value(&plan_path)->required(),
                                                                          "plan file")(
      "cluster,c", po::value(&cluster_path)->required()->value_name("C"), "cluster file")(
      "model", po::value(&model_path)->value_name("M"), "model file of a plan without one")(
      "out,o", po::value(&out)->value_name("FILE.yaml"), "write the config here");
  po::positional_options_description positional;
  positional.add("format", 1).add("plan", 1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kNemoExportInfo, args, options, positional, &vm)) return *exit;
  absl::StatusOr<proto::PlanInputs> inputs =
      model_path.empty()
          ? proto::LoadPlanInputs(plan_path, cluster_path)
          : proto::LoadPlanInputsWithModel(proto::Source::File(plan_path), proto::Source::File(cluster_path),
                                           proto::Source::File(model_path));
  if (!inputs.ok()) return ReportFailure(kNemoExportInfo, inputs.status());
  absl::StatusOr<interop::NemoExport> exported = interop::ExportNemo(*inputs);
  if (!exported.ok()) return ReportFailure(kNemoExportInfo, exported.status());
  if (!out.empty()) {
    if (absl::Status s = proto::WriteOutputFile(out, exported->yaml, {plan_path, cluster_path, inputs->model_path});
        !s.ok()) {
      return ReportFailure(kNemoExportInfo, s);
    }
  }
  std::fputs(exported->yaml.c_str(), stdout);
  for (const std::string& note : exported->notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  return kExitOk;
}

}  // namespace

int RunExportNemo(const Args& args) {
  return RunGuarded(kNemoExportInfo, [&] { return NemoExport(args); });
}

}  // namespace hetsim::cli
