// Sweep throughput: points per second of `hetsim sweep` (build inputs, validate, simulate, write the
// row) on a 64-GPU configuration: GPT-39B on 4 DGX A100 + 4 DGX H100 (the bundled 512-GPU cluster cut
// to 4 nodes per island), 4 stages of TP 8 x DP 2, 32 microbatches; 20 cross-island bandwidths x 3
// schedules = 60 points per sweep. Goal (issue 7): >= 200 points/s on two cores (--jobs 2).
#include <unistd.h>

#include <filesystem>
#include <string>

#include <benchmark/benchmark.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "app/cli/examples.h"
#include "proto/io.h"
#include "service/sweep/evaluator.h"
#include "service/sweep/runner.h"

namespace {

using hetsim::cli::BundledExamples;

constexpr char kPlan[] = R"pb(
  name: "gpt39b-64gpu"
  model_path: "model-gpt39b.pbtxt"
  global_batch_size: 128
  micro_batch_size: 4
  schedule: H_1F1B
  overlap_grad_reduce: true
  stages {
    first_layer: 0
    num_layers: 6
    mesh { island: "a100" first_node: 0 node_count: 2 gpus_per_node: 8 }
    tensor_parallel: 8
    data_parallel: 2
  }
  stages {
    first_layer: 6
    num_layers: 6
    mesh { island: "a100" first_node: 2 node_count: 2 gpus_per_node: 8 }
    tensor_parallel: 8
    data_parallel: 2
  }
  stages {
    first_layer: 12
    num_layers: 19
    mesh { island: "h100" first_node: 0 node_count: 2 gpus_per_node: 8 }
    tensor_parallel: 8
    data_parallel: 2
  }
  stages {
    first_layer: 31
    num_layers: 19
    mesh { island: "h100" first_node: 2 node_count: 2 gpus_per_node: 8 }
    tensor_parallel: 8
    data_parallel: 2
  }
)pb";

constexpr char kSweep[] = R"pb(
  name: "bench-64gpu"
  cluster_path: "cluster.pbtxt"
  plan_path: "plan.pbtxt"
  axes { path: "cluster.inter_island_links[0].bandwidth_gbps" from: 5 to: 100 step: 5 }
  axes {
    path: "plan.schedule"
    values: [ "ONE_F_ONE_B", "EAGER_1F1B", "H_1F1B" ]
  }
)pb";

// Writes the inputs to a fresh folder and returns the sweep's path.
std::string WriteInputs() {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrCat("hetsim-bench-sweep-", ::getpid());
  std::filesystem::create_directories(dir);
  for (const hetsim::cli::Example& e : BundledExamples(hetsim::proto::FileFormat::kText)) {
    if (e.name != "cluster-512gpu" && e.name != "model-gpt39b") continue;
    absl::StatusOr<std::string> text = hetsim::proto::SerializeMessage(*e.message, hetsim::proto::FileFormat::kText);
    std::string contents = *text;
    if (e.name == "cluster-512gpu") {
      contents = absl::StrReplaceAll(contents,
                                     {{"node_count: 32", "node_count: 4"}, {"nodes_per_leaf: 8", "nodes_per_leaf: 4"}});
    }
    const std::string name = e.name == "cluster-512gpu" ? "cluster.pbtxt" : "model-gpt39b.pbtxt";
    (void)hetsim::proto::WriteFileAtomically((dir / name).string(), contents);
  }
  (void)hetsim::proto::WriteFileAtomically((dir / "plan.pbtxt").string(), kPlan);
  (void)hetsim::proto::WriteFileAtomically((dir / "sweep.pbtxt").string(), kSweep);
  return (dir / "sweep.pbtxt").string();
}

void BM_Sweep64Gpu(benchmark::State& state) {
  const std::string sweep = WriteInputs();
  hetsim::sweep::SweepJob job;
  job.sweep_path = sweep;
  job.output_path = sweep + ".csv";
  job.jobs = static_cast<int>(state.range(0));
  const hetsim::sweep::SimulationEvaluator evaluator;
  int64_t points = 0;
  for (auto _ : state) {
    absl::StatusOr<hetsim::sweep::SweepOutcome> outcome = hetsim::sweep::RunSweep(job, evaluator);
    if (!outcome.ok() || outcome->failed != 0) {
      state.SkipWithError(outcome.ok() ? "a point failed" : std::string(outcome.status().message()).c_str());
      return;
    }
    points += outcome->evaluated;
  }
  state.SetItemsProcessed(points);  // items_per_second = points per second
  state.counters["points"] = static_cast<double>(points) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_Sweep64Gpu)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
