// NCCL's double tree across nodes (sim/collectives/primitives.h, AppendDoubleTreeAllReduce with node sizes): its
// binary trees over the nodes, a chain inside each node, and what that moves over the NICs: between two nodes each
// byte once each way over every NIC (the 2-node Alps GH200 log's 90.5 GB/s over 4 x 200 Gb/s NICs), across more
// nodes twice; the alpha-beta form 2 (C + D - 1)(a + m S / (2 k C B)) with D = ceil(log2 N) + g - 1.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include <google/protobuf/text_format.h>
#include <catch2/catch.hpp>

#include "base/units.h"
#include "sim/collectives/layout.h"
#include "sim/collectives/primitives.h"
#include "sim/collectives/simulate.h"
#include "tests/service/driver/build_topology.h"
#include "tests/sim/collectives/collectives_star.h"
#include "tests/sim/collectives/collectives_test_util.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim::collectives {
namespace {

using testing::Range;

// Bytes each tree edge of `sizes` nodes carries per direction when the all-reduce moves `bytes` (half per tree),
// summed per (from node, to node).
std::map<std::pair<int, int>, double> BytesBetweenNodes(const std::vector<int32_t>& sizes, double bytes) {
  std::vector<int> node_of;
  for (size_t a = 0; a < sizes.size(); ++a) node_of.insert(node_of.end(), sizes[a], static_cast<int>(a));
  std::map<std::pair<int, int>, double> load;
  for (int32_t t = 0; t < 2; ++t) {
    for (auto [child, parent] : DoubleTreeEdges(static_cast<int32_t>(node_of.size()), t, sizes)) {
      if (node_of[child] == node_of[parent]) continue;
      load[{node_of[child], node_of[parent]}] += bytes / 2;  // up
      load[{node_of[parent], node_of[child]}] += bytes / 2;  // down
    }
  }
  return load;
}

TEST_CASE("node tree: NCCL's binary trees over the nodes, a chain inside each", "[collectives][tree]") {
  for (const std::vector<int32_t>& sizes :
       std::vector<std::vector<int32_t>>{{4, 4}, {4, 4, 4, 4}, {8, 8, 8, 8, 8}, {4, 2, 3}, {1, 1, 1, 1, 1}}) {
    int32_t n = 0;
    std::vector<int32_t> head;
    for (int32_t s : sizes) {
      head.push_back(n);
      n += s;
    }
    INFO("nodes " << sizes.size() << ", ranks " << n);
    for (int32_t t = 0; t < 2; ++t) {
      const auto edges = DoubleTreeEdges(n, t, sizes);
      REQUIRE(edges.size() == static_cast<size_t>(n - 1));  // a spanning tree
      std::set<int32_t> children;
      for (auto [child, parent] : edges) children.insert(child);
      CHECK(children.size() == static_cast<size_t>(n - 1));  // one parent each, one root
      int32_t between = 0;
      for (auto [child, parent] : edges) {
        const bool head_child = std::find(head.begin(), head.end(), child) != head.end();
        if (head_child) {
          // A node's first rank hangs under another node's first rank (the channel's NIC on both sides).
          CHECK(std::find(head.begin(), head.end(), parent) != head.end());
          ++between;
        } else {
          CHECK(parent == child - 1);  // the chain
        }
      }
      CHECK(between == static_cast<int32_t>(sizes.size()) - 1);
    }
  }
  // Depth: ceil(log2 N) between nodes, g - 1 down the chain.
  CHECK(DoubleTreeDepth(8, std::vector<int32_t>{4, 4}) == 1 + 3);
  CHECK(DoubleTreeDepth(32, std::vector<int32_t>(8, 4)) == 3 + 3);
  CHECK(DoubleTreeDepth(40, std::vector<int32_t>(5, 8)) == 3 + 7);
  // Every rank a node of its own: the trees over the ranks, as before.
  auto nodes_of_one = DoubleTreeEdges(16, 1, std::vector<int32_t>(16, 1));
  auto ranks = DoubleTreeEdges(16, 1);
  std::sort(nodes_of_one.begin(), nodes_of_one.end());
  std::sort(ranks.begin(), ranks.end());
  CHECK(nodes_of_one == ranks);
  CHECK(DoubleTreeDepth(16, std::vector<int32_t>(16, 1)) == DoubleTreeDepth(16));
}

TEST_CASE("node tree: between two nodes each byte crosses once each way, across more nodes twice at most",
          "[collectives][tree]") {
  // Two nodes: tree 0 hangs node 1 under node 0, tree 1 (mirrored) node 0 under node 1: S each way in all.
  // The binary tree over all 8 ranks crossed the two nodes twice per tree: 2 S each way.
  auto two = BytesBetweenNodes({4, 4}, 1.0);
  CHECK(two.size() == 2);
  CHECK(two[{0, 1}] == 1.0);
  CHECK(two[{1, 0}] == 1.0);
  double flat_cross = 0;
  for (int32_t t = 0; t < 2; ++t) {
    for (auto [child, parent] : DoubleTreeEdges(8, t)) flat_cross += (child / 4 != parent / 4) ? 0.5 : 0.0;
  }
  CHECK(flat_cross == 2.0);
  // Four and eight nodes: a node sends at most 2 S over its NICs (inner in one tree: up once, down twice; a leaf
  // in the other: up once), the ring's 2 (n - 1) / n S at most.
  for (int nodes : {4, 8}) {
    std::map<int, double> sent;
    for (const auto& [pair, bytes] : BytesBetweenNodes(std::vector<int32_t>(nodes, 4), 1.0)) sent[pair.first] += bytes;
    double most = 0;
    for (const auto& [node, bytes] : sent) most = std::max(most, bytes);
    CHECK(most == 2.0);
  }
}

// N nodes of 4 GPUs on NVSwitch (450 GB/s, 1 us) with a 400 Gb/s NIC per GPU on one switch (a = 1.2 us GPU to
// GPU across nodes), ideal links.
topology::Topology NodesOfFour(int nodes) {
  return *testing::BuildTopology(testing::H100Island(nodes, v1::SINGLE_SWITCH, 4));
}

TEST_CASE("node tree: the alpha-beta form 2 (C + D - 1)(a + m S / (2 k C B)) across 2, 4 and 8 nodes",
          "[collectives][tree]") {
  const double B = GbpsToBytesPerSecond(400), a = 1200e-9;
  const int64_t bytes = int64_t{1} << 30;
  const int chunks = 64, k = 4, g = 4;
  for (int nodes : {2, 4, 8}) {
    const topology::Topology topo = NodesOfFour(nodes);
    topology::Router router(topo);
    CollectiveRequest req;
    req.op = CollectiveOp::kAllReduce;
    req.gpus = Range(nodes * g);
    req.bytes = bytes;
    req.algorithm = CollectiveAlgorithm::kTree;
    req.chunks = chunks;
    const CollectiveResult r = testing::SimulateOk(topo, router, req);
    REQUIRE(r.shape.channels == k);  // one channel per NIC, each leaving its node through its own
    // m: flows on the busiest NIC per direction in a chunk step, one between two nodes (tree 0 up node 1 -> 0,
    // tree 1 up node 0 -> 1), two across more (an inner node's two children).
    const double m = nodes == 2 ? 1 : 2;
    const int depth = static_cast<int>(std::ceil(std::log2(nodes))) + g - 1;
    const double closed = 2.0 * (chunks + depth - 1) * (a + m * bytes / (2.0 * k * chunks * B));
    const double t = TimeToSeconds(r.time);
    INFO(nodes << " nodes: simulated " << t << " s, closed form " << closed << " s");
    CHECK(r.shape.estimated_seconds.value() == Approx(closed).epsilon(1e-3));
    // The closed form prices every hop of the fill at the NIC's step; the chains inside the nodes are faster.
    CHECK(t <= closed);
    CHECK(t == Approx(closed).epsilon(0.06));
    // What the NICs carry bounds it below: S / (k B) between two nodes (each byte once each way over every NIC),
    // 2 S / (k B) across more.
    CHECK(t >= m * bytes / (k * B));
    if (nodes == 2) CHECK(t <= 1.03 * bytes / (k * B));
  }
}

// The 2-node cluster of the Alps log: 4 GH200 (H100-SXM's rates) on NVLink, one 200 Gb/s NIC per GPU, NCCL's
// efficiencies from the presets.
v1::Cluster TwoGh200Nodes() {
  v1::Cluster c;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(R"pb(
                                                          name: "alps"
                                                          gpu_types { name: "gh200" preset: "H100-SXM" }
                                                          node_types {
                                                            name: "gh200x4"
                                                            gpu_type: "gh200"
                                                            gpus_per_node: 4
                                                            intra_node_fabric: NVSWITCH
                                                            intra_node_bandwidth_gbps: 3600
                                                            intra_node_latency_ns: 1000
                                                          }
                                                          islands {
                                                            name: "clariden"
                                                            node_type: "gh200x4"
                                                            node_count: 2
                                                            fabric: ROCE
                                                            topology: SINGLE_SWITCH
                                                            nics_per_node: 4
                                                            nic_bandwidth_gbps: 200
                                                          }
                                                        )pb",
                                                        &c));
  return c;
}

TEST_CASE("node tree: auto runs the tree between two GH200 nodes and the ring between two DGX A100, as NCCL did",
          "[collectives][tree]") {
  // Alps (boeschf/nccl-benchmark-on-alps-2025, 2 x 4 GH200): 90.5 GB/s algbw at 4 GiB, above the 57 GB/s a ring's
  // 2 (n - 1) / n S per NIC direction allows over 4 x 25 GB/s: NCCL ran its tree. GTC 2024's two DGX A100 (8 x 200
  // Gb/s): 192 GB/s bus bandwidth, the ring's NIC bound (tests/sim/collectives/collectives_nccl_test.cc).
  const topology::Topology alps = *testing::BuildTopology(TwoGh200Nodes());
  topology::Router alps_router(alps);
  CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.gpus = Range(8);
  req.bytes = int64_t{4} << 30;
  const CollectiveResult gh200 = testing::SimulateOk(alps, alps_router, req);
  CHECK(gh200.shape.algorithm == CollectiveAlgorithm::kTree);
  // NCCL's per-channel cap (Hopper, N2: 41.4 GB/s of bus bandwidth a channel, half of it algorithm bandwidth) holds
  // the 4 channels to 82.8 GB/s: 8.5% below the run, whose NCCL beat its own tuner's table; hetsim's tree is NCCL's
  // table, not the run (docs/network.md, "NCCL's per-channel tree cap").
  CHECK(gh200.algbw_bytes_per_s / 1e9 == Approx(4 * 41.4 / 2).epsilon(0.02));
  CHECK(gh200.algbw_bytes_per_s / 1e9 < 90.5);
  const topology::Topology dgx = *testing::BuildTopology(testing::DgxA100Cluster(2));
  topology::Router dgx_router(dgx);
  req.gpus = Range(16);
  req.bytes = int64_t{1} << 30;
  CHECK(testing::SimulateOk(dgx, dgx_router, req).shape.algorithm == CollectiveAlgorithm::kRing);
}

// NCCL's tuner caps each channel of a tree all-reduce across nodes (src/graph/tuning.cc, perChMaxTreeBws: Ampere 23.6
// GB/s of bus bandwidth on two nodes, 17.8 across more; LL128 at most perChMaxTreeLL128Bws, 20): a forced tree between
// two DGX A100 ran about twice the ring before the cap (each byte once each way over every NIC), at 8 x 23.6 / 2 =
// 94.4 GB/s algbw with it (bus bandwidth 177 GB/s, below the ring's 190: NCCL's tuner keeps the ring there).
TEST_CASE("node tree: NCCL's per-channel cap holds a tree across DGX A100 nodes to its tuner's rate",
          "[collectives][tree]") {
  CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.algorithm = CollectiveAlgorithm::kTree;
  req.protocol = topology::NcclProtocol::kSimple;
  req.bytes = int64_t{1} << 30;
  for (int nodes : {2, 4}) {
    CAPTURE(nodes);
    const topology::Topology dgx = *testing::BuildTopology(testing::DgxA100Cluster(nodes));
    topology::Router router(dgx);
    req.gpus = Range(8 * nodes);
    req.nccl_channel_caps = true;
    const CollectiveResult capped = testing::SimulateOk(dgx, router, req);
    const double per_channel_gbps = nodes == 2 ? 23.6 : 17.8;
    CHECK(capped.shape.channels == 8);
    CHECK(capped.shape.channel_cap_factor > 1);
    // Within 3% on two nodes, 6% across four (the deeper trees' fill and drain at 64 chunks).
    CHECK(capped.algbw_bytes_per_s / 1e9 == Approx(8 * per_channel_gbps / 2).epsilon(nodes == 2 ? 0.03 : 0.06));
    CHECK(capped.algbw_bytes_per_s / 1e9 <= 8 * per_channel_gbps / 2);
    // Without the cap (the calibration's check of the links): the NICs' rate, 25 GB/s x 0.965 a channel, once each
    // way between two nodes, twice across more.
    req.nccl_channel_caps = false;
    const CollectiveResult links = testing::SimulateOk(dgx, router, req);
    CHECK(links.shape.channel_cap_factor == 1);
    CHECK(links.algbw_bytes_per_s > 1.2 * capped.algbw_bytes_per_s);
  }
  // The ring is not capped, and auto keeps it between two nodes at 1 GiB.
  const topology::Topology dgx = *testing::BuildTopology(testing::DgxA100Cluster(2));
  topology::Router router(dgx);
  req.gpus = Range(16);
  req.nccl_channel_caps = true;
  req.algorithm = CollectiveAlgorithm::kRing;
  const CollectiveResult ring = testing::SimulateOk(dgx, router, req);
  CHECK(ring.shape.channel_cap_factor == 1);
  CHECK(ring.busbw_bytes_per_s / 1e9 == Approx(190).epsilon(0.02));
  req.algorithm = CollectiveAlgorithm::kAuto;
  req.protocol.reset();
  CHECK(testing::SimulateOk(dgx, router, req).shape.algorithm == CollectiveAlgorithm::kRing);
}

}  // namespace
}  // namespace hetsim::collectives
