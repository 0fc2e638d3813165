#include "service/chakra/export_command.h"

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "proto/resolve.h"
#include "service/driver/build_setup.h"
#include "sim/executor/layer_range_shards.h"
#include "sim/executor/layer_range_sync.h"
#include "sim/executor/setup.h"

namespace hetsim::chakra {

absl::StatusOr<std::string> ExportPrefix(const ExportRequest& request) {
  std::string prefix = request.prefix;
  if (prefix.empty()) {
    const std::string& label = request.plan.label();
    const size_t slash = label.find_last_of('/');
    prefix = label.substr(slash == std::string::npos ? 0 : slash + 1);
    if (const size_t dot = prefix.find('.'); dot != std::string::npos && dot > 0) prefix.resize(dot);
  }
  if (prefix.empty() || prefix.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrFormat("--prefix: \"%s\" is not a file name prefix", prefix));
  }
  return prefix;
}

namespace {

// Every pipeline of a plan of pipelines set up as `hetsim run` sets it up (the first builds the cluster's
// topology, the others share it), with ZeRO-3's `gathers`; replaces `owned` and `setups`.
absl::Status SetUpPipelines(const proto::PlanInputs& inputs, std::span<const executor::RangeGather> gathers,
                            std::vector<std::unique_ptr<executor::ExecutionSetup>>& owned,
                            std::vector<const executor::ExecutionSetup*>& setups) {
  constexpr network::NetworkMode kMode = network::NetworkMode::kMaxMinFair;
  std::vector<std::unique_ptr<executor::ExecutionSetup>> built;
  setups.clear();
  for (int p = 0; p < inputs.plan.pipelines_size(); ++p) {
    // On the first setup's network: the one built before, until the new first one exists.
    const executor::ExecutionSetup* network =
        !built.empty() ? built.front().get() : (owned.empty() ? nullptr : owned.front().get());
    HETSIM_ASSIGN_OR_RETURN(std::unique_ptr<executor::ExecutionSetup> setup,
                            driver::BuildPipelineSetup(inputs, p, kMode, nullptr, network, gathers));
    setups.push_back(setup.get());
    built.push_back(std::move(setup));
  }
  owned = std::move(built);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ChakraExport> ExportPlanInputs(const proto::PlanInputs& inputs, absl::string_view plan_label) {
  if (const int64_t nodes = ExportNodesLowerBound(proto::ResolvePlan(inputs.plan, plan_label));
      nodes > kMaxExportNodes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the export would hold at least %d nodes, more than %d (it is built whole in memory before writing); "
        "export a smaller plan",
        plan_label, nodes, kMaxExportNodes));
  }
  constexpr network::NetworkMode kMode = network::NetworkMode::kMaxMinFair;
  if (inputs.plan.pipelines().empty()) {
    HETSIM_ASSIGN_OR_RETURN(std::unique_ptr<executor::ExecutionSetup> setup, driver::BuildSetup(inputs, kMode));
    return ExportChakra(*setup);
  }
  std::vector<std::unique_ptr<executor::ExecutionSetup>> owned;
  std::vector<const executor::ExecutionSetup*> setups;
  HETSIM_RETURN_IF_ERROR(SetUpPipelines(inputs, {}, owned, setups));
  std::vector<executor::LayerRangeGroup> ranges = executor::LayerRangeGroups(setups);
  // ZeRO-3: every pass gathers its layers over their ranges' groups, which need every pipeline's layout:
  // the pipelines are set up again with them, as `hetsim run` sets them up (driver::SimulatePipelines), so
  // the passes' durations hold their gathers as one pipeline's ZeRO-3 passes do.
  if (const std::vector<executor::RangeGather> gathers = executor::RangeGathersOf(ranges); !gathers.empty()) {
    HETSIM_RETURN_IF_ERROR(SetUpPipelines(inputs, gathers, owned, setups));
    ranges = executor::LayerRangeGroups(setups);
  }
  // ZeRO: each stage's states and step shard over its ranges' groups, as `hetsim run` prices them.
  std::vector<executor::ExecutionSetup*> mutable_setups;
  for (const auto& setup : owned) mutable_setups.push_back(setup.get());
  HETSIM_RETURN_IF_ERROR(executor::CheckRangeBuckets(ranges, inputs.plan_path));
  HETSIM_RETURN_IF_ERROR(executor::ShardStatesOverRanges(mutable_setups, ranges));
  return ExportChakraPipelines(setups);
}

absl::StatusOr<ExportResponse> ExportChakraFiles(const ExportRequest& request) {
  ExportResponse out;
  HETSIM_ASSIGN_OR_RETURN(out.prefix, ExportPrefix(request));
  HETSIM_ASSIGN_OR_RETURN(proto::PlanInputs inputs, proto::LoadPlanInputs(request.plan, request.cluster));
  HETSIM_ASSIGN_OR_RETURN(out.exported, ExportPlanInputs(inputs, request.plan.label()));
  // No rank file over a file the export read (a folder of plans exported into itself).
  std::vector<std::string> read;
  for (const proto::Source* source : {&request.plan, &request.cluster}) {
    if (source->is_file) read.push_back(source->path);
  }
  read.push_back(inputs.model_path);
  HETSIM_RETURN_IF_ERROR(WriteChakraExport(out.exported, request.out_dir, out.prefix, std::move(read)));
  size_t nodes = 0;
  for (const auto& r : out.exported.ranks) nodes += r.nodes.size();
  out.summary = absl::StrFormat("wrote %d rank traces (%d nodes) and %s to %s\n", out.exported.ranks.size(), nodes,
                                CommGroupsFileName(out.prefix), request.out_dir);
  return out;
}

}  // namespace hetsim::chakra
