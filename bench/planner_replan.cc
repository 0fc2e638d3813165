// Re-planning time after a node failure on the bundled 512-GPU example (GPT-39B on A100 + H100
// islands, HAPT): the first plan (cold profiles), a re-plan with no cache, and a re-plan reusing the
// first plan's profiles. Counters: plan_s = the planner alone (what ReplanReport.replan_wall_s
// reports), pairs = stage-mesh pairs priced anew, hits = pairs answered by the cache. The simulation of
// the new plan is outside the timed part (its own figures are in docs/performance.md).
//   bench_planner_replan --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "base/check.h"
#include "proto/inputs.h"
#include "service/driver/replan.h"

namespace hetsim::planner {
namespace {

using driver::BuildSurvivingCluster;
using driver::FailedTargets;
using driver::PrimeProfileCache;
using driver::ReplanPlanRequest;
using driver::SurvivingCluster;

const proto::PlanInputs& Inputs() {
  static const proto::PlanInputs inputs = [] {
    const std::filesystem::path examples = std::filesystem::path(__FILE__).parent_path().parent_path() / "examples";
    absl::StatusOr<proto::PlanInputs> in =
        proto::LoadPlanInputs((examples / "plan-512gpu.pbtxt").string(), (examples / "cluster-512gpu.pbtxt").string());
    HETSIM_CHECK(in.ok(), "the bundled example: %s", in.status().ToString().c_str());
    return *in;
  }();
  return inputs;
}

// The first a100 node fails: the cluster keeps 504 GPUs.
PlanRequest SurvivorsRequest(ProfileCache* cache) {
  FailedTargets failed;
  failed.nodes.emplace_back();
  failed.nodes.back().set_island("a100");
  failed.nodes.back().set_node(0);
  absl::StatusOr<SurvivingCluster> s = BuildSurvivingCluster(Inputs().cluster, failed);
  HETSIM_CHECK(s.ok(), "surviving cluster: %s", s.status().ToString().c_str());
  proto::PlanInputs survivors = Inputs();
  survivors.cluster = s->cluster;
  absl::StatusOr<PlanRequest> r = ReplanPlanRequest(survivors, PlannerKind::kHapt, 2);
  HETSIM_CHECK(r.ok(), "re-plan request: %s", r.status().ToString().c_str());
  r->profile_cache = cache;
  return *r;
}

// Plans `r` once per iteration; the counters are the last plan's time, stage-mesh pairs and cache hits.
void PlanEachIteration(benchmark::State& state, const PlanRequest& r) {
  for (auto _ : state) {
    absl::StatusOr<PlanOutcome> o = MakePlan(r);
    if (!o.ok()) {
      state.SkipWithError(std::string(o.status().message()).c_str());
      continue;
    }
    state.counters["plan_s"] = o->planning_seconds;
    state.counters["pairs"] = static_cast<double>(o->profile.stage_mesh_pairs);
    state.counters["hits"] = static_cast<double>(o->profile.cache_hits);
  }
}

void BM_FirstPlan(benchmark::State& state) {
  const PlanRequest r = *ReplanPlanRequest(Inputs(), PlannerKind::kHapt, 2);
  PlanEachIteration(state, r);
}

void BM_ReplanCold(benchmark::State& state) {
  const PlanRequest r = SurvivorsRequest(nullptr);
  PlanEachIteration(state, r);
}

void BM_ReplanWarm(benchmark::State& state) {
  ProfileCache cache;
  const absl::StatusOr<double> primed = PrimeProfileCache(Inputs(), PlannerKind::kHapt, 2, &cache);
  HETSIM_CHECK(primed.ok(), "priming the profile cache: %s", primed.status().ToString().c_str());
  const PlanRequest r = SurvivorsRequest(&cache);
  PlanEachIteration(state, r);
}

BENCHMARK(BM_FirstPlan)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReplanCold)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReplanWarm)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace hetsim::planner
