// `hetsim validate PLAN... | --plans DIR|LIST --cluster C [--report R.json] [--chart C.svg]`: plans that
// carry any planner's prediction (Plan.prediction) are simulated and compared (service/evaluation/); a single
// plan without one is compared with hetsim's own planner's prediction, per stage and in total, and
// with --top-k the planner's K best plans are all simulated and Kendall's tau says whether the cost
// model ranks plans the way the simulator does.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "base/units.h"
#include "planner/planner.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/output_files.h"
#include "service/evaluation/own_prediction.h"
#include "service/evaluation/validate_predictions.h"
#include "service/evaluation/validation_text.h"
#include "traces/html/validate_html.h"

namespace hetsim::cli {
namespace {

const CommandInfo kValidateInfo = {
    "validate",
    "hetsim validate PLAN... | --plans DIR|LIST --cluster C [--report R.json] [--chart C.svg] [--exact]\n"
    "       hetsim validate PLAN --cluster C [--top-k K] [--planner hapt|tangram|megatron|alpa] [--html R.html] "
    "[--exact] [--max-wall-seconds S]",
    "Plans with a prediction (Plan.prediction, from any planner): simulates each and prints the error of\n"
    "every predicted quantity, per stage the term most wrong (compute, exposed_comm, bubble, grad_sync),\n"
    "and over the set MAPE, max error, Kendall's tau, Spearman's rho, whether the planner's best plan is\n"
    "the simulated best, and the misranked pairs. --plans takes a folder of plans or a file listing them;\n"
    "--report writes the PlanValidationReport (format from the extension), --chart the predicted vs\n"
    "simulated chart (SVG). docs/validation-of-planners.md.\n"
    "A single plan without a prediction: prices every stage of PLAN with the planner's cost model (t_i, c_i, memory) "
    "and predicts the\n"
    "iteration (HAPT Eq. 13, the pipeline DAG's longest path, plus gradient synchronisation), simulates\n"
    "the plan (max-min fair network), and prints both with relative errors. Boundaries whose transfer\n"
    "exceeds t_max are named with the communication they expose. A plan of pipelines (Plan.pipelines) is\n"
    "priced pipeline by pipeline with its layer ranges' all-reduces, and compared per pipeline and in total.\n"
    "--top-k K re-plans the plan's model\n"
    "with --planner (default hapt, no t_max pruning), simulates its K best plans and reports Kendall's\n"
    "tau between predicted and simulated iteration times. --html writes the comparison as an HTML page\n"
    "(predicted vs simulated scatter, per-stage errors; docs/report.md).\n"
    "Each plan is simulated at the fidelity `hetsim run` chooses (exact while affordable, else the\n"
    "approximations measured under 0.5% for its shape); --exact simulates every one in full.\n"
    "--max-wall-seconds S bounds the whole command: planning's simulations and the page's drawing (0 = no limit)."};

double Ms(Time t) { return TimeToMilliseconds(t); }
// What --html draws: the plan's stages, predicted and simulated (top-k plans are added as they run).
traces::html::ValidateData PageData(const proto::PlanInputs& inputs, const planner::Prediction& pred,
                                    const evaluation::SimulatedStages& sim) {
  traces::html::ValidateData data;
  data.plan_name = inputs.plan.name();
  data.cluster_name = inputs.cluster.name();
  data.iteration_pred_ms = Ms(pred.iteration);
  data.iteration_sim_ms = Ms(sim.iteration);
  for (size_t i = 0; i < pred.stages.size(); ++i) {
    const planner::StagePrediction& p = pred.stages[i];
    data.stages.push_back({static_cast<int>(i), Ms(p.t), Ms(sim.t[i]), Ms(p.comm), Ms(sim.comm[i]),
                           BytesToGib(p.peak_bytes), BytesToGib(sim.peak[i])});
  }
  return data;
}

struct PredictionOutputs {
  std::string report_path, chart_path;
  bool exact = false;  // --exact
};

// Plans with predictions: the outputs are checked before any simulation (never over a file the command
// read: a plan, its model, the cluster, the --plans list), and written both or neither at the end.
int ValidatePredictions(const std::vector<std::string>& plan_paths, const std::string& cluster_path,
                        const std::string& plans_source, const PredictionOutputs& outputs) {
  if (!outputs.report_path.empty()) {
    if (absl::StatusOr<proto::FileFormat> f = proto::FileFormatFromPath(outputs.report_path); !f.ok()) {
      return ReportFailure(kValidateInfo, f.status());
    }
  }
  std::vector<proto::PlanInputs> plans;
  std::vector<std::string> read = {cluster_path, plans_source};
  for (const std::string& path : plan_paths) {
    absl::StatusOr<proto::PlanInputs> inputs = proto::LoadPlanInputs(path, cluster_path);
    if (!inputs.ok()) return ReportFailure(kValidateInfo, inputs.status());
    read.push_back(path);
    read.push_back(inputs->model_path);
    plans.push_back(*std::move(inputs));
  }
  proto::OutputFiles files(std::move(read));  // the report and the chart, both or neither
  for (const std::string* out : {&outputs.report_path, &outputs.chart_path}) {
    if (out->empty()) continue;
    if (absl::Status s = files.Check(*out); !s.ok()) return ReportFailure(kValidateInfo, s);
  }
  if (!outputs.report_path.empty() && outputs.report_path == outputs.chart_path) {
    return UsageError(kValidateInfo, absl::StrCat(outputs.report_path, ": named for two outputs (--report, --chart)"));
  }
  absl::StatusOr<hetsim::v1::PlanValidationReport> report =
      evaluation::ValidatePredictions(plans, {.chart = !outputs.chart_path.empty(), .exact = outputs.exact});
  if (!report.ok()) return ReportFailure(kValidateInfo, report.status());
  if (absl::Status s = files.AddMessage(outputs.report_path, *report); !s.ok()) return ReportFailure(kValidateInfo, s);
  if (absl::Status s = files.Add(outputs.chart_path, report->chart_svg()); !s.ok()) {
    return ReportFailure(kValidateInfo, s);
  }
  if (absl::Status s = files.Commit(); !s.ok()) return ReportFailure(kValidateInfo, s);
  std::fputs(evaluation::FormatPlanValidation(*report).c_str(), stdout);
  return kExitOk;
}

// A plan without a prediction, against hetsim's own planner's cost model.
int ValidateOwnPrediction(const proto::PlanInputs* inputs, int top_k, const std::string& planner_name,
                          const planner::PlannerKind* kind, const std::string& html_path, bool exact,
                          const std::string& plans_source) {
  proto::OutputFiles files({inputs->plan_path, inputs->cluster_path, inputs->model_path, plans_source});
  if (!html_path.empty()) {  // checked before the simulations, written after them
    if (absl::Status s = files.Check(html_path); !s.ok()) return ReportFailure(kValidateInfo, s);
  }
  absl::StatusOr<evaluation::OwnValidation> v = evaluation::ValidateOwnPrediction(*inputs, top_k, *kind, exact);
  if (!v.ok()) return ReportFailure(kValidateInfo, v.status());
  if (!html_path.empty()) {
    traces::html::ValidateData html = PageData(*inputs, v->prediction, v->simulated);
    if (top_k > 0) {
      for (size_t a = 0; a < v->top_plans.size(); ++a) {
        html.top_plans.push_back(
            {absl::StrFormat("rank %d", a + 1), v->top_plans[a].predicted_ms, v->top_plans[a].simulated_ms});
      }
      html.kendall_tau = v->kendall_tau;
    }
    // Under the command's wall-clock limit (its scope, installed in Validate).
    absl::StatusOr<std::string> page =
        DrawPageWithin(CurrentWallLimit(), [&] { return traces::html::ValidateReportHtml(html); });
    if (!page.ok()) return ReportFailure(kValidateInfo, page.status());
    if (absl::Status s = files.Add(html_path, *std::move(page)); !s.ok()) return ReportFailure(kValidateInfo, s);
    if (absl::Status s = files.Commit(); !s.ok()) return ReportFailure(kValidateInfo, s);
  }
  std::fputs(evaluation::FormatOwnValidation(*inputs, *v, top_k, planner_name).c_str(), stdout);
  return kExitOk;
}

int Validate(const Args& args) {
  po::options_description options("options");
  std::vector<std::string> plan_paths;
  std::string plans_source, cluster_path, planner_name = "hapt", html_path;
  PredictionOutputs outputs;
  int top_k = 0;
  double max_wall_seconds = 0;
  options.add_options()("plan", po::value(&plan_paths), "plan files")(
      "max-wall-seconds", po::value(&max_wall_seconds)->value_name("S"), "stop after S seconds (0 = no limit)")(
      "plans", po::value(&plans_source)->value_name("DIR|LIST"), "a folder of plans or a file listing them")(
      "cluster,c", po::value(&cluster_path)->required()->value_name("C"), "cluster file")(
      "report,r", po::value(&outputs.report_path)->value_name("R"),
      "write the PlanValidationReport (.json, .pbtxt, .pb)")(
      "chart", po::value(&outputs.chart_path)->value_name("C.svg"), "write the predicted vs simulated chart (SVG)")(
      "top-k,k", po::value(&top_k)->value_name("K"), "simulate the planner's K best plans")(
      "planner,p", po::value(&planner_name)->value_name("P"), "planner for --top-k (default hapt)")(
      "html", po::value(&html_path)->value_name("R.html"), "write the comparison as an HTML page")(
      "exact", po::bool_switch(&outputs.exact), "simulate every plan in full, whatever its size");
  po::positional_options_description positional;
  positional.add("plan", -1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kValidateInfo, args, options, positional, &vm)) return *exit;
  if (top_k < 0) return UsageError(kValidateInfo, "--top-k: must be >= 0");
  if (auto exit = CheckRunLimitFlags(kValidateInfo, 0, max_wall_seconds)) return *exit;
  const WallLimit wall_limit(max_wall_seconds);
  std::optional<WallLimitScope> wall_scope;
  if (wall_limit.limited()) wall_scope.emplace(wall_limit);
  absl::StatusOr<planner::PlannerKind> kind = planner::ParsePlannerKind(planner_name);
  if (!kind.ok()) return UsageError(kValidateInfo, kind.status().message());
  if (!plans_source.empty()) {
    absl::StatusOr<std::vector<std::string>> listed = evaluation::PlanFilesOf(plans_source);
    if (!listed.ok()) return ReportFailure(kValidateInfo, listed.status());
    plan_paths.insert(plan_paths.end(), listed->begin(), listed->end());
  }
  if (plan_paths.empty()) return UsageError(kValidateInfo, "a plan file or --plans is required");

  absl::StatusOr<proto::PlanInputs> inputs = proto::LoadPlanInputs(plan_paths.front(), cluster_path);
  if (!inputs.ok()) return ReportFailure(kValidateInfo, inputs.status());
  const bool own = plan_paths.size() == 1 && !inputs->plan.has_prediction();
  if (own && (!outputs.report_path.empty() || !outputs.chart_path.empty())) {
    return UsageError(
        kValidateInfo,
        absl::StrCat(plan_paths.front(), ": --report and --chart need plans with a prediction (Plan.prediction)"));
  }
  if (own) return ValidateOwnPrediction(&*inputs, top_k, planner_name, &*kind, html_path, outputs.exact, plans_source);
  if (top_k > 0)
    return UsageError(kValidateInfo, "--top-k re-plans a plan without a prediction; these plans carry one");
  if (!html_path.empty()) {
    return UsageError(kValidateInfo,
                      "--html draws one plan against hetsim's own prediction; use --chart for plans with predictions");
  }
  return ValidatePredictions(plan_paths, cluster_path, plans_source, outputs);
}

}  // namespace

int RunValidate(const Args& args) {
  return RunGuarded(kValidateInfo, [&] { return Validate(args); });
}

}  // namespace hetsim::cli
