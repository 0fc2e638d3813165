// The three-tier Clos fabric (Island.clos) against hand computation: devices per tier, link
// capacities from the oversubscription ratios, routes through the fewest tiers, ECMP spread over
// the equal-cost switches, and the aggregation tier as the bottleneck of traffic between pods.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <vector>

#include "base/units.h"
#include "sim/executor/point_flows.h"
#include "tests/service/driver/build_topology.h"
#include "tests/topology/topology_clusters.h"
#include "tests/topology/topology_test_util.h"
#include "topology/device_graph.h"
#include "topology/routing.h"

namespace hetsim::topology {
namespace {

// `nodes` nodes of 8 GPUs (8 NICs of 400 Gb/s, no latency), `per_rack` nodes per ToR, `racks` racks
// per pod, `pod_switches` and `agg` switches in tiers 2 and 3, the aggregation tier at 1:`agg_oversub`.
v1::Cluster Clos(int nodes, int per_rack, int racks, int pod_switches, int agg, double agg_oversub, bool rail = false) {
  v1::Cluster c = testing::H100Island(nodes, v1::CLOS);
  c.mutable_islands(0)->set_nic_latency_ns(0);
  c.mutable_islands(0)->set_switch_latency_ns(0);
  v1::ClosFabric* f = c.mutable_islands(0)->mutable_clos();
  f->set_nodes_per_rack(per_rack);
  f->set_racks_per_pod(racks);
  f->set_pod_switches(pod_switches);
  f->set_aggregation_switches(agg);
  f->set_aggregation_oversubscription(agg_oversub);
  f->set_rail_optimized(rail);
  return c;
}

using testing::CountKind;

DeviceKind KindAt(const Topology& t, LinkId l) { return t.device(t.link(l).dst).kind; }

TEST_CASE("clos: tiers and link capacities from the oversubscription ratios", "[topology][clos]") {
  // 8 nodes, 1 per rack, 2 racks per pod: 8 ToRs, 4 pods of 4 pod switches, 2 aggregation switches.
  auto t = hetsim::testing::BuildTopology(Clos(8, 1, 2, 4, 2, 4));
  REQUIRE(t.ok());
  CHECK(CountKind(*t, DeviceKind::kTorSwitch) == 8);
  CHECK(CountKind(*t, DeviceKind::kPodSwitch) == 16);
  CHECK(CountKind(*t, DeviceKind::kAggSwitch) == 2);
  int tor_up = 0, pod_up = 0;
  for (const Link& l : t->links()) {
    const DeviceKind from = t->device(l.src).kind, to = t->device(l.dst).kind;
    if (from == DeviceKind::kTorSwitch && to == DeviceKind::kPodSwitch) {
      // A ToR's 8 x 400 Gb/s of NICs at full bisection over 4 pod switches.
      CHECK(l.bandwidth.bytes_per_second() == Approx(GbpsToBytesPerSecond(8 * 400.0 / 4)));
      ++tor_up;
    }
    if (from == DeviceKind::kPodSwitch && to == DeviceKind::kAggSwitch) {
      // A pod's 2 x 3200 Gb/s / 4 (1:4) over 4 pod switches x 2 aggregation switches.
      CHECK(l.bandwidth.bytes_per_second() == Approx(GbpsToBytesPerSecond(2 * 3200.0 / 4 / 8)));
      ++pod_up;
    }
  }
  CHECK(tor_up == 8 * 4);
  CHECK(pod_up == 16 * 2);
}

TEST_CASE("clos: routes take the fewest tiers", "[topology][clos]") {
  auto t = hetsim::testing::BuildTopology(Clos(8, 2, 2, 4, 2, 7));
  REQUIRE(t.ok());
  Router r(*t);
  // Same rack (nodes 0 and 1): GPU, NIC, ToR, NIC, GPU.
  const Route& rack = **r.GpuRoute(GpuId(0), GpuId(8));
  REQUIRE(rack.size() == 4);
  CHECK(KindAt(*t, rack[1]) == DeviceKind::kTorSwitch);
  // Same pod, other rack (node 2): up to a pod switch and down.
  const Route& pod = **r.GpuRoute(GpuId(0), GpuId(16));
  REQUIRE(pod.size() == 6);
  CHECK(KindAt(*t, pod[2]) == DeviceKind::kPodSwitch);
  CHECK(KindAt(*t, pod[3]) == DeviceKind::kTorSwitch);
  // Other pod (node 4): ToR, pod switch, aggregation, pod switch, ToR.
  const Route& far = **r.GpuRoute(GpuId(0), GpuId(32));
  REQUIRE(far.size() == 8);
  CHECK(KindAt(*t, far[1]) == DeviceKind::kTorSwitch);
  CHECK(KindAt(*t, far[2]) == DeviceKind::kPodSwitch);
  CHECK(KindAt(*t, far[3]) == DeviceKind::kAggSwitch);
  CHECK(KindAt(*t, far[4]) == DeviceKind::kPodSwitch);
  CHECK(KindAt(*t, far[5]) == DeviceKind::kTorSwitch);
  for (size_t i = 1; i < far.size(); ++i) CHECK(t->link(far[i]).src == t->link(far[i - 1]).dst);
  // The bottleneck of a cross-pod route is a pod-to-aggregation link: 2 racks x 2 nodes x 3200 Gb/s
  // / 7 over 4 x 2 links.
  CHECK(r.BottleneckBytesPerSecond(far) == Approx(GbpsToBytesPerSecond(4 * 3200.0 / 7 / 8)));
}

TEST_CASE("clos: ECMP spreads flows evenly and deterministically over the equal-cost switches", "[topology][clos]") {
  auto t = hetsim::testing::BuildTopology(Clos(8, 2, 2, 4, 2, 7));
  REQUIRE(t.ok());
  Router r(*t);
  constexpr int kFlows = 800;
  std::map<DeviceId, int> pod_switch, agg;
  for (uint64_t key = 0; key < kFlows; ++key) {
    const Route& route = **r.GpuRoute(GpuId(0), GpuId(32), key);
    REQUIRE(route.size() == 8);
    ++pod_switch[t->link(route[2]).dst];
    ++agg[t->link(route[3]).dst];
  }
  // Every one of the 4 source pod switches and 2 aggregation switches is used, each by its fair share
  // within 25% (a hash over 800 keys: 200 +- 50 and 400 +- 100).
  REQUIRE(pod_switch.size() == 4);
  for (const auto& [sw, n] : pod_switch) CHECK(std::abs(n - kFlows / 4) <= kFlows / 16);
  REQUIRE(agg.size() == 2);
  for (const auto& [sw, n] : agg) CHECK(std::abs(n - kFlows / 2) <= kFlows / 8);
  // Deterministic: a fresh router picks the same links.
  Router again(*t);
  for (uint64_t key = 0; key < 16; ++key)
    CHECK(**again.GpuRoute(GpuId(0), GpuId(32), key) == **r.GpuRoute(GpuId(0), GpuId(32), key));
}

TEST_CASE("clos: the oversubscribed aggregation tier is the bottleneck between pods", "[topology][clos]") {
  // One pod switch and one aggregation switch, so every flow between pods 0 and 1 crosses the same
  // pod-to-aggregation link: 2 nodes x 3200 Gb/s / 4 = 1600 Gb/s shared by 16 flows.
  const v1::Cluster c = Clos(4, 1, 2, 1, 1, 4);
  auto t = hetsim::testing::BuildTopology(c);
  REQUIRE(t.ok());
  Router r(*t);
  std::vector<executor::BoundaryFlow> flows;
  constexpr int64_t kBytes = int64_t{1} << 30;
  for (int g = 0; g < 16; ++g) flows.push_back({GpuId(g), GpuId(g + 16), kBytes, {}});
  REQUIRE(executor::RouteFlows(r, flows).ok());
  auto time = executor::FlowsAloneTime(*t, flows, network::NetworkMode::kMaxMinFair);
  REQUIRE(time.ok());
  // Each flow gets 1600 / 16 = 100 Gb/s (its own NIC could carry 400): 2^30 bytes at 12.5 GB/s.
  const double expected_s = static_cast<double>(kBytes) / GbpsToBytesPerSecond(1600.0 / 16);
  CHECK(TimeToSeconds(*time) == Approx(expected_s).epsilon(1e-9));
  // Inside a pod (nodes 0 and 1, full bisection) the same 8 flows run at NIC speed.
  std::vector<executor::BoundaryFlow> local;
  for (int g = 0; g < 8; ++g) local.push_back({GpuId(g), GpuId(g + 8), kBytes, {}});
  REQUIRE(executor::RouteFlows(r, local).ok());
  auto local_time = executor::FlowsAloneTime(*t, local, network::NetworkMode::kMaxMinFair);
  REQUIRE(local_time.ok());
  CHECK(TimeToSeconds(*local_time) == Approx(static_cast<double>(kBytes) / GbpsToBytesPerSecond(400)).epsilon(1e-9));
}

TEST_CASE("clos: rail-optimised ToRs keep a rail's traffic under one ToR", "[topology][clos]") {
  auto t = hetsim::testing::BuildTopology(Clos(4, 2, 2, 2, 2, 1, /*rail=*/true));
  REQUIRE(t.ok());
  // 2 racks x 8 rail ToRs; GPU 3 of node 0 and GPU 3 of node 1 (same rack, same rail): one ToR.
  CHECK(CountKind(*t, DeviceKind::kTorSwitch) == 16);
  Router r(*t);
  CHECK((*r.GpuRoute(GpuId(3), GpuId(8 + 3)))->size() == 4);
  // Another rail of the same rack goes through a pod switch.
  CHECK((*r.GpuRoute(GpuId(3), GpuId(8 + 4)))->size() == 6);
}

}  // namespace
}  // namespace hetsim::topology
