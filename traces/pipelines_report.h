// The Report of a plan of data-parallel pipelines of different shapes (Plan.pipelines): each
// pipeline's own report (traces::BuildReport on its setup and its result with the gradient sync of the
// whole iteration, layer_range_sync.h) merged into one, every stage named by its pipeline, a
// PipelineReport per pipeline and a GradientGroupReport per layer range (docs/metrics.md).
#ifndef HETSIM_TRACES_PIPELINES_REPORT_H_
#define HETSIM_TRACES_PIPELINES_REPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "proto/hetsim.pb.h"
#include "sim/executor/layer_range_sync.h"

namespace hetsim::traces {

struct PipelineReportInput {
  std::string name;
  const executor::ExecutionSetup* setup = nullptr;
  const executor::ExecutionResult* result = nullptr;  // with the iteration's gradient sync
  v1::Report report;                                  // BuildReport of the two
};

// Whole-iteration figures: the slowest pipeline's end; throughput and model FLOPs summed over the
// pipelines; MFU over every GPU's peak; bubble ratio and eta weighted by GPUs; stages, boundaries
// and link classes of every pipeline (boundaries' stage indices into the merged stages).
v1::Report MergePipelineReports(const std::vector<PipelineReportInput>& pipelines,
                                const executor::PipelinesSyncResult& sync);

// The ZeRO stage the layer ranges of a merged report sync under (every stage of a plan of pipelines has
// the same zero_stage), 0 without ZeRO: a range then reduce-scatters its gradients and, after its
// holders' steps, all-gathers its parameters, both the range's sync.
int LayerRangeZeroStage(const v1::Report& report);

// What the ranges' sync is, for a heading: "gradient all-reduce per layer range", or under ZeRO
// "gradient reduce-scatter and parameter all-gather per layer range (ZeRO-2)".
std::string LayerRangeSyncTitle(const v1::Report& report);

// A range's holders ("<pipeline> stage <s>") joined by `separator`; MoE holders laying the experts out
// differently each with its layout (GradientGroupReport.holder_expert_layouts): "a100 stage 0 (EP 4 x ETP 1)".
std::string GradientGroupHolders(const v1::GradientGroupReport& group, std::string_view separator);

}  // namespace hetsim::traces

#endif  // HETSIM_TRACES_PIPELINES_REPORT_H_
