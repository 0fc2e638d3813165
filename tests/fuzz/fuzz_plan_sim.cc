// libFuzzer target: a cluster, a plan (with its model inline) and optionally what-if faults, all in
// text format, separated by lines "----". They go through ValidatePlanInputs, ValidateFaults, the
// executor's setup, fault resolution, a short simulation capped by max_events and max_wall_seconds
// and the report, through the driver exactly as `hetsim run --faults` takes them. Since session 37 a valid
// plan is also priced by the planner as `hetsim validate` prices it (evaluation::PredictOwnPlan: a plan of
// pipelines' layer ranges, RangeNccl over mixed holders, ZeRO-3 gathers, expert reductions) and, when its
// export is small, exported to Chakra as `hetsim export chakra` exports it (chakra::ExportPlanInputs).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/file_format.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/resolve.h"
#include "proto/validate_faults.h"
#include "service/chakra/export.h"
#include "service/chakra/export_command.h"
#include "service/driver/resolve_faults.h"
#include "service/driver/simulate.h"
#include "service/evaluation/own_prediction.h"
#include "sim/faults/fault_set.h"

namespace {

constexpr absl::string_view kSeparator = "\n----\n";
// Exports above this lower bound of nodes are left out: about 3 KB each (service/chakra/export.h), so the
// command's own limit (2,000,000) would pass the fuzzer's 2 GB RSS limit.
constexpr int64_t kMaxFuzzExportNodes = 20'000;

// Splits off the part before the next separator; the rest stays in `contents` (empty at the end).
absl::string_view NextPart(absl::string_view& contents) {
  size_t split = contents.find(kSeparator);
  absl::string_view part = contents.substr(0, split);
  contents = split == absl::string_view::npos ? absl::string_view() : contents.substr(split + kSeparator.size());
  return part;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view contents(reinterpret_cast<const char*>(data), size);
  if (contents.find(kSeparator) == absl::string_view::npos) return 0;
  absl::string_view cluster_text = NextPart(contents);
  absl::string_view plan_text = NextPart(contents);
  absl::string_view faults_text = contents;  // empty: no faults
  hetsim::proto::PlanInputs inputs;
  inputs.cluster_path = "cluster.pbtxt";
  inputs.plan_path = "plan.pbtxt";
  using hetsim::proto::FileFormat;
  if (!hetsim::proto::ParseMessage(cluster_text, FileFormat::kText, inputs.cluster_path, &inputs.cluster).ok() ||
      !hetsim::proto::ParseMessage(plan_text, FileFormat::kText, inputs.plan_path, &inputs.plan).ok()) {
    return 0;
  }
  if (!inputs.plan.has_model()) return 0;  // a model_path would read the disk
  inputs.model = inputs.plan.model();
  if (!hetsim::proto::ValidatePlanInputs(inputs).ok()) return 0;
  (void)hetsim::evaluation::PredictOwnPlan(inputs);
  if (hetsim::chakra::ExportNodesLowerBound(hetsim::proto::ResolvePlan(inputs.plan, inputs.plan_path)) <=
      kMaxFuzzExportNodes) {
    (void)hetsim::chakra::ExportPlanInputs(inputs, inputs.plan_path);
  }
  hetsim::driver::SimulateOptions options;
  options.max_events = 200'000;
  options.max_wall_seconds = 5;
  if (!faults_text.empty()) {
    if (!hetsim::proto::ParseMessage(faults_text, FileFormat::kText, "faults.pbtxt", &options.faults).ok() ||
        !hetsim::proto::ValidateFaults(options.faults, inputs.cluster, "faults.pbtxt").ok()) {
      return 0;
    }
    options.fault_sources = hetsim::driver::SourcesOf(options.faults, "faults.pbtxt");
  }
  (void)hetsim::driver::SimulatePlan(inputs, options);
  return 0;
}
