// One flat network (Island.network) whose node types have different NICs: each member island's NIC
// fields (count, rate, sharing, transport) describe its own nodes' uplinks, so a ring across a fast-NIC
// and a slow-NIC node runs at the slow NIC, and a shared NIC divides among its node's flows.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "base/units.h"
#include "proto/summary.h"
#include "proto/validate_cluster.h"
#include "sim/collectives/algorithms.h"
#include "sim/collectives/estimate.h"
#include "sim/collectives/nccl_model.h"
#include "sim/collectives/simulate.h"
#include "sim/engine/simulator.h"
#include "sim/network/network.h"
#include "tests/base/time_io.h"
#include "tests/service/driver/build_topology.h"
#include "tests/sim/collectives/collectives_test_util.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim::topology {
namespace {

// One A100 node of 8 GPUs with 8 x 200 Gb/s NICs (one per GPU) and one L40S node of 8 GPUs with one
// 100 Gb/s NIC shared by all its GPUs, on one switch of network "lab"; ideal hardware (line rates).
v1::Cluster FastBesideSlow(double slow_gbps = 100) {
  v1::Cluster c;
  c.set_name("lab");
  c.set_ideal(true);
  testing::AddGpuType(c, "A100", 312, 80, 2039);
  testing::AddGpuType(c, "L40S", 362.05, 48, 864);
  for (auto& g : *c.mutable_gpu_types()) g.mutable_efficiency()->set_max_efficiency(1);
  testing::AddNodeType(c, "a100x8", "A100", 8, 2400, 1000);
  testing::AddNodeType(c, "l40sx8", "L40S", 8, 256, 1000, v1::PCIE);
  testing::AddIsland(c, {.name = "a100",
                         .node_type = "a100x8",
                         .nics = 8,
                         .nic_gbps = 200,
                         .nic_latency_ns = 1000,
                         .switch_latency_ns = 500,
                         .fabric = v1::ROCE});
  testing::AddIsland(c, {.name = "l40s",
                         .node_type = "l40sx8",
                         .nics = 1,
                         .nic_gbps = slow_gbps,
                         .nic_latency_ns = 1000,
                         .switch_latency_ns = 500,
                         .fabric = v1::ETHERNET});
  for (auto& i : *c.mutable_islands()) i.set_network("lab");
  return c;
}

std::string Problem(const v1::Cluster& c) { return std::string(proto::ValidateCluster(c, "c.pbtxt").message()); }

void RequireValid(const v1::Cluster& c) {
  INFO(Problem(c));
  REQUIRE(proto::ValidateCluster(c, "c.pbtxt").ok());
}

double LinkGbps(const Topology& t, LinkId l) { return t.link(l).bandwidth.bytes_per_second() * 8 / 1e9; }

TEST_CASE("each node type's NICs hang off the shared switch at their own rate", "[topology][mixed-nics]") {
  RequireValid(FastBesideSlow());
  auto t = hetsim::testing::BuildTopology(FastBesideSlow());
  REQUIRE(t.ok());
  CHECK(t->nic_of(GpuId(0)) != t->nic_of(GpuId(1)));   // A100: one NIC per GPU
  CHECK(t->nic_of(GpuId(8)) == t->nic_of(GpuId(15)));  // L40S: one NIC for all
  CHECK(LinkGbps(*t, t->nic_uplink(t->nic_of(GpuId(3)))) == Approx(200));
  CHECK(LinkGbps(*t, t->nic_uplink(t->nic_of(GpuId(8)))) == Approx(100));
  CHECK(t->link(t->nic_uplink(t->nic_of(GpuId(3)))).link_class == LinkClass::kRoce);
  CHECK(t->link(t->nic_uplink(t->nic_of(GpuId(8)))).link_class == LinkClass::kEthernet);
  Router r(*t);
  // GPU, NIC, switch, NIC, GPU: no gateway; the route's tightest link is the L40S node's NIC.
  const auto route = r.GpuRoute(GpuId(0), GpuId(8));
  REQUIRE(route.ok());
  CHECK((*route)->size() == 4);
  CHECK(r.BottleneckBytesPerSecond(**route) == Approx(GbpsToBytesPerSecond(100)));
}

TEST_CASE("a two-node ring all-reduce across a fast and a slow NIC follows alpha-beta at the slow NIC",
          "[topology][mixed-nics][collectives]") {
  for (const double slow_gbps : {100.0, 25.0}) {
    auto t = hetsim::testing::BuildTopology(FastBesideSlow(slow_gbps));
    REQUIRE(t.ok());
    Router r(*t);
    const double slow = GbpsToBytesPerSecond(slow_gbps);
    // One GPU on each node (0 and 8), then both whole nodes (0..15: the ring leaves each node once).
    std::vector<GpuId> both_nodes;
    for (GpuId g : IdsBelow<GpuId>(16)) both_nodes.push_back(g);
    for (const std::vector<GpuId>& gpus : {std::vector<GpuId>{GpuId(0), GpuId(8)}, both_nodes}) {
      collectives::CollectiveRequest req;
      req.op = CollectiveOp::kAllReduce;
      req.gpus = gpus;
      req.bytes = 256 << 20;
      req.algorithm = collectives::CollectiveAlgorithm::kRing;
      const collectives::CollectiveResult res = hetsim::testing::SimulateOk(*t, r, req);
      const auto n = static_cast<int64_t>(gpus.size());
      // 2(n-1)/n S / B_slow + 2(n-1) a, a the route latency of a node-crossing hop.
      const double a = TimeToSeconds(r.Latency(**r.GpuRoute(gpus[n / 2 - 1], gpus[n / 2])));
      CHECK(TimeToSeconds(res.time) ==
            Approx(collectives::RingAllReduceSeconds(n, Bytes(req.bytes), Bandwidth(slow), Seconds(a)).value())
                .epsilon(1e-3));
      CHECK(res.busbw_bytes_per_s == Approx(slow).epsilon(0.01));
    }
  }
}

// Three nodes of one GPU behind 100 Gb/s NICs and one behind a 10 Gb/s NIC on one network, ideal hardware:
// the lab's data-parallel groups (one GPU a node, one node on a slow NIC).
v1::Cluster ThreeFastOneSlow() {
  v1::Cluster c;
  c.set_name("lab");
  c.set_ideal(true);
  testing::AddGpuType(c, "G", 100, 24, 900);
  c.mutable_gpu_types(0)->mutable_efficiency()->set_max_efficiency(1);
  testing::AddNodeType(c, "n", "G", 1, 256, 1000, v1::PCIE);
  testing::AddIsland(c, {.name = "slow",
                         .node_type = "n",
                         .nodes = 1,
                         .nics = 1,
                         .nic_gbps = 10,
                         .nic_latency_ns = 1000,
                         .switch_latency_ns = 500,
                         .fabric = v1::ETHERNET});
  testing::AddIsland(c, {.name = "fast",
                         .node_type = "n",
                         .nodes = 3,
                         .nics = 1,
                         .nic_gbps = 100,
                         .nic_latency_ns = 1000,
                         .switch_latency_ns = 500,
                         .fabric = v1::ETHERNET});
  for (auto& i : *c.mutable_islands()) i.set_network("lab");
  return c;
}

TEST_CASE("auto takes the tree only where NCCL's tuner would: not for a tree that merely spares a slow NIC",
          "[topology][mixed-nics][collectives]") {
  RequireValid(ThreeFastOneSlow());
  auto t = hetsim::testing::BuildTopology(ThreeFastOneSlow());
  REQUIRE(t.ok());
  Router r(*t);
  collectives::CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.gpus = {GpuId(0), GpuId(1), GpuId(2), GpuId(3)};  // the slow node first: the double tree's root and a leaf
  auto estimate = [](const collectives::ShapeChoice& c, collectives::CollectiveAlgorithm a) {
    for (const auto& e : c.estimates) {
      if (e.algorithm == a) return e.seconds.value();
    }
    return -1.0;
  };
  // 256 MiB: the slow rank moves S in the double tree and 1.5 S in the ring, so the tree's estimate is
  // lower; NCCL's tuner prices both from one bus bandwidth (tree 0.5 x 0.92, ring 4/6 of it) and runs
  // the ring, as hetsim now does (the hierarchy over one GPU a node is the same ring).
  req.bytes = 256 << 20;
  const auto big = collectives::ChooseShape(*t, r, req);
  REQUIRE(big.ok());
  CHECK(estimate(*big, collectives::CollectiveAlgorithm::kTree) <
        0.8 * estimate(*big, collectives::CollectiveAlgorithm::kRing));
  CHECK(big->shape.algorithm != collectives::CollectiveAlgorithm::kTree);
  CHECK(big->shape.inter_node == collectives::CollectiveAlgorithm::kRing);
  CHECK(big->shape.estimated_seconds.value() ==
        Approx(estimate(*big, collectives::CollectiveAlgorithm::kRing)).epsilon(1e-9));
  // 4 KiB: latency-bound, the tree's 4 hops against the ring's 6 decide, for NCCL as for the estimate.
  req.bytes = 4 << 10;
  const auto small = collectives::ChooseShape(*t, r, req);
  REQUIRE(small.ok());
  CHECK(small->shape.algorithm == collectives::CollectiveAlgorithm::kTree);
}

// `pairs` flows of `bytes` at once, GPU src[k] to dst[k], on a fresh network of `t`; the last one's end.
Time ConcurrentFlows(const Topology& t, Router& r, const std::vector<std::pair<GpuId, GpuId>>& pairs, int64_t bytes) {
  engine::Simulator sim;
  auto net = network::Network::Create(&sim, collectives::NetworkLinks(t), network::NetworkMode::kMaxMinFair);
  REQUIRE(net.ok());
  for (const auto& [src, dst] : pairs) {
    const auto route = r.GpuRoute(src, dst);
    REQUIRE(route.ok());
    (*net)->StartFlow(**route, bytes, nullptr, 0);
  }
  sim.Run();
  return sim.now();
}

TEST_CASE("a shared NIC divides among its node's concurrent flows, one NIC per GPU does not",
          "[topology][mixed-nics]") {
  auto t = hetsim::testing::BuildTopology(FastBesideSlow());
  REQUIRE(t.ok());
  Router r(*t);
  const int64_t bytes = 100 << 20;
  const double a = TimeToSeconds(r.Latency(**r.GpuRoute(GpuId(8), GpuId(0))));
  for (int k : {1, 2, 4, 8}) {
    std::vector<std::pair<GpuId, GpuId>> from_l40s, from_a100;
    for (int g = 0; g < k; ++g) {
      from_l40s.push_back({GpuId(8 + g), GpuId(g)});
      from_a100.push_back({GpuId(g), GpuId(8 + g)});
    }
    // k flows through the L40S node's one 100 Gb/s NIC, each way: k x S / B.
    const double shared = k * bytes / GbpsToBytesPerSecond(100) + a;
    CHECK(TimeToSeconds(ConcurrentFlows(*t, r, from_l40s, bytes)) == Approx(shared).epsilon(1e-6));
    CHECK(TimeToSeconds(ConcurrentFlows(*t, r, from_a100, bytes)) == Approx(shared).epsilon(1e-6));
  }
  // Between A100 GPUs of two such nodes each flow has its own 200 Gb/s NIC: k flows take one flow's time.
  v1::Cluster two = FastBesideSlow();
  two.mutable_islands(0)->set_node_count(2);
  auto t2 = hetsim::testing::BuildTopology(two);
  REQUIRE(t2.ok());
  Router r2(*t2);
  std::vector<std::pair<GpuId, GpuId>> own;
  for (int g = 0; g < 8; ++g) own.push_back({GpuId(g), GpuId(8 + g)});
  const double a2 = TimeToSeconds(r2.Latency(**r2.GpuRoute(GpuId(0), GpuId(8))));
  CHECK(TimeToSeconds(ConcurrentFlows(*t2, r2, own, bytes)) ==
        Approx(bytes / GbpsToBytesPerSecond(200) + a2).epsilon(1e-6));
}

TEST_CASE("bonded NICs (NIC_SHARED) are one link of their summed rate that every GPU shares",
          "[topology][mixed-nics]") {
  v1::Cluster c = FastBesideSlow(25);
  c.mutable_islands(1)->set_nics_per_node(3);  // 3 x 25 Gb/s bonded: 3 does not divide 8, shared it may
  c.mutable_islands(1)->set_nic_sharing(v1::NIC_SHARED);
  RequireValid(c);
  auto t = hetsim::testing::BuildTopology(c);
  REQUIRE(t.ok());
  CHECK(t->nic_of(GpuId(8)) == t->nic_of(GpuId(15)));
  CHECK(LinkGbps(*t, t->nic_uplink(t->nic_of(GpuId(8)))) == Approx(75));
  CHECK_THAT(proto::SummarizeCluster(c, "c.pbtxt"),
             Catch::Contains("network lab: 2 nodes of 2 islands on one SINGLE_SWITCH; NICs per node type: a100x8 8 x "
                             "200 Gb/s ROCE (one per GPU); l40sx8 3 x 25 Gb/s ETHERNET (bonded, shared by 8 GPUs)"));
}

TEST_CASE("a mixed fat tree sizes each leaf's uplinks for its fastest NIC and a spine per NIC index",
          "[topology][mixed-nics]") {
  v1::Cluster c = FastBesideSlow();
  for (auto& i : *c.mutable_islands()) {
    i.set_topology(v1::FAT_TREE);
    i.set_nodes_per_leaf(1);
    i.set_oversubscription(2);
  }
  RequireValid(c);
  auto t = hetsim::testing::BuildTopology(c);
  REQUIRE(t.ok());
  // 8 spines (the A100 node's 8 NICs). A leaf's uplinks together carry its downlinks / 2: the A100
  // leaf's 8 x 200 Gb/s as 8 links of 100, the L40S leaf's 1 x 100 Gb/s as 8 links of 6.25.
  int spines = 0;
  for (const Device& d : t->devices()) spines += d.kind == DeviceKind::kSpineSwitch ? 1 : 0;
  CHECK(spines == 8);
  std::vector<double> up_gbps;
  for (LinkId l : IdsBelow<LinkId>(t->links().size())) {
    if (t->device(t->link(l).dst).kind == DeviceKind::kSpineSwitch) up_gbps.push_back(LinkGbps(*t, l));
  }
  REQUIRE(up_gbps.size() == 16);
  CHECK(up_gbps.front() == Approx(100));
  CHECK(up_gbps.back() == Approx(6.25));
}

TEST_CASE("transports per node type: the route across them takes the slower one's NCCL step latency",
          "[topology][mixed-nics]") {
  v1::Cluster c = FastBesideSlow();
  c.set_ideal(false);
  auto t = hetsim::testing::BuildTopology(c);
  REQUIRE(t.ok());
  Router r(*t);
  const auto& fabrics = t->nccl_fabrics();
  const LinkId roce = t->nic_uplink(t->nic_of(GpuId(0))), tcp = t->nic_uplink(t->nic_of(GpuId(8)));
  CHECK(t->link(roce).fabric == t->island_fabric(0));
  CHECK(t->link(tcp).fabric == t->island_fabric(1));
  // Each uplink derated by its own transport's NCCL efficiency.
  CHECK(LinkGbps(*t, roce) == Approx(200 * fabrics[t->island_fabric(0)].bandwidth_efficiency));
  CHECK(LinkGbps(*t, tcp) == Approx(100 * fabrics[t->island_fabric(1)].bandwidth_efficiency));
  const auto p = spec::NcclProtocol::kSimple;
  const Time socket_step = fabrics[t->island_fabric(1)].step_latency[static_cast<int>(p)];
  CHECK(socket_step > fabrics[t->island_fabric(0)].step_latency[static_cast<int>(p)]);
  CHECK(collectives::RouteStepLatency(*t, **r.GpuRoute(GpuId(0), GpuId(8)), p) == socket_step);
}

TEST_CASE("mixed NICs that cannot be built are refused with the field", "[topology][mixed-nics]") {
  v1::Cluster ib = FastBesideSlow();
  ib.mutable_islands(0)->set_fabric(v1::INFINIBAND);
  CHECK_THAT(Problem(ib), Catch::Contains("islands[1].fabric: ETHERNET beside islands[0] (\"a100\") on INFINIBAND on "
                                          "network \"lab\": an InfiniBand switch carries no Ethernet"));
  CHECK_FALSE(hetsim::testing::BuildTopology(ib).ok());
  v1::Cluster uneven = FastBesideSlow();
  uneven.mutable_islands(1)->set_nics_per_node(3);
  CHECK_THAT(Problem(uneven), Catch::Contains("islands[1].nics_per_node: 3 NICs do not divide the 8 GPUs of a node"));
  v1::Cluster no_rate = FastBesideSlow();
  no_rate.mutable_islands(1)->clear_nic_bandwidth_gbps();
  CHECK_THAT(Problem(no_rate), Catch::Contains("islands[1].nic_bandwidth_gbps"));
  // The switches stay the network's: a member's switch field must repeat the first's.
  v1::Cluster switches = FastBesideSlow();
  switches.mutable_islands(1)->set_switch_latency_ns(900);
  CHECK_THAT(Problem(switches), Catch::Contains("islands[1].switch_latency_ns: differs from islands[0] (\"a100\"), "
                                                "whose switch fields describe network \"lab\""));
}

}  // namespace
}  // namespace hetsim::topology
