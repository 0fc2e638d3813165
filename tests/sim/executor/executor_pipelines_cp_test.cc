// Context parallelism in a plan of pipelines (Pipeline.context_parallel, Plan.context_parallel): each
// pipeline's stages run the K/V exchange inside their own CP groups, and a layer range's gradients reduce
// over every holder's DP x CP ranks. Against the one-pipeline plan of the same CP and closed forms, on
// nodes of two H100 with one 400 Gb/s NIC each (tests/sim/executor/context_parallel_util.h).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "base/units.h"
#include "proto/summary.h"
#include "proto/validate_plan.h"
#include "tests/base/time_io.h"
#include "tests/sim/executor/context_parallel_util.h"
#include "tests/sim/executor/executor_test_util.h"
#include "tests/topology/topology_clusters.h"
#include "traces/text_report.h"

namespace hetsim {
namespace {

using network::NetworkMode;

constexpr int kBlocks = 2;

// `nodes` nodes of 2 H100 (one 400 Gb/s NIC each) on one switch, latencies `latency_ns`.
v1::Cluster CpCluster(int nodes, uint32_t latency_ns = 0) {
  v1::Cluster cluster = testing::H100Island(nodes, v1::SINGLE_SWITCH, 2);
  cluster.mutable_islands(0)->set_nic_latency_ns(latency_ns);
  cluster.mutable_islands(0)->set_switch_latency_ns(0);
  cluster.mutable_gpu_types(0)->set_preset("H100-SXM");
  return cluster;
}

// The whole GQA model (seq 8192) as one stage on `nodes` nodes from `first_node`, TP 2 x the rest, ZeRO `zero`.
v1::Stage WholeModelStage(int first_node, int nodes, int dp, int zero = 0) {
  v1::Stage st;
  st.set_num_layers(kBlocks + 2);  // with the embedding and the head
  st.mutable_mesh()->set_island("a");
  st.mutable_mesh()->set_first_node(first_node);
  st.mutable_mesh()->set_node_count(nodes);
  st.mutable_mesh()->set_gpus_per_node(2);
  st.set_tensor_parallel(2);
  st.set_data_parallel(dp);
  st.set_zero_stage(zero);
  return st;
}

v1::Plan BasePlan() {
  v1::Plan plan;
  plan.set_name("cp");
  *plan.mutable_model() = testing::GqaModel(kBlocks, 8192);
  plan.set_schedule(v1::ONE_F_ONE_B);
  return plan;
}

// TP 2 x CP 2 x DP 2 on 4 nodes: 2 microbatches of 2 samples, one per replica.
v1::Plan OnePipelinePlan(int zero = 0) {
  v1::Plan plan = BasePlan();
  plan.set_global_batch_size(4);
  plan.set_micro_batch_size(2);
  plan.set_context_parallel(2);
  *plan.add_stages() = WholeModelStage(0, 4, 2, zero);
  return plan;
}

// Pipeline i of `cps` (its context_parallel; 0: the plan's) on nodes from `first_node[i]`, 2 samples in
// microbatches of 1, TP 2 x its CP GPUs, ZeRO `zero`.
v1::Plan PipelinesPlan(const std::vector<uint32_t>& cps, const std::vector<int>& first_node, uint32_t plan_cp = 0,
                       int zero = 0) {
  v1::Plan plan = BasePlan();
  plan.set_context_parallel(plan_cp);
  plan.set_micro_batch_size(1);
  for (size_t i = 0; i < cps.size(); ++i) {
    v1::Pipeline* pl = plan.add_pipelines();
    pl->set_name("p" + std::to_string(i));
    pl->set_batch_share(2);
    pl->set_context_parallel(cps[i]);
    const uint32_t cp = cps[i] > 0 ? cps[i] : std::max<uint32_t>(1, plan_cp);
    *pl->add_stages() = WholeModelStage(first_node[i], static_cast<int>(cp), 1, zero);
  }
  plan.set_global_batch_size(2 * cps.size());
  return plan;
}

TEST_CASE("Two identical CP pipelines run exactly as the plan of data_parallel 2 with the same CP",
          "[executor][pipelines][cp]") {
  // Replica r of the one-pipeline plan is pipeline r (nodes 2r and 2r + 1, CP rank c on node 2r + c); the
  // stage is the whole model, so the one layer range is the stage and reduces over the DP x CP ranks of
  // each TP rank, as the plan's data-parallel groups do. With CP set on the plan or on each pipeline.
  // Under ZeRO-1 and 3 the range's states shard, and ZeRO-3's gathers run, over those DP x CP GPUs too.
  const v1::Cluster cluster = CpCluster(4);
  driver::SimulateOptions options;
  options.network_mode = NetworkMode::kMaxMinFair;
  for (const auto& [zero, plan] :
       {std::pair{0, PipelinesPlan({2, 2}, {0, 2})}, std::pair{0, PipelinesPlan({0, 0}, {0, 2}, 2)},
        std::pair{1, PipelinesPlan({2, 2}, {0, 2}, 0, 1)}, std::pair{3, PipelinesPlan({2, 2}, {0, 2}, 0, 3)}}) {
    INFO("zero_stage " << zero << ", CP on " << (plan.context_parallel() > 0 ? "the plan" : "each pipeline"));
    const driver::Simulation one =
        testing::MakeSimulation(testing::MakeInputs(cluster, OnePipelinePlan(zero)), options);
    const driver::Simulation pl = testing::MakeSimulation(testing::MakeInputs(cluster, plan), options);
    REQUIRE(pl.pipelines.size() == 2);
    CHECK(pl.pipeline_sync.iteration_time == one.result.iteration_time);
    const executor::VirtualStageCost& theirs = one.setup->virtual_stages[0];
    for (int p = 0; p < 2; ++p) {
      INFO("pipeline " << p);
      const executor::ExecutionSetup& setup = *pl.pipelines[p].setup;
      CHECK(setup.stages[0].layout.context_parallel == 2);
      const executor::VirtualStageCost& mine = setup.virtual_stages[0];
      CHECK(mine.cp_forward_exchange_time == theirs.cp_forward_exchange_time);
      CHECK(mine.cp_backward_exchange_time == theirs.cp_backward_exchange_time);
      CHECK(mine.cp_bytes == theirs.cp_bytes);
      CHECK(pl.pipelines[p].result.last_backward_end == one.result.last_backward_end);
      CHECK(pl.pipelines[p].result.stage_end == one.result.stage_end);
      CHECK(setup.stages[0].cost.memory.ModelStateBytes() == one.setup->stages[0].cost.memory.ModelStateBytes());
    }
    const auto& groups = pl.pipeline_sync.groups;
    REQUIRE(groups.size() == 1);
    const executor::StageLayout& l = one.setup->stages[0].layout;
    CHECK(groups[0].groups == std::vector<std::vector<GpuId>>{l.DataGroup(0), l.DataGroup(1)});
    CHECK(groups[0].groups[0].size() == 4);  // DP 2 x CP 2
    if (zero < 3) CHECK(groups[0].bytes == one.setup->stages[0].grad_buckets[0].bytes);
    CHECK(pl.report.iteration_time_ms() == one.report.iteration_time_ms());
    CHECK(pl.report.context_parallel() == 2);
    REQUIRE(pl.report.stages_size() == 2);
    CHECK(pl.report.stages(1).context_parallel() == 2);
    CHECK(pl.report.stages(1).cp_exchange_ms() == one.report.stages(0).cp_exchange_ms());
    CHECK(pl.report.mfu() == Approx(one.report.mfu()).epsilon(1e-12));
  }
}

TEST_CASE("A CP 2 pipeline beside a CP 1 pipeline: its exchange from alpha-beta, the range over 3 GPUs a shard",
          "[executor][pipelines][cp]") {
  // Pipeline 0 at CP 2 on nodes 0-1 (CP rank c on node c), pipeline 1 at CP 1 on node 2. Each of pipeline 0's
  // 2 attention layers sends its K/V block B once around the ring of 2 in the forward and twice that
  // (K, V and their gradients) in the backward, each step over a 400 Gb/s NIC after the NIC's latency alpha:
  // forward 2 (alpha + B / beta), backward 2 (alpha + 2B / beta). Pipeline 1 exchanges nothing.
  for (const uint32_t alpha_ns : {0u, 5000u}) {
    INFO("NIC latency " << alpha_ns << " ns");
    const v1::Cluster cluster = CpCluster(3, alpha_ns);
    driver::SimulateOptions options;
    options.network_mode = NetworkMode::kMaxMinFair;
    const driver::Simulation pl =
        testing::MakeSimulation(testing::MakeInputs(cluster, PipelinesPlan({2, 1}, {0, 2})), options);
    REQUIRE(pl.pipelines.size() == 2);
    const executor::VirtualStageCost& vs = pl.pipelines[0].setup->virtual_stages[0];
    REQUIRE(vs.cost.cp_attention.size() == 2);
    const double bytes = static_cast<double>(vs.cost.cp_attention[0].step_bytes);
    // K and V of a GPU's tokens: 2 tensors x s / CP tokens x (8 K/V heads / TP 2) x head width 128 x 2 bytes.
    CHECK(bytes == 2 * (8192 / 2) * (8 / 2) * 128 * 2);
    const double beta = GbpsToBytesPerSecond(400);
    // The route's latency: the NIC's on each side of the switch (the switch's is 0).
    const double alpha = 2 * alpha_ns * 1e-9;
    CHECK(TimeToSeconds(vs.cp_forward_exchange_time) == Approx(2 * (alpha + bytes / beta)).epsilon(1e-6));
    CHECK(TimeToSeconds(vs.cp_backward_exchange_time) == Approx(2 * (alpha + 2 * bytes / beta)).epsilon(1e-6));
    const executor::VirtualStageCost& plain = pl.pipelines[1].setup->virtual_stages[0];
    CHECK(plain.cost.cp_attention.empty());
    CHECK(plain.cp_bytes == 0);
    // The range's shard groups: pipeline 0's CP ranks of the TP rank, then pipeline 1's GPU of it.
    const auto& groups = pl.pipeline_sync.groups;
    REQUIRE(groups.size() == 1);
    CHECK(groups[0].groups == std::vector<std::vector<GpuId>>{GpuIds({0, 2, 4}), GpuIds({1, 3, 5})});
    // The report: the largest degree, the CP table's rows only for the CP stage.
    CHECK(pl.report.context_parallel() == 2);
    CHECK(pl.report.stages(0).context_parallel() == 2);
    CHECK(pl.report.stages(1).context_parallel() == 0);
    const std::string text = traces::FormatReportTable(pl.report);
    CHECK(absl::StrContains(text, "bubble 0.0%, context parallel 2\npipeline p1:"));
    CHECK(absl::StrContains(text, "context parallel 2: stage"));
    CHECK(absl::StrContains(text, "\n                        0  "));        // the CP 2 stage's row
    CHECK_FALSE(absl::StrContains(text, "\n                        1  "));  // none for the CP 1 stage
    // `hetsim check`'s summary names the pipeline's own degree.
    const std::string summary = proto::SummarizePlan(pl.inputs);
    CHECK(absl::StrContains(summary,
                            "pipeline p0: 2 samples, microbatch 1 -> 2 microbatches, 1 stage, context parallel 2"));
    CHECK(absl::StrContains(summary, "pipeline p1: 2 samples, microbatch 1 -> 2 microbatches, 1 stage\n"));
  }
}

TEST_CASE("A pipeline's context_parallel is checked as its own plan's, and reported at its field",
          "[pipelines][cp][validate]") {
  const v1::Cluster cluster = CpCluster(4);
  v1::Plan plan = PipelinesPlan({2, 2}, {0, 2});
  CHECK(proto::ValidatePlan(plan, cluster, plan.model(), "plan.pbtxt").ok());
  // seq 8192 is no multiple of 2 x 3: the pipeline's field named, not the plan's.
  plan.mutable_pipelines(1)->set_context_parallel(3);
  const absl::Status bad = proto::ValidatePlan(plan, cluster, plan.model(), "plan.pbtxt");
  CHECK(absl::StrContains(bad.message(), "plan.pbtxt: pipelines[1].context_parallel: 3: seq_length 8192"));
  // The plan's degree on a pipeline that does not replace it is the plan's field.
  plan = PipelinesPlan({0, 0}, {0, 2}, 3);
  CHECK(absl::StrContains(proto::ValidatePlan(plan, cluster, plan.model(), "plan.pbtxt").message(),
                          "plan.pbtxt: context_parallel: 3: seq_length 8192"));
}

}  // namespace
}  // namespace hetsim
