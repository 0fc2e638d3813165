// An MoE layer's token all-to-all across nodes (session 41; sim/executor/setup.cc CollectivesTime,
// CollectiveTimer::EachNodeSharingSet): NCCL runs an all-to-all as grouped sends and receives, one pair per
// peer, all in flight at once (NCCL's user guide, "Point-to-point communication": all-to-all), and every
// rank of a stage dispatches its own tokens at the same time, so the expert-parallel groups of a node (ETP
// apart) share its NICs. Until session 41 the simulator timed each group alone, as if it had the NICs to
// itself.
#include <catch2/catch.hpp>

#include <vector>

#include "base/units.h"
#include "sim/executor/collective_load.h"
#include "sim/executor/setup.h"
#include "tests/base/time_io.h"
#include "tests/sim/executor/executor_test_util.h"

namespace hetsim::executor {
namespace {

// The 8-expert 2-block MoE on `nodes` nodes of 8 GPUs of island "fast": TP 2 (sequence parallel, as
// Megatron-LM's MoE layer needs) x DP 4 a node, EP 8 x ETP 2, so each copy of the experts is 16 GPUs over
// two nodes and each EP group holds 4 GPUs (2 apart) in each.
v1::Plan SpreadExpertsPlan(int nodes) {
  v1::Plan p;
  p.set_name("moe-spread");
  testing::SetSmallMoeModel(p, 8);
  p.set_micro_batch_size(4 * nodes);
  p.set_global_batch_size(4 * nodes);
  p.set_schedule(v1::GPIPE);
  v1::Stage* st = p.add_stages();
  st->set_num_layers(4);  // embedding, 2 blocks, head
  st->mutable_mesh()->set_island("fast");
  st->mutable_mesh()->set_node_count(nodes);
  st->mutable_mesh()->set_gpus_per_node(8);
  st->set_tensor_parallel(2);
  st->set_data_parallel(4 * nodes);
  st->set_sequence_parallel(true);
  st->set_expert_parallel(8);
  st->set_expert_tensor_parallel(2);
  return p;
}

// The route latency from GPU `a` to GPU `b` (each hop's, paid before the bytes flow).
Time RouteLatency(const ExecutionSetup& setup, GpuId a, GpuId b) {
  auto route = setup.router->GpuRoute(a, b, 0);
  REQUIRE(route.ok());
  Time latency = 0;
  for (const LinkId l : **route) latency += setup.topology->link(l).latency;
  return latency;
}

}  // namespace

TEST_CASE("MoE all-to-all: the expert-parallel groups of two nodes run at once through each node's one NIC",
          "[executor][experts]") {
  // Two nodes of 8 A100s, one 200 Gb/s NIC each (ideal: line rates).
  const v1::Cluster cluster = testing::TwoIslandCluster(2, 8, 10, 1000);
  const auto setup =
      testing::MakeSetup(testing::MakeInputs(cluster, SpreadExpertsPlan(2)), network::NetworkMode::kMaxMinFair);
  const StageLayout& l = setup->stages[0].layout;
  const std::vector<std::vector<GpuId>> groups = GroupsOf(l, workload::CollectiveGroup::kExpert);
  REQUIRE(groups == GpuGroups({{0, 2, 4, 6, 8, 10, 12, 14}, {1, 3, 5, 7, 9, 11, 13, 15}}));

  // S bytes a GPU, S / 8 to each peer: 4 of a GPU's 7 peers are on the other node, so every GPU sends
  // 4 x S / 8 through its node's NIC, and the 8 GPUs of a node (both groups) 32 flows of S / 8 each way,
  // which share the NIC equally and end together: latency + 8 x 4 x (S / 8) / NIC. Alone a group's 4 GPUs
  // of a node would have the NIC to themselves: latency + 4 x 4 x (S / 8) / NIC.
  const int64_t S = 8 << 20;
  const double nic = GbpsToBytesPerSecond(200);
  const Time latency = RouteLatency(*setup, GpuId(0), GpuId(8));
  CollectiveTimer timer(*setup->topology, *setup->router, network::NetworkMode::kMaxMinFair);
  auto at_once = timer.EachNodeSharingSet(CollectiveOp::kAllToAll, groups, S);
  auto alone = timer.EachGroup(CollectiveOp::kAllToAll, groups, S);
  REQUIRE(at_once.ok());
  REQUIRE(alone.ok());
  INFO("at once " << TimeToMicroseconds(at_once->slowest) << " us, alone " << TimeToMicroseconds(alone->slowest)
                  << " us, latency " << TimeToMicroseconds(latency) << " us");
  CHECK(TimeToSeconds(at_once->slowest) == Approx(TimeToSeconds(latency) + 8 * 4 * (S / 8) / nic).epsilon(1e-9));
  CHECK(TimeToSeconds(alone->slowest) == Approx(TimeToSeconds(latency) + 4 * 4 * (S / 8) / nic).epsilon(1e-9));
  // The same flows either way: the links carry the same bytes.
  int64_t bytes_at_once = 0, bytes_alone = 0;
  for (const LinkLoad& load : at_once->load) bytes_at_once += load.bytes;
  for (const LinkLoad& load : alone->load) bytes_alone += load.bytes;
  CHECK(bytes_at_once == bytes_alone);

  // The stage's passes time their all-to-alls so (the other collectives, inside a node, group by group).
  const VirtualStageCost& vs = setup->virtual_stages[0];
  Time expected = 0;
  int all_to_alls = 0;
  for (const workload::StageCollective& c : vs.cost.forward_collectives) {
    const auto& of = GroupsOf(l, c.group);
    auto t = c.group == workload::CollectiveGroup::kExpert ? timer.EachNodeSharingSet(c.op, of, c.bytes)
                                                           : timer.EachGroup(c.op, of, c.bytes);
    REQUIRE(t.ok());
    expected += t->slowest * c.count;
    if (c.op == CollectiveOp::kAllToAll) all_to_alls += static_cast<int>(c.count);
  }
  CHECK(all_to_alls == 2 * 2);  // dispatch and combine in each of the 2 blocks
  CHECK(vs.forward_collective_time == expected);
}

TEST_CASE("MoE all-to-all: copies of the experts on other nodes run apart, each at the closed form",
          "[executor][experts]") {
  // Four nodes: two copies of the experts, each over its own pair of nodes; the groups of a pair run at
  // once, the pairs apart (they share no node), and both pairs' NICs carry the same bytes.
  const v1::Cluster cluster = testing::TwoIslandCluster(4, 8, 10, 1000);
  const auto setup =
      testing::MakeSetup(testing::MakeInputs(cluster, SpreadExpertsPlan(4)), network::NetworkMode::kMaxMinFair);
  const std::vector<std::vector<GpuId>> groups = GroupsOf(setup->stages[0].layout, workload::CollectiveGroup::kExpert);
  REQUIRE(groups.size() == 4);
  const int64_t S = 8 << 20;
  const double nic = GbpsToBytesPerSecond(200);
  CollectiveTimer timer(*setup->topology, *setup->router, network::NetworkMode::kMaxMinFair);
  auto t = timer.EachNodeSharingSet(CollectiveOp::kAllToAll, groups, S);
  REQUIRE(t.ok());
  CHECK(TimeToSeconds(t->slowest) ==
        Approx(TimeToSeconds(RouteLatency(*setup, GpuId(0), GpuId(8))) + 8 * 4 * (S / 8) / nic).epsilon(1e-9));
  // Every node's NIC uplink carries its 8 GPUs' 32 flows of S / 8: 4 S.
  for (int node = 0; node < 4; ++node) {
    const LinkId up = setup->topology->nic_uplink(setup->topology->nic_of(GpuId(8 * node)));
    int64_t bytes = 0;
    for (const LinkLoad& load : t->load) {
      if (load.link == up) bytes += load.bytes;
    }
    CHECK(bytes == 4 * S);
  }
}

}  // namespace hetsim::executor
