#include "planner/plan_table.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/units.h"
#include "sim/pipeline/schedule.h"

namespace hetsim::planner {

namespace {

double Ms(Time t) { return TimeToMilliseconds(t); }

// "full/N" when only the first N blocks of each chunk recompute.
std::string RecomputeName(const spec::StageSpec& st) {
  switch (st.recompute) {
    case spec::Recompute::kSelective: return "selective";
    case spec::Recompute::kFull:
      return st.recompute_num_layers > 0 ? absl::StrFormat("full/%d", st.recompute_num_layers) : "full";
    case spec::Recompute::kNone: break;
  }
  return "none";
}

// A mixed stage's line names "mixed" for its island; a line per replica group follows with its mesh, TP x
// DP, the samples each replica computes and its own passes and memory.
void AppendReplicaGroups(const spec::StageSpec& st, const planner::StagePrediction& sp, bool moe, std::string& s) {
  for (size_t g = 0; g < st.replica_groups.size() && g < sp.groups.size(); ++g) {
    const spec::ReplicaGroupSpec& rg = st.replica_groups[g];
    const planner::StagePrediction::Group& pg = sp.groups[g];
    const std::string mesh = absl::StrFormat("%dx%d@%d.%d", rg.mesh.node_count, rg.mesh.gpus_per_node,
                                             rg.mesh.first_node, rg.mesh.first_gpu);
    absl::StrAppendFormat(&s, "  group %-3d %-14s %-8s %3d %3d share %d samples/replica %9.3f %9.3f %7.2f/%-7.2f", g,
                          rg.mesh.island, mesh, rg.tensor_parallel, rg.data_parallel, rg.micro_batch_share,
                          Ms(pg.forward), Ms(pg.backward), BytesToGib(static_cast<double>(pg.peak_bytes)),
                          BytesToGib(static_cast<double>(pg.capacity_bytes)));
    // MoE: the group's own expert layout (ReplicaGroup.expert_parallel and expert_tensor_parallel).
    if (moe) absl::StrAppendFormat(&s, "  EPxETP %dx%d", st.GroupExpertParallel(rg), st.GroupExpertTensorParallel(rg));
    s += "\n";
  }
}

// A stage's line, then its replica groups' lines.
void AppendStage(const spec::StageSpec& st, const planner::StagePrediction& sp, int i, bool moe, std::string& s) {
  const std::string layers = absl::StrFormat("%d-%d", st.first_layer, st.first_layer + st.num_layers - 1);
  const std::string mesh =
      absl::StrFormat("%dx%d@%d.%d", st.mesh.node_count, st.mesh.gpus_per_node, st.mesh.first_node, st.mesh.first_gpu);
  const int etp = spec::ExpertTensorParallelOr(st.expert_tensor_parallel, st.tensor_parallel);
  const std::string experts = moe ? absl::StrFormat("%-6s ", absl::StrFormat("%dx%d", st.expert_parallel, etp)) : "";
  absl::StrAppendFormat(&s, "%-5d %-11s %-14s %-8s %3d %3d %s%4d %-9s %6d %9.3f %9.3f %9.3f %9.3f %7.2f/%-7.2f\n", i,
                        layers, st.mixed() ? "mixed" : st.mesh.island, st.mixed() ? "groups" : mesh, st.tensor_parallel,
                        st.data_parallel, experts, st.zero_stage, RecomputeName(st), sp.warmup, Ms(sp.forward),
                        Ms(sp.backward), Ms(sp.t), Ms(sp.comm), BytesToGib(static_cast<double>(sp.peak_bytes)),
                        BytesToGib(static_cast<double>(sp.capacity_bytes)));
  AppendReplicaGroups(st, sp, moe, s);
}

}  // namespace

std::string RenderPlanOutcome(const planner::PlanOutcome& o, const std::string& cluster_name) {
  const spec::PlanSpec& plan = o.plan;
  const planner::Prediction& p = o.prediction;
  std::string s = absl::StrFormat(
      "plan \"%s\": model \"%s\" on cluster \"%s\", planner %s over %d planner layers\n"
      "global batch %d = %d microbatches of %d, schedule %s%s%s\n",
      plan.name, o.model.name, cluster_name, planner::PlannerName(o.planner), o.planner_layers, plan.global_batch_size,
      p.microbatches, plan.micro_batch_size, pipeline::ScheduleName(plan.schedule),
      plan.virtual_stages > 1 ? absl::StrFormat(" x %d chunks a stage", plan.virtual_stages) : "",
      plan.zero3_prefetch ? ", ZeRO-3 gathers prefetched" : "");
  // MoE models add the experts' layout, EP x ETP (dense plans print as before).
  const bool moe = o.model.transformer && o.model.transformer->num_experts > 1;
  absl::StrAppendFormat(&s, "%-5s %-11s %-14s %-8s %3s %3s %s%4s %-9s %6s %9s %9s %9s %9s %15s\n", "stage", "layers",
                        "island", "mesh", "TP", "DP", moe ? "EPxETP " : "", "ZeRO", "recompute", "warmup", "fwd_ms",
                        "bwd_ms", "t_ms", "c_ms", "mem_GiB/cap");
  if (plan.pipelines.empty()) {
    for (size_t i = 0; i < plan.stages.size(); ++i)
      AppendStage(plan.stages[i], p.stages[i], static_cast<int>(i), moe, s);
  }
  // A plan of pipelines: a line per pipeline (its GPU type, batch share), then its stages; the
  // prediction's stages are every pipeline's in turn.
  size_t k = 0;
  for (const spec::PipelineSpec& pipe : plan.pipelines) {
    absl::StrAppendFormat(&s, "pipeline %s: %d stages, batch share %d samples (%.1f%%) = %d microbatches of %d\n",
                          pipe.name, pipe.stages.size(), pipe.batch_share,
                          100.0 * static_cast<double>(pipe.batch_share) / static_cast<double>(plan.global_batch_size),
                          pipe.batch_share / std::max<uint64_t>(1, pipe.micro_batch_size), pipe.micro_batch_size);
    for (size_t i = 0; i < pipe.stages.size() && k < p.stages.size(); ++i, ++k) {
      AppendStage(pipe.stages[i], p.stages[k], static_cast<int>(i), moe, s);
    }
  }
  absl::StrAppendFormat(&s,
                        "predicted: t_max %.3f ms, cycle %.3f ms, Eq. 13 %.3f ms, pipeline (DAG longest path) %.3f ms, "
                        "iteration with gradient sync %.3f ms, eta %.1f%%\n",
                        Ms(p.t_max), Ms(p.cycle), Ms(p.eq13), Ms(p.pipeline), Ms(p.iteration), 100 * p.metrics.eta);
  absl::StrAppendFormat(&s,
                        "planning time %.3f s: profiler %d layer multisets, %d stage-mesh pairs priced for %d lookups "
                        "(%d infeasible), %d cost-model calls; search %d t_max candidates, %d evaluated in %d DP "
                        "runs, %d sparse-index entries, %d transitions\n",
                        o.planning_seconds, o.profile.signatures, o.profile.stage_mesh_pairs,
                        o.profile.stage_mesh_lookups, o.profile.infeasible_pairs, o.profile.cost_model_calls,
                        o.search.candidates, o.search.candidates_evaluated, o.search.dp_runs, o.search.index_entries,
                        o.search.transitions);
  for (const std::string& n : o.notes) absl::StrAppend(&s, "note: ", n, "\n");
  return s;
}

}  // namespace hetsim::planner
