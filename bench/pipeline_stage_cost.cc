// Pricing one candidate stage with the cost model: what the planner pays per (layer range, mesh)
// pair. GPT-39B at SUBLAYER granularity (98 layers), A100 preset-like figures.
#include <benchmark/benchmark.h>

#include "proto/resolve.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/proto/model_shapes.h"

namespace {

using namespace hetsim::workload;

const ModelCost& Gpt39b() {
  static const ModelCost model = [] {
    hetsim::v1::Model m;
    auto* t =
        hetsim::testing::SetTransformer(m, {.layers = 48, .hidden = 8192, .heads = 64, .seq = 1024, .vocab = 51200});
    t->set_tied_embeddings(true);
    t->set_granularity(hetsim::v1::SUBLAYER);
    return ModelCost::Create(hetsim::proto::ResolveModel(m, "bench"));
  }();
  return model;
}

void BM_StageCost(benchmark::State& state) {
  hetsim::v1::GpuType a100;
  a100.set_peak_tflops_bf16(312);
  a100.set_hbm_bandwidth_gbytes_per_s(2039);
  a100.mutable_efficiency()->set_max_efficiency(0.8);
  a100.mutable_efficiency()->set_half_efficiency_gflop(0.5);
  const GpuCompute gpu = *GpuCompute::Create(hetsim::proto::ResolveGpu(a100), hetsim::spec::DType::kBf16, "bench");
  StageConfig c;
  c.first_layer = 1;
  c.num_layers = static_cast<int>(state.range(0));
  c.tensor_parallel = 8;
  c.data_parallel = 8;
  c.zero_stage = 1;
  c.recompute = hetsim::spec::Recompute::kSelective;
  c.sequence_parallel = true;
  c.micro_batch_size = 8;
  for (auto _ : state) benchmark::DoNotOptimize(ComputeStageCost(Gpt39b(), c, gpu, "bench"));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_StageCost)->Arg(8)->Arg(32)->Arg(96)->Unit(benchmark::kMicrosecond);

}  // namespace
