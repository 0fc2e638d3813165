// The planners' analytical time of a stage's layer collectives on their own groups (planner/
// cluster_model.h StageGroups): expert collectives over EP, ETP and ETP x EP GPUs, inside a node or
// across nodes, in closed form; before session 22 every one was priced as an intra-node TP collective
// (and as free at TP 1).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <vector>

#include "base/units.h"
#include "planner/cluster_model.h"
#include "proto/gpu_presets.h"
#include "proto/validate_cluster.h"
#include "sim/collectives/estimate.h"
#include "sim/executor/setup.h"
#include "tests/base/time_io.h"
#include "tests/planner/planner_test_util.h"
#include "tests/sim/executor/executor_test_util.h"

namespace {

using hetsim::Bandwidth;
using hetsim::Bytes;
using hetsim::CollectiveOp;
using hetsim::Seconds;
using hetsim::SecondsToTime;
using hetsim::TimeToSeconds;
using hetsim::planner::ClusterModel;
using hetsim::planner::StageGroups;
using hetsim::workload::CollectiveGroup;
using hetsim::workload::StageCollective;

StageCollective Coll(CollectiveOp op, CollectiveGroup group, int64_t bytes) {
  StageCollective c{};
  c.op = op;
  c.group = group;
  c.bytes = bytes;
  c.count = 2;
  return c;
}

// A stage of TP `tp`, EP `ep` and ETP `etp` on a mesh of `shape`.
StageGroups Groups(hetsim::planner::MeshShape shape, int tp, int ep, int etp) {
  hetsim::spec::StageParallelism stage;
  stage.tensor_parallel = tp;
  stage.expert_parallel = ep;
  stage.expert_tensor_parallel = etp;
  return StageGroups(shape, stage);
}

}  // namespace

TEST_CASE("planner: expert collectives are priced on their own groups, inside or across nodes", "[planner]") {
  hetsim::v1::Cluster cluster = hetsim::testing::TwoIslandCluster(2, 8, 10, 1000);
  REQUIRE(hetsim::proto::ApplyGpuPresets(&cluster, "cluster.pbtxt").ok());
  auto cm = hetsim::testing::ClusterModelOf(cluster, hetsim::spec::DType::kFp16);
  INFO(cm.status().message());
  REQUIRE(cm.ok());
  const auto& im = (*cm)->island(0);  // 2 nodes of 8 GPUs
  const double intra = im.intra_node.bytes_per_s, lat = TimeToSeconds(im.intra_node.latency);
  const double nic = im.node_nic_bytes_per_s / 8, inter_lat = TimeToSeconds(im.inter_node.latency);
  REQUIRE(intra > 0);
  REQUIRE(nic > 0);
  // The node's one NIC is shared by the GPUs a mesh uses in it: 8 of a whole node, 4 of half of one.
  CHECK((*cm)->NicShare(im, 8) == Approx(nic));
  CHECK((*cm)->NicShare(im, 4) == Approx(2 * nic));
  const int64_t S = 64 << 20;
  auto time = [&](StageGroups g, CollectiveOp op, CollectiveGroup group) {
    return (*cm)->CollectiveTime(0, g, Coll(op, group, S));
  };
  const StageGroups node = Groups({1, 8}, 2, 8, 1);  // TP 2, EP 8, ETP 1 on one node
  CHECK(time(node, CollectiveOp::kAllGather, CollectiveGroup::kTensor) ==
        2 * SecondsToTime(
                hetsim::collectives::RingAllGatherSeconds(2, Bytes(S), Bandwidth(intra), Seconds(lat)).value()));
  CHECK(time(node, CollectiveOp::kAllToAll, CollectiveGroup::kExpert) ==
        2 * SecondsToTime(
                hetsim::collectives::DirectAllToAllSeconds(8, Bytes(S), Bandwidth(intra), Seconds(lat)).value()));
  CHECK(time(node, CollectiveOp::kAllGather, CollectiveGroup::kExpertTensor) == 0);  // ETP 1: no group
  // TP 1 still dispatches over EP (it was free before).
  CHECK(time(Groups({1, 8}, 1, 8, 1), CollectiveOp::kAllToAll, CollectiveGroup::kExpert) ==
        time(node, CollectiveOp::kAllToAll, CollectiveGroup::kExpert));

  // EP 16 over both nodes: 8 members in each, 7/16 of the buffer over NVLink, 8/16 over the GPU's NIC.
  const StageGroups two = Groups({2, 8}, 2, 16, 1);
  CHECK(time(two, CollectiveOp::kAllToAll, CollectiveGroup::kExpert) ==
        2 * SecondsToTime(inter_lat + std::max(S * 7.0 / 16 / intra, S * 8.0 / 16 / nic)));
  // ETP 4 x EP 4: an EP group is 4 GPUs 4 apart, 2 in each node; an expert-TP group 4 consecutive GPUs.
  const StageGroups spread = Groups({2, 8}, 4, 4, 4);
  CHECK(time(spread, CollectiveOp::kAllToAll, CollectiveGroup::kExpert) ==
        2 * SecondsToTime(inter_lat + std::max(S * 1.0 / 4 / intra, S * 2.0 / 4 / nic)));
  CHECK(time(spread, CollectiveOp::kReduceScatter, CollectiveGroup::kExpertTensor) ==
        2 * SecondsToTime(
                hetsim::collectives::RingAllGatherSeconds(4, Bytes(S), Bandwidth(intra), Seconds(lat)).value()));
  // The ETP x EP block of 16 (the all-gather dispatcher's group): rings inside each node, then across.
  CHECK(
      time(spread, CollectiveOp::kAllGather, CollectiveGroup::kExpertAndTensor) ==
      2 * SecondsToTime(hetsim::collectives::RingAllGatherSeconds(8, Bytes(S), Bandwidth(intra), Seconds(lat)).value() +
                        hetsim::collectives::RingAllGatherSeconds(2, Bytes(S / 8.0), Bandwidth(nic), Seconds(inter_lat))
                            .value()));
  CHECK(time(spread, CollectiveOp::kAllReduce, CollectiveGroup::kExpertAndTensor) ==
        2 * SecondsToTime(hetsim::collectives::HierarchicalAllReduceSeconds(
                              8, 2, Bytes(S), Bandwidth(intra), Seconds(lat), Bandwidth(nic), Seconds(inter_lat))
                              .value()));

  // Gradient synchronisation over groups `stride` apart: TP 2's DP groups hold 4 GPUs in each node;
  // an expert-data-parallel group ETP x EP = 8 apart holds one, every GPU's gradients crossing its NIC.
  CHECK((*cm)->GradSyncTime(0, {2, 8}, 2, S) ==
        SecondsToTime(hetsim::collectives::HierarchicalAllReduceSeconds(4, 2, Bytes(S), Bandwidth(intra), Seconds(lat),
                                                                        Bandwidth(nic), Seconds(inter_lat))
                          .value()));
  CHECK((*cm)->GradSyncTime(0, {2, 8}, 8, S) ==
        SecondsToTime(
            hetsim::collectives::RingAllReduceSeconds(2, Bytes(S), Bandwidth(nic), Seconds(inter_lat)).value()));
  CHECK((*cm)->GradSyncTime(0, {2, 8}, 16, S) == 0);  // one GPU per group: nothing to reduce
  CHECK((*cm)->GradSyncTime(0, {1, 8}, 4, S) ==
        SecondsToTime(hetsim::collectives::RingAllReduceSeconds(2, Bytes(S), Bandwidth(intra), Seconds(lat)).value()));
}

TEST_CASE("planner: a group's fewest members in one node is the simulator's, on any node size", "[planner]") {
  // The simulator's groups (GroupsOf) of a stage of nodes x gpn GPUs numbered node-major, against the
  // planner's StageGroups::MembersPerNode: the fewest GPUs one group has in one node.
  auto fewest = [](const std::vector<std::vector<hetsim::GpuId>>& groups, int gpn) {
    int least = 1 << 30;
    for (const auto& g : groups) {
      std::map<int, int> per_node;
      for (hetsim::GpuId gpu : g) ++per_node[gpu.value() / gpn];
      for (const auto& [node, count] : per_node) least = std::min(least, count);
    }
    return least;
  };
  struct Case {
    int nodes, gpn, tp, ep, etp;
  };
  for (const Case& c : {Case{2, 8, 2, 8, 1}, Case{2, 8, 2, 16, 1}, Case{2, 8, 4, 4, 4}, Case{2, 6, 1, 4, 1},
                        Case{4, 6, 2, 8, 1}, Case{2, 6, 2, 2, 2}, Case{4, 4, 2, 8, 2}}) {
    INFO(c.nodes << " x " << c.gpn << ", TP " << c.tp << ", EP " << c.ep << ", ETP " << c.etp);
    hetsim::executor::StageLayout l;
    for (int g = 0; g < c.nodes * c.gpn; ++g) l.gpus.push_back(hetsim::GpuId(g));
    l.tensor_parallel = c.tp;
    l.data_parallel = c.nodes * c.gpn / c.tp;
    l.expert_parallel = c.ep;
    l.expert_tensor_parallel = c.etp;
    const StageGroups groups = Groups({c.nodes, c.gpn}, c.tp, c.ep, c.etp);
    for (CollectiveGroup kind : {CollectiveGroup::kTensor, CollectiveGroup::kExpert, CollectiveGroup::kExpertTensor,
                                 CollectiveGroup::kExpertAndTensor}) {
      INFO("group kind " << static_cast<int>(kind));
      const auto sim_groups = hetsim::executor::GroupsOf(l, kind);
      REQUIRE_FALSE(sim_groups.empty());
      CHECK(static_cast<int>(sim_groups[0].size()) == groups.Size(kind));
      CHECK(fewest(sim_groups, c.gpn) == groups.MembersPerNode(kind));
    }
  }
}

TEST_CASE("planner: the stage group (FP8's amax reduction) spans the stage's TP x CP x DP GPUs", "[planner]") {
  hetsim::spec::StageParallelism stage;
  stage.tensor_parallel = 2;
  stage.data_parallel = 4;
  StageGroups groups(hetsim::planner::MeshShape{2, 8}, stage);
  groups.context_parallel = 2;
  CHECK(groups.Size(CollectiveGroup::kStage) == 16);
  CHECK(groups.Span(CollectiveGroup::kStage) == 16);
  CHECK(groups.MembersPerNode(CollectiveGroup::kStage) == 8);  // 8 in each of the two nodes
}

TEST_CASE("planner: an all-to-all across nodes fills the NIC at what its link carries", "[planner][experts]") {
  // The mixed cloud's A100 island (examples/cluster-mixed-cloud.pbtxt): 2 nodes of 8 A100s, one 100 Gb/s NIC
  // a node over TCP sockets, whose link the simulator gives line rate x ETHERNET's NCCL efficiency (the 16
  // socket streams of 10 Gb/s do not bind). TP 2, EP 8 x ETP 2: each EP group holds 4 GPUs in each node, and
  // both groups of a node dispatch at once (session 41), so every GPU of the node sends 4 of its 8 peers'
  // S / 8 through the NIC: S / 2 at an eighth of what the NIC carries, beside 3 / 8 of S over NVLink.
  absl::StatusOr<hetsim::v1::Cluster> c =
      hetsim::proto::LoadCluster(HETSIM_SOURCE_DIR "/examples/cluster-mixed-cloud.pbtxt");
  REQUIRE(c.ok());
  auto cm = hetsim::testing::ClusterModelOf(*c, hetsim::spec::DType::kFp16);
  INFO(cm.status().message());
  REQUIRE(cm.ok());
  const auto& im = (*cm)->island(0);
  REQUIRE(im.name == "a100");
  const hetsim::topology::Topology& topo = (*cm)->topology();
  const double line = hetsim::GbpsToBytesPerSecond(100);
  const double efficiency = topo.nccl_fabrics()[topo.island_fabric(0)].bandwidth_efficiency;
  REQUIRE(efficiency < 1);
  CHECK(im.node_nic_bytes_per_s == Approx(line));
  CHECK(im.nic_link_bytes_per_s == Approx(line * efficiency));
  CHECK((*cm)->NicShare(im, 8, /*link=*/true) == Approx(line * efficiency / 8));
  const int64_t S = 8 << 20;
  const StageGroups spread = Groups({2, 8}, 2, 8, 2);
  REQUIRE(spread.MembersPerNode(CollectiveGroup::kExpert) == 4);
  const double intra = im.IntraRing(4, 8).bytes_per_s, inter_lat = TimeToSeconds(im.inter_node.latency);
  CHECK((*cm)->CollectiveTime(0, spread, Coll(CollectiveOp::kAllToAll, CollectiveGroup::kExpert, S)) ==
        2 * SecondsToTime(inter_lat + std::max(S * 3.0 / 8 / intra, S * 4.0 / 8 / (line * efficiency / 8))));
  // The rings (a gather over the ETP x EP block) keep the line rate: their own NCCL pace binds first.
  CHECK((*cm)->CollectiveTime(0, spread, Coll(CollectiveOp::kAllGather, CollectiveGroup::kExpertAndTensor, S)) ==
        2 * SecondsToTime(
                hetsim::collectives::RingAllGatherSeconds(8, Bytes(S), Bandwidth(im.IntraRing(8, 8).bytes_per_s),
                                                          Seconds(TimeToSeconds(im.IntraRing(8, 8).latency)))
                    .value() +
                hetsim::collectives::RingAllGatherSeconds(2, Bytes(S / 8.0), Bandwidth(line / 8), Seconds(inter_lat))
                    .value()));
}
