// `hetsim export chakra PLAN --cluster C --out DIR [--prefix P]`: the plan's iteration as MLCommons
// Chakra execution traces, one per rank, for ASTRA-sim and other Chakra consumers (docs/chakra.md).
#include <cstdio>
#include <string>

#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "app/cli/cmd_megatron.h"
#include "base/status_macros.h"
#include "proto/inputs.h"
#include "service/chakra/export_command.h"

namespace hetsim::cli {
namespace {

const CommandInfo kExportInfo = {
    "export",
    "hetsim export chakra PLAN --cluster CLUSTER --out DIR [--prefix P] [--quiet]\n"
    "       hetsim export megatron PLAN --cluster C [--out FILE]   (hetsim export megatron --help)\n"
    "       hetsim export deepspeed PLAN --cluster C [--out FILE.json | --out-dir DIR]\n"
    "       hetsim export torchtitan PLAN --cluster C [--model M] [--out FILE]   (hetsim export torchtitan --help)\n"
    "       hetsim export nemo PLAN --cluster C [--model M] [--out FILE.yaml]   (hetsim export nemo --help)",
    "Writes one training iteration of PLAN on CLUSTER as Chakra execution traces (schema 0.0.4, the v1.0.0\n"
    "layout of MLCommons Chakra's et_def.proto): DIR/P.<rank>.et for every GPU of the cluster (rank = global\n"
    "GPU id) and DIR/P.comm_groups.json, the communicator groups ASTRA-sim reads with\n"
    "--comm-group-configuration. COMP nodes take hetsim's compute times for the GPU type of their stage\n"
    "(tensor-parallel collectives included), boundaries are COMM_SEND/COMM_RECV pairs, gradient\n"
    "synchronisation COMM_COLL nodes. The prefix defaults to the plan file's name without extension.\n"
    "`hetsim run --chakra DIR --cluster CLUSTER` simulates them back. See docs/chakra.md.\n"
    "Also: `hetsim export megatron PLAN --cluster C [--out FILE]` (a Megatron-LM launch line) and\n"
    "`hetsim export deepspeed PLAN --cluster C [--out FILE.json | --out-dir DIR]` (a DeepSpeed config with its\n"
    "Megatron-DeepSpeed launch line), `hetsim export torchtitan ...` (a torchtitan TOML job config) and\n"
    "`hetsim export nemo ...` (a NeMo YAML training config); `hetsim export FORMAT --help` for each."};

// Writes the export `request` names (its prefix checked) and says what it wrote unless `quiet`.
absl::Status ExportAndPrint(const chakra::ExportRequest& request, bool quiet) {
  HETSIM_ASSIGN_OR_RETURN(chakra::ExportResponse exported, chakra::ExportChakraFiles(request));
  if (!quiet) std::fputs(exported.summary.c_str(), stdout);
  return absl::OkStatus();
}

int Export(const Args& args) {
  po::options_description options("options");
  std::string format, plan_path, cluster_path, out_dir, prefix;
  options.add_options()("cluster,c", po::value(&cluster_path)->required()->value_name("CLUSTER"), "cluster file")(
      "out,o", po::value(&out_dir)->required()->value_name("DIR"), "output folder")(
      "prefix", po::value(&prefix)->value_name("P"), "rank file prefix (default: the plan's name)")(
      "quiet,q", "print nothing on success")("format", po::value(&format)->required(), "chakra")(
      "plan", po::value(&plan_path)->required(), "plan file");
  po::positional_options_description positional;
  positional.add("format", 1).add("plan", 1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kExportInfo, args, options, positional, &vm)) return *exit;
  if (format != "chakra") return UsageError(kExportInfo, absl::StrFormat("\"%s\" is not a format (chakra)", format));
  chakra::ExportRequest request{.plan = proto::Source::File(plan_path),
                                .cluster = proto::Source::File(cluster_path),
                                .out_dir = out_dir,
                                .prefix = prefix};
  absl::StatusOr<std::string> checked_prefix = chakra::ExportPrefix(request);
  if (!checked_prefix.ok()) return UsageError(kExportInfo, checked_prefix.status().message());
  request.prefix = *checked_prefix;
  if (absl::Status s = ExportAndPrint(request, vm.count("quiet") > 0); !s.ok()) return ReportFailure(kExportInfo, s);
  return kExitOk;
}

}  // namespace

int RunExport(const Args& args) {
  // `export megatron`, `export deepspeed`, `export torchtitan` and `export nemo` have their own options
  // (cmd_megatron.cc, cmd_deepspeed_export.cc, cmd_torchtitan_export.cc, cmd_nemo_export.cc); every other
  // format is Chakra's.
  if (!args.empty() && args.front() == "megatron") return RunExportMegatron(args);
  if (!args.empty() && args.front() == "deepspeed") return RunExportDeepSpeed(args);
  if (!args.empty() && args.front() == "torchtitan") return RunExportTorchtitan(args);
  if (!args.empty() && args.front() == "nemo") return RunExportNemo(args);
  return RunGuarded(kExportInfo, [&] { return Export(args); });
}

}  // namespace hetsim::cli
