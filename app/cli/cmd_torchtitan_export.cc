// `hetsim export torchtitan PLAN --cluster C [--model M] [--out FILE]`: the torchtitan TOML job config of a
// plan (service/interop/torchtitan_export.h, docs/torchtitan.md); `export` hands its `torchtitan` form here.
#include <cstdio>
#include <string>

#include "absl/strings/str_format.h"
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

// The plan's inputs, with `model_path` as its model when given (a plan that has none of its own).
absl::StatusOr<proto::PlanInputs> LoadWithModel(const std::string& plan_path, const std::string& cluster_path,
                                                const std::string& model_path) {
  if (model_path.empty()) return proto::LoadPlanInputs(plan_path, cluster_path);
  hetsim::v1::Plan plan;
  if (absl::Status s = proto::ParseSource(proto::Source::File(plan_path), &plan); !s.ok()) return s;
  if (plan.has_model() || !plan.model_path().empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: model: the plan names its model (--model is for a plan without one)", plan_path));
  }
  plan.set_model_path(model_path);  // a plan in memory resolves it from the working directory
  proto::Source source{.is_file = false, .path = {}, .bytes = plan.SerializeAsString(), .name = plan_path};
  absl::StatusOr<proto::PlanInputs> in = proto::LoadPlanInputs(source, proto::Source::File(cluster_path));
  if (in.ok()) in->plan_path = plan_path;
  return in;
}

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
  absl::StatusOr<proto::PlanInputs> inputs = LoadWithModel(plan_path, cluster_path, model_path);
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
