// A small GPT whose stages carry the embedding and the head, interleaved over 2 chunks: 3 layers per
// stage, which 2 does not divide, so the plan was refused before Megatron's assignment. It now
// validates, takes Megatron's chunks and runs.
#include <catch2/catch.hpp>

#include <cmath>

#include "google/protobuf/text_format.h"
#include "sim/pipeline/dag.h"
#include "tests/base/time_io.h"
#include "tests/sim/executor/executor_test_util.h"

namespace {

namespace v1 = hetsim::v1;

// 4 blocks on 2 stages of one GPU each (fast island nodes 0 and 1), 2 chunks, 4 microbatches.
v1::Plan SmallInterleavedGpt() {
  v1::Plan plan;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        name: "small-gpt-interleaved"
        model {
          name: "gpt-small"
          dtype: FP16
          transformer { num_layers: 4 hidden_size: 256 num_attention_heads: 4 seq_length: 128 vocab_size: 1000 }
        }
        global_batch_size: 4
        micro_batch_size: 1
        schedule: INTERLEAVED_1F1B
        virtual_stages: 2
        stages {
          num_layers: 3
          mesh { island: "fast" node_count: 1 gpus_per_node: 1 }
        }
        stages {
          first_layer: 3
          num_layers: 3
          mesh { island: "fast" first_node: 1 node_count: 1 gpus_per_node: 1 }
        }
      )pb",
      &plan));
  return plan;
}

}  // namespace

TEST_CASE("interleaved: a GPT plan with the embedding and head on 3-layer stages runs in Megatron's chunks",
          "[executor][interleaved]") {
  v1::Cluster cluster = hetsim::testing::TwoIslandCluster(2, 1, 100, 1000);
  cluster.set_ideal(true);
  const hetsim::proto::PlanInputs in = hetsim::testing::MakeInputs(cluster, SmallInterleavedGpt());
  const auto setup = hetsim::testing::MakeSetup(in, hetsim::network::NetworkMode::kContentionFree);
  const auto& vs = setup->virtual_stages;
  REQUIRE(vs.size() == 4);
  // Layers: 0 embedding, 1..4 blocks, 5 head. One block per chunk; k = 0 adds the embedding, k = 3 the head.
  const int first[] = {0, 2, 3, 4}, count[] = {2, 1, 1, 2};
  for (int k = 0; k < 4; ++k) {
    INFO("virtual stage " << k);
    CHECK(vs[k].first_layer == first[k]);
    CHECK(vs[k].num_layers == count[k]);
  }
  const auto run = hetsim::testing::MakeRun(*setup);
  CHECK(run.pipeline_end > 0);
  // Without contention the simulation is the DAG's longest path.
  CHECK(run.pipeline_end == hetsim::pipeline::AnalyzeLongestPath(*setup->dag, setup->durations).iteration_time);
}

TEST_CASE("interleaved with partial recompute: each chunk recomputes its own first block", "[executor][interleaved]") {
  v1::Cluster cluster = hetsim::testing::TwoIslandCluster(2, 1, 100, 1000);
  cluster.set_ideal(true);
  // 8 blocks on 2 stages of 4, 2 chunks of 2 blocks (the embedding in chunk 0, the head in chunk 3).
  v1::Plan plan = SmallInterleavedGpt();
  plan.mutable_model()->mutable_transformer()->set_num_layers(8);
  plan.mutable_stages(0)->set_num_layers(5);
  plan.mutable_stages(1)->set_first_layer(5);
  plan.mutable_stages(1)->set_num_layers(5);
  plan.set_global_batch_size(8);
  const auto none = hetsim::testing::MakeSimulation(hetsim::testing::MakeInputs(cluster, plan));
  for (v1::Stage& s : *plan.mutable_stages()) {
    s.set_recompute(v1::RECOMPUTE_FULL);
    s.set_recompute_num_layers(1);
  }
  const auto partial = hetsim::testing::MakeSimulation(hetsim::testing::MakeInputs(cluster, plan));
  const auto& a = none.setup->virtual_stages;
  const auto& b = partial.setup->virtual_stages;
  REQUIRE(b.size() == 4);
  // The middle chunks (k = 1, 2) hold two identical blocks: one of them runs its forward again.
  for (int k : {1, 2}) {
    INFO("virtual stage " << k);
    CHECK(AbsTime(b[k].cost.backward_time - (a[k].cost.backward_time + a[k].cost.forward_time / 2)) <= 2_ps);
    CHECK(b[k].cost.memory.activation_bytes_per_microbatch < a[k].cost.memory.activation_bytes_per_microbatch);
  }
  // In flight: the report divides the live activations by a microbatch's, summed over the chunks.
  for (int s = 0; s < 2; ++s) {
    INFO("stage " << s);
    const v1::StageReport& r = partial.report.stages(s);
    int64_t per_microbatch = 0;
    for (int k = s; k < 4; k += 2) per_microbatch += b[k].cost.memory.activation_bytes_per_microbatch;
    const double states = static_cast<double>(partial.setup->stages[s].cost.memory.ModelStateBytes());
    const double working = static_cast<double>(partial.setup->stages[s].cost.memory.recompute_working_bytes);
    const double live = r.peak_memory_gib() * (1 << 30) - states - working;
    CHECK(r.num_microbatches_in_flight() == static_cast<uint32_t>(std::llround(live) / per_microbatch));
    CHECK(r.num_microbatches_in_flight() >= 1);
  }
}
