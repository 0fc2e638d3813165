
// A whole `hetsim run` minus file IO: validate the inputs, build the setup (topology, routes, cost
// model, DAG), execute one iteration on the max-min fair network, build the report. Issue 5's goal
// for the bundled 512-GPU example (GPT-39B, H-1F1B, 128 microbatches): under 1 s wall and 1 GiB peak
// memory. Also 4096 and 16384 homogeneous H100 GPUs (GPT-3 175B, TP 8 x PP 16 x DP 32 / 128).
// Counters: wall seconds per run (and of it the setup's), events/s, flows, and the process's peak RSS (getrusage; a
// high water mark, so run one case with --benchmark_filter for its own figure).
//
//   build/bench/bench_executor_run --benchmark_filter=Bundled512
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <benchmark/benchmark.h>

#include "app/cli/examples.h"
#include "base/check.h"
#include "proto/inputs.h"
#include "service/driver/simulate.h"
#include "tests/proto/model_shapes.h"

namespace {

namespace v1 = hetsim::v1;

double PeakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: KiB
}

hetsim::proto::PlanInputs Validated(hetsim::proto::PlanInputs in) {
  const absl::Status s = hetsim::proto::ValidatePlanInputs(in);
  HETSIM_CHECK(s.ok(), "bench inputs invalid: %s", std::string(s.message()).c_str());
  return in;
}

// The bundled example as `hetsim example` writes it: cluster-512gpu, model-gpt39b, plan-512gpu.
hetsim::proto::PlanInputs Bundled512() {
  hetsim::proto::PlanInputs in;
  for (const hetsim::cli::Example& e : hetsim::cli::BundledExamples(hetsim::proto::FileFormat::kText)) {
    if (e.name == "cluster-512gpu") in.cluster.CopyFrom(*e.message);
    if (e.name == "model-gpt39b") in.model.CopyFrom(*e.message);
    if (e.name == "plan-512gpu") in.plan.CopyFrom(*e.message);
  }
  in.plan_path = "plan-512gpu.pbtxt";
  in.cluster_path = "cluster-512gpu.pbtxt";
  in.model_path = "model-gpt39b.pbtxt";
  return Validated(std::move(in));
}

// `nodes` DGX H100 (8 GPUs on NVSwitch, 8 x 400 Gb/s NDR NICs) on a non-blocking fat tree, GPT-3
// 175B (96 blocks + embedding + head), H-1F1B over 16 stages of TP 8 x DP `nodes` / 16, one sample
// per replica per microbatch, 128 microbatches, ZeRO-1 with overlapped gradient reduction.
hetsim::proto::PlanInputs Homogeneous(int nodes) {
  hetsim::proto::PlanInputs in;
  v1::Cluster& c = in.cluster;
  c.set_name("h100-fat-tree");
  v1::GpuType* gpu = c.add_gpu_types();
  gpu->set_name("h100");
  gpu->set_preset("H100-SXM");
  v1::NodeType* node = c.add_node_types();
  node->set_name("dgx-h100");
  node->set_gpu_type("h100");
  node->set_gpus_per_node(8);
  node->set_intra_node_fabric(v1::NVSWITCH);
  node->set_intra_node_bandwidth_gbps(3600);
  node->set_intra_node_latency_ns(1000);
  v1::Island* island = c.add_islands();
  island->set_name("h100");
  island->set_node_type("dgx-h100");
  island->set_node_count(nodes);
  island->set_fabric(v1::INFINIBAND);
  island->set_topology(v1::FAT_TREE);
  island->set_nodes_per_leaf(16);
  island->set_oversubscription(1);
  island->set_nics_per_node(8);
  island->set_nic_bandwidth_gbps(400);
  island->set_nic_latency_ns(1000);
  island->set_switch_latency_ns(130);

  v1::Model& m = in.model;
  m.set_name("gpt3-175b");
  m.set_dtype(v1::BF16);
  v1::Transformer* t = m.mutable_transformer();
  hetsim::testing::SetGpt3Shape(t);
  t->set_tied_embeddings(true);
  t->set_granularity(v1::BLOCK);

  const int stages = 16, layers = 98, nodes_per_stage = nodes / stages, dp = nodes_per_stage;
  v1::Plan& p = in.plan;
  p.set_name("gpt3-175b-tp8-pp16");
  *p.mutable_model() = m;
  p.set_micro_batch_size(dp);
  p.set_global_batch_size(static_cast<uint64_t>(dp) * 128);
  p.set_schedule(v1::H_1F1B);
  p.set_overlap_grad_reduce(true);
  p.set_grad_bucket_bytes(uint64_t{1} << 30);
  int layer = 0;
  for (int s = 0; s < stages; ++s) {
    const int count = layers / stages + (s < layers % stages ? 1 : 0);
    v1::Stage* st = p.add_stages();
    st->set_first_layer(layer);
    st->set_num_layers(count);
    layer += count;
    st->mutable_mesh()->set_island("h100");
    st->mutable_mesh()->set_first_node(s * nodes_per_stage);
    st->mutable_mesh()->set_node_count(nodes_per_stage);
    st->mutable_mesh()->set_first_gpu(0);
    st->mutable_mesh()->set_gpus_per_node(8);
    st->set_tensor_parallel(8);
    st->set_data_parallel(dp);
    st->set_zero_stage(1);
    st->set_recompute(v1::RECOMPUTE_SELECTIVE);
    st->set_sequence_parallel(true);
  }
  in.plan_path = "gpt3-175b.pbtxt";
  in.cluster_path = "h100-fat-tree.pbtxt";
  return Validated(std::move(in));
}

// The bundled Llama 3 405B examples (cluster-16k-h100 with plan-llama3-405b or its 128K variant);
// with `nodes` other than 2048, the same cluster and model scaled: `nodes` / 20 nodes per stage over
// 20 stages (6 or 7 of the 128 layers each), 1F1B, one sequence per replica per microbatch, 16
// microbatches (100,000 GPUs: 12,500 nodes, DP 625).
hetsim::proto::PlanInputs Llama3(const char* plan_name, int nodes = 2048) {
  hetsim::proto::PlanInputs in;
  for (const hetsim::cli::Example& e : hetsim::cli::BundledExamples(hetsim::proto::FileFormat::kText)) {
    if (e.name == "cluster-16k-h100") in.cluster.CopyFrom(*e.message);
    if (e.name == plan_name) in.plan.CopyFrom(*e.message);
  }
  in.model = in.plan.model();
  in.plan_path = std::string(plan_name) + ".pbtxt";
  in.cluster_path = "cluster-16k-h100.pbtxt";
  if (nodes != 2048) {
    in.cluster.mutable_islands(0)->set_node_count(nodes);
    const int stages = 20, per_stage = nodes / stages, layers = 128;
    v1::Plan& p = in.plan;
    const v1::Stage proto_stage = p.stages(0);
    p.clear_stages();
    p.set_schedule(v1::ONE_F_ONE_B);
    p.set_virtual_stages(0);
    p.set_micro_batch_size(per_stage);
    p.set_global_batch_size(static_cast<uint64_t>(per_stage) * 16);
    int layer = 0;
    for (int s = 0; s < stages; ++s) {
      v1::Stage* st = p.add_stages();
      *st = proto_stage;
      const int count = layers / stages + (s < layers % stages ? 1 : 0);
      st->set_first_layer(layer);
      st->set_num_layers(count);
      layer += count;
      st->mutable_mesh()->set_first_node(s * per_stage);
      st->mutable_mesh()->set_node_count(per_stage);
      st->set_data_parallel(per_stage);
    }
  }
  return Validated(std::move(in));
}

// The two opt-in approximations a frontier-scale what-if uses: aggregated gradient rings and
// representative boundary flows (docs/performance.md measures their error).
hetsim::driver::SimulateOptions Approximated() {
  hetsim::driver::SimulateOptions o;
  o.grad_sync_ring_steps = hetsim::collectives::RingSteps::kAggregated;
  o.boundary_flows = hetsim::executor::BoundaryFlows::kRepresentative;
  return o;
}

void RunWhole(benchmark::State& state, const hetsim::proto::PlanInputs& inputs,
              const hetsim::driver::SimulateOptions& options = {}) {
  uint64_t events = 0, flows = 0;
  double seconds = 0, setup_seconds = 0, iteration_ms = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<hetsim::driver::Simulation> sim = hetsim::driver::SimulatePlan(inputs, options);
    if (!sim.ok()) {
      state.SkipWithError(std::string(sim.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(sim->report.iteration_time_ms());
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    setup_seconds += sim->setup_wall_s;
    events += sim->result.events;
    flows = sim->result.flows;
    iteration_ms = sim->report.iteration_time_ms();
  }
  const double runs = static_cast<double>(state.iterations());
  state.counters["wall_s"] = seconds / runs;
  state.counters["setup_s"] = setup_seconds / runs;
  state.counters["events"] = static_cast<double>(events) / runs;
  state.counters["events_per_s"] = static_cast<double>(events) / seconds;
  state.counters["flows"] = static_cast<double>(flows);
  state.counters["peak_rss_MiB"] = PeakRssMiB();
  state.counters["simulated_ms"] = iteration_ms;
}

void BM_Bundled512(benchmark::State& state) {
  static const hetsim::proto::PlanInputs inputs = Bundled512();
  RunWhole(state, inputs);
}
BENCHMARK(BM_Bundled512)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Homogeneous(benchmark::State& state) {
  const hetsim::proto::PlanInputs inputs = Homogeneous(static_cast<int>(state.range(0)) / 8);
  RunWhole(state, inputs);
}
BENCHMARK(BM_Homogeneous)
    ->ArgName("gpus")
    ->Arg(4096)
    ->Arg(16384)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

void BM_Llama3_405b_16k(benchmark::State& state) { RunWhole(state, Llama3("plan-llama3-405b")); }
BENCHMARK(BM_Llama3_405b_16k)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

void BM_Llama3_405b_128k_context(benchmark::State& state) { RunWhole(state, Llama3("plan-llama3-405b-128k")); }
BENCHMARK(BM_Llama3_405b_128k_context)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

void BM_Llama3_405b_100k_gpus(benchmark::State& state) { RunWhole(state, Llama3("plan-llama3-405b", 12500)); }
BENCHMARK(BM_Llama3_405b_100k_gpus)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

void BM_Llama3_405b_16k_approximated(benchmark::State& state) {
  RunWhole(state, Llama3("plan-llama3-405b"), Approximated());
}
BENCHMARK(BM_Llama3_405b_16k_approximated)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void BM_Llama3_405b_100k_gpus_approximated(benchmark::State& state) {
  RunWhole(state, Llama3("plan-llama3-405b", 12500), Approximated());
}
BENCHMARK(BM_Llama3_405b_100k_gpus_approximated)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
