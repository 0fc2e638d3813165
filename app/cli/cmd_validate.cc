// `hetsim validate PLAN... | --plans DIR|LIST --cluster C [--report R.json] [--chart C.svg]`: plans that
// carry any planner's prediction (Plan.prediction) are simulated and compared (service/evaluation/); a single
// plan without one is compared with hetsim's own planner's prediction, per stage and in total, and
// with --top-k the planner's K best plans are all simulated and Kendall's tau says whether the cost
// model ranks plans the way the simulator does.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "app/cli/command_list.h"
#include "base/status_macros.h"
#include "base/units.h"
#include "planner/plan_reader.h"
#include "planner/planner.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/resolve.h"
#include "proto/validate_plan.h"
#include "service/driver/simulate.h"
#include "service/evaluation/rank_stats.h"
#include "service/evaluation/validate_predictions.h"
#include "service/evaluation/validation_text.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"
#include "sim/workload/model_cost.h"
#include "traces/html/validate_html.h"

namespace hetsim::app {
namespace {

const CommandInfo kValidateInfo = {
    "validate",
    "hetsim validate PLAN... | --plans DIR|LIST --cluster C [--report R.json] [--chart C.svg]\n"
    "       hetsim validate PLAN --cluster C [--top-k K] [--planner hapt|tangram|megatron|alpa] [--html R.html]",
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
    "exceeds t_max are named with the communication they expose. --top-k K re-plans the plan's model\n"
    "with --planner (default hapt, no t_max pruning), simulates its K best plans and reports Kendall's\n"
    "tau between predicted and simulated iteration times. --html writes the comparison as an HTML page\n"
    "(predicted vs simulated scatter, per-stage errors; docs/report.md)."};

double Ms(Time t) { return TimeToMilliseconds(t); }
double RelErr(double predicted, double simulated) { return simulated != 0 ? (predicted - simulated) / simulated : 0; }

struct Simulated {
  std::vector<Time> t, comm;
  std::vector<int64_t> peak;
  Time iteration = 0, pipeline = 0;
};

absl::StatusOr<Simulated> Simulate(const proto::PlanInputs& inputs) {
  HETSIM_ASSIGN_OR_RETURN(driver::Simulation simulated, driver::SimulatePlan(inputs));
  const sim::executor::ExecutionSetup& setup = *simulated.setup;
  const sim::executor::ExecutionResult& run = simulated.result;
  Simulated s;
  const int S = setup.num_stages();
  for (int i = 0; i < S; ++i) {
    // A physical stage's work: every chunk it runs (k = chunk x S + i), as the planner prices it.
    Time t = 0;
    for (size_t k = i; k < setup.virtual_stages.size(); k += S) {
      t += setup.virtual_stages[k].forward_time() + setup.virtual_stages[k].backward_time();
    }
    s.t.push_back(t);
    Time c = 0;
    for (const sim::executor::BoundaryTransfer& b : setup.boundaries) {
      if (b.from_stage == i) c = std::max({c, b.forward_time, b.backward_time});
    }
    s.comm.push_back(c);
    int64_t peak = 0;
    for (const auto& [when, bytes] : sim::executor::MemoryTimeline(setup, run, i)) peak = std::max(peak, bytes);
    s.peak.push_back(peak);
  }
  s.iteration = run.iteration_time;
  s.pipeline = run.pipeline_end - run.pipeline_start;
  return s;
}

// What --html draws: the plan's stages, predicted and simulated (top-k plans are added as they run).
report::ValidateData PageData(const proto::PlanInputs& inputs, const planner::Prediction& pred, const Simulated& sim) {
  report::ValidateData data;
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
};

// Plans with predictions: everything is computed and serialised before any file is written.
int ValidatePredictions(const std::vector<std::string>& plan_paths, const std::string& cluster_path,
                        const PredictionOutputs& outputs) {
  if (!outputs.report_path.empty()) {
    if (absl::StatusOr<proto::FileFormat> f = proto::FileFormatFromPath(outputs.report_path); !f.ok()) {
      return ReportFailure(kValidateInfo, f.status());
    }
  }
  absl::StatusOr<hetsim::v1::PlanValidationReport> report =
      evaluation::ValidatePredictionFiles(plan_paths, cluster_path, {.chart = !outputs.chart_path.empty()});
  if (!report.ok()) return ReportFailure(kValidateInfo, report.status());
  const std::string svg = report->chart_svg();
  if (!outputs.report_path.empty()) {
    if (absl::Status s = proto::Save(outputs.report_path, *report); !s.ok()) return ReportFailure(kValidateInfo, s);
  }
  if (!outputs.chart_path.empty()) {
    if (absl::Status s = proto::WriteFileAtomically(outputs.chart_path, svg); !s.ok())
      return ReportFailure(kValidateInfo, s);
  }
  std::fputs(evaluation::FormatPlanValidation(*report).c_str(), stdout);
  return kExitOk;
}

// A plan without a prediction, against hetsim's own planner's cost model.
int ValidateOwnPrediction(const proto::PlanInputs* inputs, int top_k, const std::string& planner_name,
                          const planner::PlannerKind* kind, const std::string& html_path) {
  const sim::workload::ModelCost model = sim::workload::ModelCost::Create(proto::ResolveModel(inputs->model, "model"));
  absl::StatusOr<std::unique_ptr<planner::ClusterModel>> cluster =
      planner::ClusterModel::Create(inputs->cluster, model.dtype());
  if (!cluster.ok()) return ReportFailure(kValidateInfo, cluster.status());
  planner::Profiler profiler = planner::PlanProfiler(model, **cluster, inputs->plan);
  absl::StatusOr<planner::Prediction> pred = planner::PredictPlan(profiler, inputs->plan);
  if (!pred.ok()) return ReportFailure(kValidateInfo, pred.status());
  absl::StatusOr<Simulated> sim = Simulate(*inputs);
  if (!sim.ok()) return ReportFailure(kValidateInfo, sim.status());

  std::string out = absl::StrFormat("validate \"%s\" on \"%s\": %d stages, %d microbatches\n", inputs->plan.name(),
                                    inputs->cluster.name(), inputs->plan.stages_size(), pred->microbatches);
  absl::StrAppendFormat(&out, "%-5s %10s %10s %7s %10s %10s %7s %10s %10s %7s\n", "stage", "t_pred_ms", "t_sim_ms",
                        "err", "c_pred_ms", "c_sim_ms", "err", "mem_pred", "mem_sim", "err");
  for (size_t i = 0; i < pred->stages.size(); ++i) {
    const planner::StagePrediction& p = pred->stages[i];
    absl::StrAppendFormat(&out, "%-5d %10.3f %10.3f %6.1f%% %10.3f %10.3f %6.1f%% %9.2fG %9.2fG %6.1f%%\n", i, Ms(p.t),
                          Ms(sim->t[i]), 100 * RelErr(Ms(p.t), Ms(sim->t[i])), Ms(p.comm), Ms(sim->comm[i]),
                          100 * RelErr(Ms(p.comm), Ms(sim->comm[i])), BytesToGib(p.peak_bytes),
                          BytesToGib(sim->peak[i]), 100 * RelErr(p.peak_bytes, sim->peak[i]));
  }
  absl::StrAppendFormat(&out,
                        "iteration: Eq. 13 %.3f ms (%+.1f%%), DAG %.3f ms, predicted with gradient sync %.3f ms "
                        "(%+.1f%%), simulated %.3f ms (pipeline %.3f ms)\n",
                        Ms(pred->eq13), 100 * RelErr(Ms(pred->eq13), Ms(sim->iteration)), Ms(pred->pipeline),
                        Ms(pred->iteration), 100 * RelErr(Ms(pred->iteration), Ms(sim->iteration)), Ms(sim->iteration),
                        Ms(sim->pipeline));
  report::ValidateData html = PageData(*inputs, *pred, *sim);
  bool exposed = false;
  for (size_t i = 0; i + 1 < pred->stages.size(); ++i) {
    const Time c = pred->stages[i].comm;
    if (c > pred->t_max) {
      exposed = true;
      absl::StrAppendFormat(&out,
                            "boundary %d -> %d: c = %.3f ms > t_max = %.3f ms: about %.3f ms per microbatch cannot "
                            "hide behind compute (%.3f ms over the iteration); Eq. 13 assumes full overlap\n",
                            i, i + 1, Ms(c), Ms(pred->t_max), Ms(c - pred->t_max),
                            Ms((c - pred->t_max) * (pred->microbatches - 1)));
    }
  }
  if (!exposed) absl::StrAppend(&out, "every c_i <= t_max: communication fully overlappable (Eq. 13 applies)\n");

  if (top_k > 0) {
    planner::PlanRequest req;
    req.model = inputs->model;
    req.cluster = inputs->cluster;
    req.planner = *kind;
    req.global_batch_size = inputs->plan.global_batch_size();
    req.micro_batch_size = inputs->plan.micro_batch_size();
    req.context_parallel = static_cast<int>(proto::ContextParallel(inputs->plan));
    req.grad_reduce_in_fp32 = inputs->plan.grad_reduce_in_fp32();
    req.cp_comm = proto::ContextParallelCommOf(inputs->plan);
    req.bidirectional_pruning = false;
    absl::StatusOr<planner::PlanOutcome> outcome = planner::MakePlan(req);
    if (!outcome.ok()) return ReportFailure(kValidateInfo, outcome.status());
    std::vector<double> predicted, simulated;
    absl::StrAppendFormat(&out, "top-%d plans of %s:\n%-4s %12s %12s\n", top_k, planner_name, "rank", "pred_ms",
                          "sim_ms");
    for (size_t a = 0; a < outcome->alternatives.size() && static_cast<int>(a) < top_k; ++a) {
      proto::PlanInputs alt = *inputs;
      alt.plan = outcome->alternatives[a];
      *alt.plan.mutable_model() = outcome->model;
      alt.model = outcome->model;
      if (absl::Status s = proto::ValidatePlanInputs(alt); !s.ok()) return ReportFailure(kValidateInfo, s);
      absl::StatusOr<Simulated> r = Simulate(alt);
      if (!r.ok()) return ReportFailure(kValidateInfo, r.status());
      predicted.push_back(Ms(outcome->alternative_predictions[a].iteration));
      simulated.push_back(Ms(r->iteration));
      absl::StrAppendFormat(&out, "%-4d %12.3f %12.3f\n", a + 1, predicted.back(), simulated.back());
      html.top_plans.push_back({absl::StrFormat("rank %d", a + 1), predicted.back(), simulated.back()});
    }
    absl::StrAppendFormat(&out, "Kendall's tau-b (predicted vs simulated, %d plans): %.3f\n", predicted.size(),
                          evaluation::KendallTauB(predicted, simulated));
    html.kendall_tau = evaluation::KendallTauB(predicted, simulated);
  }
  if (!html_path.empty()) {
    if (absl::Status s = proto::WriteFileAtomically(html_path, report::ValidateReportHtml(html)); !s.ok()) {
      return ReportFailure(kValidateInfo, s);
    }
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

int Validate(const Args& args) {
  po::options_description options("options");
  std::vector<std::string> plan_paths;
  std::string plans_source, cluster_path, planner_name = "hapt", html_path;
  PredictionOutputs outputs;
  int top_k = 0;
  options.add_options()("plan", po::value(&plan_paths), "plan files")(
      "plans", po::value(&plans_source)->value_name("DIR|LIST"), "a folder of plans or a file listing them")(
      "cluster,c", po::value(&cluster_path)->required()->value_name("C"), "cluster file")(
      "report,r", po::value(&outputs.report_path)->value_name("R"),
      "write the PlanValidationReport (.json, .pbtxt, .pb)")(
      "chart", po::value(&outputs.chart_path)->value_name("C.svg"), "write the predicted vs simulated chart (SVG)")(
      "top-k,k", po::value(&top_k)->value_name("K"), "simulate the planner's K best plans")(
      "planner,p", po::value(&planner_name)->value_name("P"), "planner for --top-k (default hapt)")(
      "html", po::value(&html_path)->value_name("R.html"), "write the comparison as an HTML page");
  po::positional_options_description positional;
  positional.add("plan", -1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kValidateInfo, args, options, positional, &vm)) return *exit;
  if (top_k < 0) return UsageError(kValidateInfo, "--top-k: must be >= 0");
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
  if (own) return ValidateOwnPrediction(&*inputs, top_k, planner_name, &*kind, html_path);
  if (top_k > 0)
    return UsageError(kValidateInfo, "--top-k re-plans a plan without a prediction; these plans carry one");
  if (!html_path.empty()) {
    return UsageError(kValidateInfo,
                      "--html draws one plan against hetsim's own prediction; use --chart for plans with predictions");
  }
  return ValidatePredictions(plan_paths, cluster_path, outputs);
}

}  // namespace

int RunValidate(const Args& args) {
  return RunGuarded(kValidateInfo, [&] { return Validate(args); });
}

}  // namespace hetsim::app
