#include <catch2/catch.hpp>

#include "base/units.h"
#include "tests/base/time_io.h"
#include "tests/service/driver/build_topology.h"
#include "tests/topology/topology_clusters.h"
#include "tests/topology/topology_test_util.h"
#include "topology/device_graph.h"
#include "topology/routing.h"

namespace hetsim::topology {
namespace {

using testing::AddInterIslandLink;
using testing::AddIsland;
using testing::H100Island;

using testing::CountKind;

TEST_CASE("single-switch island: devices, duplex links, capacities in bytes/s", "[topology]") {
  auto t = hetsim::testing::BuildTopology(H100Island(2));
  REQUIRE(t.ok());
  CHECK(t->num_gpus() == 16);
  CHECK(CountKind(*t, DeviceKind::kGpu) == 16);
  CHECK(CountKind(*t, DeviceKind::kNvSwitch) == 2);
  CHECK(CountKind(*t, DeviceKind::kNic) == 16);
  CHECK(CountKind(*t, DeviceKind::kIslandSwitch) == 1);
  CHECK(CountKind(*t, DeviceKind::kGateway) == 0);
  // GPU<->NVSwitch, GPU<->NIC and NIC<->switch, each full duplex.
  CHECK(t->links().size() == 16 * 2 * 3);
  CHECK(boost::num_edges(t->graph()) == t->links().size());
  const Link& up = t->link(t->gpu_to_switch(GpuId(3)));
  CHECK(up.bandwidth.bytes_per_second() == Approx(3600e9 / 8));
  CHECK(up.link_class == LinkClass::kNvlink);
  CHECK(t->link(t->switch_to_gpu(GpuId(3))).src == up.dst);
  CHECK(t->link(t->nic_uplink(t->nic_of(GpuId(3)))).link_class == LinkClass::kInfiniband);
  CHECK(LinkClassName(LinkClass::kEthernet) == "ETHERNET");
}

TEST_CASE("global GPU ids: islands, nodes, GPUs in order, and meshes", "[topology]") {
  v1::Cluster c = H100Island(2);
  AddIsland(c, {.name = "b", .node_type = "dgx", .nodes = 3});
  AddInterIslandLink(c, "a", "b", 100, 10000);
  auto t = hetsim::testing::BuildTopology(c);
  REQUIRE(t.ok());
  CHECK(t->num_gpus() == 40);
  CHECK(*t->GpuIdOf(1, 0, 0) == GpuId(16));
  CHECK(*t->GpuIdOf(1, 2, 7) == GpuId(39));
  auto loc = t->Locate(GpuId(27));
  REQUIRE(loc.ok());
  CHECK(loc->island == 1);
  CHECK(loc->node == 1);
  CHECK(loc->local == 3);
  for (GpuId g : IdsBelow<GpuId>(t->num_gpus())) {
    auto l = t->Locate(g);
    CHECK(*t->GpuIdOf(l->island, l->node, l->local) == g);
  }
  CHECK_FALSE(t->Locate(GpuId(40)).ok());
  CHECK_FALSE(t->Locate(GpuId(-1)).ok());
  CHECK_FALSE(t->GpuIdOf(1, 3, 0).ok());
  CHECK_FALSE(t->GpuIdOf(0, 0, 8).ok());

  spec::MeshSpec m{.island = "b", .first_node = 1, .node_count = 2, .first_gpu = 4, .gpus_per_node = 2};
  auto gpus = t->MeshGpus(m);
  REQUIRE(gpus.ok());
  CHECK(*gpus == GpuIds({28, 29, 36, 37}));
  m.node_count = 3;
  auto bad = t->MeshGpus(m);
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("node_count") != std::string::npos);
  m.node_count = 1;
  m.island = "zz";
  CHECK_FALSE(t->MeshGpus(m).ok());
}

TEST_CASE("routes: intra-node through NVSwitch, inter-node through NICs and the switch", "[topology]") {
  auto t = hetsim::testing::BuildTopology(H100Island(2));
  REQUIRE(t.ok());
  Router r(*t);
  auto intra = r.GpuRoute(GpuId(0), GpuId(5));
  REQUIRE(intra.ok());
  CHECK(**intra == Route{t->gpu_to_switch(GpuId(0)), t->switch_to_gpu(GpuId(5))});
  CHECK(r.Latency(**intra) == 1000 * kNanosecond);
  CHECK(r.BottleneckBytesPerSecond(**intra) == Approx(GbpsToBytesPerSecond(3600)));

  auto inter = r.GpuRoute(GpuId(1), GpuId(9));
  REQUIRE(inter.ok());
  REQUIRE((*inter)->size() == 4);
  CHECK((*inter)->front() == t->gpu_to_nic(GpuId(1)));
  CHECK((*inter)->back() == t->nic_to_gpu(GpuId(9)));
  // NIC wire both ways, one switch traversal.
  CHECK(r.Latency(**inter) == (500 + 500 + 200) * kNanosecond);
  CHECK(r.BottleneckBytesPerSecond(**inter) == Approx(GbpsToBytesPerSecond(400)));
  // Consecutive links: each starts where the previous ended.
  for (size_t i = 1; i < (*inter)->size(); ++i) {
    CHECK(t->link((**inter)[i]).src == t->link((**inter)[i - 1]).dst);
  }
  CHECK_FALSE(r.GpuRoute(GpuId(3), GpuId(3)).ok());
  CHECK_FALSE(r.GpuRoute(GpuId(0), GpuId(16)).ok());
  // Cached: the same pointer comes back.
  CHECK(*r.GpuRoute(GpuId(1), GpuId(9)) == *inter);
}

TEST_CASE("fat tree: leaves, spines with the oversubscribed capacity, deterministic ECMP", "[topology]") {
  auto t = hetsim::testing::BuildTopology(H100Island(8, v1::FAT_TREE, 8, /*nodes_per_leaf=*/2, /*oversubscription=*/2));
  REQUIRE(t.ok());
  CHECK(CountKind(*t, DeviceKind::kLeafSwitch) == 4);
  CHECK(CountKind(*t, DeviceKind::kSpineSwitch) == 8);
  // Each leaf: 2 nodes x 8 NICs x 400 Gb/s = 6400 Gb/s down, half of it up, over 8 spines: 400 Gb/s.
  for (const Link& l : t->links()) {
    if (t->device(l.src).kind == DeviceKind::kLeafSwitch && t->device(l.dst).kind == DeviceKind::kSpineSwitch) {
      CHECK(l.bandwidth.bytes_per_second() == Approx(GbpsToBytesPerSecond(2 * 8 * 400.0 / 2 / 8)));
    }
  }
  Router r(*t);
  // Same leaf: no spine.
  CHECK((*r.GpuRoute(GpuId(0), GpuId(8)))->size() == 4);
  // Different leaves: NIC, leaf, spine, leaf, NIC.
  std::set<DeviceId> spines_used;
  for (uint64_t key = 0; key < 64; ++key) {
    const Route& route = **r.GpuRoute(GpuId(0), GpuId(63), key);
    REQUIRE(route.size() == 6);
    spines_used.insert(t->link(route[2]).dst);
    CHECK(route == **r.GpuRoute(GpuId(0), GpuId(63), key));
  }
  CHECK(spines_used.size() > 4);  // ECMP spreads over the spines
  Router again(*t);
  CHECK(**again.GpuRoute(GpuId(0), GpuId(63), 17) == **r.GpuRoute(GpuId(0), GpuId(63), 17));
}

TEST_CASE("rail-optimized: same rail stays on the rail switch, other rails cross a spine", "[topology]") {
  auto t = hetsim::testing::BuildTopology(H100Island(4, v1::RAIL_OPTIMIZED));
  REQUIRE(t.ok());
  CHECK(CountKind(*t, DeviceKind::kRailSwitch) == 8);
  Router r(*t);
  CHECK((*r.GpuRoute(GpuId(2), GpuId(8 + 2)))->size() == 4);
  const Route& cross = **r.GpuRoute(GpuId(2), GpuId(8 + 5));
  REQUIRE(cross.size() == 6);
  CHECK(t->device(t->link(cross[2]).dst).kind == DeviceKind::kSpineSwitch);
}

TEST_CASE("islands: gateways, parallel links with ECMP, slow link is the bottleneck", "[topology]") {
  v1::Cluster c = H100Island(2);
  AddIsland(c, {.name = "b", .node_type = "dgx", .nodes = 2});
  AddInterIslandLink(c, "a", "b", 100, 20000, /*count=*/2);
  auto t = hetsim::testing::BuildTopology(c);
  REQUIRE(t.ok());
  CHECK(CountKind(*t, DeviceKind::kGateway) == 2);
  Router r(*t);
  std::set<LinkId> used;
  for (uint64_t key = 0; key < 32; ++key) {
    const Route& route = **r.GpuRoute(GpuId(0), GpuId(20), key);
    CHECK(r.BottleneckBytesPerSecond(route) == Approx(GbpsToBytesPerSecond(100)));
    for (LinkId l : route) {
      if (t->link(l).link_class == LinkClass::kEthernet) used.insert(l);
    }
  }
  CHECK(used.size() == 2);
}

TEST_CASE("routes prefer lower latency, then fewer hops", "[topology]") {
  auto triangle = [](int64_t ab_ns) {
    v1::Cluster c = H100Island(1);
    AddIsland(c, {.name = "b", .node_type = "dgx", .nodes = 1});
    AddIsland(c, {.name = "c", .node_type = "dgx", .nodes = 1});
    AddInterIslandLink(c, "a", "b", 100, ab_ns);
    AddInterIslandLink(c, "a", "c", 100, 1000);
    AddInterIslandLink(c, "c", "b", 100, 1000);
    return *hetsim::testing::BuildTopology(c);
  };
  auto count_ethernet = [](const Topology& t, const Route& route) {
    int n = 0;
    for (LinkId l : route) n += t.link(l).link_class == LinkClass::kEthernet;
    return n;
  };
  // Direct a-b at 10 us loses to 2 us through c.
  Topology slow = triangle(10000);
  Router rs(slow);
  CHECK(count_ethernet(slow, **rs.GpuRoute(GpuId(0), GpuId(8))) == 2);
  // Equal latency (2 us either way, the gateway of c adds no latency here): fewer hops wins.
  Topology tie = triangle(2000);
  Router rt(tie);
  CHECK(count_ethernet(tie, **rt.GpuRoute(GpuId(0), GpuId(8))) == 1);
}

TEST_CASE("bad clusters name the field", "[topology]") {
  auto message = [](const v1::Cluster& c) { return std::string(hetsim::testing::BuildTopology(c).status().message()); };
  v1::Cluster c = H100Island(2);
  AddIsland(c, {.name = "b", .node_type = "dgx", .nodes = 2});
  CHECK(message(c).find("disconnected") != std::string::npos);

  v1::Cluster zero = H100Island(2);
  zero.mutable_islands(0)->set_nic_bandwidth_gbps(0);
  CHECK(message(zero).find("islands[0].nic_bandwidth_gbps") != std::string::npos);

  v1::Cluster neg = H100Island(1);
  neg.mutable_node_types(0)->set_intra_node_bandwidth_gbps(-5);
  CHECK(message(neg).find("node_types[0].intra_node_bandwidth_gbps") != std::string::npos);

  v1::Cluster dangling = H100Island(1);
  dangling.mutable_islands(0)->set_node_type("nope");
  CHECK(message(dangling).find("islands[0].node_type") != std::string::npos);

  v1::Cluster link = H100Island(1);
  AddIsland(link, {.name = "b", .node_type = "dgx", .nodes = 1});
  AddInterIslandLink(link, "a", "x", 100, 1);
  CHECK(message(link).find("inter_island_links[0].island_b") != std::string::npos);

  v1::Cluster over = H100Island(4, v1::FAT_TREE, 8, 2, 0.5);
  CHECK(message(over).find("islands[0].oversubscription") != std::string::npos);
}

}  // namespace
}  // namespace hetsim::topology
