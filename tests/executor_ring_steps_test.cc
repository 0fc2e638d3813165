// The opt-in approximation `run --ring-steps aggregated` against the full simulation on a 256-GPU
// plan small enough to run both: gradient-synchronisation rings with one flow per ring edge for all
// steps give the iteration time within the bound docs/performance.md states, and the report names it.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/executor/executor.h"
#include "sim/executor/setup.h"
#include "tests/executor_test_util.h"
#include "tests/topology_clusters.h"
#include "traces/metrics.h"

namespace hetsim {
namespace {

// 32 nodes of 8 H100 (presets: NCCL's achieved bandwidth and latencies) on a fat tree of 8 nodes per
// leaf at 2:1; a 16-block GPT on 2 stages of TP 8 x DP 16, 8 microbatches, ZeRO-1, gradient
// reduction overlapped with the backward in 64 MiB buckets.
proto::PlanInputs Plan256() {
  v1::Cluster c = testing::H100Island(32, v1::FAT_TREE, 8, 8, 2);
  c.set_ideal(false);
  c.mutable_gpu_types(0)->set_preset("H100-SXM");
  v1::Plan p;
  p.set_name("gpt-256gpu");
  v1::Model* m = p.mutable_model();
  m->set_name("gpt-16l");
  m->set_dtype(v1::BF16);
  v1::Transformer* t = m->mutable_transformer();
  t->set_num_layers(16);
  t->set_hidden_size(4096);
  t->set_num_attention_heads(32);
  t->set_seq_length(2048);
  t->set_vocab_size(51200);
  t->set_granularity(v1::BLOCK);
  p.set_micro_batch_size(16);
  p.set_global_batch_size(16 * 8);
  p.set_schedule(v1::ONE_F_ONE_B);
  p.set_overlap_grad_reduce(true);
  p.set_grad_bucket_bytes(64 << 20);
  for (int s = 0; s < 2; ++s) {
    v1::Stage* st = p.add_stages();
    st->set_first_layer(9 * s);
    st->set_num_layers(9);
    st->mutable_mesh()->set_island("a");
    st->mutable_mesh()->set_first_node(16 * s);
    st->mutable_mesh()->set_node_count(16);
    st->mutable_mesh()->set_gpus_per_node(8);
    st->set_tensor_parallel(8);
    st->set_data_parallel(16);
    st->set_zero_stage(1);
    st->set_sequence_parallel(true);
  }
  return testing::MakeInputs(c, p);
}

TEST_CASE("ring-steps aggregated: gradient sync within 1% of the full simulation at 256 GPUs", "[executor][approx]") {
  const auto setup = testing::MakeSetup(Plan256(), sim::NetworkMode::kMaxMinFair);
  sim::executor::ExecutorOptions full, approx;
  approx.grad_sync_ring_steps = sim::RingSteps::kAggregated;
  auto exact = sim::executor::Execute(*setup, full);
  auto fast = sim::executor::Execute(*setup, approx);
  REQUIRE(exact.ok());
  REQUIRE(fast.ok());
  CHECK(fast->flows < exact->flows);
  // The pipeline itself is the same DAG; only the overlapped gradient sync and what it delays move.
  const double a = static_cast<double>(exact->iteration_time), b = static_cast<double>(fast->iteration_time);
  INFO("full " << a << " ps, aggregated " << b << " ps");
  CHECK(std::abs(b - a) / a <= 0.01);
  traces::ReportOptions options;
  options.approximations = {"aggregated ring steps"};
  const v1::Report report = traces::BuildReport(*setup, *fast, options);
  REQUIRE(report.approximations_size() == 1);
  CHECK(traces::BuildReport(*setup, *exact).approximations_size() == 0);
}

}  // namespace
}  // namespace hetsim
