// Planning time of the HAPT planner versus the number of planner layers (GPT on the 512-GPU two-island
// A100 + H100 example), versus cluster size (64, 512, 4096 GPUs, two islands of 8-GPU nodes), and
// versus the experts of an MoE variant (the search adds 1 + log2(E) expert layouts per option).
//   bench_planner_search --benchmark_filter=Layers
#include <benchmark/benchmark.h>

#include <string>

#include "planner/planner.h"
#include "proto/validate_cluster.h"
#include "service/driver/plan_messages.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim::planner {
namespace {

v1::Model Gpt(int blocks) {
  v1::Model m;
  m.set_name("gpt-39b");
  m.set_dtype(v1::BF16);
  auto* t = m.mutable_transformer();
  t->set_num_layers(blocks);
  t->set_hidden_size(8192);
  t->set_ffn_hidden_size(32768);
  t->set_num_attention_heads(64);
  t->set_seq_length(1024);
  t->set_vocab_size(51200);
  t->set_tied_embeddings(true);
  t->set_granularity(v1::BLOCK);
  return m;
}

// Two islands of `gpus / 16` 8-GPU nodes each: A100 and H100 over 200/400 Gb/s IB, 10 Gb/s across.
v1::Cluster TwoIslands(int gpus) {
  v1::Cluster c;
  c.set_name("two-islands");
  testing::AddGpuType(c, "A100", 312, 80, 2039);
  testing::AddGpuType(c, "H100", 989, 80, 3350);
  testing::AddNodeType(c, "a100x8", "A100", 8, 2400, 1000);
  testing::AddNodeType(c, "h100x8", "H100", 8, 3600, 1000);
  testing::IslandSpec a{.name = "a100", .node_type = "a100x8", .nodes = gpus / 16, .nics = 8, .nic_gbps = 200};
  a.nic_latency_ns = 1000;
  a.switch_latency_ns = 200;
  testing::IslandSpec h = a;
  h.name = "h100";
  h.node_type = "h100x8";
  h.nic_gbps = 400;
  testing::AddIsland(c, a);
  testing::AddIsland(c, h);
  testing::AddInterIslandLink(c, "a100", "h100", 10, 50000, 4);
  return c;
}

void Run(benchmark::State& state, int gpus, int blocks, int layers, int experts = 1) {
  driver::PlannerMessages in{.model = Gpt(blocks), .cluster = TwoIslands(gpus)};
  if (experts > 1) {  // top-2 of `experts` experts holding twice the dense FFN's width between them
    in.model.mutable_transformer()->set_num_experts(static_cast<uint32_t>(experts));
    in.model.mutable_transformer()->set_moe_top_k(2);
    in.model.mutable_transformer()->set_expert_ffn_hidden_size(static_cast<uint32_t>(65536 / experts));
  }
  PlanRequest settings;
  settings.layers = layers;
  settings.global_batch_size = 1024;
  settings.micro_batch_size = 8;
  settings.threads = 2;
  absl::StatusOr<PlanRequest> resolved = driver::ResolvePlanRequest(in, settings);
  if (!resolved.ok()) {
    state.SkipWithError(std::string(resolved.status().message()).c_str());
    return;
  }
  const PlanRequest& req = *resolved;
  for (auto _ : state) {
    absl::StatusOr<PlanOutcome> out = MakePlan(req);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      return;
    }
    state.counters["stages"] = static_cast<double>(out->plan.stages.size());
    state.counters["iteration_ms"] = TimeToMilliseconds(out->prediction.iteration);
    state.counters["dp_runs"] = static_cast<double>(out->search.dp_runs);
    state.counters["candidates"] = static_cast<double>(out->search.candidates);
  }
}

// Planner layers 8, 32, 128, 256 (a 126-block model; 256 refines to attention/MLP halves).
void BM_Layers(benchmark::State& state) { Run(state, 512, 126, static_cast<int>(state.range(0))); }
BENCHMARK(BM_Layers)->Arg(8)->Arg(32)->Arg(128)->Arg(256)->Unit(benchmark::kMillisecond)->Iterations(1);

// Cluster size at 128 layers (HAPT's fine granularity).
void BM_ClusterSize(benchmark::State& state) { Run(state, static_cast<int>(state.range(0)), 126, 128); }
BENCHMARK(BM_ClusterSize)->Arg(64)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond)->Iterations(1);

// The goal: a 512-GPU two-island cluster at about 150 layers in under 10 s.
void BM_Goal512Gpus150Layers(benchmark::State& state) { Run(state, 512, 148, 150); }
BENCHMARK(BM_Goal512Gpus150Layers)->Unit(benchmark::kMillisecond)->Iterations(1);

// An MoE variant at 32 layers on 512 GPUs: 1 (dense), 8 and 64 experts.
void BM_MoeExperts(benchmark::State& state) { Run(state, 512, 126, 32, static_cast<int>(state.range(0))); }
BENCHMARK(BM_MoeExperts)->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace hetsim::planner
