// Aggregated tree chunks (each tree edge's chunks as first, middle and last transfer) against the
// stepped double trees they stand for, and the automatic choice between them (docs/decisions.md,
// "Aggregated tree chunks").
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/collectives/algorithms.h"
#include "sim/collectives/estimate.h"
#include "sim/collectives/primitives.h"
#include "sim/collectives/simulate.h"
#include "tests/service/driver/build_topology.h"
#include "tests/sim/collectives/collectives_star.h"
#include "tests/sim/collectives/collectives_test_util.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim::collectives {
namespace {

using testing::RelativeGap;
using testing::SimulateOk;

using testing::H100Island;
using testing::Range;
using testing::Star;

CollectiveRequest TreeRequest(std::vector<GpuId> gpus, int64_t bytes, RingSteps steps, int32_t chunks,
                              CollectiveAlgorithm algo = CollectiveAlgorithm::kTree) {
  CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.gpus = std::move(gpus);
  req.bytes = bytes;
  req.algorithm = algo;
  req.inter_node = CollectiveAlgorithm::kTree;
  req.chunks = chunks;
  req.ring_steps = steps;
  return req;
}

TEST_CASE("aggregated trees move the stepped trees' bytes in three transfers per edge and direction",
          "[collectives][aggregated]") {
  for (int32_t n : {2, 3, 8, 13}) {
    for (int32_t chunks : {3, 4, 64}) {
      for (int64_t bytes : {int64_t{0}, int64_t{7}, int64_t{1000003}}) {
        TransferGraph stepped, aggregated;
        AppendDoubleTreeAllReduce(stepped, Range(n), bytes, chunks, 1, {}, false);
        AppendDoubleTreeAllReduce(aggregated, Range(n), bytes, chunks, 1, {}, true);
        INFO("n=" << n << " chunks=" << chunks << " bytes=" << bytes);
        CHECK(aggregated.total_bytes() == stepped.total_bytes());
        CHECK(stepped.size() == static_cast<size_t>(4 * (n - 1) * chunks));
        CHECK(aggregated.size() == static_cast<size_t>(4 * (n - 1) * 3));
        int64_t latencies = 0;
        for (TransferIndex t = 0; t < static_cast<TransferIndex>(aggregated.size()); ++t) {
          latencies += aggregated.latency_repeats(t);
        }
        CHECK(latencies == 4 * (n - 1) * chunks);  // every chunk step's latency, paid once
      }
    }
  }
  // Fewer than three chunks: nothing to fold, the stepped tree.
  TransferGraph two;
  AppendDoubleTreeAllReduce(two, Range(8), 1 << 20, 2, 1, {}, true);
  CHECK(two.size() == static_cast<size_t>(4 * 7 * 2));
}

TEST_CASE("aggregated trees keep the pipelined closed form and the stepped time on a star",
          "[collectives][aggregated]") {
  const int64_t bytes = 64 << 20;
  for (int n : {2, 4, 7, 16}) {
    Star s(n);
    const int chunks = 32;
    const auto stepped = SimulateOk(s.topo, s.router, TreeRequest(Range(n), bytes, RingSteps::kStepped, chunks));
    const auto aggregated = SimulateOk(s.topo, s.router, TreeRequest(Range(n), bytes, RingSteps::kAggregated, chunks));
    INFO("n=" << n << " stepped " << stepped.time << " ps, aggregated " << aggregated.time << " ps");
    CHECK_FALSE(stepped.shape.aggregated);
    CHECK(aggregated.shape.aggregated);
    CHECK(aggregated.flows == static_cast<uint64_t>(4 * (n - 1) * 3));
    // The closed form counts the depth of trees of four ranks or more (the existing stepped test's range).
    if (n >= 4) {
      CHECK(TimeToSeconds(aggregated.time) ==
            Approx(TreeAllReduceSeconds(n, Bytes(bytes), Bandwidth(s.B), Seconds(s.a), chunks).value()).epsilon(0.05));
    }
    // Measured 1.6% at two ranks (both trees on the same two links), 0.03-0.9% from four.
    CHECK(RelativeGap(stepped.time, aggregated.time) <= (n == 2 ? 0.02 : 0.01));
  }
}

TEST_CASE("aggregated trees match stepped trees within 1% on a fat tree", "[collectives][aggregated]") {
  const int64_t bytes = int64_t{1} << 30;
  // 16 nodes of 8 H100 on a full-bisection fat tree (4 nodes per leaf): both trees' flows share the
  // NICs, the leaf uplinks and the spines.
  const auto topo = *hetsim::testing::BuildTopology(H100Island(16, v1::FAT_TREE, 8, 4, 1));
  topology::Router router(topo);
  for (CollectiveAlgorithm algo : {CollectiveAlgorithm::kHierarchical, CollectiveAlgorithm::kTree}) {
    const auto stepped = SimulateOk(topo, router, TreeRequest(Range(128), bytes, RingSteps::kStepped, 64, algo));
    const auto aggregated = SimulateOk(topo, router, TreeRequest(Range(128), bytes, RingSteps::kAggregated, 64, algo));
    INFO(AlgorithmName(algo) << ": stepped " << stepped.time << " ps (" << stepped.flows << " flows), aggregated "
                             << aggregated.time << " ps (" << aggregated.flows << " flows)");
    CHECK(aggregated.shape.aggregated);
    CHECK(aggregated.flows * 10 < stepped.flows);
    CHECK(RelativeGap(stepped.time, aggregated.time) <= 0.01);
  }
}

TEST_CASE("automatic tree chunks: stepped up to 65,536 flows, aggregated beyond", "[collectives][aggregated]") {
  // 4 x (n - 1) x chunks flows per channel: 64 ranks in 64 chunks is 16,128; 8 channels 129,024.
  Star s(64);
  const auto one = SimulateOk(s.topo, s.router, [&] {
    auto req = TreeRequest(Range(64), 64 << 20, RingSteps::kAuto, 64);
    req.channels = 1;
    return req;
  }());
  CHECK_FALSE(one.shape.aggregated);
  CHECK(one.flows == 4u * 63u * 64u);
  auto eight = TreeRequest(Range(64), 64 << 20, RingSteps::kAuto, 64);
  eight.channels = 8;
  const auto many = SimulateOk(s.topo, s.router, eight);
  CHECK(many.shape.aggregated);
  CHECK(many.flows == 8u * 4u * 63u * 3u);
  eight.ring_steps = RingSteps::kStepped;
  CHECK_FALSE(SimulateOk(s.topo, s.router, eight).shape.aggregated);
}

TEST_CASE("aggregated ring steps with explicit chunks: refused for rings, kept for trees",
          "[collectives][aggregated]") {
  Star s(4);
  auto req = TreeRequest(Range(4), 1 << 20, RingSteps::kAggregated, 8, CollectiveAlgorithm::kRing);
  CHECK(absl::IsInvalidArgument(ValidateRequest(s.topo, req)));
  req.algorithm = CollectiveAlgorithm::kTree;
  CHECK(ValidateRequest(s.topo, req).ok());
}

}  // namespace
}  // namespace hetsim::collectives
