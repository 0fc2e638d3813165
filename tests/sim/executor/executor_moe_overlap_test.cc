// Plan.moe_a2a_overlap, Megatron-LM's combined 1F1B (sim/executor/setup.cc PairMoeDispatch): a
// forward and a backward of different microbatches adjacent on a stage hide each other's expert
// dispatch, up to the other's compute; the first forward and the last backward run alone.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "sim/executor/setup.h"
#include "sim/pipeline/dag.h"
#include "tests/base/time_io.h"
#include "tests/sim/executor/executor_test_util.h"

namespace {

using hetsim::Time;
using hetsim::network::NetworkMode;
using hetsim::pipeline::NodeKind;
namespace v1 = hetsim::v1;

// A 2-block MoE (8 experts, top 2, all-to-all dispatch) on `nodes` nodes of 8 GPUs: DP x EP over all of
// them, 4 microbatches of one sample per GPU, 1F1B.
v1::Plan MoePlan(bool overlap, int nodes = 1) {
  v1::Plan p;
  p.set_name("moe");
  hetsim::testing::SetSmallMoeModel(p, 8 * nodes);
  p.set_micro_batch_size(8 * nodes);
  p.set_global_batch_size(32 * nodes);
  p.set_schedule(v1::ONE_F_ONE_B);
  p.set_moe_a2a_overlap(overlap);
  v1::Stage* st = p.add_stages();
  st->set_num_layers(4);  // embedding, 2 blocks, head
  st->mutable_mesh()->set_island("fast");
  st->mutable_mesh()->set_node_count(nodes);
  st->mutable_mesh()->set_gpus_per_node(8);
  st->set_data_parallel(8 * nodes);
  st->set_expert_parallel(8 * nodes);
  return p;
}

// sum over j of min(pass[j] dispatch, partner[j] compute): the j-th MoE layers run side by side.
Time Hidden(const std::vector<hetsim::executor::MoeLayerTimes>& pass,
            const std::vector<hetsim::executor::MoeLayerTimes>& partner) {
  REQUIRE(pass.size() == partner.size());
  Time t = 0;
  for (size_t j = 0; j < pass.size(); ++j) t += std::min(pass[j].dispatch, partner[j].compute);
  return t;
}

}  // namespace

TEST_CASE("combined 1F1B: a backward and the next forward hide each other's dispatch, layer by layer",
          "[executor][moe]") {
  for (int nodes : {1, 2}) {  // all-to-alls inside a node (shorter than a layer), and over the fabric (longer)
    INFO(nodes << " nodes");
    const v1::Cluster cluster = hetsim::testing::TwoIslandCluster(2, 8, 10, 1000);
    // Max-min sharing: the 8 GPUs of a node share its one NIC.
    const auto plain = hetsim::testing::MakeSetup(hetsim::testing::MakeInputs(cluster, MoePlan(false, nodes)),
                                                  NetworkMode::kMaxMinFair);
    const auto paired = hetsim::testing::MakeSetup(hetsim::testing::MakeInputs(cluster, MoePlan(true, nodes)),
                                                   NetworkMode::kMaxMinFair);
    const hetsim::executor::VirtualStageCost& vs = plain->virtual_stages[0];
    // The two blocks (layers 1 and 2), forward in order, backward last first, each with its compute.
    REQUIRE(vs.forward_moe_layers.size() == 2);
    REQUIRE(vs.backward_moe_layers.size() == 2);
    CHECK(vs.forward_moe_layers[0].layer == 1);
    CHECK(vs.backward_moe_layers[0].layer == 2);
    CHECK(vs.forward_moe_layers[0].compute == hetsim::SecondsToTime(vs.cost.layer_forward_s[1]));
    CHECK(vs.backward_moe_layers[0].compute == hetsim::SecondsToTime(vs.cost.layer_backward_s[2]));
    bool clamped = false;
    for (const auto& l : vs.forward_moe_layers) {
      CHECK(l.dispatch > 0);
      clamped = clamped || l.dispatch > vs.backward_moe_layers[0].compute;
    }
    INFO("dispatch " << vs.forward_moe_layers[0].dispatch << " compute " << vs.backward_moe_layers[0].compute);
    CHECK(clamped == (nodes == 2));  // over the fabric the dispatch outlasts the partner layer's compute
    // One stage runs F0 B0 F1 B1 F2 B2 F3 B3: B0 pairs with F1, B1 with F2, B2 with F3; F0 and B3 run
    // alone (and B0 cannot pair with F0: same microbatch).
    const Time hide_f = Hidden(vs.forward_moe_layers, vs.backward_moe_layers);
    const Time hide_b = Hidden(vs.backward_moe_layers, vs.forward_moe_layers);
    REQUIRE(hide_f > 0);
    const std::vector<hetsim::pipeline::NodeId>& order = plain->dag->stage_compute_order()[0];
    REQUIRE(order.size() == 8);
    for (size_t i = 0; i < order.size(); ++i) {
      const bool forward = plain->dag->node(order[i]).kind == NodeKind::kForward;
      const bool alone = i == 0 || i + 1 == order.size();
      INFO("node " << i);
      CHECK(paired->durations[order[i]] == plain->durations[order[i]] - (alone ? 0 : forward ? hide_f : hide_b));
    }
    const auto before = hetsim::pipeline::AnalyzeLongestPath(*plain->dag, plain->durations);
    const auto after = hetsim::pipeline::AnalyzeLongestPath(*paired->dag, paired->durations);
    CHECK(after.iteration_time == before.iteration_time - 3 * (hide_f + hide_b));
  }
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
  p = MoePlan(true);
  p.set_schedule(v1::GPIPE);
  CHECK_THAT(problem(p), Catch::Contains("moe_a2a_overlap: needs schedule ONE_F_ONE_B or INTERLEAVED_1F1B"));
  p = MoePlan(true);
  p.mutable_stages(0)->set_recompute(v1::RECOMPUTE_FULL);
  CHECK_THAT(problem(p), Catch::Contains("moe_a2a_overlap: cannot run with full recomputation"));
  // Two stages need an interleaved pipeline with more than one chunk a stage.
  p = MoePlan(true);
  v1::Stage second = p.stages(0);
  p.mutable_stages(0)->set_num_layers(2);
  second.set_first_layer(2);
  second.set_num_layers(2);
  second.mutable_mesh()->set_first_node(1);
  *p.add_stages() = second;
  CHECK_THAT(problem(p), Catch::Contains("moe_a2a_overlap: needs schedule INTERLEAVED_1F1B with virtual_stages > 1 "
                                         "when there are several stages (2)"));
}
