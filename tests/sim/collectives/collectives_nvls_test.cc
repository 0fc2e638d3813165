// NVLink SHARP (CollectiveAlgorithm::kNvls) against its closed forms: in an all-reduce each GPU's link to
// the NVSwitch carries (n+1)/n S each way (the switch reads every GPU's share of each segment, the
// issuer's own included, and multicasts each sum to every GPU), both at once on the full-duplex link, at
// 5/6 of the link rate B a ring reaches (NCCL's tuning model), so time = a + (n+1)/n S / (5/6 B); an
// all-gather or reduce-scatter moves
// (n-1)/n S through each GPU's link in one step: a + (n-1)/n S / (5/6 B). A node type's
// nvls_bandwidth_efficiency replaces 5/6 of the ring's rate by its own share of the line rate.
#include <catch2/catch.hpp>

#include <cmath>

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

v1::Cluster NvlsNode(bool nvlink_sharp) {
  v1::Cluster c = H100Island(1);
  c.mutable_node_types(0)->set_nvlink_sharp(nvlink_sharp);
  return c;
}

absl::StatusOr<CollectiveResult> NvlsCollective(const topology::Topology& topo, CollectiveOp op, int n, int64_t bytes,
                                                CollectiveAlgorithm algo) {
  return testing::SimulateOnFirstGpus(topo, op, n, bytes, algo);
}

absl::StatusOr<CollectiveResult> NvlsAllReduce(const topology::Topology& topo, int n, int64_t bytes,
                                               CollectiveAlgorithm algo) {
  return NvlsCollective(topo, CollectiveOp::kAllReduce, n, bytes, algo);
}

TEST_CASE("nvls all-reduce: a + (n+1)/n S/(5/6 B), busbw 2(n-1)/(n+1) 5/6 B", "[collectives][nvls]") {
  const auto topo = *hetsim::testing::BuildTopology(NvlsNode(true));
  const double B = GbpsToBytesPerSecond(3600);  // H100Island: 450 GB/s per GPU per direction
  const double a = 1e-6;                        // GPU to GPU through the NVSwitch
  for (int n : {2, 4, 8}) {
    const int64_t bytes = kGiB;
    const auto r = NvlsAllReduce(topo, n, bytes, CollectiveAlgorithm::kNvls);
    INFO(r.status().message());
    REQUIRE(r.ok());
    const double expected = a + std::ceil(bytes * (n + 1.0) / n * 6.0 / 5.0) / B;
    CHECK(TimeToSeconds(r->time) == Approx(expected).epsilon(1e-3));
    CHECK(r->estimates.at(0).seconds.value() == Approx(expected).epsilon(1e-9));
    CHECK(r->busbw_bytes_per_s == Approx(2.0 * (n - 1) / n * bytes / expected).epsilon(1e-3));
    // Ring's per-GPU traffic is 2(n-1)/n S each way: NVLS is 5/6 x 2(n-1)/(n+1) faster on bandwidth (slower
    // at n = 2).
    const auto ring = NvlsAllReduce(topo, n, bytes, CollectiveAlgorithm::kRing);
    REQUIRE(ring.ok());
    CHECK(TimeToSeconds(ring->time) ==
          Approx(RingAllReduceSeconds(n, Bytes(bytes), Bandwidth(B), Seconds(a)).value()).epsilon(1e-3));
  }
  // Auto picks NVLS for a large single-node all-reduce, as NCCL does on H100.
  const auto chosen = NvlsAllReduce(topo, 8, kGiB, CollectiveAlgorithm::kAuto);
  REQUIRE(chosen.ok());
  CHECK(chosen->shape.algorithm == CollectiveAlgorithm::kNvls);
}

TEST_CASE("nvls: only where the node's NVSwitch reduces, on one node", "[collectives][nvls]") {
  const auto off = *hetsim::testing::BuildTopology(NvlsNode(false));
  const auto r = NvlsAllReduce(off, 8, kGiB, CollectiveAlgorithm::kNvls);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()), Catch::Contains("nvlink_sharp"));
  // Off (the default): auto never offers it.
  const auto chosen = NvlsAllReduce(off, 8, kGiB, CollectiveAlgorithm::kAuto);
  REQUIRE(chosen.ok());
  CHECK(chosen->shape.algorithm != CollectiveAlgorithm::kNvls);
  for (const AlgorithmEstimate& e : chosen->estimates) CHECK(e.algorithm != CollectiveAlgorithm::kNvls);
  // Two nodes: NVLS within a node only (NCCL's NVLSTree across nodes is not modelled).
  v1::Cluster two = H100Island(2);
  two.mutable_node_types(0)->set_nvlink_sharp(true);
  const auto topo2 = *hetsim::testing::BuildTopology(two);
  CHECK_FALSE(NvlsAllReduce(topo2, 16, kGiB, CollectiveAlgorithm::kNvls).ok());
  CHECK(ParseAlgorithm("nvls").value() == CollectiveAlgorithm::kNvls);
  CHECK(Supports(CollectiveAlgorithm::kNvls, CollectiveOp::kAllGather));
  CHECK(Supports(CollectiveAlgorithm::kNvls, CollectiveOp::kReduceScatter));
  CHECK_FALSE(Supports(CollectiveAlgorithm::kNvls, CollectiveOp::kAllToAll));
  CHECK_FALSE(Supports(CollectiveAlgorithm::kNvls, CollectiveOp::kBroadcast));
}

// With NCCL's model on, an NVLS collective waits NCCL's NVLS latency (25 us) besides the launch
// latency, so auto keeps the small buffers on LL/LL128 trees and rings, as NCCL's tuner does, and
// takes NVLS for the large ones.
TEST_CASE("nvls: NCCL's latency of its own, auto leaves small buffers to rings and trees", "[collectives][nvls]") {
  v1::Cluster c = NvlsNode(true);
  c.set_ideal(false);
  const auto topo = *hetsim::testing::BuildTopology(c);
  const auto tiny = NvlsAllReduce(topo, 8, 1024, CollectiveAlgorithm::kNvls);
  REQUIRE(tiny.ok());
  CHECK(tiny->shape.launch_latency >= 25 * kMicrosecond);
  CHECK(TimeToSeconds(tiny->time) == Approx(tiny->estimates.at(0).seconds.value()).epsilon(1e-6));
  const auto small = NvlsAllReduce(topo, 8, 64 * kKiB, CollectiveAlgorithm::kAuto);
  REQUIRE(small.ok());
  CHECK(small->shape.algorithm != CollectiveAlgorithm::kNvls);
  const auto large = NvlsAllReduce(topo, 8, kGiB, CollectiveAlgorithm::kAuto);
  REQUIRE(large.ok());
  CHECK(large->shape.algorithm == CollectiveAlgorithm::kNvls);
}

TEST_CASE("nvls all-gather and reduce-scatter: a + (n-1)/n S/(5/6 B), one step", "[collectives][nvls]") {
  const auto topo = *hetsim::testing::BuildTopology(NvlsNode(true));
  const double B = GbpsToBytesPerSecond(3600);
  const double a = 1e-6;
  for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
    for (int n : {2, 4, 8}) {
      INFO(n);
      const int64_t bytes = kGiB;
      const auto r = NvlsCollective(topo, op, n, bytes, CollectiveAlgorithm::kNvls);
      INFO(r.status().message());
      REQUIRE(r.ok());
      const double expected = a + std::ceil(bytes * (n - 1.0) / n * 6.0 / 5.0) / B;
      CHECK(TimeToSeconds(r->time) == Approx(expected).epsilon(1e-3));
      CHECK(r->estimates.at(0).seconds.value() == Approx(expected).epsilon(1e-9));
      // busbw = (n-1)/n S / time -> 5/6 B: NVLS moves what a ring moves, in one step, at NVLS's rate.
      CHECK(r->busbw_bytes_per_s == Approx((n - 1.0) / n * bytes / expected).epsilon(1e-3));
    }
    // At 5/6 of the ring's rate a large one stays on the ring (n-1 steps of a, but at B).
    const auto chosen = NvlsCollective(topo, op, 8, kGiB, CollectiveAlgorithm::kAuto);
    REQUIRE(chosen.ok());
    CHECK(chosen->shape.algorithm == CollectiveAlgorithm::kRing);
  }
}

TEST_CASE("nvls: a node type's own NVLS efficiency, apart from its rings'", "[collectives][nvls]") {
  const double line = GbpsToBytesPerSecond(3600);
  // Ideal links (ring efficiency 1): NVLS at the line rate beats the ring's n-1 steps for an all-gather.
  v1::Cluster full = NvlsNode(true);
  full.mutable_node_types(0)->set_nvls_bandwidth_efficiency(1.0);
  const auto topo_full = *hetsim::testing::BuildTopology(full);
  const auto ag = NvlsCollective(topo_full, CollectiveOp::kAllGather, 8, kGiB, CollectiveAlgorithm::kNvls);
  REQUIRE(ag.ok());
  CHECK(TimeToSeconds(ag->time) == Approx(1e-6 + 7.0 / 8.0 * kGiB / line).epsilon(1e-3));
  const auto chosen = NvlsCollective(topo_full, CollectiveOp::kAllGather, 8, kGiB, CollectiveAlgorithm::kAuto);
  REQUIRE(chosen.ok());
  CHECK(chosen->shape.algorithm == CollectiveAlgorithm::kNvls);
  // NCCL's model on (rings derated by the fabric's bandwidth_efficiency): NVLS runs at its own share of
  // the line rate, 0.6 here, whatever the rings' efficiency; the latencies cancel in the difference.
  v1::Cluster c = NvlsNode(true);
  c.set_ideal(false);
  c.mutable_node_types(0)->set_nvls_bandwidth_efficiency(0.6);
  const auto topo = *hetsim::testing::BuildTopology(c);
  const auto one = NvlsAllReduce(topo, 8, kGiB, CollectiveAlgorithm::kNvls);
  const auto two = NvlsAllReduce(topo, 8, 2 * kGiB, CollectiveAlgorithm::kNvls);
  REQUIRE(one.ok());
  REQUIRE(two.ok());
  // Each link carries (n+1)/n = 9/8 of the buffer each way.
  CHECK(TimeToSeconds(two->time - one->time) == Approx(9.0 / 8.0 * kGiB / (0.6 * line)).epsilon(1e-3));
  CHECK((two->estimates.at(0).seconds - one->estimates.at(0).seconds).value() ==
        Approx(9.0 / 8.0 * kGiB / (0.6 * line)).epsilon(1e-3));
}

}  // namespace
}  // namespace hetsim::collectives
