#include "service/evaluation/own_prediction.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/counted.h"
#include "base/status_macros.h"
#include "base/units.h"
#include "planner/plan_reader.h"
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

// Stage i's simulated peak memory; a mixed stage's of its tightest group (the largest share of its GPU's
// capacity), the group the planner's prediction names.
int64_t TightestPeak(const executor::ExecutionSetup& setup, const executor::ExecutionResult& run, int i) {
  const auto peak_of = [&](int group) {
    int64_t peak = 0;
    for (const auto& [when, bytes] : executor::MemoryTimeline(setup, run, i, group)) peak = std::max(peak, bytes);
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

// The stages of one pipeline's setup and run, appended to `s`.
void AddSimulatedStages(const executor::ExecutionSetup& setup, const executor::ExecutionResult& run,
                        SimulatedStages& s) {
  const int S = setup.num_stages();
  for (int i = 0; i < S; ++i) {
    // A physical stage's work: every chunk it runs (k = chunk x S + i), as the planner prices it.
    Time t = 0;
    for (size_t k = i; k < setup.virtual_stages.size(); k += S) {
      t += setup.virtual_stages[k].forward_time() + setup.virtual_stages[k].backward_time();
    }
    s.t.push_back(t);
    Time c = 0;
    for (const executor::BoundaryTransfer& b : setup.boundaries) {
      if (b.from_stage == i) c = std::max({c, b.forward_time, b.backward_time});
    }
    s.comm.push_back(c);
    s.peak.push_back(TightestPeak(setup, run, i));
  }
}

}  // namespace

absl::StatusOr<planner::Prediction> PredictOwnPlan(const proto::PlanInputs& inputs) {
  // A mixed stage (Stage.replica_groups) is priced group by group (planner/mixed_replicas.h).
  const spec::ModelSpec model_spec = proto::ResolveModel(inputs.model, "model");
  const workload::ModelCost model = workload::ModelCost::Create(model_spec);
  HETSIM_ASSIGN_OR_RETURN(spec::ClusterSpec cluster_spec, proto::ResolveCluster(inputs.cluster, ""));
  HETSIM_ASSIGN_OR_RETURN(std::unique_ptr<planner::ClusterModel> cluster,
                          planner::ClusterModel::Create(std::move(cluster_spec), model.dtype()));
  const spec::PlanSpec plan = proto::ResolvePlan(inputs.plan, inputs.plan_path);
  if (!plan.pipelines.empty()) return planner::PredictPipelinesPlan(model, *cluster, plan);
  planner::Profiler profiler = planner::PlanProfiler(model, *cluster, plan);
  return planner::PredictPlan(profiler, plan);
}

absl::StatusOr<SimulatedStages> SimulateStages(const proto::PlanInputs& inputs, bool exact) {
  HETSIM_ASSIGN_OR_RETURN(driver::Simulation simulated, driver::SimulatePlan(inputs, driver::DefaultFidelity(exact)));
  SimulatedStages s;
  if (simulated.pipelines.empty()) {
    AddSimulatedStages(*simulated.setup, simulated.result, s);
    s.iteration = simulated.result.iteration_time;
    s.pipeline = simulated.result.pipeline_end - simulated.result.pipeline_start;
    return s;
  }
  // A plan of pipelines: every pipeline's stages in turn, each pipeline's span and end.
  for (size_t p = 0; p < simulated.pipelines.size(); ++p) {
    const driver::PipelineSimulation& pipe = simulated.pipelines[p];
    AddSimulatedStages(*pipe.setup, pipe.result, s);
    const Time span = pipe.result.pipeline_end - pipe.result.pipeline_start;
    s.pipelines.push_back({.name = pipe.name, .pipeline = span, .end = simulated.pipeline_sync.pipeline_end[p]});
    s.pipeline = std::max(s.pipeline, span);
  }
  s.iteration = simulated.pipeline_sync.iteration_time;
  return s;
}

absl::StatusOr<OwnValidation> ValidateOwnPrediction(const proto::PlanInputs& inputs, int top_k,
                                                    planner::PlannerKind planner, bool exact) {
  OwnValidation v;
  HETSIM_ASSIGN_OR_RETURN(v.prediction, PredictOwnPlan(inputs));
  HETSIM_ASSIGN_OR_RETURN(v.simulated, SimulateStages(inputs, exact));
  if (top_k > 0) {
    HETSIM_ASSIGN_OR_RETURN(v.top_plans, RankTopPlans(inputs, top_k, planner, exact));
    std::vector<double> predicted, simulated;
    for (const RankedPlan& p : v.top_plans) {
      predicted.push_back(p.predicted_ms);
      simulated.push_back(p.simulated_ms);
    }
    v.kendall_tau = KendallTauB(predicted, simulated);
  }
  return v;
}

namespace {

void AppendStageLine(const planner::StagePrediction& p, const SimulatedStages& sim, size_t k, int label,
                     std::string& out) {
  absl::StrAppendFormat(&out, "%-5d %10.3f %10.3f %6.1f%% %10.3f %10.3f %6.1f%% %9.2fG %9.2fG %6.1f%%\n", label,
                        Ms(p.t), Ms(sim.t[k]), 100 * RelErr(Ms(p.t), Ms(sim.t[k])), Ms(p.comm), Ms(sim.comm[k]),
                        100 * RelErr(Ms(p.comm), Ms(sim.comm[k])), BytesToGib(p.peak_bytes), BytesToGib(sim.peak[k]),
                        100 * RelErr(p.peak_bytes, sim.peak[k]));
}

// A plan of pipelines' line per pipeline: its DAG and its end with its ranges, predicted and simulated.
void AppendPipelineLine(const planner::Prediction::Pipeline& p, const SimulatedStages::Pipeline& sim,
                        std::string& out) {
  absl::StrAppendFormat(&out,
                        "pipeline %s: %s, %s; pipeline %.3f ms predicted, %.3f ms simulated "
                        "(%+.1f%%); end with its layer ranges' all-reduces %.3f ms predicted, %.3f ms simulated "
                        "(%+.1f%%)\n",
                        sim.name, Counted(p.stages, "stage"), Counted(p.microbatches, "microbatch"), Ms(p.pipeline),
                        Ms(sim.pipeline), 100 * RelErr(Ms(p.pipeline), Ms(sim.pipeline)), Ms(p.end), Ms(sim.end),
                        100 * RelErr(Ms(p.end), Ms(sim.end)));
}

// Per stage t_i, c_i and memory, predicted and simulated; a plan of pipelines' stages under their
// pipeline's line, numbered within it.
void AppendStageTable(const planner::Prediction& pred, const SimulatedStages& sim, std::string& out) {
  absl::StrAppendFormat(&out, "%-5s %10s %10s %7s %10s %10s %7s %10s %10s %7s\n", "stage", "t_pred_ms", "t_sim_ms",
                        "err", "c_pred_ms", "c_sim_ms", "err", "mem_pred", "mem_sim", "err");
  if (pred.pipelines.empty()) {
    for (size_t i = 0; i < pred.stages.size(); ++i) AppendStageLine(pred.stages[i], sim, i, static_cast<int>(i), out);
    return;
  }
  size_t k = 0;
  for (size_t p = 0; p < pred.pipelines.size() && p < sim.pipelines.size(); ++p) {
    AppendPipelineLine(pred.pipelines[p], sim.pipelines[p], out);
    for (int i = 0; i < pred.pipelines[p].stages; ++i, ++k) AppendStageLine(pred.stages[k], sim, k, i, out);
  }
}

// The boundaries whose transfer exceeds their pipeline's t_max (Eq. 13 assumes they hide).
void AppendExposedBoundaries(const planner::Prediction& pred, std::string& out) {
  std::vector<planner::Prediction::Pipeline> pipelines = pred.pipelines;
  if (pipelines.empty()) {
    pipelines.push_back(
        {.stages = static_cast<int>(pred.stages.size()), .microbatches = pred.microbatches, .t_max = pred.t_max});
  }
  bool exposed = false;
  size_t first = 0;
  for (const planner::Prediction::Pipeline& pipe : pipelines) {
    for (int i = 0; i + 1 < pipe.stages; ++i) {
      const Time c = pred.stages[first + i].comm;
      if (c <= pipe.t_max) continue;
      exposed = true;
      absl::StrAppendFormat(&out,
                            "boundary %d -> %d: c = %.3f ms > t_max = %.3f ms: about %.3f ms per microbatch cannot "
                            "hide behind compute (%.3f ms over the iteration); Eq. 13 assumes full overlap\n",
                            i, i + 1, Ms(c), Ms(pipe.t_max), Ms(c - pipe.t_max),
                            Ms((c - pipe.t_max) * (pipe.microbatches - 1)));
    }
    first += pipe.stages;
  }
  if (!exposed) absl::StrAppend(&out, "every c_i <= t_max: communication fully overlappable (Eq. 13 applies)\n");
}

}  // namespace

std::string FormatOwnValidation(const proto::PlanInputs& inputs, const OwnValidation& v, int top_k,
                                absl::string_view planner_name) {
  const planner::Prediction& pred = v.prediction;
  const SimulatedStages& sim = v.simulated;
  std::string out = absl::StrFormat("validate \"%s\" on \"%s\": ", inputs.plan.name(), inputs.cluster.name());
  if (!pred.pipelines.empty()) absl::StrAppend(&out, Counted(pred.pipelines.size(), "pipeline"), ", ");
  absl::StrAppend(&out, Counted(pred.stages.size(), "stage"), ", ", Counted(pred.microbatches, "microbatch"), "\n");
  AppendStageTable(pred, sim, out);
  absl::StrAppendFormat(&out,
                        "iteration: Eq. 13 %.3f ms (%+.1f%%), DAG %.3f ms, predicted with gradient sync %.3f ms "
                        "(%+.1f%%), simulated %.3f ms (pipeline %.3f ms)\n",
                        Ms(pred.eq13), 100 * RelErr(Ms(pred.eq13), Ms(sim.iteration)), Ms(pred.pipeline),
                        Ms(pred.iteration), 100 * RelErr(Ms(pred.iteration), Ms(sim.iteration)), Ms(sim.iteration),
                        Ms(sim.pipeline));
  AppendExposedBoundaries(pred, out);
  if (top_k > 0) {
    absl::StrAppendFormat(&out, "top-%d plans of %s:\n%-4s %12s %12s\n", top_k, planner_name, "rank", "pred_ms",
                          "sim_ms");
    for (size_t a = 0; a < v.top_plans.size(); ++a) {
      absl::StrAppendFormat(&out, "%-4d %12.3f %12.3f\n", a + 1, v.top_plans[a].predicted_ms,
                            v.top_plans[a].simulated_ms);
    }
    absl::StrAppendFormat(&out, "Kendall's tau-b (predicted vs simulated, %s): %.3f\n",
                          Counted(v.top_plans.size(), "plan"), v.kendall_tau);
  }
  return out;
}

}  // namespace hetsim::evaluation
