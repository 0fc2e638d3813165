#include "service/evaluation/validate_predictions.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "proto/file_format.h"
#include "proto/io.h"
#include "service/driver/simulate.h"
#include "service/evaluation/prediction_check.h"
#include "service/evaluation/prediction_set.h"

namespace hetsim::evaluation {
namespace {

namespace v1 = hetsim::v1;
namespace fs = std::filesystem;

}  // namespace

absl::StatusOr<std::vector<std::string>> PlanFilesOf(absl::string_view source) {
  const fs::path path{std::string(source)};
  std::error_code ec;
  std::vector<std::string> files;
  if (fs::is_directory(path, ec)) {
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
      if (e.is_regular_file() && proto::FileFormatFromPath(e.path().string()).ok()) files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: no plan file (.pbtxt, .json, .pb) in the folder", source));
    }
    return files;
  }
  HETSIM_ASSIGN_OR_RETURN(std::string text, proto::ReadInputFile(source, proto::InputKind::kText));
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    if (!proto::FileFormatFromPath(line).ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s:%d: \"%s\" is not a plan file (.pbtxt, .textproto, .txtpb, .json or .pb)", source,
                          line_number, absl::CHexEscape(line.substr(0, 200))));
    }
    files.push_back(proto::ResolveRelativeTo(source, line));
  }
  if (files.empty()) return absl::InvalidArgumentError(absl::StrFormat("%s: lists no plan file", source));
  return files;
}

absl::StatusOr<v1::PlanValidationReport> ValidatePredictions(const std::vector<proto::PlanInputs>& plans,
                                                             const ValidateOptions& options) {
  v1::PlanValidationReport report;
  if (plans.empty()) return absl::InvalidArgumentError("validate: no plan to validate");
  report.set_cluster_name(plans.front().cluster.name());
  for (const proto::PlanInputs& inputs : plans) {
    const std::string file = inputs.plan_path.empty() ? inputs.plan.name() : inputs.plan_path;
    if (!inputs.plan.has_prediction()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: prediction: required: the planner's predicted times to compare with the simulation "
                          "(docs/validation-of-planners.md)",
                          file));
    }
    HETSIM_ASSIGN_OR_RETURN(v1::Report simulated,
                            driver::SimulateReport(inputs, driver::DefaultFidelity(options.exact)));
    *report.add_plans() = ComparePrediction(inputs.plan, inputs.microbatches, simulated, file);
  }
  SummarizePredictions(&report);
  if (options.chart) {
    HETSIM_ASSIGN_OR_RETURN(std::string svg, PredictionChartSvg(report));
    report.set_chart_svg(std::move(svg));
  }
  return report;
}

absl::StatusOr<v1::PlanValidationReport> ValidatePredictionSources(const std::vector<proto::Source>& plan_sources,
                                                                   const proto::Source& cluster,
                                                                   const ValidateOptions& options) {
  std::vector<proto::PlanInputs> plans;
  for (const proto::Source& plan : plan_sources) {
    HETSIM_ASSIGN_OR_RETURN(proto::PlanInputs inputs, proto::LoadPlanInputs(plan, cluster));
    plans.push_back(std::move(inputs));
  }
  return ValidatePredictions(plans, options);
}

}  // namespace hetsim::evaluation
