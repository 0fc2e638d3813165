#include "service/chakra/export_command.h"

#include <memory>
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
  for (int p = 0; p < inputs.plan.pipelines_size(); ++p) {
    HETSIM_ASSIGN_OR_RETURN(
        std::unique_ptr<executor::ExecutionSetup> setup,
        driver::BuildPipelineSetup(inputs, p, kMode, nullptr, owned.empty() ? nullptr : owned.front().get()));
    setups.push_back(setup.get());
    owned.push_back(std::move(setup));
  }
  // ZeRO-1/2: each stage's states and step shard over its ranges' groups, as `hetsim run` prices them.
  std::vector<executor::ExecutionSetup*> mutable_setups;
  for (const auto& setup : owned) mutable_setups.push_back(setup.get());
  const std::vector<executor::LayerRangeGroup> ranges = executor::LayerRangeGroups(setups);
  HETSIM_RETURN_IF_ERROR(executor::CheckRangeBuckets(ranges, inputs.plan_path));
  if (!executor::RangeGathersOf(ranges).empty()) {
    // Each pass's gathers over its ranges' groups are in `hetsim run`'s pass times only; the export
    // would write ZeRO-1/2's collectives instead, so it refuses rather than differ.
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: zero_stage: 3 is not exported for a plan of pipelines (its layer ranges' parameter gathers before "
        "every forward and backward); `hetsim run` simulates it",
        inputs.plan_path));
  }
  for (const executor::LayerRangeGroup& range : ranges) {
    if (executor::ExpertBuckets(range).empty()) continue;
    // The ranges' expert reductions over their expert-data-parallel groups are not written (the export
    // writes each range's shard groups only), so it refuses rather than differ from `hetsim run`.
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: model.transformer.num_experts: an MoE model's experts are not exported for a plan of pipelines "
        "(layers %d-%d reduce their experts' gradients over %d expert-data-parallel groups of %d GPUs); `hetsim run` "
        "simulates it",
        inputs.plan_path, range.first_layer, range.first_layer + range.num_layers - 1, range.expert_groups.size(),
        range.expert_groups.front().size()));
  }
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
