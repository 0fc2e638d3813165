// `hetsim export chakra PLAN --cluster C --out DIR [--prefix P]`: the plan's iteration as MLCommons
// Chakra execution traces, one per rank, for ASTRA-sim and other Chakra consumers (docs/chakra.md).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "app/cli/cmd_megatron.h"
#include "base/status_macros.h"
#include "proto/inputs.h"
#include "proto/resolve.h"
#include "service/chakra/export.h"
#include "service/driver/build_setup.h"
#include "sim/executor/layer_range_shards.h"
#include "sim/executor/layer_range_sync.h"
#include "sim/executor/setup.h"

namespace hetsim::cli {
namespace {

const CommandInfo kExportInfo = {
    "export", "hetsim export chakra PLAN --cluster CLUSTER --out DIR [--prefix P] [--quiet]",
    "Writes one training iteration of PLAN on CLUSTER as Chakra execution traces (schema 0.0.4, the v1.0.0\n"
    "layout of MLCommons Chakra's et_def.proto): DIR/P.<rank>.et for every GPU of the cluster (rank = global\n"
    "GPU id) and DIR/P.comm_groups.json, the communicator groups ASTRA-sim reads with\n"
    "--comm-group-configuration. COMP nodes take hetsim's compute times for the GPU type of their stage\n"
    "(tensor-parallel collectives included), boundaries are COMM_SEND/COMM_RECV pairs, gradient\n"
    "synchronisation COMM_COLL nodes. The prefix defaults to the plan file's name without extension.\n"
    "`hetsim run --chakra DIR --cluster CLUSTER` simulates them back. See docs/chakra.md."};

// The plan's export: one setup, or one per pipeline of a plan of pipelines.
absl::StatusOr<chakra::ChakraExport> ExportOf(const proto::PlanInputs& inputs) {
  constexpr network::NetworkMode kMode = network::NetworkMode::kMaxMinFair;
  if (inputs.plan.pipelines().empty()) {
    HETSIM_ASSIGN_OR_RETURN(std::unique_ptr<executor::ExecutionSetup> setup, driver::BuildSetup(inputs, kMode));
    return chakra::ExportChakra(*setup);
  }
  std::vector<std::unique_ptr<executor::ExecutionSetup>> owned;
  std::vector<const executor::ExecutionSetup*> setups;
  for (int p = 0; p < inputs.plan.pipelines_size(); ++p) {
    HETSIM_ASSIGN_OR_RETURN(std::unique_ptr<executor::ExecutionSetup> setup,
                            driver::BuildPipelineSetup(inputs, p, kMode));
    setups.push_back(setup.get());
    owned.push_back(std::move(setup));
  }
  // ZeRO-1/2: each stage's states and step shard over its ranges' groups, as `hetsim run` prices them.
  std::vector<executor::ExecutionSetup*> mutable_setups;
  for (const auto& setup : owned) mutable_setups.push_back(setup.get());
  HETSIM_RETURN_IF_ERROR(executor::ShardStatesOverRanges(mutable_setups, executor::LayerRangeGroups(setups)));
  return chakra::ExportChakraPipelines(setups);
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
  if (prefix.empty()) {
    const size_t slash = plan_path.find_last_of('/');
    prefix = plan_path.substr(slash == std::string::npos ? 0 : slash + 1);
    if (const size_t dot = prefix.find('.'); dot != std::string::npos && dot > 0) prefix.resize(dot);
  }
  if (prefix.empty() || prefix.find('/') != std::string::npos) {
    return UsageError(kExportInfo, absl::StrFormat("--prefix: \"%s\" is not a file name prefix", prefix));
  }

  absl::StatusOr<proto::PlanInputs> inputs = proto::LoadPlanInputs(plan_path, cluster_path);
  if (!inputs.ok()) return ReportFailure(kExportInfo, inputs.status());
  if (const int64_t nodes = chakra::ExportNodesLowerBound(proto::ResolvePlan(inputs->plan, plan_path));
      nodes > chakra::kMaxExportNodes) {
    return ReportFailure(kExportInfo, absl::InvalidArgumentError(absl::StrFormat(
                                          "%s: the export would hold at least %d nodes, more than %d (it is built "
                                          "whole in memory before writing); export a smaller plan",
                                          plan_path, nodes, chakra::kMaxExportNodes)));
  }
  absl::StatusOr<chakra::ChakraExport> exported = ExportOf(*inputs);
  if (!exported.ok()) return ReportFailure(kExportInfo, exported.status());
  const chakra::ChakraExport& out = *exported;
  if (absl::Status s = chakra::WriteChakraExport(out, out_dir, prefix); !s.ok()) return ReportFailure(kExportInfo, s);
  if (!vm.count("quiet")) {
    size_t nodes = 0;
    for (const auto& r : out.ranks) nodes += r.nodes.size();
    std::printf("wrote %zu rank traces (%zu nodes) and %s to %s\n", out.ranks.size(), nodes,
                chakra::CommGroupsFileName(prefix).c_str(), out_dir.c_str());
  }
  return kExitOk;
}

}  // namespace

int RunExport(const Args& args) {
  // `export megatron PLAN` has its own options (cmd_megatron.cc); every other format is Chakra's.
  if (!args.empty() && args.front() == "megatron") return RunExportMegatron(args);
  return RunGuarded(kExportInfo, [&] { return Export(args); });
}

}  // namespace hetsim::cli
