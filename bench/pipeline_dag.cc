// Building the execution DAG and its static longest path, for the pipeline shapes of real plans
// (8-16 stages x 128 microbatches for 512 GPUs) and far larger ones.
#include <benchmark/benchmark.h>

#include <vector>

#include "sim/pipeline/dag.h"
#include "sim/pipeline/schedule.h"

namespace {

using namespace hetsim::pipeline;
using hetsim::Time;
using namespace hetsim::time_literals;

PipelineSchedule H1F1BSchedule(int stages, int microbatches) {
  ScheduleSpec spec;
  spec.kind = hetsim::spec::ScheduleKind::kH1F1B;
  spec.num_stages = stages;
  spec.num_microbatches = microbatches;
  const Time t_max = 10'000'000'000_ps;  // 10 ms
  // A slow link in the middle of the pipeline, fast ones elsewhere.
  spec.h1f1b.t_max = t_max;
  spec.h1f1b.boundary_comm.assign(stages - 1, t_max / 50);
  spec.h1f1b.boundary_comm[(stages - 1) / 2] = t_max * 3 / 4;
  return *BuildSchedule(spec, "bench");
}

UniformCosts Costs(int stages) {
  UniformCosts c;
  for (int s = 0; s < stages; ++s) {
    c.forward.push_back(3'000'000'000_ps + s * 1'000'000_ps);
    c.backward.push_back(6'000'000'000_ps + s * 2'000'000_ps);
  }
  c.comm_forward.assign(stages - 1, 200'000'000_ps);
  c.comm_backward.assign(stages - 1, 200'000'000_ps);
  c.comm_forward[(stages - 1) / 2] = 7'000'000'000_ps;
  c.comm_backward[(stages - 1) / 2] = 7'000'000'000_ps;
  return c;
}

void BM_BuildSchedule(benchmark::State& state) {
  const int stages = static_cast<int>(state.range(0)), m = static_cast<int>(state.range(1));
  for (auto _ : state) benchmark::DoNotOptimize(H1F1BSchedule(stages, m));
}

void BM_BuildDag(benchmark::State& state) {
  const int stages = static_cast<int>(state.range(0)), m = static_cast<int>(state.range(1));
  const PipelineSchedule schedule = H1F1BSchedule(stages, m);
  int nodes = 0;
  for (auto _ : state) {
    PipelineDag dag(schedule);
    nodes = dag.num_nodes();
    benchmark::DoNotOptimize(dag.topological_order().data());
  }
  state.counters["nodes"] = nodes;
  state.counters["nodes_per_s"] =
      benchmark::Counter(static_cast<double>(nodes), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_LongestPath(benchmark::State& state) {
  const int stages = static_cast<int>(state.range(0)), m = static_cast<int>(state.range(1));
  const PipelineDag dag(H1F1BSchedule(stages, m));
  const std::vector<Time> durations = NodeDurations(dag, Costs(stages));
  for (auto _ : state) benchmark::DoNotOptimize(AnalyzeLongestPath(dag, durations).iteration_time);
  state.counters["nodes"] = dag.num_nodes();
  state.counters["edges"] = dag.num_edges();
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->Args({8, 128})->Args({16, 128})->Args({32, 512})->Args({64, 1024})->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_BuildSchedule)->Apply(Shapes);
BENCHMARK(BM_BuildDag)->Apply(Shapes);
BENCHMARK(BM_LongestPath)->Apply(Shapes);

}  // namespace
