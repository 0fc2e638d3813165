// Transformer Engine's userbuffers overlap in the cost model (Plan.tp_comm_overlap with sequence
// parallelism, docs/cost-model.md): which GEMMs run in chunks and how many, the compute time that adds
// (each chunk priced as its own GEMM, written out by hand here), and what stays exposed.
#include <catch2/catch.hpp>

#include "proto/gpu_presets.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/spec_test_util.h"

namespace {

using namespace hetsim::sim::workload;

StageConfig Overlapped(int tp, bool aggregate = false) {
  StageConfig c;
  c.tensor_parallel = tp;
  c.sequence_parallel = true;
  c.tp_comm_overlap = true;
  c.tp_comm_overlap_aggregate = aggregate;
  return c;
}

Gemm Linear(TpSplit split) {
  Gemm g{"linear", 1};
  g.m = g.n = g.k = 1024;
  g.split = split;
  return g;
}

ModelCost Llama(int experts = 0) {
  hetsim::v1::Model m;
  m.set_dtype(hetsim::v1::FP8);
  auto* t = m.mutable_transformer();
  t->set_num_layers(2);
  t->set_hidden_size(8192);
  t->set_ffn_hidden_size(28672);
  t->set_num_attention_heads(64);
  t->set_num_kv_heads(8);
  t->set_seq_length(8192);
  t->set_vocab_size(128256);
  t->set_gated_mlp(true);
  t->set_attention(hetsim::v1::ATTENTION_FLASH);
  if (experts > 0) {
    t->set_num_experts(experts);
    t->set_moe_top_k(2);
  }
  auto model = hetsim::testing::ModelCostOf(m, "model.pbtxt");
  REQUIRE(model.ok());
  return *std::move(model);
}

GpuCompute H100() {
  hetsim::v1::GpuType g;
  g.set_preset("H100-SXM");
  REQUIRE(hetsim::proto::ApplyGpuPreset(&g, "c", "gpu").ok());
  auto gpu = hetsim::testing::GpuComputeOf(g, hetsim::v1::FP8, "c", false);
  REQUIRE(gpu.ok());
  return *std::move(gpu);
}

}  // namespace

TEST_CASE("userbuffers: the ring exchange chunks per shard, the reduce-scatter pipeline in four") {
  const OverlapChunks column = UserbufferChunks(Linear(TpSplit::kColumns), Overlapped(8));
  CHECK(column.forward == 8);  // QKV, FC1: one chunk per arriving shard
  CHECK(column.input_grad == 1);
  const OverlapChunks row = UserbufferChunks(Linear(TpSplit::kRows), Overlapped(8));
  CHECK(row.forward == kReduceScatterSplits);
  CHECK(row.input_grad == 8);  // the gathered output gradient arrives shard by shard
  // aggregate: pairs of shards.
  CHECK(UserbufferChunks(Linear(TpSplit::kColumns), Overlapped(8, true)).forward == 4);
  CHECK(UserbufferChunks(Linear(TpSplit::kRows), Overlapped(8, true)).input_grad == 4);
  CHECK(UserbufferChunks(Linear(TpSplit::kColumns), Overlapped(3, true)).forward == 2);
}

TEST_CASE("userbuffers: whole GEMMs without the overlap, without SP, for experts, attention and the head") {
  StageConfig no_sp = Overlapped(8);
  no_sp.sequence_parallel = false;
  CHECK(UserbufferChunks(Linear(TpSplit::kColumns), no_sp).forward == 1);
  StageConfig off = Overlapped(8);
  off.tp_comm_overlap = false;
  CHECK(UserbufferChunks(Linear(TpSplit::kRows), off).forward == 1);
  CHECK(UserbufferChunks(Linear(TpSplit::kRows), Overlapped(1)).forward == 1);
  Gemm expert = Linear(TpSplit::kColumns);
  expert.per_expert = true;
  CHECK(UserbufferChunks(expert, Overlapped(8)).forward == 1);
  Gemm head = Linear(TpSplit::kColumns);
  head.fp8 = false;  // Megatron's output layer
  CHECK(UserbufferChunks(head, Overlapped(8)).forward == 1);
  Gemm core = Linear(TpSplit::kBatch);
  core.attention_core = true;
  CHECK(UserbufferChunks(core, Overlapped(8)).forward == 1);
}

TEST_CASE("userbuffers: a block's compute grows by exactly its chunked GEMMs' extra time") {
  const ModelCost model = Llama();
  const GpuCompute gpu = H100();
  for (const bool aggregate : {false, true}) {
    const int tp = 8;
    StageConfig on = Overlapped(tp, aggregate);
    on.first_layer = 1;
    on.num_layers = 1;
    on.micro_batch_size = 1;
    StageConfig off = on;
    off.tp_comm_overlap = false;
    off.tp_comm_overlap_aggregate = false;
    auto with = ComputeStageCost(model, on, gpu, "plan");
    auto without = ComputeStageCost(model, off, gpu, "plan");
    REQUIRE(with.ok());
    REQUIRE(without.ok());
    const double ring = aggregate ? 4 : 8;
    double forward = 0, backward = 0;
    int linears = 0;
    for (const Gemm& g : model.layer(1).gemms) {
      const GpuCompute& run = g.fp8 ? gpu : gpu.SixteenBit();
      GemmShape f{g.m, g.n, g.k, g.batch};
      if (g.split == TpSplit::kColumns && !g.attention_core) {
        f.n /= tp;
        forward += ring * run.GemmSeconds(GemmShape{f.m / ring, f.n, f.k, 1}) - run.GemmSeconds(f);
        ++linears;
      } else if (g.split == TpSplit::kRows) {
        f.k /= tp;
        // The pipeline into the reduce-scatter cuts the output columns.
        forward += 4 * run.GemmSeconds(GemmShape{f.m, f.n / 4, f.k, 1}) - run.GemmSeconds(f);
        backward += ring * run.GemmSeconds(GemmShape{f.m / ring, f.k, f.n, 1}) - run.GemmSeconds({f.m, f.k, f.n, 1});
        ++linears;
      }
    }
    CHECK(linears == 4);  // QKV, projection, FC1, FC2
    CHECK(forward > 0);
    CHECK(static_cast<double>(with->forward_time - without->forward_time) == Approx(forward * 1e12).margin(2));
    CHECK(static_cast<double>(with->backward_time - without->backward_time) == Approx(backward * 1e12).margin(2));
  }
}

TEST_CASE("userbuffers: experts' GEMMs stay whole") {
  const ModelCost model = Llama(8);
  const GpuCompute gpu = H100();
  StageConfig on = Overlapped(4);
  on.first_layer = 1;
  on.num_layers = 1;
  on.micro_batch_size = 1;
  StageConfig off = on;
  off.tp_comm_overlap = false;
  auto with = ComputeStageCost(model, on, gpu, "plan");
  auto without = ComputeStageCost(model, off, gpu, "plan");
  REQUIRE(with.ok());
  REQUIRE(without.ok());
  // Only the attention half's QKV and projection are chunked.
  double forward = 0;
  for (const Gemm& g : model.layer(1).gemms) {
    if (g.per_expert || g.attention_core || g.split == TpSplit::kNone) continue;
    GemmShape f{g.m, g.n, g.k, 1};
    const double chunks = g.split == TpSplit::kColumns ? 4 : kReduceScatterSplits;
    if (g.split == TpSplit::kColumns) f.n /= 4;
    if (g.split == TpSplit::kRows) f.k /= 4;
    const GemmShape chunk =
        g.split == TpSplit::kRows ? GemmShape{f.m, f.n / chunks, f.k, 1} : GemmShape{f.m / chunks, f.n, f.k, 1};
    forward += chunks * gpu.GemmSeconds(chunk) - gpu.GemmSeconds(f);
  }
  CHECK(static_cast<double>(with->forward_time - without->forward_time) == Approx(forward * 1e12).margin(2));
}

TEST_CASE("userbuffers: the last reduce-scatter chunk, and with aggregate the first exchange, stay exposed") {
  // Forward: 16 of reduce-scatter, 21 of all-gather at TP 8: a quarter of the reduce-scatter (4);
  // with aggregate also one shard of the seven the ring all-gather exchanges (3).
  CHECK(UserbufferExposed(16, 21, 8, false, true) == 4);
  CHECK(UserbufferExposed(16, 21, 8, true, true) == 4 + 3);
  // Backward: the reduce-scatters are bulk overlaps beside whole GEMMs; only aggregate's first exchange.
  CHECK(UserbufferExposed(16, 21, 8, false, false) == 0);
  CHECK(UserbufferExposed(16, 21, 8, true, false) == 3);
  // Of 40 TP collectives with 7 exposed: 33 hide behind ample compute; compute still caps what hides.
  CHECK(HiddenByUserbuffers(40, 7, 1000) == 33);
  CHECK(HiddenByUserbuffers(40, 7, 10) == 10);
  // No sequence parallelism, no userbuffers collectives: everything up to the compute, as before.
  CHECK(HiddenByUserbuffers(40, UserbufferExposed(0, 0, 8, true, true), 1000) == 40);
}

TEST_CASE("userbuffers: only the dense sublayers' TP collectives are Transformer Engine's") {
  // A block with an MoE MLP and shared experts: the attention's and the shared experts' gather and
  // reduce-scatter are userbuffers collectives, the routed experts' are not.
  const ModelCost model = Llama(8);
  int userbuffers = 0, routed = 0;
  for (const LayerCollective& c : model.layer(1).collectives_seq_par) {
    if (c.group != CollectiveGroup::kTensor) continue;
    (c.userbuffers ? userbuffers : routed) += c.forward_count;
  }
  CHECK(userbuffers == 2);  // the attention's all-gather and reduce-scatter
  CHECK(routed == 2);       // the routed MLP's
}
