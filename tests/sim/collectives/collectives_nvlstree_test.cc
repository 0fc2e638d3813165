// NCCL's NVLSTree and CollNetChain all-reduces (CollectiveAlgorithm::kNvlsTree, kCollNetChain) against their closed
// forms (docs/network.md).
// NVLSTree: NVLS inside each node ((g+1)/g of a chunk on every GPU's link each way at 5/6 of the link rate B), GPU i's
// node sum of segment i on a double binary tree across the nodes' GPUs i (a tree step a + S/(gCR)), pipelined:
//   max(C t_nvls + 2 D t_tree, t_nvls + 2 (C + D - 1) t_tree),  t_nvls = a + (g+1)/g S/(C 5/6 B)
// CollNetChain: per channel (one per NIC) a chain up a node's GPUs to its head, the head's piece S/(KC) through the
// switches and back, the sum down the chain:
//   2 (g-1) t_hop + t_net + (C-1) max(t_chain, t_net),  t_hop = a + S/(KCB), t_chain = a + 2 (g-1) S/(gCB),
//   t_net = a_net + S/(KCR)
#include <catch2/catch.hpp>

#include "base/units.h"
#include "sim/collectives/estimate.h"
#include "sim/collectives/simulate.h"
#include "tests/service/driver/build_topology.h"
#include "tests/sim/collectives/collectives_star.h"
#include "tests/sim/collectives/collectives_test_util.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim::collectives {
// A namespace of its own: the unity build puts this file beside collectives_collnet_test.cc's helpers.
namespace nvlstree_test {

using testing::H100Island;

v1::Cluster SharpNodes(int nodes, bool nvlink_sharp, bool infiniband_sharp, double nic_gbps = 400) {
  v1::Cluster c = H100Island(nodes);
  c.mutable_node_types(0)->set_nvlink_sharp(nvlink_sharp);
  c.mutable_islands(0)->set_infiniband_sharp(infiniband_sharp);
  c.mutable_islands(0)->set_nic_bandwidth_gbps(nic_gbps);
  return c;
}

absl::StatusOr<CollectiveResult> AllReduce(const topology::Topology& topo, int n, int64_t bytes,
                                           CollectiveAlgorithm algo, int32_t chunks = 0) {
  return testing::SimulateOnFirstGpus(topo, CollectiveOp::kAllReduce, n, bytes, algo, chunks);
}

constexpr double kNvlinkLatency = 1e-6, kNetLatency = 1.2e-6;  // GPU-switch-GPU; GPU-NIC-switch-NIC-GPU
const double kNvlinkRate = GbpsToBytesPerSecond(3600);         // H100Island: 450 GB/s per GPU per direction

TEST_CASE("nvlstree all-reduce, one chunk: a + 9/8 S/(5/6 B), then a rail's double tree of S/g",
          "[collectives][nvlstree]") {
  for (int nodes : {2, 4}) {
    INFO(nodes << " nodes");
    const auto topo = *hetsim::testing::BuildTopology(SharpNodes(nodes, true, false));
    const int64_t bytes = kGiB;
    const auto r = AllReduce(topo, 8 * nodes, bytes, CollectiveAlgorithm::kNvlsTree, 1);
    INFO(r.status().message());
    REQUIRE(r.ok());
    // The rails' trees, one NIC each, do not meet: NVLSTree's inter-node part is rail 0's double tree alone.
    topology::Router router(topo);
    CollectiveRequest rail;
    rail.op = CollectiveOp::kAllReduce;
    for (int j = 0; j < nodes; ++j) rail.gpus.push_back(GpuId(8 * j));
    rail.bytes = bytes / 8;
    rail.algorithm = CollectiveAlgorithm::kTree;
    rail.chunks = 1;
    const CollectiveResult tree = testing::SimulateOk(topo, router, rail);
    const double expected = kNvlinkLatency + bytes * 9.0 / 8.0 / (5.0 / 6.0) / kNvlinkRate + TimeToSeconds(tree.time);
    CHECK(TimeToSeconds(r->time) == Approx(expected).epsilon(1e-3));
    // The estimate prices the trees' levels as the hierarchy's estimate does: exact at 2 nodes, above beyond.
    CHECK(r->estimates.at(0).seconds.value() >= TimeToSeconds(r->time) * (1 - 1e-3));
    if (nodes == 2) CHECK(r->estimates.at(0).seconds.value() == Approx(TimeToSeconds(r->time)).epsilon(1e-3));
  }
  // The closed form (NvlsTreePipelineSeconds with C = 1): the NVLS step, then 2 D tree steps.
  CHECK(NvlsTreeAllReduceSeconds(8, 4, Bytes(kGiB), Bandwidth(5.0 / 6.0 * kNvlinkRate), Seconds(kNvlinkLatency),
                                 Bandwidth(GbpsToBytesPerSecond(400)), Seconds(kNetLatency), 1)
            .value() == Approx(kNvlinkLatency + kGiB * 9.0 / 8.0 / (5.0 / 6.0) / kNvlinkRate +
                               4 * (kNetLatency + kGiB / 8.0 / GbpsToBytesPerSecond(400)))
                            .epsilon(1e-9));
}

// Pipelined, the busier of the NVLink (9/8 S/(5/6 B): 3.2 ms at 1 GiB) and the NICs' trees (2 S/(gR) per node in
// all: 5.4 ms at 400 Gb/s, 1.3 ms at 1600 Gb/s) sets the time; either way well under the phases in sequence. The
// closed form prices the trees' fill as TreeAllReduceSeconds does (ceil(log2 N) levels, links shared in pairs), which
// the closed-form tests hold within 5% of the simulated trees: within 8% here.
TEST_CASE("nvlstree all-reduce pipelined by chunks", "[collectives][nvlstree]") {
  const int64_t bytes = kGiB;
  for (double nic_gbps : {400.0, 1600.0}) {
    const double R = GbpsToBytesPerSecond(nic_gbps);
    const auto topo = *hetsim::testing::BuildTopology(SharpNodes(4, true, false, nic_gbps));
    const auto one = AllReduce(topo, 32, bytes, CollectiveAlgorithm::kNvlsTree, 1);
    REQUIRE(one.ok());
    for (int32_t chunks : {4, 16}) {
      INFO(nic_gbps << " Gb/s NICs, " << chunks << " chunks");
      const auto r = AllReduce(topo, 32, bytes, CollectiveAlgorithm::kNvlsTree, chunks);
      INFO(r.status().message());
      REQUIRE(r.ok());
      const double expected =
          NvlsTreeAllReduceSeconds(8, 4, Bytes(bytes), Bandwidth(5.0 / 6.0 * kNvlinkRate), Seconds(kNvlinkLatency),
                                   Bandwidth(R), Seconds(kNetLatency), chunks)
              .value();
      CHECK(TimeToSeconds(r->time) == Approx(expected).epsilon(0.08));
      CHECK(r->estimates.at(0).seconds.value() == Approx(expected).epsilon(1e-6));
      CHECK(r->time < one->time);
    }
  }
}

TEST_CASE("nvlstree: all-reduce across nodes whose NVSwitches reduce, auto takes it for large buffers",
          "[collectives][nvlstree]") {
  const auto off = *hetsim::testing::BuildTopology(SharpNodes(2, false, false));
  CHECK_FALSE(AllReduce(off, 16, kGiB, CollectiveAlgorithm::kNvlsTree).ok());
  const auto on = *hetsim::testing::BuildTopology(SharpNodes(2, true, false));
  CHECK_FALSE(AllReduce(on, 8, kGiB, CollectiveAlgorithm::kNvlsTree).ok());  // one node: NVLS, not NVLSTree
  CHECK(ParseAlgorithm("nvlstree").value() == CollectiveAlgorithm::kNvlsTree);
  CHECK(Supports(CollectiveAlgorithm::kNvlsTree, CollectiveOp::kAllReduce));
  CHECK_FALSE(Supports(CollectiveAlgorithm::kNvlsTree, CollectiveOp::kAllGather));
  CHECK_FALSE(Supports(CollectiveAlgorithm::kNvlsTree, CollectiveOp::kReduceScatter));
  topology::Router router(on);
  CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.gpus = testing::Range(16);
  req.bytes = kGiB;
  const auto chosen = ChooseShape(on, router, req);
  REQUIRE(chosen.ok());
  CHECK(chosen->shape.algorithm == CollectiveAlgorithm::kNvlsTree);
  const auto none = ChooseShape(off, router, req);
  REQUIRE(none.ok());
  for (const AlgorithmEstimate& e : none->estimates) CHECK(e.algorithm != CollectiveAlgorithm::kNvlsTree);
}

TEST_CASE("collnetchain all-reduce with one chunk: 2 (g-1) (a + S/(KB)) + a_net + S/(KR)",
          "[collectives][collnetchain]") {
  const double R = GbpsToBytesPerSecond(400);
  for (int nodes : {2, 4}) {
    INFO(nodes << " nodes");
    const auto topo = *hetsim::testing::BuildTopology(SharpNodes(nodes, false, true));
    const int64_t bytes = kGiB;
    const auto r = AllReduce(topo, 8 * nodes, bytes, CollectiveAlgorithm::kCollNetChain, 1);
    INFO(r.status().message());
    REQUIRE(r.ok());
    CHECK(r->shape.channels == 8);  // one chain per NIC
    const double expected = 2 * 7 * (kNvlinkLatency + bytes / 8.0 / kNvlinkRate) + kNetLatency + bytes / 8.0 / R;
    CHECK(CollNetChainAllReduceSeconds(8, 8, Bytes(bytes), Bandwidth(kNvlinkRate), Seconds(kNvlinkLatency),
                                       Bandwidth(R), Seconds(kNetLatency), 1)
              .value() == Approx(expected).epsilon(1e-9));
    CHECK(TimeToSeconds(r->time) == Approx(expected).epsilon(1e-3));
    CHECK(r->estimates.at(0).seconds.value() == Approx(expected).epsilon(1e-6));
  }
}

// Pipelined: a GPU's link carries 2 (g-1)/g S (7/4 S/B: 4.2 ms at 1 GiB) against S/(gR) through each NIC (2.7 ms at
// 400 Gb/s, 21 ms at 50 Gb/s). The closed form's cycle is the busiest link's; the flows share links max-min fair, so
// the simulation runs within 8% of it.
TEST_CASE("collnetchain all-reduce pipelined by chunks", "[collectives][collnetchain]") {
  const int64_t bytes = kGiB;
  for (double nic_gbps : {400.0, 50.0}) {
    const double R = GbpsToBytesPerSecond(nic_gbps);
    const auto topo = *hetsim::testing::BuildTopology(SharpNodes(4, false, true, nic_gbps));
    for (int32_t chunks : {4, 16}) {
      INFO(nic_gbps << " Gb/s NICs, " << chunks << " chunks");
      const auto r = AllReduce(topo, 32, bytes, CollectiveAlgorithm::kCollNetChain, chunks);
      INFO(r.status().message());
      REQUIRE(r.ok());
      const double expected =
          CollNetChainAllReduceSeconds(8, 8, Bytes(bytes), Bandwidth(kNvlinkRate), Seconds(kNvlinkLatency),
                                       Bandwidth(R), Seconds(kNetLatency), chunks)
              .value();
      CHECK(TimeToSeconds(r->time) == Approx(expected).epsilon(0.08));
      CHECK(r->estimates.at(0).seconds.value() == Approx(expected).epsilon(1e-6));
    }
  }
}

TEST_CASE("collnetchain: all-reduce across nodes of an island whose switches reduce", "[collectives][collnetchain]") {
  const auto off = *hetsim::testing::BuildTopology(SharpNodes(2, false, false));
  CHECK_FALSE(AllReduce(off, 16, kGiB, CollectiveAlgorithm::kCollNetChain).ok());
  const auto on = *hetsim::testing::BuildTopology(SharpNodes(2, false, true));
  CHECK_FALSE(AllReduce(on, 8, kGiB, CollectiveAlgorithm::kCollNetChain).ok());
  CHECK(ParseAlgorithm("collnetchain").value() == CollectiveAlgorithm::kCollNetChain);
  CHECK_FALSE(Supports(CollectiveAlgorithm::kCollNetChain, CollectiveOp::kAllGather));
  CHECK(AllReduce(on, 16, kGiB, CollectiveAlgorithm::kCollNetChain).ok());
}

}  // namespace nvlstree_test
}  // namespace hetsim::collectives
