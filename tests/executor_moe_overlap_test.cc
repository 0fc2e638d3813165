// Plan.moe_a2a_overlap, Megatron-LM's combined 1F1B (sim/executor/setup.cc PairMoeDispatch): a
// forward and a backward of different microbatches adjacent on a stage hide each other's expert
// dispatch, up to the other's compute; the first forward and the last backward run alone.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "sim/executor/setup.h"
#include "sim/pipeline/dag.h"
#include "tests/executor_test_util.h"

namespace {

using hetsim::Time;
using hetsim::sim::NetworkMode;
using hetsim::sim::pipeline::NodeKind;
namespace v1 = hetsim::v1;

// A 2-block MoE (8 experts, top 2, all-to-all dispatch) on one node of 8 GPUs: DP 8 x EP 8, 4
// microbatches of 8 samples, 1F1B.
v1::Plan MoePlan(bool overlap) {
  v1::Plan p;
  p.set_name("moe");
  v1::Model* m = p.mutable_model();
  m->set_name("moe-2l");
  m->set_dtype(v1::BF16);
  v1::Transformer* t = m->mutable_transformer();
  t->set_num_layers(2);
  t->set_hidden_size(1024);
  t->set_num_attention_heads(16);
  t->set_seq_length(1024);
  t->set_vocab_size(32000);
  t->set_num_experts(8);
  t->set_moe_top_k(2);
  t->set_moe_token_dispatcher(v1::MOE_DISPATCHER_ALL_TO_ALL);
  t->set_granularity(v1::BLOCK);
  p.set_micro_batch_size(8);
  p.set_global_batch_size(32);
  p.set_schedule(v1::ONE_F_ONE_B);
  p.set_moe_a2a_overlap(overlap);
  v1::Stage* st = p.add_stages();
  st->set_num_layers(4);  // embedding, 2 blocks, head
  st->mutable_mesh()->set_island("fast");
  st->mutable_mesh()->set_node_count(1);
  st->mutable_mesh()->set_gpus_per_node(8);
  st->set_data_parallel(8);
  st->set_expert_parallel(8);
  return p;
}

}  // namespace

TEST_CASE("combined 1F1B: paired passes hide each other's expert dispatch, up to the other's compute",
          "[executor][moe]") {
  const v1::Cluster cluster = hetsim::testing::TwoIslandCluster(1, 8, 10, 1000);
  const auto plain =
      hetsim::testing::MakeSetup(hetsim::testing::MakeInputs(cluster, MoePlan(false)), NetworkMode::kContentionFree);
  const auto paired =
      hetsim::testing::MakeSetup(hetsim::testing::MakeInputs(cluster, MoePlan(true)), NetworkMode::kContentionFree);
  const hetsim::sim::executor::VirtualStageCost& vs = plain->virtual_stages[0];
  const Time a_f = vs.forward_expert_comm_time, a_b = vs.backward_expert_comm_time;
  const Time c_f = vs.cost.forward_time, c_b = vs.cost.backward_time;
  REQUIRE(a_f > 0);  // the dispatch and combine all-to-alls over the 8 GPUs
  REQUIRE(a_b > 0);
  CHECK(a_f <= vs.forward_collective_time);
  // One stage runs F0 B0 F1 B1 ... B3: B0 pairs with F1, B1 with F2, B2 with F3 (F0 and B0 are one
  // microbatch: the backward needs the forward's output).
  const std::vector<hetsim::sim::pipeline::NodeId>& order = plain->dag->stage_compute_order()[0];
  REQUIRE(order.size() == 8);
  for (size_t i = 0; i < order.size(); ++i) {
    const bool forward = plain->dag->node(order[i]).kind == NodeKind::kForward;
    const bool alone = i == 0 || i + 1 == order.size();
    const Time hidden = alone ? 0 : forward ? std::min(a_f, c_b) : std::min(a_b, c_f);
    INFO("node " << i);
    CHECK(paired->durations[order[i]] == plain->durations[order[i]] - hidden);
  }
  const Time saved = 3 * (std::min(a_f, c_b) + std::min(a_b, c_f));
  const auto before = hetsim::sim::pipeline::AnalyzeLongestPath(*plain->dag, plain->durations);
  const auto after = hetsim::sim::pipeline::AnalyzeLongestPath(*paired->dag, paired->durations);
  CHECK(after.iteration_time == before.iteration_time - saved);
}

TEST_CASE("combined 1F1B needs expert parallelism, the all-to-all dispatcher and an interleaved pipeline",
          "[executor][moe][validate]") {
  const v1::Cluster cluster = hetsim::testing::TwoIslandCluster(1, 8, 10, 1000);
  auto problem = [&](const v1::Plan& p) {
    hetsim::proto::PlanInputs in;
    in.cluster = cluster;
    in.plan = p;
    in.model = p.model();
    in.plan_path = "plan.pbtxt";
    in.cluster_path = "cluster.pbtxt";
    return std::string(hetsim::proto::ValidatePlanInputs(in).message());
  };
  v1::Plan p = MoePlan(true);
  p.mutable_stages(0)->set_expert_parallel(1);
  CHECK_THAT(problem(p), Catch::Contains("plan.pbtxt: moe_a2a_overlap: needs a stage with expert_parallel > 1"));
  p = MoePlan(true);
  p.mutable_model()->mutable_transformer()->set_moe_token_dispatcher(v1::MOE_DISPATCHER_ALL_GATHER);
  CHECK_THAT(problem(p), Catch::Contains("moe_a2a_overlap: needs the all-to-all dispatcher"));
}
