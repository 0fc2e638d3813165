// Simulated collectives against their closed forms on networks where the closed form is exact.
#include <catch2/catch.hpp>

#include "base/units.h"
#include "sim/collectives/estimate.h"
#include "sim/collectives/primitives.h"
#include "sim/collectives/simulate.h"
#include "tests/service/driver/build_topology.h"
#include "tests/sim/collectives/collectives_star.h"
#include "tests/sim/collectives/collectives_test_util.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim::collectives {
namespace {

using testing::AddInterIslandLink;
using testing::AddIsland;
using testing::H100Island;
using testing::Range;
using testing::Star;

CollectiveResult Run(const topology::Topology& topo, topology::Router& router, CollectiveOp op, std::vector<GpuId> gpus,
                     int64_t bytes, CollectiveAlgorithm algo, int chunks = 0,
                     network::NetworkMode mode = network::NetworkMode::kMaxMinFair) {
  CollectiveRequest req;
  req.op = op;
  req.gpus = std::move(gpus);
  req.bytes = bytes;
  req.algorithm = algo;
  req.chunks = chunks;
  auto r = SimulateCollective(topo, router, req, mode);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return *r;
}

TEST_CASE("ring all-reduce: 2(n-1)/n S/B + 2(n-1)a within 0.1%", "[collectives]") {
  for (int n : {2, 3, 8, 16}) {
    Star s(n);
    const int64_t bytes = 256 << 20;
    const auto r = Run(s.topo, s.router, CollectiveOp::kAllReduce, Range(n), bytes, CollectiveAlgorithm::kRing);
    const double expected = RingAllReduceSeconds(n, Bytes(bytes), Bandwidth(s.B), Seconds(s.a)).value();
    CHECK(2.0 * (n - 1) / n * bytes / s.B + 2 * (n - 1) * s.a == Approx(expected).epsilon(1e-12));
    CHECK(TimeToSeconds(r.time) == Approx(expected).epsilon(1e-3));
    CHECK(r.shape.algorithm == CollectiveAlgorithm::kRing);
    CHECK(r.flows == static_cast<uint64_t>(2 * (n - 1) * n));
    // nccl-tests: busbw = algbw x 2(n-1)/n, which on a uniform ring approaches B.
    CHECK(r.busbw_bytes_per_s == Approx(r.algbw_bytes_per_s * 2.0 * (n - 1) / n));
    CHECK(r.busbw_bytes_per_s < s.B);
    // The on-link estimate is the same closed form.
    CHECK(r.estimates.at(0).seconds.value() == Approx(expected).epsilon(1e-9));
  }
}

TEST_CASE("ring all-gather and reduce-scatter: (n-1)/n S/B + (n-1)a within 0.1%", "[collectives]") {
  Star s(8);
  const int64_t bytes = 64 << 20;
  for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
    const auto r = Run(s.topo, s.router, op, Range(8), bytes, CollectiveAlgorithm::kRing);
    CHECK(TimeToSeconds(r.time) == Approx(7.0 / 8 * bytes / s.B + 7 * s.a).epsilon(1e-3));
    CHECK(r.busbw_bytes_per_s == Approx(r.algbw_bytes_per_s * 7.0 / 8));
  }
}

TEST_CASE("ring inside one NVSwitch node uses NVLink bandwidth and latency", "[collectives]") {
  auto topo = *hetsim::testing::BuildTopology(H100Island(1));
  topology::Router router(topo);
  const int64_t bytes = kGiB;
  const auto r = Run(topo, router, CollectiveOp::kAllReduce, Range(8), bytes, CollectiveAlgorithm::kRing);
  CHECK(TimeToSeconds(r.time) ==
        Approx(RingAllReduceSeconds(8, Bytes(bytes), GbpsBandwidth(3600), Seconds(1e-6)).value()).epsilon(1e-3));
}

TEST_CASE("hierarchical all-reduce: intra-node RS + per-rail inter-node ring + intra-node AG", "[collectives]") {
  auto topo = *hetsim::testing::BuildTopology(H100Island(4));
  topology::Router router(topo);
  const int64_t bytes = kGiB;
  CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.gpus = Range(32);
  req.bytes = bytes;
  req.algorithm = CollectiveAlgorithm::kHierarchical;
  req.inter_node = CollectiveAlgorithm::kRing;
  auto r = SimulateCollective(topo, router, req);
  REQUIRE(r.ok());
  const double expected = HierarchicalAllReduceSeconds(8, 4, Bytes(bytes), GbpsBandwidth(3600), Seconds(1e-6),
                                                       GbpsBandwidth(400), Seconds(1.2e-6))
                              .value();
  CHECK(TimeToSeconds(r->time) == Approx(expected).epsilon(1e-3));
  CHECK(r->shape.inter_node == CollectiveAlgorithm::kRing);
  CHECK(r->estimates.at(0).seconds.value() == Approx(expected).epsilon(1e-6));
  // Beats a single flat ring, which pushes everything through one NIC per node boundary.
  req.algorithm = CollectiveAlgorithm::kRing;
  req.channels = 1;
  auto flat = SimulateCollective(topo, router, req);
  REQUIRE(flat.ok());
  CHECK(flat->time > r->time);
}

TEST_CASE("double binary tree all-reduce follows its pipelined closed form", "[collectives]") {
  // Chunks pipeline through both trees; with many chunks the time approaches 2 S/B.
  for (int n : {4, 7, 16}) {
    Star s(n);
    const int64_t bytes = 64 << 20;
    const int chunks = 32;
    const auto r = Run(s.topo, s.router, CollectiveOp::kAllReduce, Range(n), bytes, CollectiveAlgorithm::kTree, chunks);
    const double expected = TreeAllReduceSeconds(n, Bytes(bytes), Bandwidth(s.B), Seconds(s.a), chunks).value();
    INFO("n=" << n << " simulated " << TimeToSeconds(r.time) << " closed form " << expected);
    CHECK(TimeToSeconds(r.time) == Approx(expected).epsilon(0.05));
    CHECK(TimeToSeconds(r.time) >= 2.0 * bytes / s.B);
    CHECK(r.shape.chunks == chunks);
  }
}

TEST_CASE("chain broadcast: (n - 1 + C - 1)(a + S/(C B)) within 0.1%", "[collectives]") {
  Star s(6);
  const int64_t bytes = 96 << 20;
  for (int chunks : {1, 4, 16}) {
    const auto r = Run(s.topo, s.router, CollectiveOp::kBroadcast, Range(6), bytes, CollectiveAlgorithm::kRing, chunks);
    CHECK(TimeToSeconds(r.time) ==
          Approx(ChainBroadcastSeconds(6, Bytes(bytes), Bandwidth(s.B), Seconds(s.a), chunks).value()).epsilon(1e-3));
    CHECK(r.busbw_bytes_per_s == Approx(r.algbw_bytes_per_s));
  }
}

TEST_CASE("tree broadcast: (D + C - 1)(a + 2 S/(C B)), every parent feeding two children", "[collectives]") {
  Star s(15);  // a full heap tree of depth 3
  const int64_t bytes = 64 << 20;
  const int chunks = 32;
  const auto r = Run(s.topo, s.router, CollectiveOp::kBroadcast, Range(15), bytes, CollectiveAlgorithm::kTree, chunks);
  const double expected = (3 + chunks - 1) * (s.a + 2.0 * bytes / chunks / s.B);
  CHECK(TimeToSeconds(r.time) == Approx(expected).epsilon(0.02));
  CHECK(r.shape.estimated_seconds.value() == Approx(expected).epsilon(1e-9));
  CHECK(r.flows == static_cast<uint64_t>(14 * chunks));
}

TEST_CASE("direct all-to-all shares each NIC among n-1 peers, send/recv is a + S/B", "[collectives]") {
  Star s(8);
  const int64_t bytes = 64 << 20;
  const auto a2a = Run(s.topo, s.router, CollectiveOp::kAllToAll, Range(8), bytes, CollectiveAlgorithm::kDirect);
  CHECK(TimeToSeconds(a2a.time) ==
        Approx(DirectAllToAllSeconds(8, Bytes(bytes), Bandwidth(s.B), Seconds(s.a)).value()).epsilon(1e-3));
  CHECK(a2a.flows == 56);
  const auto pairwise = Run(s.topo, s.router, CollectiveOp::kAllToAll, Range(8), bytes, CollectiveAlgorithm::kPairwise);
  CHECK(TimeToSeconds(pairwise.time) == Approx(7 * (s.a + bytes / 8.0 / s.B)).epsilon(1e-3));
  const auto p2p = Run(s.topo, s.router, CollectiveOp::kSendRecv, GpuIds({2, 5}), bytes, CollectiveAlgorithm::kDirect);
  CHECK(TimeToSeconds(p2p.time) == Approx(s.a + bytes / s.B).epsilon(1e-3));
}

TEST_CASE("a pairwise round moves once its sender and its receiver have both finished the last one", "[collectives]") {
  // Three ranks on GPUs 0-2 of a star; T is one round's time (a transfer of `share` bytes).
  Star s(5);
  const int64_t share = 64 << 20;
  const double round = s.a + share / s.B;
  // Rank 0 starts after a transfer 3 -> 4 of time T. Round 1: 1 -> 2 runs at once, 0 -> 1 and 2 -> 0
  // wait for rank 0 (T); round 2 starts for everyone at 2T and ends at 3T. Were sends eager, 0 -> 1
  // would share rank 1's downlink with round 2's 2 -> 1 (rank 2 done at T) and end S/B later.
  TransferGraph sender_late;
  const TransferIndex delay = sender_late.Add(sender_late.Path(GpuId(3), GpuId(4), 0), share, {});
  AppendPairwiseAllToAll(sender_late, GpuIds({0, 1, 2}), 3 * share, 0, {{delay}, {}, {}});
  REQUIRE(sender_late.size() == 7);
  CHECK(TimeToSeconds(testing::RunGraph(s.topo, s.router, sender_late)) == Approx(3 * round).epsilon(1e-6));
  // Rank 1 starts after a transfer 4 -> 1 into its own downlink. Round 1's 0 -> 1 waits for it rather
  // than share that link (which would end both at 2T and everything a round later): 3T again.
  TransferGraph receiver_late;
  const TransferIndex into = receiver_late.Add(receiver_late.Path(GpuId(4), GpuId(1), 0), share, {});
  AppendPairwiseAllToAll(receiver_late, GpuIds({0, 1, 2}), 3 * share, 0, {{}, {into}, {}});
  CHECK(TimeToSeconds(testing::RunGraph(s.topo, s.router, receiver_late)) == Approx(3 * round).epsilon(1e-6));

  // Every later round's transfer r -> r + k waits for exactly the round k - 1 transfers out of and
  // into both r and r + k (fewer when they coincide, as for n = 3).
  for (const int n : {3, 6}) {
    TransferGraph big;
    AppendPairwiseAllToAll(big, Range(n), n << 20, 0, {});
    REQUIRE(big.size() == static_cast<size_t>(n * (n - 1)));
    std::vector<std::vector<TransferIndex>> deps(big.size());
    for (TransferIndex t = 0; t < static_cast<TransferIndex>(big.size()); ++t) {
      for (TransferIndex next : big.successors(t)) deps[next].push_back(t);
    }
    const auto index = [&](int round, int from) {
      return static_cast<TransferIndex>((round - 1) * n + (from + n) % n);
    };
    for (int r = 0; r < n; ++r) CHECK(deps[index(1, r)].empty());
    for (int k = 2; k < n; ++k) {
      for (int r = 0; r < n; ++r) {
        std::vector<TransferIndex> expected = {index(k - 1, r), index(k - 1, r - (k - 1)), index(k - 1, r + k),
                                               index(k - 1, r + 1)};
        std::sort(expected.begin(), expected.end());
        expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
        std::sort(deps[index(k, r)].begin(), deps[index(k, r)].end());
        INFO("n " << n << " round " << k << " rank " << r);
        CHECK(deps[index(k, r)] == expected);
      }
    }
  }
}

TEST_CASE("a ring across a slow inter-island link is limited by that link", "[collectives]") {
  v1::Cluster c = H100Island(2, v1::SINGLE_SWITCH, 1);
  AddIsland(c,
            {.name = "b", .node_type = "dgx", .nodes = 2, .nics = 1, .nic_latency_ns = 500, .switch_latency_ns = 200});
  AddInterIslandLink(c, "a", "b", 10, 50000);
  auto topo = *hetsim::testing::BuildTopology(c);
  topology::Router router(topo);
  const int64_t bytes = 256 << 20;
  const auto r = Run(topo, router, CollectiveOp::kAllReduce, Range(4), bytes, CollectiveAlgorithm::kRing);
  const topology::Route& cross = **router.GpuRoute(GpuId(1), GpuId(2), 0);
  const double slow_latency = TimeToSeconds(router.Latency(cross));
  CHECK(router.BottleneckBytesPerSecond(cross) == Approx(GbpsToBytesPerSecond(10)));
  CHECK(TimeToSeconds(r.time) ==
        Approx(RingAllReduceSeconds(4, Bytes(bytes), GbpsBandwidth(10), Seconds(slow_latency)).value()).epsilon(1e-3));
  // Same ring inside one fast island would be 40x faster in bandwidth terms.
  CHECK(r.busbw_bytes_per_s == Approx(GbpsToBytesPerSecond(10)).epsilon(0.02));
}

TEST_CASE("automatic choice: the fastest estimate wins and is reported", "[collectives]") {
  auto topo = *hetsim::testing::BuildTopology(H100Island(4));
  topology::Router router(topo);
  CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.gpus = Range(32);
  req.bytes = 256 << 20;
  auto r = SimulateCollective(topo, router, req);
  REQUIRE(r.ok());
  REQUIRE(r->estimates.size() == 3);  // ring, tree, hier
  for (const auto& e : r->estimates) CHECK(r->shape.estimated_seconds <= e.seconds);
  // Tiny messages are latency-bound: the tree's log-depth beats the ring's 2(n-1) steps.
  req.bytes = 1024;
  auto small = SimulateCollective(topo, router, req);
  REQUIRE(small.ok());
  CHECK(small->shape.algorithm != CollectiveAlgorithm::kRing);
}

TEST_CASE("contention-free mode is selectable and labelled", "[collectives]") {
  Star s(4);
  const auto r = Run(s.topo, s.router, CollectiveOp::kAllReduce, Range(4), 1 << 20, CollectiveAlgorithm::kRing, 0,
                     network::NetworkMode::kContentionFree);
  CHECK(r.network_mode == network::NetworkMode::kContentionFree);
  CHECK(std::string(network::NetworkModeName(r.network_mode)) == "contention-free");
}

TEST_CASE("bad collective requests name the field", "[collectives]") {
  Star s(4);
  auto error = [&](CollectiveRequest req) {
    auto r = SimulateCollective(s.topo, s.router, req);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(r.status().message());
  };
  CollectiveRequest req;
  req.bytes = 1024;
  CHECK(error(req) == "gpus: the group is empty");
  req.gpus = GpuIds({0, 1, 1});
  CHECK(error(req) == "gpus[2]: GPU 1 appears twice");
  req.gpus = GpuIds({0, 4});
  CHECK(error(req).rfind("gpus[1]: GPU id 4 is outside", 0) == 0);
  req.gpus = GpuIds({0, 1});
  req.bytes = kMaxCollectiveBytes + 1;
  CHECK(error(req).rfind("bytes:", 0) == 0);
  req.bytes = 1024;
  req.op = CollectiveOp::kAllGather;
  req.algorithm = CollectiveAlgorithm::kTree;
  CHECK(error(req).rfind("algo: tree does not implement all-gather", 0) == 0);
  req.op = CollectiveOp::kSendRecv;
  req.algorithm = CollectiveAlgorithm::kAuto;
  req.gpus = GpuIds({0, 1, 2});
  CHECK(error(req).rfind("gpus: send-recv needs exactly two", 0) == 0);
  req.op = CollectiveOp::kAllToAll;
  req.gpus.resize(kMaxAllToAllGpus + 1);
  CHECK(error(req).rfind("gpus: all-to-all over 2049 GPUs would be 4196352 flows", 0) == 0);
  req.op = CollectiveOp::kAllReduce;
  req.algorithm = CollectiveAlgorithm::kHierarchical;
  auto single = *hetsim::testing::BuildTopology(H100Island(1));
  topology::Router router(single);
  req.gpus = GpuIds({0, 1, 2});
  auto r = SimulateCollective(single, router, req);
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).rfind("algo: hier needs", 0) == 0);
}

TEST_CASE("a cost set's step frontier prices every size as the whole set does", "[collectives]") {
  // Classes of equal routes (as a fat tree's are) plus scattered costs, some dominated, some not.
  std::vector<PathCost> costs;
  for (int i = 0; i < 400; ++i) {
    const double latency_us = 2.0 + (i % 4) + (i % 7 == 0 ? 0.5 : 0.0);
    const double per_byte = 1e-11 * (1 + (i * 37) % 5) + (i % 11 == 0 ? 3e-11 : 0.0);
    costs.push_back({Seconds(latency_us * 1e-6), SecondsPerByte(per_byte)});
  }
  costs.push_back({Seconds(40e-6), SecondsPerByte(1e-12)});  // the slowest to start, fast per byte
  const std::vector<PathCost> front = StepFrontier(costs);
  CHECK(front.size() < 10);
  for (const PathCost& a : front) {
    for (const PathCost& b : front) {
      const bool dominated = &a != &b && b.latency.value() >= a.latency.value() &&
                             b.seconds_per_byte.value() >= a.seconds_per_byte.value();
      CHECK_FALSE(dominated);
    }
  }
  for (double bytes : {0.0, 1.0, 4096.0, 1e6, 16777216.0, 1073741824.0 / 64, 1e12}) {
    INFO(bytes << " bytes");
    CHECK(StepSeconds(front, Bytes(bytes)).value() == StepSeconds(costs, Bytes(bytes)).value());
  }
  CHECK(StepFrontier({}).empty());
}

TEST_CASE("names parse back", "[collectives]") {
  for (auto op : {CollectiveOp::kSendRecv, CollectiveOp::kAllReduce, CollectiveOp::kAllGather,
                  CollectiveOp::kReduceScatter, CollectiveOp::kAllToAll, CollectiveOp::kBroadcast}) {
    CHECK(*ParseCollectiveOp(CollectiveOpName(op)) == op);
  }
  CHECK(*ParseAlgorithm("hier") == CollectiveAlgorithm::kHierarchical);
  CHECK_FALSE(ParseAlgorithm("fast").ok());
  CHECK_FALSE(ParseCollectiveOp("allreduce").ok());
}

}  // namespace
}  // namespace hetsim::collectives
