// MoE in a plan of pipelines: each pipeline's stages run their experts' all-to-alls on their own GPUs,
// and a layer range's experts reduce over their expert-data-parallel groups across the pipelines (expert
// rank e of every holder, Megatron-LM's expert-data-parallel group), after the range's dense buckets,
// beside the dense parameters' DP x CP shard groups (sim/executor/layer_range_sync.h).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "proto/gpu_presets.h"
#include "proto/validate_plan.h"
#include "service/driver/simulate.h"
#include "sim/executor/layer_range_shards.h"
#include "sim/executor/layer_range_sync.h"
#include "tests/sim/executor/executor_test_util.h"
#include "traces/text_report.h"

namespace hetsim {
namespace {

using network::NetworkMode;

// A stage of the 4 layers (embedding, 2 MoE blocks, head) on `gpus` GPUs of node 0 from `first_gpu`,
// TP 2 x DP, EP x ETP 1, ZeRO `zero`.
v1::Stage MoeStage(int first_gpu, int gpus, int ep, int zero) {
  v1::Stage st;
  st.set_num_layers(4);
  st.mutable_mesh()->set_island("fast");
  st.mutable_mesh()->set_node_count(1);
  st.mutable_mesh()->set_first_gpu(first_gpu);
  st.mutable_mesh()->set_gpus_per_node(gpus);
  st.set_tensor_parallel(2);
  st.set_sequence_parallel(true);
  st.set_data_parallel(gpus / 2);
  st.set_expert_parallel(ep);
  st.set_expert_tensor_parallel(1);
  st.set_zero_stage(zero);
  return st;
}

// The 2-block MoE (8 experts, top 2, all-to-all dispatch) under 1F1B, 16 samples in microbatches of `micro`.
v1::Plan MoeBase(uint64_t micro) {
  v1::Plan p;
  p.set_name("moe");
  testing::SetSmallMoeModel(p, 8);
  p.set_schedule(v1::ONE_F_ONE_B);
  p.set_micro_batch_size(micro);
  p.set_global_batch_size(16);
  return p;
}

// One stage of TP 2 x DP 4 on the node's 8 GPUs, EP 4: 4 microbatches of 4 samples.
v1::Plan OnePipelineMoe(int zero) {
  v1::Plan p = MoeBase(4);
  *p.add_stages() = MoeStage(0, 8, 4, zero);
  return p;
}

// Its two halves as pipelines: TP 2 x DP 2 on GPUs 0-3 and 4-7, EP `ep1` on the second, 4 microbatches of
// 2 samples each.
v1::Plan TwoPipelinesMoe(int zero, int ep1 = 4) {
  v1::Plan p = MoeBase(2);
  for (int i = 0; i < 2; ++i) {
    v1::Pipeline* pl = p.add_pipelines();
    pl->set_name("p" + std::to_string(i));
    pl->set_batch_share(8);
    *pl->add_stages() = MoeStage(4 * i, 4, i == 0 ? 4 : ep1, zero);
  }
  return p;
}

v1::Cluster MoeCluster() { return testing::TwoIslandCluster(1, 8, 10, 1000); }

// `plan` simulated on MoeCluster under max-min fairness.
driver::Simulation SimulateMoe(const v1::Plan& plan) {
  driver::SimulateOptions options;
  options.network_mode = NetworkMode::kMaxMinFair;
  return testing::MakeSimulation(testing::MakeInputs(MoeCluster(), plan), options);
}

TEST_CASE("Two MoE pipelines run exactly as the plan of data_parallel 2 with the same experts' layout",
          "[executor][pipelines][experts]") {
  // The plan's stage lays its experts out in 2 blocks of ETP x EP = 4 GPUs (GPUs 0-3 and 4-7), each a
  // pipeline's stage: the same all-to-alls. Expert rank e's expert-data-parallel group is {e, 4 + e}, as
  // the range's expert group over the two holders; the dense groups are each TP rank's 4 replicas.
  for (const int zero : {0, 1, 2}) {
    INFO("zero_stage " << zero);
    const driver::Simulation one = SimulateMoe(OnePipelineMoe(zero));
    const driver::Simulation pl = SimulateMoe(TwoPipelinesMoe(zero));
    REQUIRE(pl.pipelines.size() == 2);
    CHECK(pl.pipeline_sync.iteration_time == one.result.iteration_time);
    const executor::StageSetup& theirs = one.setup->stages[0];
    for (int p = 0; p < 2; ++p) {
      INFO("pipeline " << p);
      const executor::StageSetup& mine = pl.pipelines[p].setup->stages[0];
      CHECK(pl.pipelines[p].setup->virtual_stages[0].forward_time() == one.setup->virtual_stages[0].forward_time());
      CHECK(pl.pipelines[p].setup->virtual_stages[0].backward_time() == one.setup->virtual_stages[0].backward_time());
      CHECK(pl.pipelines[p].result.last_backward_end == one.result.last_backward_end);
      CHECK(pl.pipelines[p].result.stage_end == one.result.stage_end);
      CHECK(mine.cost.memory.ModelStateBytes() == theirs.cost.memory.ModelStateBytes());
      CHECK(mine.optimizer_time == theirs.optimizer_time);
    }
    const auto& groups = pl.pipeline_sync.groups;
    REQUIRE(groups.size() == 1);
    const executor::LayerRangeGroup& g = groups[0];
    CHECK(g.groups == std::vector<std::vector<GpuId>>{theirs.layout.DataGroup(0), theirs.layout.DataGroup(1)});
    CHECK(g.expert_shards == 4);
    REQUIRE(g.expert_groups.size() == 4);
    for (int e = 0; e < 4; ++e) CHECK(g.expert_groups[e] == theirs.layout.ExpertDataGroup(e));
    CHECK(g.expert_groups[1] == GpuIds({1, 5}));
    CHECK(g.bytes == theirs.cost.grad_sync_bytes);
    CHECK(g.expert_bytes == theirs.cost.expert_grad_sync_bytes);
    CHECK(g.expert_bytes > 0);
    CHECK(executor::RangeBuckets(g).size() == 1);
    CHECK(executor::ExpertBuckets(g) == std::vector<int64_t>{theirs.cost.expert_grad_sync_bytes});
    if (zero > 0) CHECK(g.expert_param_bytes == theirs.cost.expert_param_sync_bytes);
    CHECK(pl.report.iteration_time_ms() == one.report.iteration_time_ms());
    REQUIRE(pl.report.gradient_groups_size() == 1);
    CHECK(pl.report.gradient_groups(0).expert_groups() == 4);
    CHECK(pl.report.gradient_groups(0).expert_num_gpus() == 2);
    CHECK(pl.report.gradient_groups(0).expert_bytes_per_gpu() == static_cast<uint64_t>(g.expert_bytes));
    CHECK(absl::StrContains(traces::FormatReportTable(pl.report), ", experts 2 GPUs x 4 groups"));
  }
}

TEST_CASE("A range's experts in buckets after its dense ones, experts without copies reduce nothing",
          "[executor][pipelines][experts]") {
  executor::LayerRangeGroup g;
  g.bytes = 10;
  g.bucket_bytes = 4;
  g.expert_bytes = 9;
  g.expert_groups = {GpuIds({0, 4}), GpuIds({1, 5})};
  CHECK(executor::RangeBuckets(g) == std::vector<int64_t>{4, 4, 2});
  CHECK(executor::ExpertBuckets(g) == std::vector<int64_t>{4, 4, 1});
  // With buckets of 1 byte, 10 dense and 9 expert buckets: counted, within the bound.
  g.bucket_bytes = 1;
  CHECK(executor::CheckRangeBuckets({g}, "plan.pbtxt").ok());
  g.expert_groups = {GpuIds({0}), GpuIds({1})};
  CHECK(executor::ExpertBuckets(g).empty());
}

TEST_CASE("Holders of a layer at different EP reduce each expert over the finest split's shards",
          "[executor][pipelines][experts]") {
  // Pipeline 0 at EP 4 (GPUs 0-3, one copy of the experts), pipeline 1 at EP 2 (GPUs 4-7, two copies of 2 GPUs):
  // the finest split is EP 4 x ETP 1, and shard e is held by GPU e of pipeline 0 and by EP rank e x 2 / 4 of
  // both of pipeline 1's copies (StageLayout::ExpertShardGroup): {e, 4 + e / 2, 6 + e / 2}, each with the
  // EP-4 stage's bytes; a GPU of pipeline 1 joins 2 of the 4 groups. Under ZeRO-1/2 each GPU keeps its dense
  // states over the 4 replicas and its own experts (4 or 2 shards) over the 3 copies.
  for (const int zero : {0, 1, 2}) {
    INFO("zero_stage " << zero);
    const driver::Simulation one = SimulateMoe(OnePipelineMoe(zero));
    const driver::Simulation pl = SimulateMoe(TwoPipelinesMoe(zero, 2));
    REQUIRE(pl.pipelines.size() == 2);
    const auto& groups = pl.pipeline_sync.groups;
    REQUIRE(groups.size() == 1);
    const executor::LayerRangeGroup& g = groups[0];
    CHECK(g.expert_shards == 4);
    CHECK(g.expert_parallel == 4);
    CHECK(g.expert_tensor_parallel == 1);
    CHECK(g.expert_groups ==
          std::vector<std::vector<GpuId>>{GpuIds({0, 4, 6}), GpuIds({1, 4, 6}), GpuIds({2, 5, 7}), GpuIds({3, 5, 7})});
    CHECK(g.expert_bytes == one.setup->stages[0].cost.expert_grad_sync_bytes);
    if (zero > 0) CHECK(g.expert_param_bytes == one.setup->stages[0].cost.expert_param_sync_bytes);
    const workload::ModelCost& model = *pl.pipelines[0].setup->model;
    for (int p = 0; p < 2; ++p) {
      INFO("pipeline " << p);
      const int block = p == 0 ? 4 : 2;
      CHECK(pl.pipelines[p].setup->stages[0].layout.expert_data_groups() == block);
      if (zero == 0) continue;
      workload::StageMemory want = workload::ZeroShardedModelStates(workload::DenseParamsOfLayers(model, 0, 4, 2),
                                                                    model.dtype(), zero, 4, false);
      const workload::StageMemory experts = workload::ZeroShardedModelStates(
          workload::ExpertParamsOfLayers(model, 0, 4, block), model.dtype(), zero, 3, false);
      want.param_bytes += experts.param_bytes;
      want.grad_bytes += experts.grad_bytes;
      want.optimizer_bytes += experts.optimizer_bytes;
      CHECK(pl.pipelines[p].setup->stages[0].cost.memory.ModelStateBytes() == want.ModelStateBytes());
    }
    REQUIRE(pl.report.gradient_groups_size() == 1);
    const v1::GradientGroupReport& r = pl.report.gradient_groups(0);
    CHECK(r.expert_parallel() == 4);
    CHECK(r.expert_tensor_parallel() == 1);
    CHECK(std::vector<std::string>(r.holder_expert_layouts().begin(), r.holder_expert_layouts().end()) ==
          std::vector<std::string>{"EP 4 x ETP 1", "EP 2 x ETP 1"});
    CHECK(absl::StrContains(traces::FormatReportTable(pl.report), ", experts 3 GPUs x 4 groups"));
    CHECK(absl::StrContains(traces::FormatReportTable(pl.report),
                            "p0 stage 0 (EP 4 x ETP 1) + p1 stage 0 (EP 2 x ETP 1)"));
  }
}

TEST_CASE("Stages holding a layer in different pipelines lay their experts out in splits that nest (plan check)",
          "[pipelines][experts][validate]") {
  v1::Cluster cluster = MoeCluster();
  REQUIRE(proto::ApplyGpuPresets(&cluster, "cluster.pbtxt").ok());  // as loading the file does
  v1::Plan plan = TwoPipelinesMoe(0, 2);
  CHECK(proto::ValidatePlan(plan, cluster, plan.model(), "plan.pbtxt").ok());
  plan = TwoPipelinesMoe(0, 4);
  CHECK(proto::ValidatePlan(plan, cluster, plan.model(), "plan.pbtxt").ok());
  // EP 2 x ETP 2 beside EP 4 x ETP 1: neither divides the other (the first of the largest is the finest).
  plan = TwoPipelinesMoe(0, 2);
  plan.mutable_pipelines(1)->mutable_stages(0)->set_expert_tensor_parallel(2);
  const absl::Status bad = proto::ValidatePlan(plan, cluster, plan.model(), "plan.pbtxt");
  INFO(bad.message());
  CHECK(
      absl::StrContains(bad.message(),
                        "plan.pbtxt: pipelines[1].stages[0].expert_tensor_parallel: EP 2 x ETP 2 does not divide EP 4 "
                        "x ETP 1, the finest expert split of layer 0 (pipelines[0])"));
}

}  // namespace
}  // namespace hetsim
