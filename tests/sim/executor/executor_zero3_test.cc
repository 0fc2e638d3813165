// ZeRO-3's per-layer parameter all-gathers over the data-parallel group, forward and backward,
// against the closed form of an uncontended all-gather: n - 1 pieces of bytes / n per GPU through its
// NIC, at the NIC's rate, with no latency.
#include <catch2/catch.hpp>

#include "sim/executor/executor.h"
#include "sim/executor/setup.h"
#include "tests/base/time_io.h"
#include "tests/sim/executor/executor_test_util.h"

namespace hetsim::testing {
namespace {

// One stage of two layers (1e6 FP16 parameters each) on GPU 0 of fast nodes 0 and 1: DP 2, TP 1.
v1::Plan DataParallelPlan(int zero_stage) {
  v1::Plan plan = MakePlan({{"fast", 0, 0, 1, 1, 2, 1.0, 2.0, 2}}, 4, v1::ONE_F_ONE_B, 1000, 2);
  v1::Stage* st = plan.mutable_stages(0);
  st->mutable_mesh()->set_node_count(2);
  st->set_zero_stage(zero_stage);
  return plan;
}

TEST_CASE("ZeRO-3 gathers each layer's weights over the DP group before its forward and its backward",
          "[executor][zero]") {
  // 200 Gb/s NICs (25e9 B/s), no latency anywhere: the only cost is bandwidth.
  const v1::Cluster cluster = TwoIslandCluster(2, 1, 10, 0);
  const auto zero3 = MakeSetup(MakeInputs(cluster, DataParallelPlan(3)), NetworkMode::kMaxMinFair);
  const auto zero1 = MakeSetup(MakeInputs(cluster, DataParallelPlan(1)), NetworkMode::kMaxMinFair);

  // Each layer gathers its 1e6 x 2 bytes = 2e6 bytes (nccl-tests' all-gather size, the output) over
  // 2 GPUs: each sends its 1e6-byte half across GPU->NIC->switch->NIC->GPU at 25e9 B/s, both ways at
  // once: 1e6 / 25e9 s = 40 us per layer, 80 us for the two layers, forward and again backward.
  const Time expected = 2 * 40 * hetsim::kMicrosecond;
  const auto& vs = zero3->virtual_stages[0];
  CHECK(vs.forward_collective_time == expected);
  CHECK(vs.backward_collective_time == expected);
  CHECK(vs.forward_time() == hetsim::kMillisecond + expected);
  // ZeRO-1 gathers nothing per layer, but all-gathers the updated weights after the step; ZeRO-3
  // keeps them sharded and has no such step.
  CHECK(zero1->virtual_stages[0].forward_collective_time == 0);
  CHECK(zero1->stages[0].param_gather.has_value());
  CHECK_FALSE(zero3->stages[0].param_gather.has_value());
  // Both reduce-scatter the gradients after the pipeline.
  REQUIRE(zero3->stages[0].grad_buckets.size() == 1);
  CHECK(zero3->stages[0].grad_buckets[0].bytes == 4000000);

  // The gathers load the links: per microbatch each way, each GPU sends 1e6 bytes over 4 links.
  int64_t bytes = 0;
  for (const auto& l : vs.forward_link_load) bytes += l.bytes;
  CHECK(bytes == 2 * 2 * 1000000 * 4);

  // And the iteration runs: the pipeline is the longest path of the longer nodes.
  const auto run = MakeRun(*zero3);
  CHECK(run.pipeline_end == hetsim::pipeline::AnalyzeLongestPath(*zero3->dag, zero3->durations).iteration_time);
  CHECK(run.pipeline_end == 4 * (3 * hetsim::kMillisecond + 2 * expected));
}

}  // namespace

}  // namespace hetsim::testing
