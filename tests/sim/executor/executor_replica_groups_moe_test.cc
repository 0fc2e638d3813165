// MoE experts on a mixed stage (Stage.replica_groups of an MoE model): each replica group lays the stage's
// experts out over its own GPUs (ETP x EP of them a copy, its all-to-alls on its own links, its experts'
// states on its own GPU type) on its own share of the tokens, and the experts' gradients reduce over
// expert rank e of every copy in every group (StageLayout::ExpertDataGroup, Megatron-LM's expert-data-
// parallel group), against closed forms on an ideal cluster.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "proto/gpu_presets.h"
#include "proto/validate_plan.h"
#include "service/driver/simulate.h"
#include "sim/executor/replica_groups.h"
#include "tests/sim/executor/executor_test_util.h"
#include "traces/replica_group_report.h"

namespace hetsim {
namespace {

using network::NetworkMode;
using testing::ReplicaGroupSpec;

// The 2-block MoE (8 experts, top 2, all-to-all dispatch; embedding, 2 MoE blocks, head) under 1F1B, 4
// microbatches of `micro` samples, in FP16 (the V100 has no BF16), on one stage whose replicas are
// `groups`, EP `ep` x ETP 1, ZeRO `zero`.
v1::Plan MixedMoePlan(const std::vector<ReplicaGroupSpec>& groups, uint64_t micro, int ep, int zero) {
  v1::Plan p;
  p.set_name("moe-mixed");
  testing::SetSmallMoeModel(p, 8);
  p.mutable_model()->set_dtype(v1::FP16);
  p.set_schedule(v1::ONE_F_ONE_B);
  p.set_micro_batch_size(micro);
  p.set_global_batch_size(4 * micro);
  v1::Stage* st = p.add_stages();
  st->set_num_layers(4);
  st->set_sequence_parallel(true);
  st->set_expert_parallel(ep);
  st->set_expert_tensor_parallel(1);
  st->set_zero_stage(zero);
  testing::SetReplicaGroups(*st, groups);
  return p;
}

// The same stage plain: TP 2 x DP 4 on the fast node's 8 GPUs.
v1::Plan PlainMoePlan(int ep, int zero) {
  v1::Plan p = MixedMoePlan({{"fast", 0, 8, 2, 4, 1}}, 4, ep, zero);
  v1::Stage* st = p.mutable_stages(0);
  st->clear_replica_groups();
  st->mutable_mesh()->set_island("fast");
  st->mutable_mesh()->set_node_count(1);
  st->mutable_mesh()->set_gpus_per_node(8);
  st->set_tensor_parallel(2);
  st->set_data_parallel(4);
  return p;
}

// One 8-GPU node per island; the A100 made exactly twice the V100 in every peak and in HBM bandwidth, as its
// NVSwitch already is (2400 against 1200 Gb/s), so that twice the share takes exactly as long.
v1::Cluster TwiceAsFastCluster() {
  v1::Cluster c = testing::TwoIslandCluster(1, 8, 10, 0);
  REQUIRE(proto::ApplyGpuPresets(&c, "cluster.pbtxt").ok());
  v1::GpuType& fast = *c.mutable_gpu_types(0);
  const v1::GpuType& slow = c.gpu_types(1);
  fast.set_peak_tflops_fp32(2 * slow.peak_tflops_fp32());
  fast.set_peak_tflops_tf32(2 * slow.peak_tflops_tf32());
  fast.set_peak_tflops_fp16(2 * slow.peak_tflops_fp16());
  fast.set_peak_tflops_bf16(2 * slow.peak_tflops_bf16());
  fast.set_hbm_bandwidth_gbytes_per_s(2 * slow.hbm_bandwidth_gbytes_per_s());
  return c;
}

driver::Simulation Simulate(const v1::Cluster& cluster, const v1::Plan& plan) {
  driver::SimulateOptions options;
  options.network_mode = NetworkMode::kMaxMinFair;
  return testing::MakeSimulation(testing::MakeInputs(cluster, plan), options);
}

TEST_CASE("An MoE stage's two replica groups of one GPU type run exactly as the plain stage",
          "[executor][replicas][experts]") {
  // The plain stage lays its experts out in 2 blocks of ETP x EP = 4 GPUs (GPUs 0-3 and 4-7); each group
  // is one of them: the same all-to-alls, the same expert-data-parallel groups {e, 4 + e}.
  const v1::Cluster cluster = testing::TwoIslandCluster(1, 8, 10, 1000);
  for (const int zero : {0, 1, 2, 3}) {
    INFO("zero_stage " << zero);
    const driver::Simulation plain = Simulate(cluster, PlainMoePlan(4, zero));
    const driver::Simulation mixed =
        Simulate(cluster, MixedMoePlan({{"fast", 0, 4, 2, 2, 1}, {"fast", 4, 4, 2, 2, 1}}, 4, 4, zero));
    const executor::StageSetup& theirs = plain.setup->stages[0];
    const executor::StageSetup& mine = mixed.setup->stages[0];
    REQUIRE(mine.layout.mixed());
    CHECK(mine.layout.expert_data_groups() == 4);
    for (int e = 0; e < 4; ++e) CHECK(mine.layout.ExpertDataGroup(e) == theirs.layout.ExpertDataGroup(e));
    CHECK(mine.layout.ExpertDataGroup(1) == GpuIds({1, 5}));
    CHECK(mine.cost.expert_grad_sync_bytes == theirs.cost.expert_grad_sync_bytes);
    CHECK(mine.cost.expert_grad_sync_bytes > 0);
    CHECK(mine.grad_buckets.size() == theirs.grad_buckets.size());
    const executor::VirtualStageCost& a = mixed.setup->virtual_stages[0];
    const executor::VirtualStageCost& b = plain.setup->virtual_stages[0];
    CHECK(a.forward_time() == b.forward_time());
    CHECK(a.backward_time() == b.backward_time());
    CHECK(a.forward_collective_time == b.forward_collective_time);
    CHECK(a.forward_moe_layers.size() == b.forward_moe_layers.size());
    for (const executor::ReplicaGroupSetup& g : mine.replica_groups) {
      CHECK(g.cost.memory.ModelStateBytes() == theirs.cost.memory.ModelStateBytes());
      CHECK(g.cost.memory.activation_bytes_per_microbatch == theirs.cost.memory.activation_bytes_per_microbatch);
      CHECK(g.optimizer_time == theirs.optimizer_time);
    }
    CHECK(mixed.result.iteration_time == plain.result.iteration_time);
    CHECK(mixed.report.iteration_time_ms() == plain.report.iteration_time_ms());
    CHECK(mixed.report.stages(0).expert_parallel() == 4);
    CHECK(mixed.report.stages(0).peak_memory_gib() == plain.report.stages(0).peak_memory_gib());
  }
}

TEST_CASE("An MoE replica group twice as fast with twice the share finishes its passes together",
          "[executor][replicas][experts]") {
  // The A100 group: TP 2 x DP 2 at 2 samples a replica; the V100 group: TP 2 x DP 2 at 1. Each lays the 8
  // experts out at EP 4 over its own 4 GPUs and dispatches its own tokens: twice the FLOPs, bytes and
  // all-to-all traffic at twice the peak, HBM and NVSwitch bandwidth.
  const v1::Cluster cluster = TwiceAsFastCluster();
  const driver::Simulation sim =
      Simulate(cluster, MixedMoePlan({{"fast", 0, 4, 2, 2, 2}, {"slow", 0, 4, 2, 2, 1}}, 6, 4, 0));
  const executor::VirtualStageCost& vs = sim.setup->virtual_stages[0];
  REQUIRE(vs.replica_groups.size() == 2);
  const executor::VirtualStageCost& fast = vs.replica_groups[0];
  const executor::VirtualStageCost& slow = vs.replica_groups[1];
  CHECK(fast.forward_moe_layers.size() == 2);
  CHECK(slow.forward_moe_layers.size() == 2);
  CHECK(fast.forward_collective_time > 0);
  CHECK(fast.forward_time() == slow.forward_time());
  CHECK(fast.backward_time() == slow.backward_time());
  CHECK(vs.forward_wait_time == 0);
  CHECK(vs.backward_wait_time == 0);
  for (int g = 0; g < 2; ++g) CHECK(traces::GroupIdle(*sim.setup, sim.result, 0, g) == 0);
  // The experts' gradients reduce over expert rank e of both groups' copies: {A100 e, V100 e} across the
  // islands' Ethernet link, each GPU's experts (ETP x EP = 4 shards of them) its group's memory.
  const executor::StageSetup& st = sim.setup->stages[0];
  CHECK(st.layout.expert_gradient_group_size() == 2);
  CHECK(st.layout.ExpertDataGroup(0) == std::vector<GpuId>{st.layout.gpus[0], st.layout.gpus[4]});
  CHECK(st.replica_groups[0].cost.expert_grad_sync_bytes == st.replica_groups[1].cost.expert_grad_sync_bytes);
  REQUIRE(sim.report.stages(0).replica_groups_size() == 2);
  CHECK(sim.report.stages(0).replica_groups(0).idle_ms() == 0);
  CHECK(sim.report.stages(0).replica_groups(1).idle_ms() == 0);
}

TEST_CASE("A mixed MoE stage's ZeRO shards the experts over every group's copies", "[executor][replicas][experts]") {
  // Groups of TP 2 x DP 2 and TP 1 x DP 4 at EP 2 x ETP 2: each holds one copy of the experts (4 GPUs), so
  // each expert shard has 2 holders, one per group, whatever the group's TP (the cost model's TP x DP /
  // (ETP x EP) of a group would have said 3 and 1); the dense states shard over the stage's 6 replicas.
  const v1::Cluster cluster = testing::TwoIslandCluster(1, 8, 10, 1000);
  v1::Plan plan = MixedMoePlan({{"fast", 0, 4, 2, 2, 1}, {"slow", 0, 4, 1, 4, 1}}, 6, 2, 1);
  plan.mutable_stages(0)->set_expert_tensor_parallel(2);
  const driver::Simulation sim = Simulate(cluster, plan);
  const executor::StageSetup& st = sim.setup->stages[0];
  CHECK(st.layout.expert_data_groups() == 4);
  CHECK(st.layout.expert_gradient_group_size() == 2);
  for (int e = 0; e < 4; ++e) {
    CHECK(st.layout.ExpertDataGroup(e) == std::vector<GpuId>{st.layout.gpus[e], st.layout.gpus[4 + e]});
  }
  // Per GPU of group g (TP t_g): its dense states sharded over the stage's 6 replicas, its experts' (a
  // quarter of them: ETP x EP = 4 shards) over their 2 holders, as the memory model shards each part.
  const workload::ModelCost& model = *sim.setup->model;
  const double experts = workload::ExpertParamsOfLayers(model, 0, 4, 4);
  const workload::StageMemory expert_states = workload::ZeroShardedModelStates(experts, model.dtype(), 1, 2, false);
  for (int g = 0; g < 2; ++g) {
    INFO("group " << g);
    const int tp = g == 0 ? 2 : 1;
    const workload::StageMemory dense =
        workload::ZeroShardedModelStates(workload::DenseParamsOfLayers(model, 0, 4, tp), model.dtype(), 1, 6, false);
    const workload::StageMemory& held = st.replica_groups[g].cost.memory;
    CHECK(held.optimizer_bytes == dense.optimizer_bytes + expert_states.optimizer_bytes);
    CHECK(held.param_bytes == dense.param_bytes + expert_states.param_bytes);
  }
}

TEST_CASE("Replica groups that each set the stage's EP as their own run exactly as the stage-wide EP",
          "[executor][replicas][experts]") {
  // ReplicaGroup.expert_parallel 4 on both groups (the stage's left at 1) is the stage's EP 4 (session 38).
  const v1::Cluster cluster = testing::TwoIslandCluster(1, 8, 10, 1000);
  for (const int zero : {0, 1, 3}) {
    INFO("zero_stage " << zero);
    const std::vector<ReplicaGroupSpec> groups = {{"fast", 0, 4, 2, 2, 1}, {"slow", 0, 4, 2, 2, 1}};
    const driver::Simulation stage_wide = Simulate(cluster, MixedMoePlan(groups, 4, 4, zero));
    v1::Plan own = MixedMoePlan(groups, 4, 1, zero);
    own.mutable_stages(0)->clear_expert_parallel();
    for (v1::ReplicaGroup& g : *own.mutable_stages(0)->mutable_replica_groups()) g.set_expert_parallel(4);
    const driver::Simulation mine = Simulate(cluster, own);
    const executor::StageLayout& a = mine.setup->stages[0].layout;
    const executor::StageLayout& b = stage_wide.setup->stages[0].layout;
    CHECK(a.expert_data_groups() == 4);
    for (int e = 0; e < 4; ++e) CHECK(a.ExpertDataGroup(e) == b.ExpertDataGroup(e));
    CHECK(mine.setup->stages[0].cost.expert_grad_sync_bytes == stage_wide.setup->stages[0].cost.expert_grad_sync_bytes);
    CHECK(mine.result.iteration_time == stage_wide.result.iteration_time);
    CHECK(mine.report.stages(0).peak_memory_gib() == stage_wide.report.stages(0).peak_memory_gib());
  }
}

TEST_CASE("A replica group at its own coarser EP joins every finest expert shard's group its experts cover",
          "[executor][replicas][experts]") {
  // The fast group (TP 2 x DP 2) at the stage's EP 4, the slow one (TP 2 x DP 2) at its own EP 2: each slow
  // GPU holds 4 of the 8 experts (2 copies of 2 GPUs), each fast GPU 2. Finest shard e (the fast group's EP
  // rank e) reduces over fast GPU e and slow GPU e / 2 of both slow copies: 3 holders, over which ZeRO-1
  // shards each expert's states; each slow GPU joins 2 of the 4 groups, with the finest shard's bytes.
  const v1::Cluster cluster = testing::TwoIslandCluster(1, 8, 10, 1000);
  v1::Plan plan = MixedMoePlan({{"fast", 0, 4, 2, 2, 1}, {"slow", 0, 4, 2, 2, 1}}, 4, 4, 1);
  plan.mutable_stages(0)->mutable_replica_groups(1)->set_expert_parallel(2);
  const driver::Simulation sim = Simulate(cluster, plan);
  const executor::StageSetup& st = sim.setup->stages[0];
  const std::vector<GpuId>& fast = st.layout.replica_groups[0].gpus;
  const std::vector<GpuId>& slow = st.layout.replica_groups[1].gpus;
  CHECK(st.layout.expert_parallel == 4);
  CHECK(st.layout.expert_data_groups() == 4);
  CHECK(st.layout.expert_gradient_group_size() == 3);
  for (int e = 0; e < 4; ++e) {
    INFO("shard " << e);
    CHECK(st.layout.ExpertDataGroup(e) == std::vector<GpuId>{fast[e], slow[e / 2], slow[2 + e / 2]});
  }
  const workload::ModelCost& model = *sim.setup->model;
  CHECK(st.cost.expert_grad_sync_bytes == st.replica_groups[0].cost.expert_grad_sync_bytes);
  CHECK(st.cost.expert_grad_sync_bytes ==
        workload::ExpertGradSyncBytes(model, 0, 4, 4, sim.setup->spec.plan.grad_reduce_in_fp32));
  for (int g = 0; g < 2; ++g) {
    INFO("group " << g);
    const int block = g == 0 ? 4 : 2;
    const workload::StageMemory experts = workload::ZeroShardedModelStates(
        workload::ExpertParamsOfLayers(model, 0, 4, block), model.dtype(), 1, 3, false);
    const workload::StageMemory dense =
        workload::ZeroShardedModelStates(workload::DenseParamsOfLayers(model, 0, 4, 2), model.dtype(), 1, 4, false);
    const workload::StageMemory& held = st.replica_groups[g].cost.memory;
    CHECK(held.optimizer_bytes == dense.optimizer_bytes + experts.optimizer_bytes);
    CHECK(held.param_bytes == dense.param_bytes + experts.param_bytes);
  }
  CHECK(sim.result.iteration_time > 0);
  REQUIRE(sim.report.stages(0).replica_groups_size() == 2);
  CHECK(sim.report.stages(0).replica_groups(0).expert_parallel() == 4);
  CHECK(sim.report.stages(0).replica_groups(1).expert_parallel() == 2);
  CHECK(sim.report.stages(0).replica_groups(1).expert_tensor_parallel() == 1);
}

TEST_CASE("A replica group whose GPUs do not hold whole copies of the experts is refused (plan check)",
          "[replicas][experts][validate]") {
  v1::Cluster cluster = testing::TwoIslandCluster(1, 8, 10, 1000);
  REQUIRE(proto::ApplyGpuPresets(&cluster, "cluster.pbtxt").ok());
  const v1::Plan plan = MixedMoePlan({{"fast", 0, 4, 2, 2, 1}, {"slow", 0, 2, 2, 1, 2}}, 6, 4, 0);
  const absl::Status bad = proto::ValidatePlan(plan, cluster, plan.model(), "plan.pbtxt");
  INFO(bad.message());
  CHECK(absl::StrContains(bad.message(),
                          "plan.pbtxt: stages[0].replica_groups[1].data_parallel: the group's tensor_parallel x "
                          "data_parallel 2 GPUs are not a multiple of expert_parallel 4 x expert_tensor_parallel 1"));
}

}  // namespace
}  // namespace hetsim
