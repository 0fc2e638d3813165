#include "app/cli/config_export.h"

#include <cstdio>

#include "proto/output_files.h"

namespace hetsim::cli {
namespace {

int ConfigExport(const CommandInfo& info, const Args& args, const ConfigExporter& exporter) {
  po::options_description options("options");
  std::string format, plan_path, cluster_path, model_path, out;
  options.add_options()("format", po::value(&format)->required(), "the tool")("plan", po::value(&plan_path)->required(),
                                                                              "plan file")(
      "cluster,c", po::value(&cluster_path)->required()->value_name("C"), "cluster file")(
      "model", po::value(&model_path)->value_name("M"), "model file of a plan without one")(
      "out,o", po::value(&out)->value_name("FILE"), "write the config here");
  po::positional_options_description positional;
  positional.add("format", 1).add("plan", 1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(info, args, options, positional, &vm)) return *exit;
  absl::StatusOr<proto::PlanInputs> inputs =
      model_path.empty()
          ? proto::LoadPlanInputs(plan_path, cluster_path)
          : proto::LoadPlanInputsWithModel(proto::Source::File(plan_path), proto::Source::File(cluster_path),
                                           proto::Source::File(model_path));
  if (!inputs.ok()) return ReportFailure(info, inputs.status());
  absl::StatusOr<ExportedConfig> exported = exporter(*inputs);
  if (!exported.ok()) return ReportFailure(info, exported.status());
  if (!out.empty()) {
    if (absl::Status s = proto::WriteOutputFile(out, exported->text, {plan_path, cluster_path, inputs->model_path});
        !s.ok()) {
      return ReportFailure(info, s);
    }
  }
  std::fputs(exported->text.c_str(), stdout);
  for (const std::string& note : exported->notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  return kExitOk;
}

}  // namespace

int RunConfigExport(const CommandInfo& info, const Args& args, const ConfigExporter& exporter) {
  return RunGuarded(info, [&] { return ConfigExport(info, args, exporter); });
}

}  // namespace hetsim::cli
