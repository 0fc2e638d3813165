// Mixed replica groups in a stage (Stage.replica_groups): data-parallel replicas of one stage on
// different GPU types, each group with its own TP and its own share of every microbatch, against
// closed forms on an ideal cluster (compute = FLOPs / peak, links at their rate, no latency).
#include <catch2/catch.hpp>

#include <cmath>
#include <regex>
#include <string>

#include "base/units.h"
#include "sim/executor/executor.h"
#include "sim/executor/replica_groups.h"
#include "sim/executor/setup.h"
#include "sim/workload/model_cost.h"
#include "tests/base/time_io.h"
#include "tests/sim/executor/executor_test_util.h"
#include "traces/chrome_trace.h"
#include "traces/metrics.h"
#include "traces/replica_group_report.h"

namespace hetsim::testing {
namespace {

constexpr double kFastTflops = 250;  // the "fast" island's A100, FP16, made exactly twice the V100's
constexpr double kSlowTflops = 125;  // the "slow" island's V100-32GB preset, FP16
constexpr double kLayerGflop = 100;  // forward GFLOP per sample of every layer (MakePlan)
constexpr double kEthernetGbps = 10;

// One node per island, 2 GPUs each; the fast GPU type at kFastTflops.
v1::Cluster MixedCluster() {
  v1::Cluster c = TwoIslandCluster(1, 2, kEthernetGbps, 0);
  c.mutable_gpu_types(0)->set_peak_tflops_fp16(kFastTflops);
  return c;
}

using Group = ReplicaGroupSpec;

// One stage of one layer (1e6 FP16 parameters, modelled compute) whose replicas are `groups`, 4
// microbatches of the groups' samples: the data-parallel-only case of uneven shares.
v1::Plan MixedPlan(const std::vector<Group>& groups, int zero_stage = 0) {
  uint64_t micro = 0;
  for (const Group& g : groups) micro += g.share * g.dp;
  v1::Plan plan = MakePlan({{"fast", 0, 0, 1, 1, 1, 1.0, 2.0, 1}}, 4, v1::ONE_F_ONE_B, 1000, micro);
  v1::Stage* st = plan.mutable_stages(0);
  st->clear_measured_forward_ms();
  st->clear_measured_backward_ms();
  st->set_zero_stage(zero_stage);
  SetReplicaGroups(*st, groups);
  return plan;
}

// A pass of `samples` samples of the layer on one GPU of `tflops` (backward: twice the FLOPs).
Time ForwardTime(uint64_t samples, double tflops) {
  return hetsim::SecondsToTime(kLayerGflop * 1e9 * static_cast<double>(samples) / (tflops * 1e12));
}

TEST_CASE("Replica groups with shares proportional to speed finish their passes together", "[executor][replicas]") {
  // Twice the peak, twice the share: 2 samples on the A100 take as long as 1 on the V100.
  const auto setup =
      MakeSetup(MakeInputs(MixedCluster(), MixedPlan({{"fast", 0, 1, 1, 1, 2}, {"slow", 0, 1, 1, 1, 1}})),
                NetworkMode::kMaxMinFair);
  const auto& vs = setup->virtual_stages[0];
  REQUIRE(vs.replica_groups.size() == 2);
  const Time f = ForwardTime(1, kSlowTflops);
  CHECK(vs.replica_groups[0].cost.forward_time == f);
  CHECK(vs.replica_groups[1].cost.forward_time == f);
  CHECK(vs.forward_wait_time == 0);
  CHECK(vs.backward_wait_time == 0);
  CHECK(vs.forward_time() == f);
  CHECK(vs.backward_time() == 2 * f);

  // One stage: the pipeline is 4 microbatches of forward + backward, then the gradient all-reduce and
  // the slowest group's optimizer step. Neither group waits for the other.
  const auto run = MakeRun(*setup);
  for (int g = 0; g < 2; ++g) CHECK(traces::GroupIdle(*setup, run, 0, g) == 0);
  CHECK(run.pipeline_end == 4 * 3 * f);
  const Time step =
      std::max(setup->stages[0].replica_groups[0].optimizer_time, setup->stages[0].replica_groups[1].optimizer_time);
  CHECK(setup->stages[0].optimizer_time == step);
  CHECK(run.iteration_time == run.grad_sync_end[0] + step);
}

TEST_CASE("A wrong share leaves the faster group idle by exactly the straggler's extra time", "[executor][replicas]") {
  // The A100 takes 1 sample and the V100 2: the V100's passes set the pace.
  const auto setup =
      MakeSetup(MakeInputs(MixedCluster(), MixedPlan({{"fast", 0, 1, 1, 1, 1}, {"slow", 0, 1, 1, 1, 2}})),
                NetworkMode::kMaxMinFair);
  const auto& vs = setup->virtual_stages[0];
  const Time fast = ForwardTime(1, kFastTflops), slow = ForwardTime(2, kSlowTflops);
  CHECK(vs.replica_groups[0].forward_time() == fast);
  CHECK(vs.replica_groups[1].forward_time() == slow);
  CHECK(vs.forward_time() == slow);
  CHECK(vs.backward_time() == 2 * slow);
  const auto run = MakeRun(*setup);
  // Per microbatch the A100 waits (slow - fast) forward and twice that backward; the V100 never.
  CHECK(traces::GroupIdle(*setup, run, 0, 0) == 4 * 3 * (slow - fast));
  CHECK(traces::GroupIdle(*setup, run, 0, 1) == 0);
  CHECK(run.pipeline_end == 4 * 3 * slow);

  // The report: a line per group, the A100's idle time its wait; eta (HAPT Eq. 25, per GPU weighted by
  // peak) sees the A100 busy only 4 x 3 x fast of the stage's 4 x 3 x slow.
  const v1::Report report = hetsim::traces::BuildReport(*setup, run);
  const auto& lines = report.stages(0).replica_groups();
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].micro_batch_share() == 1);
  CHECK(lines[0].idle_ms() == Approx(hetsim::TimeToMilliseconds(4 * 3 * (slow - fast))));
  CHECK(lines[0].compute_busy_ms() == Approx(hetsim::TimeToMilliseconds(4 * 3 * fast)));
  CHECK(lines[1].idle_ms() == 0);
  const double busy_max = 12 * hetsim::TimeToSeconds(slow), busy_fast = 12 * hetsim::TimeToSeconds(fast);
  const double eta = 1 - (busy_max - busy_fast) * kFastTflops / (busy_max * (kFastTflops + kSlowTflops));
  CHECK(report.eta() == Approx(eta).epsilon(1e-9));
}

TEST_CASE("The gradient all-reduce over a mixed group of two islands is the ring over the slowest link",
          "[executor][replicas]") {
  // Ring all-reduce of B bytes over n = 2 GPUs: 2 (n - 1) steps of B / n each way at once, all
  // through the one Ethernet link between the islands: B / bandwidth, no latency.
  const double bandwidth = kEthernetGbps * 1e9 / 8;
  const double bytes = 1e6 * 2;  // the layer's 1e6 FP16 gradients
  const Time ring = hetsim::SecondsToTime(bytes / bandwidth);
  SECTION("the same TP") {
    const auto setup =
        MakeSetup(MakeInputs(MixedCluster(), MixedPlan({{"fast", 0, 1, 1, 1, 2}, {"slow", 0, 1, 1, 1, 1}})),
                  NetworkMode::kMaxMinFair);
    REQUIRE(setup->stages[0].grad_buckets.size() == 1);
    CHECK(setup->stages[0].grad_buckets[0].bytes == 2000000);
    const auto run = MakeRun(*setup);
    CHECK(run.grad_sync_end[0] - run.last_backward_end[0] == ring);
  }
  SECTION("TP 2 beside TP 1: the V100 joins both shards' groups and carries all it holds") {
    const auto setup =
        MakeSetup(MakeInputs(MixedCluster(), MixedPlan({{"fast", 0, 2, 2, 1, 2}, {"slow", 0, 1, 1, 1, 1}})),
                  NetworkMode::kMaxMinFair);
    const auto& layout = setup->stages[0].layout;
    REQUIRE(layout.tensor_parallel == 2);
    CHECK(layout.DataGroup(0) ==
          std::vector<hetsim::GpuId>{layout.replica_groups[0].gpus[0], layout.replica_groups[1].gpus[0]});
    CHECK(layout.DataGroup(1) ==
          std::vector<hetsim::GpuId>{layout.replica_groups[0].gpus[1], layout.replica_groups[1].gpus[0]});
    // Each finest shard holds half the gradients; two rings of B / 2 share the Ethernet link.
    REQUIRE(setup->stages[0].grad_buckets.size() == 1);
    CHECK(setup->stages[0].grad_buckets[0].bytes == 1000000);
    const auto run = MakeRun(*setup);
    CHECK(run.grad_sync_end[0] - run.last_backward_end[0] == ring);
  }
}

TEST_CASE("Identical replica groups run exactly as the plain stage", "[executor][replicas]") {
  const v1::Cluster cluster = MixedCluster();
  v1::Plan plain = MakePlan({{"fast", 0, 0, 2, 1, 2, 1.0, 2.0, 1}}, 4, v1::ONE_F_ONE_B, 1000, 4);
  plain.mutable_stages(0)->clear_measured_forward_ms();
  plain.mutable_stages(0)->clear_measured_backward_ms();
  const auto a = MakeSetup(MakeInputs(cluster, plain), NetworkMode::kMaxMinFair);
  const auto b = MakeSetup(MakeInputs(cluster, MixedPlan({{"fast", 0, 1, 1, 1, 2}, {"fast", 1, 1, 1, 1, 2}})),
                           NetworkMode::kMaxMinFair);
  CHECK(a->durations == b->durations);
  CHECK(a->stages[0].optimizer_time == b->stages[0].optimizer_time);
  CHECK(a->stages[0].cost.memory.ModelStateBytes() == b->stages[0].cost.memory.ModelStateBytes());
  CHECK(a->stages[0].layout.DataGroup(0) == b->stages[0].layout.DataGroup(0));
  const auto ra = MakeRun(*a), rb = MakeRun(*b);
  CHECK(ra.iteration_time == rb.iteration_time);
  CHECK(ra.node_start == rb.node_start);
  CHECK(ra.node_finish == rb.node_finish);
  // Every GPU traced, no link counters: the trace of the plain stage, byte for byte, once the slices'
  // replica-group fields (group, GPU type, share, a wait of 0) are taken out.
  const std::vector<bool> traced(static_cast<size_t>(a->topology->num_gpus()), true);
  const std::string mixed = hetsim::traces::ChromeTraceJson(*b, rb, traced, {});
  CHECK(mixed.find(R"x("replica_group":1,"gpu_type":"a100 (A100-80GB)","micro_batch_share":2,"wait_ms":0)x") !=
        std::string::npos);
  const std::regex group_fields(R"x(,"replica_group":\d,"gpu_type":"[^"]*","micro_batch_share":2,"wait_ms":0)x");
  CHECK(hetsim::traces::ChromeTraceJson(*a, ra, traced, {}) == std::regex_replace(mixed, group_fields, ""));
}

// The stage's mesh of one node, TP 1, cut into one replica group per GPU with equal shares.
void SplitIntoGroups(v1::Stage& st, uint64_t micro_batch_size) {
  const v1::Mesh mesh = st.mesh();
  for (uint32_t g = 0; g < mesh.gpus_per_node(); ++g) {
    v1::ReplicaGroup* rg = st.add_replica_groups();
    *rg->mutable_mesh() = mesh;
    rg->mutable_mesh()->set_first_gpu(mesh.first_gpu() + g);
    rg->mutable_mesh()->set_gpus_per_node(1);
    rg->set_micro_batch_share(micro_batch_size / mesh.gpus_per_node());
  }
  st.clear_mesh();
  st.clear_tensor_parallel();
  st.clear_data_parallel();
}

TEST_CASE("Identical replica groups run exactly as the plain stages under the interleaved schedule",
          "[executor][replicas]") {
  // Two stages (A100s, then V100s) of 2 layers in 2 chunks each, DP 2: the chunks of each group are
  // priced on their own, and with groups alike the stages' passes are the plain ones.
  v1::Plan plain = MakePlan({{"fast", 0, 0, 2, 1, 2, 1.0, 2.0, 2}, {"slow", 0, 0, 2, 1, 2, 1.0, 2.0, 2}}, 4,
                            v1::INTERLEAVED_1F1B, 1000, 4, 2);
  for (v1::Stage& st : *plain.mutable_stages()) {
    st.clear_measured_forward_ms();
    st.clear_measured_backward_ms();
  }
  v1::Plan mixed = plain;
  for (v1::Stage& st : *mixed.mutable_stages()) SplitIntoGroups(st, 4);
  const v1::Cluster cluster = MixedCluster();
  const auto a = MakeSetup(MakeInputs(cluster, plain), NetworkMode::kMaxMinFair);
  const auto b = MakeSetup(MakeInputs(cluster, mixed), NetworkMode::kMaxMinFair);
  REQUIRE(b->virtual_stages.size() == 4);
  CHECK(b->virtual_stages[2].replica_groups.size() == 2);
  CHECK(a->durations == b->durations);
  const auto ra = MakeRun(*a), rb = MakeRun(*b);
  CHECK(ra.iteration_time == rb.iteration_time);
  CHECK(ra.node_finish == rb.node_finish);
}

TEST_CASE("ZeRO shards a mixed stage's states over all its replicas, each group's GPUs by their TP",
          "[executor][replicas][zero]") {
  // ZeRO-1 over 3 replicas: FP16 weights and gradients whole on every GPU (2 + 2 bytes per parameter
  // held), the optimizer's states (FP32 master weights and Adam's moments) a third each.
  const auto setup =
      MakeSetup(MakeInputs(MixedCluster(), MixedPlan({{"fast", 0, 2, 1, 2, 1}, {"slow", 0, 1, 1, 1, 2}}, 1)),
                NetworkMode::kMaxMinFair);
  const auto& groups = setup->stages[0].replica_groups;
  REQUIRE(groups.size() == 2);
  for (const auto& g : groups) {
    CHECK(g.cost.memory.param_bytes == 2000000);
    CHECK(g.cost.memory.grad_bytes == 2000000);
    const double optimizer = 1e6 * hetsim::workload::OptimizerBytesPerParam(hetsim::spec::DType::kFp16) / 3;
    CHECK(g.cost.memory.optimizer_bytes == static_cast<int64_t>(std::ceil(optimizer)));
  }
  // Activations per group: its share of samples at the layer's 1 MiB each, one microbatch in flight
  // (one stage): the A100s peak at their states + 1 MiB, the V100 at its states + 2 MiB.
  const auto run = MakeRun(*setup);
  const v1::Report report = hetsim::traces::BuildReport(*setup, run);
  const auto& lines = report.stages(0).replica_groups();
  REQUIRE(lines.size() == 2);
  for (int g = 0; g < 2; ++g) {
    const double states = static_cast<double>(groups[g].cost.memory.ModelStateBytes());
    const double activations = static_cast<double>(lines[g].micro_batch_share()) * (1 << 20);
    CHECK(lines[g].peak_memory_gib() == Approx((states + activations) / hetsim::kGiB));
    CHECK_FALSE(lines[g].oom());
  }
  // The stage's memory line is its tightest group's: the V100 (32 GiB) holds more than the A100s (80).
  CHECK(report.stages(0).peak_memory_gib() == lines[1].peak_memory_gib());
}

TEST_CASE("Uneven data parallelism without pipelines: DP, ZeRO 1-2 and FSDP with shares by speed end together",
          "[executor][replicas][zero]") {
  // One stage, its replicas on two GPU types (the data-parallel-only layout of Cephalo and
  // HexiScale): 2 samples per A100 and 1 per V100 (half the peak) take the same f, under every ZeRO
  // stage; FSDP (ZeRO-3) gathers the layer's parameters around each pass over all three replicas.
  const Time f = ForwardTime(1, kSlowTflops);
  for (int zero = 0; zero <= 3; ++zero) {
    INFO("ZeRO " << zero);
    const auto setup =
        MakeSetup(MakeInputs(MixedCluster(), MixedPlan({{"fast", 0, 2, 1, 2, 2}, {"slow", 0, 1, 1, 1, 1}}, zero)),
                  NetworkMode::kMaxMinFair);
    const auto& vs = setup->virtual_stages[0];
    REQUIRE(vs.replica_groups.size() == 2);
    CHECK(vs.replica_groups[0].cost.forward_time == f);
    CHECK(vs.replica_groups[1].cost.forward_time == f);
    CHECK(vs.forward_wait_time == 0);
    CHECK(vs.backward_wait_time == 0);
    const auto run = MakeRun(*setup);
    for (int g = 0; g < 2; ++g) CHECK(traces::GroupIdle(*setup, run, 0, g) == 0);
    // 4 microbatches of one stage: forward and backward back to back (with FSDP's gathers inside them).
    CHECK(run.pipeline_end == 4 * (vs.forward_time() + vs.backward_time()));
    if (zero < 3) CHECK(run.pipeline_end == 4 * 3 * f);
    const v1::Report report = hetsim::traces::BuildReport(*setup, run);
    const auto& lines = report.stages(0).replica_groups();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].idle_ms() == Approx(lines[1].idle_ms()).margin(1e-9));
  }
}

TEST_CASE("A share too large for the smaller GPU's memory is out of memory on that replica alone",
          "[executor][replicas]") {
  // The V100 made 20 MiB: its states (FP16 weights and gradients, FP32 Adam: 16 bytes x 1e6 parameters,
  // 15.3 MiB) and 2 samples' activations (1 MiB each, one microbatch in flight) fit, 8 samples' do not;
  // the A100 (80 GiB) holds its share either way.
  v1::Cluster cluster = MixedCluster();
  cluster.mutable_gpu_types(1)->set_hbm_gib(20.0 / 1024);
  for (const uint64_t share : {uint64_t{2}, uint64_t{8}}) {
    INFO("V100 share " << share);
    const auto setup = MakeSetup(MakeInputs(cluster, MixedPlan({{"fast", 0, 1, 1, 1, 4}, {"slow", 0, 1, 1, 1, share}})),
                                 NetworkMode::kMaxMinFair);
    const v1::Report report = hetsim::traces::BuildReport(*setup, MakeRun(*setup));
    const auto& lines = report.stages(0).replica_groups();
    REQUIRE(lines.size() == 2);
    CHECK_FALSE(lines[0].oom());
    CHECK(lines[1].oom() == (share == 8));
    CHECK(report.oom() == (share == 8));
    const double states = static_cast<double>(setup->stages[0].replica_groups[1].cost.memory.ModelStateBytes());
    CHECK(lines[1].peak_memory_gib() == Approx((states + static_cast<double>(share) * (1 << 20)) / hetsim::kGiB));
  }
}

}  // namespace

}  // namespace hetsim::testing
