// `hetsim export torchtitan PLAN --cluster C [--model M] [--out FILE]`: the torchtitan TOML job config of a
// plan (service/interop/torchtitan_export.h, docs/torchtitan.md); `export` hands its `torchtitan` form here.
#include <cstdio>
#include <string>

#include "app/cli/cli.h"
#include "app/cli/cmd_megatron.h"
#include "proto/inputs.h"
#include "proto/output_files.h"
#include "service/interop/torchtitan_export.h"

namespace hetsim::cli {
namespace {

const CommandInfo kTorchtitanExportInfo = {
    "export", "hetsim export torchtitan PLAN --cluster C [--model M] [--out FILE]",
    "Prints the torchtitan TOML job config ([model] flavor, [training] batch, seq_len and precision,\n"
    "[parallelism] degrees and schedule, [activation_checkpoint], [compile]) that runs PLAN as\n"
    "`hetsim import torchtitan` reads it back; --model gives the model of a plan that names none. A plan\n"
    "the config cannot express (a model that is not a torchtitan llama flavor, pipelines of different\n"
    "shapes, uneven stages, ZeRO-1/2, ...) lists every difference (exit 2); settings torchtitan fixes are\n"
    "notes on stderr. docs/torchtitan.md."};

int TorchtitanExport(const Args& args) {
  po::options_description options("options");
  std::string format, plan_path, cluster_path, model_path, out;
  options.add_options()("format", po::value(&format)->required(), "torchtitan")(
      "plan", po::value(&plan_path)->required(), "plan file")(
      "cluster,c", po::value(&cluster_path)->required()->value_name("C"), "cluster file")(
      "model", po::value(&model_path)->value_name("M"), "model file of a plan without one")(
      "out,o", po::value(&out)->value_name("FILE"), "write the job config here");
  po::positional_options_description positional;
  positional.add("format", 1).add("plan", 1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kTorchtitanExportInfo, args, options, positional, &vm)) return *exit;
  absl::StatusOr<proto::PlanInputs> inputs =
      model_path.empty()
          ? proto::LoadPlanInputs(plan_path, cluster_path)
          : proto::LoadPlanInputsWithModel(proto::Source::File(plan_path), proto::Source::File(cluster_path),
                                           proto::Source::File(model_path));
  if (!inputs.ok()) return ReportFailure(kTorchtitanExportInfo, inputs.status());
  absl::StatusOr<interop::TorchtitanExport> exported = interop::ExportTorchtitan(*inputs);
  if (!exported.ok()) return ReportFailure(kTorchtitanExportInfo, exported.status());
  if (!out.empty()) {
    if (absl::Status s = proto::WriteOutputFile(out, exported->toml, {plan_path, cluster_path, inputs->model_path});
        !s.ok()) {
      return ReportFailure(kTorchtitanExportInfo, s);
    }
  }
  std::fputs(exported->toml.c_str(), stdout);
  for (const std::string& note : exported->notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  return kExitOk;
}

}  // namespace

int RunExportTorchtitan(const Args& args) {
  return RunGuarded(kTorchtitanExportInfo, [&] { return TorchtitanExport(args); });
}

}  // namespace hetsim::cli
