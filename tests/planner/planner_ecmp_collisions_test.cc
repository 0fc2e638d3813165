// The planner's ECMP term (topology/ecmp_collisions.h) against closed forms of balls into bins, and its
// boundary model on a Clos against the simulated transfer: without it the planner priced a stage
// boundary at NIC speed, a quarter to a tenth of what the fabric delivers (docs/planner.md).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/units.h"
#include "planner/cluster_model.h"
#include "sim/executor/point_flows.h"
#include "tests/base/time_io.h"
#include "tests/planner/planner_test_util.h"
#include "tests/topology/topology_clusters.h"
#include "topology/ecmp_collisions.h"
#include "topology/routing.h"

namespace hetsim::planner {
namespace {

using topology::ExpectedMaxLoad;

TEST_CASE("expected busiest bin: closed forms of balls into bins", "[planner][ecmp]") {
  CHECK(ExpectedMaxLoad(0, 8, 1) == 0);
  CHECK(ExpectedMaxLoad(1, 8, 5) == Approx(1).epsilon(1e-12));
  CHECK(ExpectedMaxLoad(7, 1, 3) == 7);
  // 2 flows, 2 bins: both in one bin with probability 1/2.
  CHECK(ExpectedMaxLoad(2, 2, 1) == Approx(1.5).epsilon(1e-12));
  // Two such groups: the busiest is 1 only if both split (1/4).
  CHECK(ExpectedMaxLoad(2, 2, 2) == Approx(1.75).epsilon(1e-12));
  // 3 flows, 3 bins: max 1 with 6/27, 3 with 3/27, else 2: 51/27.
  CHECK(ExpectedMaxLoad(3, 3, 1) == Approx(51.0 / 27).epsilon(1e-12));
  // A rack of 2 nodes x 8 GPUs over 8 ToR uplinks, the busiest of 64 racks (exact rational arithmetic:
  // 6.791323285176176).
  CHECK(ExpectedMaxLoad(16, 8, 64) == Approx(6.791323285176176).epsilon(1e-9));
  // More groups never lower the maximum; more bins never raise it.
  CHECK(ExpectedMaxLoad(16, 8, 64) > ExpectedMaxLoad(16, 8, 8));
  CHECK(ExpectedMaxLoad(16, 16, 8) < ExpectedMaxLoad(16, 8, 8));
}

// ExpectedMaxLoad's recurrence written out directly, every binomial weight computed where it is used
// (the code before its weights were computed once for every t): the same doubles, bit for bit.
double DirectExpectedMaxLoad(int flows, int bins, int groups) {
  std::vector<double> log_factorial(flows + 1, 0.0);
  for (int i = 1; i <= flows; ++i) log_factorial[i] = log_factorial[i - 1] + std::log(static_cast<double>(i));
  double expected = 0;
  for (int t = 0; t < flows; ++t) {
    std::vector<double> fit(flows + 1, 0.0), next(flows + 1);
    fit[0] = 1.0;
    for (int b = 1; b <= bins; ++b) {
      const double p = 1.0 / b;
      for (int r = 0; r <= flows; ++r) {
        double sum = 0;
        for (int j = 0; j <= std::min(t, r); ++j) {
          if (fit[r - j] == 0) continue;
          const double log_choose = log_factorial[r] - log_factorial[j] - log_factorial[r - j];
          const double stay = r - j == 0 ? 0.0 : (b == 1 ? -INFINITY : (r - j) * std::log1p(-p));
          sum += std::exp(log_choose + j * std::log(p) + stay) * fit[r - j];
        }
        next[r] = sum;
      }
      fit.swap(next);
    }
    const double above = 1.0 - std::pow(fit[flows], groups);
    expected += above;
    if (above < 1e-12) break;
  }
  return expected;
}

TEST_CASE("expected busiest bin: the same doubles as the recurrence written out", "[planner][ecmp]") {
  for (int flows : {2, 5, 16, 32, 48, 96}) {
    for (int bins : {2, 3, 8, 16}) {
      for (int groups : {1, 4, 64}) {
        INFO(flows << " flows, " << bins << " bins, " << groups << " groups");
        CHECK(ExpectedMaxLoad(flows, bins, groups) == DirectExpectedMaxLoad(flows, bins, groups));
      }
    }
  }
}

// `count` flows of 16 MiB, GPU first_src + k to GPU first_dst + k, started together on an idle network
// of `topology`: when the last one ends (max-min fair).
absl::StatusOr<Time> SimulatedTransfer(const topology::Topology& topology, int first_src, int first_dst, int count) {
  topology::Router router(topology);
  std::vector<executor::BoundaryFlow> flows;
  for (int k = 0; k < count; ++k) flows.push_back({GpuId(first_src + k), GpuId(first_dst + k), int64_t{16} << 20, {}});
  if (absl::Status s = executor::RouteFlows(router, flows); !s.ok()) return s;
  return executor::FlowsAloneTime(topology, flows, network::NetworkMode::kMaxMinFair);
}

// `nodes` nodes of 8 GPUs (8 NICs of 400 Gb/s), 2 nodes per ToR, `racks` racks per pod, `switches`
// pod switches and as many aggregation switches, the aggregation tier at 1:`agg_oversub`.
v1::Cluster EcmpClos(int nodes, int racks, int switches, double agg_oversub) {
  v1::Cluster c = testing::H100Island(nodes, v1::CLOS);
  v1::ClosFabric* f = c.mutable_islands(0)->mutable_clos();
  f->set_nodes_per_rack(2);
  f->set_racks_per_pod(racks);
  f->set_pod_switches(switches);
  f->set_aggregation_switches(switches);
  f->set_aggregation_oversubscription(agg_oversub);
  return c;
}

// 64 nodes in one pod of 8 pod switches at full bisection: each ToR has 8 uplinks of 2 NICs.
v1::Cluster OnePodClos() { return EcmpClos(64, 32, 8, 1); }

TEST_CASE("a Clos boundary waits for the busiest ToR uplink", "[planner][ecmp]") {
  const v1::Cluster cluster = OnePodClos();
  auto model = testing::ClusterModelOf(cluster, spec::DType::kBf16);
  REQUIRE(model.ok());
  const IslandModel& island = (*model)->island(0);
  REQUIRE(island.tor_uplinks.has_value());
  CHECK(island.tor_uplinks->uplinks == 8);
  CHECK(island.tor_uplinks->uplink_bytes_per_s == Approx(GbpsToBytesPerSecond(800)).epsilon(1e-12));

  // Stage on nodes 0-31 to a stage on nodes 32-63: 256 flows of 16 MiB, one per GPU.
  const double bytes = 256.0 * (16 << 20);
  const MeshShape sender{32, 8};
  const Time c = (*model)->BoundaryTime(0, 0, bytes, sender);
  const LinkFigures& route = (*model)->BoundaryLink(0, 0);
  const Time at_nic_speed = route.latency + TransferTime(Bytes(bytes), Bandwidth(route.bytes_per_s * 256));
  const double busiest = ExpectedMaxLoad(16, 8, 16);
  CHECK(c == route.latency + TransferTime(Bytes(bytes / 256 * busiest), GbpsBandwidth(800)));
  CHECK(c > 2 * at_nic_speed);  // busiest ~5.9 flows on an uplink of 2 NICs

  // The simulated transfer on the same fabric (the executor's flows: GPU g to GPU g + 256).
  const absl::StatusOr<Time> simulated = SimulatedTransfer((*model)->topology(), 0, 256, 256);
  REQUIRE(simulated.ok());
  INFO("planner " << TimeToSeconds(c) << " s, simulated " << TimeToSeconds(*simulated) << " s, NIC speed "
                  << TimeToSeconds(at_nic_speed) << " s");
  // The NIC-speed figure is a third of the simulated transfer; the ECMP term within 15% (0.2% here).
  CHECK(TimeToSeconds(at_nic_speed) < 0.5 * TimeToSeconds(*simulated));
  CHECK(TimeToSeconds(c) == Approx(TimeToSeconds(*simulated)).epsilon(0.15));

  // A stage smaller than a rack may send inside its rack: no ECMP term.
  const MeshShape one_node{1, 8};
  CHECK((*model)->BoundaryTime(0, 0, bytes, one_node) ==
        route.latency + TransferTime(Bytes(bytes), Bandwidth(route.bytes_per_s * 8)));
}

// 12 nodes: pods of 8 nodes (4 racks) and a partial pod of 4; 4 pod switches and 4 aggregation
// switches (16 links per pod) at 1:4.
v1::Cluster TwoPodClos() { return EcmpClos(12, 4, 4, 4); }

TEST_CASE("a placed boundary between pods waits for the busiest aggregation link", "[planner][ecmp]") {
  auto model = testing::ClusterModelOf(TwoPodClos(), spec::DType::kBf16);
  REQUIRE(model.ok());
  const IslandModel& island = (*model)->island(0);
  REQUIRE(island.pod_tier.has_value());
  CHECK(island.pod_tier->nodes_per_pod == 8);
  CHECK(island.pod_tier->links == 16);
  const double bytes = 32.0 * (16 << 20);
  const MeshShape stage{4, 8};
  const Time unplaced = (*model)->BoundaryTime(0, 0, bytes, stage);
  // Inside pod 0 (nodes 0-3 to 4-7): nothing crosses the aggregation tier.
  CHECK((*model)->PlacedBoundaryTime(0, 0, bytes, {stage, 0}, {stage, 4}) == unplaced);
  // Nodes 4-7 (pod 0) to 8-11 (the partial pod): 32 flows down 16 links of 4 nodes x 400 GB/s / 4 / 16.
  const Time placed = (*model)->PlacedBoundaryTime(0, 0, bytes, {stage, 4}, {stage, 8});
  const LinkFigures& route = (*model)->BoundaryLink(0, 0);
  CHECK(placed == route.latency + TransferTime(Bytes(bytes / 32 * ExpectedMaxLoad(32, 16, 1)),
                                               Bandwidth(4 * 8 * GbpsToBytesPerSecond(400) / 4 / 16)));
  CHECK(placed > 2 * unplaced);

  const absl::StatusOr<Time> simulated = SimulatedTransfer((*model)->topology(), 32, 64, 32);
  REQUIRE(simulated.ok());
  INFO("placed " << TimeToSeconds(placed) << " s, unplaced " << TimeToSeconds(unplaced) << " s, simulated "
                 << TimeToSeconds(*simulated) << " s");
  // Unplaced: -88%. Placed: -31% here, where few flows per link let the collisions of the tiers a flow
  // crosses compound (its rate is the least of its links' shares); -3% and -13% on the Llama plan.
  CHECK(TimeToSeconds(unplaced) < 0.2 * TimeToSeconds(*simulated));
  CHECK(TimeToSeconds(placed) == Approx(TimeToSeconds(*simulated)).epsilon(0.35));
}

TEST_CASE("a fat tree's leaves hash over one spine per NIC index, one switch does not", "[planner][ecmp]") {
  // 8 nodes, 2 per leaf, 2:1: each leaf has 8 uplinks (one per spine) of 2 NICs / 2 = 50 GB/s.
  auto model = testing::ClusterModelOf(testing::H100Island(8, v1::FAT_TREE, 8, 2, 2), spec::DType::kBf16);
  REQUIRE(model.ok());
  const IslandModel& island = (*model)->island(0);
  REQUIRE(island.tor_uplinks.has_value());
  CHECK(island.tor_uplinks->nodes_per_rack == 2);
  CHECK(island.tor_uplinks->uplinks == 8);
  CHECK(island.tor_uplinks->uplink_bytes_per_s == Approx(GbpsToBytesPerSecond(400)).epsilon(1e-12));
  const LinkFigures& route = (*model)->BoundaryLink(0, 0);
  const Time nic_speed = TransferTime(Bytes(1e9), Bandwidth(route.bytes_per_s * 32));
  const Time busiest = TransferTime(Bytes(1e9 / 32 * ExpectedMaxLoad(16, 8, 2)), GbpsBandwidth(400));
  CHECK((*model)->BoundaryTime(0, 0, 1e9, MeshShape{4, 8}) == route.latency + std::max(nic_speed, busiest));
  CHECK(busiest > nic_speed);

  auto flat = testing::ClusterModelOf(testing::H100Island(8, v1::SINGLE_SWITCH), spec::DType::kBf16);
  REQUIRE(flat.ok());
  CHECK_FALSE((*flat)->island(0).tor_uplinks.has_value());
  const LinkFigures& one_switch = (*flat)->BoundaryLink(0, 0);
  CHECK((*flat)->BoundaryTime(0, 0, 1e9, MeshShape{4, 8}) ==
        one_switch.latency + TransferTime(Bytes(1e9), Bandwidth(one_switch.bytes_per_s * 32)));
}

}  // namespace
}  // namespace hetsim::planner
