#include "service/evaluation/own_prediction.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/units.h"
#include "planner/plan_reader.h"
#include "proto/pipeline_plans.h"
#include "proto/resolve.h"
#include "proto/resolve_cluster.h"
#include "proto/validate_plan.h"
#include "service/driver/plan_messages.h"
#include "service/driver/simulate.h"
#include "service/evaluation/rank_stats.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"
#include "sim/workload/model_cost.h"

namespace hetsim::evaluation {
namespace {

double Ms(Time t) { return TimeToMilliseconds(t); }
double RelErr(double predicted, double simulated) { return simulated != 0 ? (predicted - simulated) / simulated : 0; }

absl::StatusOr<planner::Prediction> PredictOwn(const proto::PlanInputs& inputs) {
  // A mixed stage (Stage.replica_groups) is priced group by group (planner/mixed_replicas.h).
  const spec::ModelSpec model_spec = proto::ResolveModel(inputs.model, "model");
  const sim::workload::ModelCost model = sim::workload::ModelCost::Create(model_spec);
  HETSIM_ASSIGN_OR_RETURN(spec::ClusterSpec cluster_spec, proto::ResolveCluster(inputs.cluster, ""));
  HETSIM_ASSIGN_OR_RETURN(std::unique_ptr<planner::ClusterModel> cluster,
                          planner::ClusterModel::Create(std::move(cluster_spec), model.dtype()));
  const spec::PlanSpec plan = proto::ResolvePlan(inputs.plan, inputs.plan_path);
  planner::Profiler profiler = planner::PlanProfiler(model, *cluster, plan);
  return planner::PredictPlan(profiler, plan);
}

// Stage i's simulated peak memory; a mixed stage's of its tightest group (the largest share of its GPU's
// capacity), the group the planner's prediction names.
int64_t TightestPeak(const sim::executor::ExecutionSetup& setup, const sim::executor::ExecutionResult& run, int i) {
  const auto peak_of = [&](int group) {
    int64_t peak = 0;
    for (const auto& [when, bytes] : sim::executor::MemoryTimeline(setup, run, i, group)) peak = std::max(peak, bytes);
    return peak;
  };
  const auto& groups = setup.stages[i].replica_groups;
  if (groups.empty()) return peak_of(-1);
  int64_t tightest = 0;
  double ratio = -1;
  for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
    const int64_t peak = peak_of(g);
    const double r = static_cast<double>(peak) / std::max(1.0, groups[g].memory_capacity_bytes);
    if (r > ratio) {
      ratio = r;
      tightest = peak;
    }
  }
  return tightest;
}

// The planner's `top_k` best plans of the model of `inputs`, each predicted and simulated.
absl::StatusOr<std::vector<RankedPlan>> RankTopPlans(const proto::PlanInputs& inputs, int top_k,
                                                     planner::PlannerKind kind, bool exact) {
  planner::PlanRequest req;
  req.planner = kind;
  req.global_batch_size = inputs.plan.global_batch_size();
  req.micro_batch_size = inputs.plan.micro_batch_size();
  req.context_parallel = static_cast<int>(proto::ContextParallel(inputs.plan));
  req.grad_reduce_in_fp32 = inputs.plan.grad_reduce_in_fp32();
  req.cp_comm = proto::ContextParallelCommOf(inputs.plan);
  req.bidirectional_pruning = false;
  const driver::PlannerMessages messages{.model = inputs.model, .cluster = inputs.cluster};
  HETSIM_ASSIGN_OR_RETURN(const planner::PlanRequest request, driver::ResolvePlanRequest(messages, req));
  HETSIM_ASSIGN_OR_RETURN(const planner::PlanOutcome outcome, planner::MakePlan(request));
  std::vector<RankedPlan> ranked;
  for (size_t a = 0; a < outcome.alternatives.size() && static_cast<int>(a) < top_k; ++a) {
    proto::PlanInputs alt = inputs;
    alt.plan = driver::PlanMessageOf(outcome.alternatives[a], messages, outcome, /*model_inline=*/true);
    alt.model = driver::PlannedModel(messages, outcome);
    HETSIM_RETURN_IF_ERROR(proto::ValidatePlanInputs(alt));
    HETSIM_ASSIGN_OR_RETURN(const SimulatedStages r, SimulateStages(alt, exact));
    ranked.push_back({Ms(outcome.alternative_predictions[a].iteration), Ms(r.iteration)});
  }
  return ranked;
}

}  // namespace

absl::StatusOr<SimulatedStages> SimulateStages(const proto::PlanInputs& inputs, bool exact) {
  HETSIM_ASSIGN_OR_RETURN(driver::Simulation simulated, driver::SimulatePlan(inputs, driver::DefaultFidelity(exact)));
  const sim::executor::ExecutionSetup& setup = *simulated.setup;
  const sim::executor::ExecutionResult& run = simulated.result;
  SimulatedStages s;
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
    s.peak.push_back(TightestPeak(setup, run, i));
  }
  s.iteration = run.iteration_time;
  s.pipeline = run.pipeline_end - run.pipeline_start;
  return s;
}

absl::StatusOr<OwnValidation> ValidateOwnPrediction(const proto::PlanInputs& inputs, int top_k,
                                                    planner::PlannerKind planner, bool exact) {
  OwnValidation v;
  HETSIM_RETURN_IF_ERROR(proto::RequireOnePipeline(
      inputs.plan, inputs.plan_path.empty() ? inputs.plan.name() : inputs.plan_path, "validate"));
  HETSIM_ASSIGN_OR_RETURN(v.prediction, PredictOwn(inputs));
  HETSIM_ASSIGN_OR_RETURN(v.simulated, SimulateStages(inputs, exact));
  if (top_k > 0) {
    HETSIM_ASSIGN_OR_RETURN(v.top_plans, RankTopPlans(inputs, top_k, planner, exact));
  }
  return v;
}

std::string FormatOwnValidation(const proto::PlanInputs& inputs, const OwnValidation& v, int top_k,
                                absl::string_view planner_name) {
  const planner::Prediction& pred = v.prediction;
  const SimulatedStages& sim = v.simulated;
  std::string out = absl::StrFormat("validate \"%s\" on \"%s\": %d stages, %d microbatches\n", inputs.plan.name(),
                                    inputs.cluster.name(), inputs.plan.stages_size(), pred.microbatches);
  absl::StrAppendFormat(&out, "%-5s %10s %10s %7s %10s %10s %7s %10s %10s %7s\n", "stage", "t_pred_ms", "t_sim_ms",
                        "err", "c_pred_ms", "c_sim_ms", "err", "mem_pred", "mem_sim", "err");
  for (size_t i = 0; i < pred.stages.size(); ++i) {
    const planner::StagePrediction& p = pred.stages[i];
    absl::StrAppendFormat(&out, "%-5d %10.3f %10.3f %6.1f%% %10.3f %10.3f %6.1f%% %9.2fG %9.2fG %6.1f%%\n", i, Ms(p.t),
                          Ms(sim.t[i]), 100 * RelErr(Ms(p.t), Ms(sim.t[i])), Ms(p.comm), Ms(sim.comm[i]),
                          100 * RelErr(Ms(p.comm), Ms(sim.comm[i])), BytesToGib(p.peak_bytes), BytesToGib(sim.peak[i]),
                          100 * RelErr(p.peak_bytes, sim.peak[i]));
  }
  absl::StrAppendFormat(&out,
                        "iteration: Eq. 13 %.3f ms (%+.1f%%), DAG %.3f ms, predicted with gradient sync %.3f ms "
                        "(%+.1f%%), simulated %.3f ms (pipeline %.3f ms)\n",
                        Ms(pred.eq13), 100 * RelErr(Ms(pred.eq13), Ms(sim.iteration)), Ms(pred.pipeline),
                        Ms(pred.iteration), 100 * RelErr(Ms(pred.iteration), Ms(sim.iteration)), Ms(sim.iteration),
                        Ms(sim.pipeline));
  bool exposed = false;
  for (size_t i = 0; i + 1 < pred.stages.size(); ++i) {
    const Time c = pred.stages[i].comm;
    if (c > pred.t_max) {
      exposed = true;
      absl::StrAppendFormat(&out,
                            "boundary %d -> %d: c = %.3f ms > t_max = %.3f ms: about %.3f ms per microbatch cannot "
                            "hide behind compute (%.3f ms over the iteration); Eq. 13 assumes full overlap\n",
                            i, i + 1, Ms(c), Ms(pred.t_max), Ms(c - pred.t_max),
                            Ms((c - pred.t_max) * (pred.microbatches - 1)));
    }
  }
  if (!exposed) absl::StrAppend(&out, "every c_i <= t_max: communication fully overlappable (Eq. 13 applies)\n");

  if (top_k > 0) {
    std::vector<double> predicted, simulated;
    absl::StrAppendFormat(&out, "top-%d plans of %s:\n%-4s %12s %12s\n", top_k, planner_name, "rank", "pred_ms",
                          "sim_ms");
    for (size_t a = 0; a < v.top_plans.size(); ++a) {
      predicted.push_back(v.top_plans[a].predicted_ms);
      simulated.push_back(v.top_plans[a].simulated_ms);
      absl::StrAppendFormat(&out, "%-4d %12.3f %12.3f\n", a + 1, predicted.back(), simulated.back());
    }
    absl::StrAppendFormat(&out, "Kendall's tau-b (predicted vs simulated, %d plans): %.3f\n", predicted.size(),
                          KendallTauB(predicted, simulated));
  }
  return out;
}

}  // namespace hetsim::evaluation
