// Plan.nccl_sm_contention against its closed form (sim/workload/nccl_contention.h): compute beside an
// NCCL collective of its GPUs runs on the SMs the collective's channels leave it (24 on an A100 or H100
// NVSwitch node, 32 on B200, 12 on V100 NVLink, 2 over PCIe), so a task that ran o of its time beside
// one ends share x o later (share = 24 / 132 on an H100); without an overlap nothing changes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "sim/executor/setup.h"
#include "sim/workload/nccl_contention.h"
#include "tests/base/time_io.h"
#include "tests/proto/model_shapes.h"
#include "tests/sim/executor/executor_test_util.h"
#include "tests/topology/topology_clusters.h"
#include "traces/metrics.h"

namespace hetsim {
namespace {

constexpr double kH100Share = 24.0 / 132.0;

// Two nodes of one H100 (400 Gb/s NIC): a 4-block model on one stage of DP 2.
v1::Plan TwoNodePlan(bool contention) {
  v1::Plan plan = hetsim::testing::SmallDp2Plan("contention");
  plan.set_nccl_sm_contention(contention);
  return plan;
}

v1::Cluster TwoH100s() {
  v1::Cluster cluster = testing::H100Island(2, v1::SINGLE_SWITCH, 1);
  cluster.mutable_gpu_types(0)->set_preset("H100-SXM");  // 132 SMs
  return cluster;
}

// An island of `gpus_per_node` GPUs of `sms` SMs and compute capability `cc` on `fabric`, its
// (PCIe) link `link_gbytes_per_s` per direction.
spec::IslandSpec Island(spec::IntraNodeFabric fabric, int sms, int cc, int gpus_per_node = 8,
                        double link_gbytes_per_s = 31.5) {
  spec::IslandSpec island;
  island.gpu.sm_count = sms;
  island.gpu.compute_capability = cc;
  island.node.fabric = fabric;
  island.node.gpus_per_node = gpus_per_node;
  island.node.bandwidth = GBpsBandwidth(link_gbytes_per_s);
  return island;
}

TEST_CASE("nccl contention: an H100's share is NCCL's 24 channels of its 132 SMs", "[contention]") {
  const spec::IslandSpec h100 = Island(spec::IntraNodeFabric::kNvSwitch, 132, 90);
  CHECK(workload::NcclCollectiveChannels(h100) == 24);
  CHECK(workload::NcclSmShare(true, h100) == kH100Share);
  CHECK(workload::NcclSmShare(false, h100) == 0);
  spec::IslandSpec unknown = h100;  // no sm_count: not priced
  unknown.gpu.sm_count = 0;
  CHECK(workload::NcclSmShare(true, unknown) == 0);
  spec::IslandSpec small = h100;  // no more SMs than channels: not priced
  small.gpu.sm_count = 24;
  CHECK(workload::NcclSmShare(true, small) == 0);
  CHECK(workload::ContentionTime(kH100Share, 132_us) == 24_us);
  CHECK(workload::ContentionTime(0, 132_us) == 0);
}

TEST_CASE("nccl contention: channels follow the node's fabric (share = channels / SMs)", "[contention]") {
  using F = spec::IntraNodeFabric;
  // NVSwitch: A100 24 of 108, B200 32 of 148 (NVLink 5), V100 12 of 80; no preset: 24.
  CHECK(workload::NcclSmShare(true, Island(F::kNvSwitch, 108, 80)) == 24.0 / 108);
  CHECK(workload::NcclSmShare(true, Island(F::kNvSwitch, 148, 100)) == 32.0 / 148);
  CHECK(workload::NcclSmShare(true, Island(F::kNvSwitch, 80, 70)) == 12.0 / 80);
  CHECK(workload::NcclSmShare(true, Island(F::kNvSwitch, 132, 0)) == 24.0 / 132);
  // DGX-1's hybrid cube-mesh of V100s: 12 of 80.
  CHECK(workload::NcclSmShare(true, Island(F::kHybridCubeMesh, 80, 70)) == 12.0 / 80);
  // PCIe, one switch or a tree, P2P or through host memory: 2 (T4: 2 of 40; RTX 3090: 2 of 82).
  CHECK(workload::NcclSmShare(true, Island(F::kPcieTree, 40, 75, 4, 15.75)) == 2.0 / 40);
  CHECK(workload::NcclSmShare(true, Island(F::kPcie, 82, 86)) == 2.0 / 82);
  spec::IslandSpec shm = Island(F::kPcieTree, 82, 86);
  shm.node.pcie.no_p2p = true;
  CHECK(workload::NcclCollectiveChannels(shm) == 2);
  // PCIe Gen5 x16 (63 GB/s line rate): 4 of 142 (RTX PRO 6000 Blackwell-class); Gen4 (31.5) stays at 2.
  CHECK(workload::NcclSmShare(true, Island(F::kPcieTree, 142, 120, 8, 63)) == 4.0 / 142);
  CHECK(workload::NcclCollectiveChannels(Island(F::kPcieTree, 142, 120, 8, 31.5)) == 2);
  // NVLink bridges: 8 GPUs ring through PCIe between the pairs (2); a lone pair keeps 24.
  CHECK(workload::NcclSmShare(true, Island(F::kNvlinkBridge, 82, 86)) == 2.0 / 82);
  CHECK(workload::NcclSmShare(true, Island(F::kNvlinkBridge, 82, 86, 2)) == 24.0 / 82);
}

TEST_CASE("nccl contention: ZeRO-3's hidden gathers cost their pass share x their hidden time", "[contention]") {
  auto setup_of = [](bool prefetch, bool contention) {
    v1::Plan plan = TwoNodePlan(contention);
    plan.set_zero3_prefetch(prefetch);
    plan.mutable_stages(0)->set_zero_stage(3);
    return testing::MakeSetup(testing::MakeInputs(TwoH100s(), plan), network::NetworkMode::kMaxMinFair);
  };
  const auto exposed = setup_of(false, true);  // every gather on the critical path: none hidden
  const auto hidden = setup_of(true, true);
  const auto free = setup_of(true, false);
  const executor::VirtualStageCost& a = exposed->virtual_stages[0];
  const executor::VirtualStageCost& b = hidden->virtual_stages[0];
  const executor::VirtualStageCost& c = free->virtual_stages[0];
  CHECK(exposed->stages[0].nccl_sm_share == kH100Share);
  CHECK(free->stages[0].nccl_sm_share == 0);
  // Without an overlap nothing changes.
  CHECK(a.forward_contention_time == 0);
  CHECK(a.backward_contention_time == 0);
  CHECK(c.forward_contention_time == 0);
  // Prefetched, the gathers' hidden part (all of them minus the exposed part) slows the pass.
  const Time forward_hidden = a.forward_gather_exposed_time - b.forward_gather_exposed_time;
  const Time backward_hidden = a.backward_gather_exposed_time - b.backward_gather_exposed_time;
  REQUIRE(forward_hidden > 0);
  REQUIRE(backward_hidden > 0);
  CHECK(b.forward_contention_time ==
        PicosecondsToTime(std::llround(kH100Share * TimeToPicosecondsDouble(forward_hidden))));
  CHECK(b.backward_contention_time ==
        PicosecondsToTime(std::llround(kH100Share * TimeToPicosecondsDouble(backward_hidden))));
  CHECK(b.forward_time() == c.forward_time() + b.forward_contention_time);
  CHECK(b.backward_time() == c.backward_time() + b.backward_contention_time);
}

// The part of [from, to) that the collectives of stage 0 spent in flight.
Time InFlight(const executor::ExecutionResult& run, Time from, Time to) {
  Time overlap = 0;
  for (const executor::GradSyncRecord& g : run.grad_syncs) {
    if (g.stage == 0) overlap += std::max<Time>(0, std::min(to, g.finish) - std::max(from, g.start));
  }
  return overlap;
}

TEST_CASE("nccl contention: a backward beside its gradient buckets ends share x their overlap later",
          "[contention][executor]") {
  auto run_of = [](bool contention) {
    v1::Plan plan = TwoNodePlan(contention);
    plan.set_overlap_grad_reduce(true);
    plan.set_grad_bucket_bytes(20000000);  // 10 M BF16 gradients a bucket: several, ready through the backward
    auto setup = testing::MakeSetup(testing::MakeInputs(TwoH100s(), plan), network::NetworkMode::kMaxMinFair);
    executor::ExecutionResult run = testing::MakeRun(*setup);
    return std::make_pair(std::move(setup), std::move(run));
  };
  const auto [free_setup, free_run] = run_of(false);
  const auto [setup, run] = run_of(true);
  const pipeline::NodeId backward = setup->dag->stage_compute_order()[0].back();
  REQUIRE(setup->stages[0].grad_buckets.size() > 2);
  REQUIRE(setup->durations[backward] == free_setup->durations[backward]);

  // Without the behaviour the backward lasts its duration, whatever runs beside it.
  CHECK(free_run.node_finish[backward] - free_run.node_start[backward] == free_setup->durations[backward]);
  CHECK(free_run.overlap_contention[0] == 0);

  // With it, the backward is longer by share x the time buckets were in flight beside it (rounded to a
  // picosecond at each re-plan: one per bucket start and end).
  const Time start = run.node_start[backward];
  const Time finish = run.node_finish[backward];
  const Time overlap = InFlight(run, start, finish);
  REQUIRE(overlap > 0);
  const Time expected =
      setup->durations[backward] + PicosecondsToTime(std::llround(kH100Share * TimeToPicosecondsDouble(overlap)));
  const auto bound = static_cast<int64_t>(2 * run.grad_syncs.size() + 2);
  CHECK(std::abs(TimeToPicoseconds(finish - start) - TimeToPicoseconds(expected)) <= bound);
  CHECK(run.overlap_contention[0] == finish - start - setup->durations[backward]);
  // The forward ran before any bucket: unchanged.
  const pipeline::NodeId forward = setup->dag->stage_compute_order()[0].front();
  CHECK(run.node_finish[forward] - run.node_start[forward] == setup->durations[forward]);
  CHECK(run.iteration_time > free_run.iteration_time);
  // The report's figure is the executor's (no pass hides a collective here), unset without the behaviour.
  CHECK(traces::BuildReport(*setup, run).stages(0).overlap_contention_ms() ==
        TimeToMilliseconds(run.overlap_contention[0]));
  CHECK(traces::BuildReport(*free_setup, free_run).stages(0).overlap_contention_ms() == 0);
}

}  // namespace
}  // namespace hetsim
