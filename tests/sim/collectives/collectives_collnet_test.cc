// CollNet (CollectiveAlgorithm::kCollNet, NCCL's CollNetDirect on InfiniBand switches that reduce) against
// its closed form: intra-node reduce-scatter, each GPU's segment S/g sent once into the switches and the
// sum received once, intra-node all-gather:
//   time = 2 (g-1) (a + S/(g B)) + a_net + S/(g R)
// with B a GPU's NVLink rate, R a NIC's, where the hierarchical ring moves 2(N-1)/N of each segment
// through every NIC each way in 2(N-1) steps.
#include <catch2/catch.hpp>

#include "base/units.h"
#include "sim/collectives/estimate.h"
#include "sim/collectives/simulate.h"
#include "tests/service/driver/build_topology.h"
#include "tests/sim/collectives/collectives_star.h"
#include "tests/sim/collectives/collectives_test_util.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim::collectives {
namespace {

using testing::H100Island;
using testing::Range;

v1::Cluster SharpIsland(int nodes, bool sharp) {
  v1::Cluster c = H100Island(nodes);
  c.mutable_islands(0)->set_infiniband_sharp(sharp);
  return c;
}

absl::StatusOr<CollectiveResult> AllReduce(const topology::Topology& topo, int n, int64_t bytes,
                                           CollectiveAlgorithm algo) {
  topology::Router router(topo);
  CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.gpus = Range(n);
  req.bytes = bytes;
  req.algorithm = algo;
  req.inter_node = CollectiveAlgorithm::kRing;
  return SimulateCollective(topo, router, req, network::NetworkMode::kMaxMinFair);
}

TEST_CASE("collnet all-reduce: 2(g-1)(a + S/(gB)) + a_net + S/(gR)", "[collectives][collnet]") {
  const double B = GbpsToBytesPerSecond(3600);  // H100Island: 450 GB/s per GPU per direction on NVLink
  const double R = GbpsToBytesPerSecond(400);   // one 400 Gb/s NIC per GPU
  const double a = 1e-6, a_net = 1.2e-6;        // GPU-switch-GPU; GPU-NIC-switch-NIC-GPU
  for (int nodes : {2, 4}) {
    INFO(nodes);
    const auto topo = *hetsim::testing::BuildTopology(SharpIsland(nodes, true));
    const int64_t bytes = kGiB;
    const auto r = AllReduce(topo, 8 * nodes, bytes, CollectiveAlgorithm::kCollNet);
    INFO(r.status().message());
    REQUIRE(r.ok());
    const double expected = 2 * 7 * (a + bytes / 8.0 / B) + a_net + bytes / 8.0 / R;
    CHECK(TimeToSeconds(r->time) == Approx(expected).epsilon(1e-3));
    CHECK(r->estimates.at(0).seconds == Approx(expected).epsilon(1e-6));
    // The hierarchical ring sends 2(N-1)/N of each segment through every NIC each way.
    const auto hier = AllReduce(topo, 8 * nodes, bytes, CollectiveAlgorithm::kHierarchical);
    REQUIRE(hier.ok());
    CHECK(TimeToSeconds(hier->time) ==
          Approx(HierarchicalAllReduceSeconds(8, nodes, bytes, B, a, R, a_net)).epsilon(1e-3));
    if (nodes > 2) CHECK(r->time < hier->time);
    // Auto offers it where the switches reduce, at its own estimate. (The flat ring, which pipelines its
    // steps where CollNet's three phases run one after the other, stays the faster at 1 GiB.)
    const auto chosen = AllReduce(topo, 8 * nodes, bytes, CollectiveAlgorithm::kAuto);
    REQUIRE(chosen.ok());
    bool offered = false;
    for (const AlgorithmEstimate& e : chosen->estimates) {
      if (e.algorithm != CollectiveAlgorithm::kCollNet) continue;
      offered = true;
      CHECK(e.seconds == Approx(expected).epsilon(1e-6));
    }
    CHECK(offered);
  }
}

TEST_CASE("collnet: only across nodes of an island whose switches reduce", "[collectives][collnet]") {
  const auto off = *hetsim::testing::BuildTopology(SharpIsland(4, false));
  const auto r = AllReduce(off, 32, kGiB, CollectiveAlgorithm::kCollNet);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()), Catch::Contains("infiniband_sharp"));
  const auto chosen = AllReduce(off, 32, kGiB, CollectiveAlgorithm::kAuto);
  REQUIRE(chosen.ok());
  for (const AlgorithmEstimate& e : chosen->estimates) CHECK(e.algorithm != CollectiveAlgorithm::kCollNet);
  // One node: nothing crosses the switches.
  const auto on = *hetsim::testing::BuildTopology(SharpIsland(4, true));
  CHECK_FALSE(AllReduce(on, 8, kGiB, CollectiveAlgorithm::kCollNet).ok());
  CHECK(ParseAlgorithm("collnet").value() == CollectiveAlgorithm::kCollNet);
  CHECK(Supports(CollectiveAlgorithm::kCollNet, CollectiveOp::kAllReduce));
  CHECK_FALSE(Supports(CollectiveAlgorithm::kCollNet, CollectiveOp::kAllGather));
}

// With NCCL's model on, CollNet waits NCCL's CollNetDirect network latency (31 us) besides the launch
// latency, and runs the Simple protocol only.
TEST_CASE("collnet: NCCL's latency of its own, Simple only", "[collectives][collnet]") {
  v1::Cluster c = SharpIsland(4, true);
  c.set_ideal(false);
  const auto topo = *hetsim::testing::BuildTopology(c);
  const auto r = AllReduce(topo, 32, 64 * kMiB, CollectiveAlgorithm::kCollNet);
  REQUIRE(r.ok());
  CHECK(r->shape.launch_latency >= 31 * kMicrosecond);
  CHECK(r->shape.protocol == topology::NcclProtocol::kSimple);
  CHECK(TimeToSeconds(r->time) == Approx(r->estimates.at(0).seconds).epsilon(0.02));
}

}  // namespace
}  // namespace hetsim::collectives
