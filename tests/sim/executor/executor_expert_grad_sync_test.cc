// The experts' gradients reduce, and their ZeRO shards gather, over Megatron-LM's expert-data-parallel
// groups (the GPUs holding the same expert shard), beside the dense parameters' DP x CP groups
// (sim/executor/setup.h GradSyncStep, SyncGroupsOf), in the executor and in the Chakra export.
#include <catch2/catch.hpp>

#include <vector>

#include "service/chakra/export.h"
#include "service/driver/simulate.h"
#include "sim/collectives/simulate.h"
#include "sim/executor/setup.h"
#include "tests/sim/executor/executor_test_util.h"
#include "traces/text_report.h"

namespace {

using hetsim::CollectiveOp;
using hetsim::executor::GradSyncStep;
using hetsim::network::NetworkMode;
namespace v1 = hetsim::v1;

// A stage of one node of 8 GPUs (island "fast", node `node`) as TP x DP with EP x ETP, ZeRO-1.
v1::Stage* AddStage(v1::Plan& p, int node, int tp, int ep, int etp) {
  v1::Stage* st = p.add_stages();
  st->mutable_mesh()->set_island("fast");
  st->mutable_mesh()->set_first_node(node);
  st->mutable_mesh()->set_node_count(1);
  st->mutable_mesh()->set_gpus_per_node(8);
  st->set_tensor_parallel(tp);
  st->set_sequence_parallel(tp > 1);
  st->set_data_parallel(8 / tp);
  st->set_expert_parallel(ep);
  st->set_expert_tensor_parallel(etp);
  st->set_zero_stage(1);
  return st;
}

// A 2-block MoE (8 experts, top 2, all-to-all dispatch) on one node of 8 GPUs as TP x DP, EP x ETP,
// with the distributed optimizer (ZeRO-1), 4 microbatches, 1F1B.
v1::Plan MoePlan(int tp, int ep, int etp) {
  v1::Plan p;
  p.set_name("moe");
  hetsim::testing::SetSmallMoeModel(p, 8);
  const int dp = 8 / tp;
  p.set_micro_batch_size(dp);
  p.set_global_batch_size(4 * dp);
  p.set_schedule(v1::ONE_F_ONE_B);
  AddStage(p, 0, tp, ep, etp)->set_num_layers(4);  // embedding, 2 blocks, head
  return p;
}

std::unique_ptr<hetsim::executor::ExecutionSetup> Setup(const v1::Plan& plan) {
  const v1::Cluster cluster = hetsim::testing::TwoIslandCluster(1, 8, 10, 1000);
  return hetsim::testing::MakeSetup(hetsim::testing::MakeInputs(cluster, plan), NetworkMode::kMaxMinFair);
}

}  // namespace

TEST_CASE("expert gradients: dense buckets over DP, expert buckets over the expert-data-parallel groups",
          "[executor][experts]") {
  // TP 2 x DP 4, EP 4 x ETP 1: each expert lives on 2 GPUs, 4 apart.
  const auto setup = Setup(MoePlan(2, 4, 1));
  const auto& st = setup->stages[0];
  REQUIRE(st.grad_buckets.size() == 2);
  CHECK(st.grad_buckets[0].op == CollectiveOp::kReduceScatter);
  CHECK(st.grad_buckets[0].bytes == st.cost.grad_sync_bytes);
  CHECK(st.grad_buckets[0].expert_bytes == 0);
  CHECK(st.grad_buckets[1].bytes == 0);
  CHECK(st.grad_buckets[1].expert_bytes == st.cost.expert_grad_sync_bytes);
  CHECK(st.cost.expert_grad_sync_bytes > 0);
  // ZeRO-1 gathers both parts at once after the step.
  REQUIRE(st.param_gather.has_value());
  CHECK(st.param_gather->bytes == st.cost.param_sync_bytes);
  CHECK(st.param_gather->expert_bytes == st.cost.expert_param_sync_bytes);

  // The expert bucket takes what a reduce-scatter over one group of 2 GPUs takes alone: the 4 groups
  // run side by side on the NVSwitch's separate ports, after the dense bucket.
  const hetsim::executor::ExecutionResult run = hetsim::testing::MakeRun(*setup);
  const hetsim::executor::GradSyncRecord* expert = nullptr;
  for (const auto& g : run.grad_syncs) {
    if (!g.param_gather && g.step == 1) expert = &g;
  }
  REQUIRE(expert != nullptr);
  hetsim::topology::Router router(*setup->topology);
  hetsim::collectives::CollectiveRequest request;
  request.op = CollectiveOp::kReduceScatter;
  request.gpus = st.layout.ExpertDataGroup(0);
  request.bytes = st.cost.expert_grad_sync_bytes;
  CHECK(request.gpus == std::vector<hetsim::GpuId>{st.layout.gpus[0], st.layout.gpus[4]});
  const auto alone = hetsim::collectives::SimulateCollective(*setup->topology, router, request);
  REQUIRE(alone.ok());
  CHECK(expert->finish - expert->start == alone->time);
}

TEST_CASE("expert gradients: nothing over groups of one GPU, and a reduction even without data parallelism",
          "[executor][experts]") {
  // EP 8 x ETP 1 over TP 2 x DP 4: every expert is on one GPU only, so only the dense bucket runs.
  const auto whole = Setup(MoePlan(2, 8, 1));
  REQUIRE(whole->stages[0].grad_buckets.size() == 1);
  CHECK(whole->stages[0].grad_buckets[0].expert_bytes == 0);
  CHECK(whole->stages[0].param_gather->expert_bytes == 0);
  // TP 8, DP 1, EP 4 x ETP 1: no data parallelism for the dense weights, but every expert on 2 GPUs,
  // whose gradients Megatron still reduces (before session 22 hetsim ran nothing).
  const auto no_dp = Setup(MoePlan(8, 4, 1));
  const auto& st = no_dp->stages[0];
  REQUIRE(st.grad_buckets.size() == 1);
  CHECK(st.grad_buckets[0].bytes == 0);
  CHECK(st.grad_buckets[0].expert_bytes == st.cost.expert_grad_sync_bytes);
  CHECK(st.layout.ExpertDataGroup(1) == std::vector<hetsim::GpuId>{st.layout.gpus[1], st.layout.gpus[5]});
  const auto run = hetsim::testing::MakeRun(*no_dp);
  CHECK(run.grad_sync_end[0] > run.last_backward_end[0]);

  // The Chakra export holds the dense groups (one per TP rank) and the 4 expert-data-parallel groups,
  // and each GPU's expert bucket on its own group.
  const hetsim::chakra::ChakraExport out = hetsim::chakra::ExportChakra(*Setup(MoePlan(2, 4, 1)));
  REQUIRE(out.comm_groups.size() == 2 + 4);
  CHECK(out.comm_groups[2].ranks == std::vector<int64_t>{0, 4});
  CHECK(out.comm_groups[5].ranks == std::vector<int64_t>{3, 7});
}

namespace {

// Two stages of TP 8 (DP 1; EP 4 x ETP 1, so every expert has a copy 4 GPUs away), interleaved over 2
// chunks of [2, 1 | 1, 2] layers: stage 0 holds the embedding and block 0, then block 2; stage 1 block
// 1, then block 3 and the head. The first `dense` blocks have no experts.
v1::Plan InterleavedMoePlan(int dense) {
  v1::Plan p;
  p.set_name("moe-chunks");
  hetsim::testing::SetSmallMoeModel(p, 8);
  p.mutable_model()->mutable_transformer()->set_num_layers(4);
  p.mutable_model()->mutable_transformer()->set_moe_first_dense_layers(dense);
  p.set_global_batch_size(8);
  p.set_micro_batch_size(1);
  p.set_schedule(v1::INTERLEAVED_1F1B);
  p.set_virtual_stages(2);
  p.set_overlap_grad_reduce(true);
  p.set_overlap_param_gather(true);
  for (int layers : {2, 1, 1, 2}) p.add_virtual_stage_layers(layers);
  for (int s = 0; s < 2; ++s) {
    v1::Stage* st = AddStage(p, s, 8, 4, 1);
    st->set_first_layer(3 * s);
    st->set_num_layers(3);
  }
  return p;
}

std::unique_ptr<hetsim::executor::ExecutionSetup> TwoNodeSetup(const v1::Plan& plan) {
  const v1::Cluster cluster = hetsim::testing::TwoIslandCluster(2, 8, 10, 1000);
  return hetsim::testing::MakeSetup(hetsim::testing::MakeInputs(cluster, plan), NetworkMode::kMaxMinFair);
}

}  // namespace

TEST_CASE("expert gradients under interleaving: the chunks' layers decide, the optimizer waits for all",
          "[executor][experts]") {
  // Blocks 0 and 1 dense: stage 0's contiguous layers (embedding, blocks 0, 1) hold no expert, but its
  // second chunk holds block 2's, which it must reduce (a review found it skipped).
  const auto setup = TwoNodeSetup(InterleavedMoePlan(2));
  const auto& s0 = setup->stages[0];
  REQUIRE(s0.grad_buckets.size() == 1);
  CHECK(s0.grad_buckets[0].bytes == 0);  // DP 1
  CHECK(s0.grad_buckets[0].expert_bytes == setup->virtual_stages[2].cost.expert_grad_sync_bytes);
  // Stage 1's parameter gathers are its chunks' (blocks 1 and 3), one per chunk at the start.
  const auto& s1 = setup->stages[1];
  REQUIRE(s1.early_param_gathers.size() == 2);
  CHECK(s1.early_param_gathers[0].expert_bytes == setup->virtual_stages[1].cost.expert_param_sync_bytes);
  CHECK(s1.early_param_gathers[1].expert_bytes == setup->virtual_stages[3].cost.expert_param_sync_bytes);
  // Stage 0's first chunk gathers nothing (no experts, DP 1): an empty step its first forward waits for.
  CHECK(s0.early_param_gathers[0].bytes == 0);
  CHECK(s0.early_param_gathers[0].expert_bytes == 0);

  // Block 0 dense only: stage 0's buckets are all its second chunk's, which ends before the first
  // chunk's last backward; the optimizer step still starts after that backward.
  for (int dense : {1, 2}) {
    INFO(dense << " dense blocks");
    const auto s = TwoNodeSetup(InterleavedMoePlan(dense));
    const auto run = hetsim::testing::MakeRun(*s);
    for (int stage = 0; stage < 2; ++stage) {
      CHECK(run.optimizer_start[stage] >= run.last_backward_end[stage]);
      CHECK(run.grad_sync_end[stage] >= run.last_backward_end[stage]);
    }
  }
}

TEST_CASE("the run report gives an MoE stage's experts' layout, and a dense one's table is unchanged",
          "[executor][experts]") {
  const v1::Cluster cluster = hetsim::testing::TwoIslandCluster(1, 8, 10, 1000);
  const absl::StatusOr<v1::Report> moe =
      hetsim::driver::SimulateReport(hetsim::testing::MakeInputs(cluster, MoePlan(2, 4, 1)));
  REQUIRE(moe.ok());
  CHECK(moe->stages(0).expert_parallel() == 4);
  CHECK(moe->stages(0).expert_tensor_parallel() == 1);
  const std::string table = hetsim::traces::FormatReportTable(*moe);
  CHECK(table.find("TPxDP  EPxETP  warm-up") != std::string::npos);
  CHECK(table.find(" 2x4    4x1   ") != std::string::npos);
  // ETP unset resolves to TP.
  const absl::StatusOr<v1::Report> coupled =
      hetsim::driver::SimulateReport(hetsim::testing::MakeInputs(cluster, MoePlan(2, 2, 0)));
  REQUIRE(coupled.ok());
  CHECK(coupled->stages(0).expert_tensor_parallel() == 2);
  // A dense model: the fields stay unset, the table has no such column.
  v1::Plan dense = MoePlan(2, 1, 0);
  dense.mutable_model()->mutable_transformer()->set_num_experts(0);
  dense.mutable_model()->mutable_transformer()->set_moe_top_k(0);
  dense.mutable_model()->mutable_transformer()->clear_moe_token_dispatcher();
  dense.mutable_stages(0)->clear_expert_parallel();
  dense.mutable_stages(0)->clear_expert_tensor_parallel();
  const absl::StatusOr<v1::Report> plain = hetsim::driver::SimulateReport(hetsim::testing::MakeInputs(cluster, dense));
  REQUIRE(plain.ok());
  CHECK(plain->stages(0).expert_parallel() == 0);
  CHECK(hetsim::traces::FormatReportTable(*plain).find("EPxETP") == std::string::npos);
}
