// `hetsim export deepspeed PLAN --cluster C [--out FILE.json | --out-dir DIR]`: a DeepSpeed JSON config
// and the Megatron-DeepSpeed launch line that reads it (service/interop/deepspeed_export.h,
// docs/megatron.md), both written or neither.
#include <cstdio>
#include <filesystem>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "app/cli/cmd_megatron.h"
#include "proto/inputs.h"
#include "service/interop/deepspeed_export.h"

namespace hetsim::cli {
namespace {

const CommandInfo kDeepSpeedExportInfo = {
    "export", "hetsim export deepspeed PLAN --cluster C [--out FILE.json | --out-dir DIR]",
    "Writes the DeepSpeed JSON config (batch, ZeRO stage, precision) of a homogeneous plan and the\n"
    "Megatron-DeepSpeed launch line that runs it (deepspeed ... pretrain_gpt.py ... --deepspeed\n"
    "--deepspeed_config FILE.json): --out FILE.json puts the line beside it as FILE.sh, --out-dir DIR\n"
    "writes DIR/ds_config.json and DIR/launch.sh; without either both are printed. A plan DeepSpeed\n"
    "cannot run lists every difference (exit 2). `hetsim import megatron FILE.sh` reads them back.\n"
    "docs/megatron.md."};

struct OutPaths {
  std::string json, line;
};

// The two files' paths, or a usage problem.
absl::StatusOr<OutPaths> PathsOf(const std::string& out, const std::string& out_dir) {
  if (!out.empty() && !out_dir.empty()) return absl::InvalidArgumentError("--out and --out-dir: give one");
  if (!out_dir.empty()) {
    const std::filesystem::path dir(out_dir);
    return OutPaths{(dir / "ds_config.json").string(), (dir / "launch.sh").string()};
  }
  if (out.empty()) return OutPaths{};
  if (!absl::EndsWith(out, ".json")) {
    return absl::InvalidArgumentError(absl::StrFormat("--out %s: the DeepSpeed config's file ends in .json", out));
  }
  return OutPaths{out, std::filesystem::path(out).replace_extension(".sh").string()};
}

int DeepSpeedExport(const Args& args) {
  po::options_description options("options");
  std::string format, plan_path, cluster_path, out, out_dir;
  options.add_options()("format", po::value(&format)->required(), "deepspeed")(
      "plan", po::value(&plan_path)->required(), "plan file")(
      "cluster,c", po::value(&cluster_path)->required()->value_name("C"), "cluster file")(
      "out,o", po::value(&out)->value_name("FILE.json"), "write the config here and the line beside it")(
      "out-dir", po::value(&out_dir)->value_name("DIR"), "write DIR/ds_config.json and DIR/launch.sh");
  po::positional_options_description positional;
  positional.add("format", 1).add("plan", 1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kDeepSpeedExportInfo, args, options, positional, &vm)) return *exit;
  absl::StatusOr<OutPaths> paths = PathsOf(out, out_dir);
  if (!paths.ok()) return UsageError(kDeepSpeedExportInfo, paths.status().message());
  absl::StatusOr<proto::PlanInputs> inputs = proto::LoadPlanInputs(plan_path, cluster_path);
  if (!inputs.ok()) return ReportFailure(kDeepSpeedExportInfo, inputs.status());
  const std::string config_name =
      paths->json.empty() ? "ds_config.json" : std::filesystem::path(paths->json).filename().string();
  absl::StatusOr<interop::DeepSpeedExport> exported = interop::ExportDeepSpeed(*inputs, config_name);
  if (!exported.ok()) return ReportFailure(kDeepSpeedExportInfo, exported.status());
  absl::StatusOr<std::string> printed = interop::WriteDeepSpeedExport(*exported, config_name, paths->json, paths->line,
                                                                      {plan_path, cluster_path, inputs->model_path});
  if (!printed.ok()) return ReportFailure(kDeepSpeedExportInfo, printed.status());
  std::fputs(printed->c_str(), stdout);
  for (const std::string& note : exported->notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  return kExitOk;
}

}  // namespace

int RunExportDeepSpeed(const Args& args) {
  return RunGuarded(kDeepSpeedExportInfo, [&] { return DeepSpeedExport(args); });
}

}  // namespace hetsim::cli
