// `hetsim validate PLAN --cluster C [--top-k K] [--planner P]`: the planner's prediction of a plan beside
// its simulation, per stage and in total; with --top-k, the planner's K best plans are all simulated
// and Kendall's tau between predicted and simulated iteration times says whether the cost model ranks
// plans the way the simulator does.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "app/lib/cli.h"
#include "app/lib/command_list.h"
#include "base/status_macros.h"
#include "base/units.h"
#include "planner/plan_reader.h"
#include "planner/planner.h"
#include "proto/inputs.h"
#include "proto/validate_plan.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"
#include "sim/workload/model_cost.h"

namespace hetsim::app {
namespace {

const CommandInfo kInfo = {
    "validate", "hetsim validate PLAN --cluster C [--top-k K] [--planner hapt|tangram|megatron|alpa]",
    "Prices every stage of PLAN with the planner's cost model (t_i, c_i, memory) and predicts the\n"
    "iteration (HAPT Eq. 13, the pipeline DAG's longest path, plus gradient synchronisation), simulates\n"
    "the plan (max-min fair network), and prints both with relative errors. Boundaries whose transfer\n"
    "exceeds t_max are named with the communication they expose. --top-k K re-plans the plan's model\n"
    "with --planner (default hapt, no t_max pruning), simulates its K best plans and reports Kendall's\n"
    "tau between predicted and simulated iteration times."};

double Ms(Time t) { return TimeToMilliseconds(t); }
double RelErr(double predicted, double simulated) {
  return simulated != 0 ? (predicted - simulated) / simulated : 0;
}

struct Simulated {
  std::vector<Time> t, comm;
  std::vector<int64_t> peak;
  Time iteration = 0, pipeline = 0;
};

absl::StatusOr<Simulated> Simulate(const proto::PlanInputs& inputs) {
  absl::StatusOr<std::unique_ptr<sim::executor::ExecutionSetup>> setup =
      sim::executor::BuildExecutionSetup(inputs, sim::NetworkMode::kMaxMinFair);
  if (!setup.ok()) return setup.status();
  HETSIM_ASSIGN_OR_RETURN(sim::executor::ExecutionResult run, sim::executor::Execute(**setup, {}));
  Simulated s;
  const int S = (*setup)->num_stages();
  for (int i = 0; i < S; ++i) {
    const sim::executor::VirtualStageCost& v = (*setup)->virtual_stages[i];
    s.t.push_back(v.forward_time() + v.backward_time());
    Time c = 0;
    for (const sim::executor::BoundaryTransfer& b : (*setup)->boundaries) {
      if (b.from_stage == i) c = std::max({c, b.forward_time, b.backward_time});
    }
    s.comm.push_back(c);
    int64_t peak = 0;
    for (const auto& [when, bytes] : sim::executor::MemoryTimeline(**setup, run, i)) peak = std::max(peak, bytes);
    s.peak.push_back(peak);
  }
  s.iteration = run.iteration_time;
  s.pipeline = run.pipeline_end;
  return s;
}

// Kendall's tau-a over pairs; tied pairs count as neither concordant nor discordant.
double KendallTau(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t n = a.size();
  if (n < 2) return 1;
  double concordant = 0, discordant = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const double x = (a[i] - a[j]) * (b[i] - b[j]);
      if (x > 0) ++concordant;
      if (x < 0) ++discordant;
    }
  }
  return (concordant - discordant) / (n * (n - 1) / 2.0);
}

int Validate(const Args& args) {
  po::options_description options("options");
  std::string plan_path, cluster_path, planner_name = "hapt";
  int top_k = 0;
  options.add_options()("plan", po::value(&plan_path)->required(), "plan file")(
      "cluster,c", po::value(&cluster_path)->required()->value_name("C"), "cluster file")(
      "top-k,k", po::value(&top_k)->value_name("K"), "simulate the planner's K best plans")(
      "planner,p", po::value(&planner_name)->value_name("P"), "planner for --top-k (default hapt)");
  po::positional_options_description positional;
  positional.add("plan", 1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kInfo, args, options, positional, &vm)) return *exit;
  if (top_k < 0) return UsageError(kInfo, "--top-k: must be >= 0");
  absl::StatusOr<planner::PlannerKind> kind = planner::ParsePlannerKind(planner_name);
  if (!kind.ok()) return UsageError(kInfo, kind.status().message());

  absl::StatusOr<proto::PlanInputs> inputs = proto::LoadPlanInputs(plan_path, cluster_path);
  if (!inputs.ok()) return ReportFailure(kInfo, inputs.status());
  absl::StatusOr<sim::workload::ModelCost> model = sim::workload::ModelCost::Create(inputs->model, "model");
  if (!model.ok()) return ReportFailure(kInfo, model.status());
  absl::StatusOr<std::unique_ptr<planner::ClusterModel>> cluster =
      planner::ClusterModel::Create(inputs->cluster, model->dtype());
  if (!cluster.ok()) return ReportFailure(kInfo, cluster.status());
  planner::Profiler profiler(*model, **cluster, inputs->plan.micro_batch_size());
  absl::StatusOr<planner::Prediction> pred = planner::PredictPlan(profiler, inputs->plan);
  if (!pred.ok()) return ReportFailure(kInfo, pred.status());
  absl::StatusOr<Simulated> sim = Simulate(*inputs);
  if (!sim.ok()) return ReportFailure(kInfo, sim.status());

  std::string out = absl::StrFormat("validate \"%s\" on \"%s\": %d stages, %d microbatches\n", inputs->plan.name(),
                                    inputs->cluster.name(), inputs->plan.stages_size(), pred->microbatches);
  absl::StrAppendFormat(&out, "%-5s %10s %10s %7s %10s %10s %7s %10s %10s %7s\n", "stage", "t_pred_ms", "t_sim_ms",
                        "err", "c_pred_ms", "c_sim_ms", "err", "mem_pred", "mem_sim", "err");
  for (size_t i = 0; i < pred->stages.size(); ++i) {
    const planner::StagePrediction& p = pred->stages[i];
    absl::StrAppendFormat(&out, "%-5d %10.3f %10.3f %6.1f%% %10.3f %10.3f %6.1f%% %9.2fG %9.2fG %6.1f%%\n", i,
                          Ms(p.t), Ms(sim->t[i]), 100 * RelErr(Ms(p.t), Ms(sim->t[i])), Ms(p.comm), Ms(sim->comm[i]),
                          100 * RelErr(Ms(p.comm), Ms(sim->comm[i])), BytesToGib(p.peak_bytes), BytesToGib(sim->peak[i]),
                          100 * RelErr(p.peak_bytes, sim->peak[i]));
  }
  absl::StrAppendFormat(&out, "iteration: Eq. 13 %.3f ms (%+.1f%%), DAG %.3f ms, predicted with gradient sync %.3f ms "
                              "(%+.1f%%), simulated %.3f ms (pipeline %.3f ms)\n",
                        Ms(pred->eq13), 100 * RelErr(Ms(pred->eq13), Ms(sim->iteration)), Ms(pred->pipeline),
                        Ms(pred->iteration), 100 * RelErr(Ms(pred->iteration), Ms(sim->iteration)), Ms(sim->iteration),
                        Ms(sim->pipeline));
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
    req.bidirectional_pruning = false;
    absl::StatusOr<planner::PlanOutcome> outcome = planner::MakePlan(req);
    if (!outcome.ok()) return ReportFailure(kInfo, outcome.status());
    std::vector<double> predicted, simulated;
    absl::StrAppendFormat(&out, "top-%d plans of %s:\n%-4s %12s %12s\n", top_k, planner_name, "rank", "pred_ms",
                          "sim_ms");
    for (size_t a = 0; a < outcome->alternatives.size() && static_cast<int>(a) < top_k; ++a) {
      proto::PlanInputs alt = *inputs;
      alt.plan = outcome->alternatives[a];
      *alt.plan.mutable_model() = outcome->model;
      alt.model = outcome->model;
      if (absl::Status s = proto::ValidatePlanInputs(alt); !s.ok()) return ReportFailure(kInfo, s);
      absl::StatusOr<Simulated> r = Simulate(alt);
      if (!r.ok()) return ReportFailure(kInfo, r.status());
      predicted.push_back(Ms(outcome->alternative_predictions[a].iteration));
      simulated.push_back(Ms(r->iteration));
      absl::StrAppendFormat(&out, "%-4d %12.3f %12.3f\n", a + 1, predicted.back(), simulated.back());
    }
    absl::StrAppendFormat(&out, "Kendall's tau (predicted vs simulated, %d plans): %.3f\n", predicted.size(),
                          KendallTau(predicted, simulated));
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

}  // namespace

int RunValidate(const Args& args) {
  return RunGuarded(kInfo, [&] { return Validate(args); });
}

}  // namespace hetsim::app
