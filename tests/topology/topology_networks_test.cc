// Islands on one flat network (Island.network): mixed node types under the same switches, no gateway,
// routes and collectives across them limited by the NICs.
#include <catch2/catch.hpp>

#include "base/units.h"
#include "proto/validate_cluster.h"
#include "sim/collectives/estimate.h"
#include "sim/collectives/simulate.h"
#include "tests/base/time_io.h"
#include "tests/service/driver/build_topology.h"
#include "tests/sim/collectives/collectives_test_util.h"
#include "tests/topology/topology_clusters.h"
#include "tests/topology/topology_test_util.h"

namespace hetsim::topology {
namespace {

using testing::AddGpuType;
using testing::AddIsland;
using testing::AddNodeType;
using testing::CountKind;

// `a100_nodes` A100 and `l40s_nodes` L40S nodes of 8 GPUs, one 100 Gb/s Ethernet NIC per node, on
// one network "region" of the given topology. Ideal hardware: line rates, no NCCL latencies.
v1::Cluster MixedRegion(int a100_nodes, int l40s_nodes, v1::FabricTopology topology = v1::SINGLE_SWITCH,
                        int nodes_per_leaf = 0) {
  v1::Cluster c;
  c.set_name("region");
  c.set_ideal(true);
  AddGpuType(c, "A100", 312, 80, 2039);
  AddGpuType(c, "L40S", 362.05, 48, 864);
  for (auto& g : *c.mutable_gpu_types()) g.mutable_efficiency()->set_max_efficiency(1);
  AddNodeType(c, "a100x8", "A100", 8, 2400, 1000);
  AddNodeType(c, "l40sx8", "L40S", 8, 256, 1000, v1::PCIE);
  for (auto [name, type, nodes] : {std::tuple{"a100", "a100x8", a100_nodes}, {"l40s", "l40sx8", l40s_nodes}}) {
    testing::IslandSpec s{.name = name, .node_type = type, .nodes = nodes, .topology = topology, .nics = 1};
    s.nic_gbps = 100;
    s.nic_latency_ns = 1000;
    s.switch_latency_ns = 500;
    s.fabric = v1::ETHERNET;
    s.nodes_per_leaf = nodes_per_leaf;
    AddIsland(c, s);
    c.mutable_islands(c.islands_size() - 1)->set_network("region");
  }
  return c;
}

TEST_CASE("a shared network: one switch for both node types, no gateway, NIC to NIC across islands",
          "[topology][shared-network]") {
  REQUIRE(proto::ValidateCluster(MixedRegion(2, 2), "c.pbtxt").ok());
  auto t = hetsim::testing::BuildTopology(MixedRegion(2, 2));
  REQUIRE(t.ok());
  CHECK(t->num_gpus() == 32);
  CHECK(CountKind(*t, DeviceKind::kIslandSwitch) == 1);
  CHECK(CountKind(*t, DeviceKind::kGateway) == 0);
  CHECK(CountKind(*t, DeviceKind::kNic) == 4);
  Router r(*t);
  const GpuId a100 = *t->GpuIdOf(0, 1, 3), l40s = *t->GpuIdOf(1, 0, 5);
  auto route = r.GpuRoute(a100, l40s);
  REQUIRE(route.ok());
  // GPU -> NIC, NIC -> switch, switch -> NIC, NIC -> GPU: the same four links as inside one island.
  CHECK((*route)->size() == 4);
  CHECK((*route)->front() == t->gpu_to_nic(a100));
  CHECK((*route)->back() == t->nic_to_gpu(l40s));
  CHECK(r.Latency(**route) == (1000 + 1000 + 500) * kNanosecond);
  CHECK(r.BottleneckBytesPerSecond(**route) == Approx(GbpsToBytesPerSecond(100)));
  CHECK(t->DeviceName(t->link(t->nic_uplink(t->nic_of(a100))).dst) == "region/switch0");
}

TEST_CASE("a shared fat tree places the islands' nodes on leaves in island order and spreads by ECMP",
          "[topology][shared-network]") {
  // 3 + 1 nodes, 2 per leaf: leaf 0 holds a100 nodes 0-1, leaf 1 a100 node 2 and the l40s node.
  auto t = hetsim::testing::BuildTopology(MixedRegion(3, 1, v1::FAT_TREE, 2));
  REQUIRE(t.ok());
  CHECK(CountKind(*t, DeviceKind::kLeafSwitch) == 2);
  Router r(*t);
  const GpuId same_leaf = *t->GpuIdOf(0, 2, 0), l40s = *t->GpuIdOf(1, 0, 0), far = *t->GpuIdOf(0, 0, 0);
  CHECK((*r.GpuRoute(same_leaf, l40s))->size() == 4);
  CHECK((*r.GpuRoute(far, l40s))->size() == 6);  // up to a spine and down
}

TEST_CASE("a shared Clos counts racks and pods across the islands' nodes", "[topology][shared-network]") {
  // 2 + 2 nodes, one per rack, two racks per pod: pod 0 holds the A100 nodes, pod 1 the L40S nodes.
  v1::Cluster c = MixedRegion(2, 2, v1::CLOS);
  for (auto& i : *c.mutable_islands()) {
    i.mutable_clos()->set_nodes_per_rack(1);
    i.mutable_clos()->set_racks_per_pod(2);
  }
  REQUIRE(proto::ValidateCluster(c, "c.pbtxt").ok());
  auto t = hetsim::testing::BuildTopology(c);
  REQUIRE(t.ok());
  CHECK(CountKind(*t, DeviceKind::kTorSwitch) == 4);
  CHECK(CountKind(*t, DeviceKind::kPodSwitch) == 2);
  CHECK(CountKind(*t, DeviceKind::kAggSwitch) == 1);
  Router r(*t);
  CHECK((*r.GpuRoute(*t->GpuIdOf(0, 0, 0), *t->GpuIdOf(0, 1, 0)))->size() == 6);  // inside pod 0
  CHECK((*r.GpuRoute(*t->GpuIdOf(0, 0, 0), *t->GpuIdOf(1, 1, 0)))->size() == 8);  // across pods
}

TEST_CASE("an all-reduce between an A100 node and an L40S node is limited by the nodes' one shared NIC",
          "[topology][shared-network][collectives]") {
  auto t = hetsim::testing::BuildTopology(MixedRegion(1, 1));
  REQUIRE(t.ok());
  Router r(*t);
  collectives::CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  for (GpuId g : IdsBelow<GpuId>(16)) req.gpus.push_back(g);
  req.bytes = 256 << 20;
  req.algorithm = collectives::CollectiveAlgorithm::kRing;
  const collectives::CollectiveResult res = hetsim::testing::SimulateOk(*t, r, req);
  // The ring 0..15 leaves each node once through its only NIC (7 -> 8, 15 -> 0); every other hop is
  // inside a node at 2400 or 256 Gb/s. Each ring step is as slow as the NIC hop: 2(n-1)/n S/B + 2(n-1) a.
  const double nic = GbpsToBytesPerSecond(100);
  const double a = TimeToSeconds(r.Latency(**r.GpuRoute(GpuId(7), GpuId(8))));
  CHECK(TimeToSeconds(res.time) ==
        Approx(collectives::RingAllReduceSeconds(16, Bytes(req.bytes), Bandwidth(nic), Seconds(a)).value())
            .epsilon(1e-3));
  CHECK(res.busbw_bytes_per_s == Approx(nic).epsilon(0.01));
}

TEST_CASE("network members must repeat the first island's switch fields", "[topology][shared-network]") {
  v1::Cluster c = MixedRegion(1, 1);
  c.mutable_islands(1)->set_nic_latency_ns(2000);
  const absl::Status s = proto::ValidateCluster(c, "c.pbtxt");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(std::string(s.message()), Catch::Contains("c.pbtxt: islands[1].nic_latency_ns: differs from islands[0]"));
  CHECK_FALSE(hetsim::testing::BuildTopology(c).ok());
  // Without the network the two islands have no path to each other.
  v1::Cluster apart = MixedRegion(1, 1);
  for (auto& i : *apart.mutable_islands()) i.clear_network();
  CHECK_THAT(std::string(proto::ValidateCluster(apart, "c.pbtxt").message()),
             Catch::Contains("is not connected to island \"a100\""));
}

}  // namespace
}  // namespace hetsim::topology
