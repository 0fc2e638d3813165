// Intra-node topologies beyond NVSwitch (PCIE_TREE, NVLINK_BRIDGE, HYBRID_CUBE_MESH): routes as NCCL's
// transports take them, and the collective bandwidth a group reaches, against closed forms.
#include <catch2/catch.hpp>

#include "base/spec/cluster.h"
#include "base/units.h"
#include "proto/validate_cluster.h"
#include "sim/collectives/algorithms.h"
#include "sim/collectives/estimate.h"
#include "sim/collectives/simulate.h"
#include "tests/base/time_io.h"
#include "tests/service/driver/build_topology.h"
#include "tests/sim/collectives/collectives_test_util.h"
#include "tests/topology/topology_clusters.h"
#include "tests/topology/topology_test_util.h"

namespace hetsim::topology {
namespace {

constexpr double kPcie4Gbps = 252;   // PCIe Gen4 x16: 16 GT/s x 16 lanes x 128/130, per direction
constexpr double kBridgeGbps = 450;  // RTX A6000 NVLink bridge: 112.5 GB/s both directions
constexpr int64_t kLatencyNs = 2000;

// One node of `gpus` GPUs on `fabric`, ideal hardware (line rates, no NCCL latencies); `pcie` is the
// node type's PcieTree.
v1::Cluster OneNode(int gpus, v1::IntraNodeFabric fabric, const v1::PcieTree& pcie, double nvlink_gbps = 0) {
  v1::Cluster c;
  c.set_name("node");
  c.set_ideal(true);
  testing::AddGpuType(c, "G", 165, 24, 1008);
  c.mutable_gpu_types(0)->mutable_efficiency()->set_max_efficiency(1);
  testing::AddNodeType(c, "n", "G", gpus, kPcie4Gbps, kLatencyNs, fabric);
  *c.mutable_node_types(0)->mutable_pcie() = pcie;
  c.mutable_node_types(0)->set_nvlink_bandwidth_gbps(nvlink_gbps);
  auto* i = c.add_islands();
  i->set_name("lab");
  i->set_node_type("n");
  i->set_node_count(1);
  return c;
}

v1::PcieTree Tree(int sockets, int per_switch, double socket_gbps = 0, bool no_p2p = false, double memory = 0,
                  double shm = 0) {
  v1::PcieTree p;
  p.set_shm_connection_gbytes_per_s(shm);
  p.set_sockets(sockets);
  p.set_gpus_per_switch(per_switch);
  p.set_inter_socket_bandwidth_gbps(socket_gbps);
  p.set_inter_socket_latency_ns(socket_gbps > 0 ? 500 : 0);
  p.set_no_p2p(no_p2p);
  p.set_host_memory_bandwidth_gbytes_per_s(memory);
  return p;
}

struct Built {
  explicit Built(const v1::Cluster& c) : topo(*hetsim::testing::BuildTopology(c)), router(topo) {}
  Topology topo;
  Router router;
};

// A ring all-reduce of `bytes` over local GPUs [first, first + n), simulated; its time in seconds.
double RingAllReduce(Built& b, int first, int n, int64_t bytes) {
  collectives::CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  for (int g = first; g < first + n; ++g) req.gpus.push_back(GpuId(g));
  req.bytes = bytes;
  req.algorithm = collectives::CollectiveAlgorithm::kRing;
  return TimeToSeconds(hetsim::testing::SimulateOk(b.topo, b.router, req).time);
}

TEST_CASE("PCIe without P2P: an all-reduce follows the host-bounce bandwidth", "[topology][intra-node]") {
  // 8 GPUs on root ports of one socket whose DRAM gives 200 GB/s. Every transfer goes GPU -> socket ->
  // memory, then the receiver loads it over its SHM connection (NCCL's SHM transport): PCIe up once,
  // the socket's memory written (and read), the connection's rate. Here the connections are as fast as
  // copy engines (NCCL_SHM_USE_CUDA_MEMCPY, 100 GB/s set), so the PCIe link and the memory bind.
  const double memory = 200e9;
  const v1::Cluster c = OneNode(8, v1::PCIE_TREE, Tree(1, 0, 0, /*no_p2p=*/true, memory / 1e9, /*shm=*/100));
  REQUIRE(proto::ValidateCluster(c, "c.pbtxt").ok());
  Built b(c);
  CHECK(testing::CountKind(b.topo, DeviceKind::kHostMemory) == 1);
  const Route& r = **b.router.GpuRoute(GpuId(0), GpuId(1));
  CHECK(r.size() == 3);
  CHECK(b.router.Latency(r) == kLatencyNs * kNanosecond);
  const double pcie = GbpsToBytesPerSecond(kPcie4Gbps);
  const double a = kLatencyNs * 1e-9;
  const int64_t bytes = 256 << 20;
  // n GPUs of a ring all send at once: n copies share the memory's write half (its read half, the
  // other n loads), so each runs at min(PCIe, M / 2 / n): M-bound at 8 GPUs (12.5 GB/s), PCIe-bound
  // at 2 (31.5 GB/s).
  for (int n : {2, 4, 8}) {
    INFO("n = " << n);
    const double bounced = std::min(pcie, memory / 2 / n);
    CHECK(RingAllReduce(b, 0, n, bytes) ==
          Approx(collectives::RingAllReduceSeconds(n, Bytes(bytes), Bandwidth(bounced), Seconds(a)).value())
              .epsilon(1e-3));
  }
  CHECK(memory / 2 / 8 < pcie);
  CHECK(memory / 2 / 2 > pcie);
}

TEST_CASE("PCIe without P2P: NCCL's SHM/direct connections bind, 2 channels x 0.95 GB/s", "[topology][intra-node]") {
  // The default: each hop is an SHM connection whose receiver loads host memory at
  // kNcclPcieChannels x kShmDirectChannelBytesPerS = 1.9 GB/s, far below PCIe (31.5 GB/s) and the
  // memory's share (12.5 GB/s at 8 GPUs): every ring size runs at 1.9 GB/s bus bandwidth, and two
  // sockets (the buffer in the receiver's memory, NCCL_SHM_LOCALITY = 2) change nothing.
  const double memory = 200e9;
  const double shm = spec::kNcclPcieChannels * spec::kShmDirectChannelBytesPerS;
  const double a = kLatencyNs * 1e-9;
  const int64_t bytes = 256 << 20;
  for (int sockets : {1, 2}) {
    INFO("sockets = " << sockets);
    const v1::Cluster c = OneNode(8, v1::PCIE_TREE, Tree(sockets, 0, sockets > 1 ? 400 : 0, true, memory / 1e9));
    REQUIRE(proto::ValidateCluster(c, "c.pbtxt").ok());
    Built b(c);
    CHECK(testing::CountKind(b.topo, DeviceKind::kHostMemory) == sockets);
    const Route& across = **b.router.GpuRoute(GpuId(3), GpuId(4));
    CHECK(across.size() == (sockets > 1 ? 4u : 3u));
    CHECK(b.router.BottleneckBytesPerSecond(across) == Approx(shm));
    CHECK(b.topo.DeviceName(b.topo.link(across.back()).src) ==
          (sockets > 1 ? "lab/node0/host-memory1" : "lab/node0/host-memory0"));
    for (int n : {2, 4, 8}) {
      INFO("n = " << n);
      CHECK(shm < memory / 2 / n);
      const double socket_a = sockets > 1 && n == 8 ? 500e-9 : 0;
      CHECK(RingAllReduce(b, 0, n, bytes) ==
            Approx(collectives::RingAllReduceSeconds(n, Bytes(bytes), Bandwidth(shm), Seconds(a + socket_a)).value())
                .epsilon(1e-3));
    }
  }
}

TEST_CASE("PCIe without P2P: auto runs the ring NCCL runs, not the faster-estimated tree", "[topology][intra-node]") {
  // Over SHM connections of 1.9 GB/s each, a double binary tree's ranks talk to two or three peers at
  // once and its estimate beats the ring's; NCCL's tuner rates the tree at 0.5 x 0.92 of the bus
  // bandwidth against the ring's 8/14 (and inside a node its tree is a chain): a TP all-reduce of
  // 16 MiB runs the ring, at the SHM rate (the RTX 3090 node of the Sailor set, docs/validation.md).
  const v1::Cluster c = OneNode(8, v1::PCIE_TREE, Tree(1, 0, 0, /*no_p2p=*/true, 200));
  REQUIRE(proto::ValidateCluster(c, "c.pbtxt").ok());
  Built b(c);
  collectives::CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  for (int g = 0; g < 8; ++g) req.gpus.push_back(GpuId(g));
  req.bytes = 16 << 20;
  const auto choice = collectives::ChooseShape(b.topo, b.router, req);
  REQUIRE(choice.ok());
  double ring = 0, tree = 0;
  for (const auto& e : choice->estimates) {
    if (e.algorithm == collectives::CollectiveAlgorithm::kRing) ring = e.seconds.value();
    if (e.algorithm == collectives::CollectiveAlgorithm::kTree) tree = e.seconds.value();
  }
  CHECK(tree > 0);
  CHECK(tree < 0.7 * ring);
  CHECK(choice->shape.algorithm == collectives::CollectiveAlgorithm::kRing);
  const double shm = spec::kNcclPcieChannels * spec::kShmDirectChannelBytesPerS;
  CHECK(
      ring ==
      Approx(collectives::RingAllReduceSeconds(8, Bytes(req.bytes), Bandwidth(shm), Seconds(kLatencyNs * 1e-9)).value())
          .epsilon(1e-3));
}

TEST_CASE("NVLink bridges: a bridged pair at NVLink rate, a 4-GPU ring at the PCIe rate", "[topology][intra-node]") {
  const v1::Cluster c = OneNode(4, v1::NVLINK_BRIDGE, Tree(1, 0), kBridgeGbps);
  REQUIRE(proto::ValidateCluster(c, "c.pbtxt").ok());
  Built b(c);
  const Route& bridged = **b.router.GpuRoute(GpuId(2), GpuId(3));
  REQUIRE(bridged.size() == 1);
  CHECK(b.topo.link(bridged[0]).link_class == LinkClass::kNvlink);
  CHECK((*b.router.GpuRoute(GpuId(1), GpuId(2)))->size() == 2);  // PCIe peer-to-peer through the root complex
  const double a = kLatencyNs * 1e-9;
  const int64_t bytes = 256 << 20;
  CHECK(RingAllReduce(b, 0, 2, bytes) ==
        Approx(collectives::RingAllReduceSeconds(2, Bytes(bytes), GbpsBandwidth(kBridgeGbps), Seconds(a)).value())
            .epsilon(1e-3));
  // Ring 0-1-2-3: two bridged hops and two PCIe hops (1 -> 2, 3 -> 0), each step as slow as PCIe.
  CHECK(RingAllReduce(b, 0, 4, bytes) ==
        Approx(collectives::RingAllReduceSeconds(4, Bytes(bytes), GbpsBandwidth(kPcie4Gbps), Seconds(a)).value())
            .epsilon(1e-3));
  // RTX 3090: bridged pairs, no P2P. The pair keeps its NVLink; the 4- and 8-GPU rings wait for their
  // SHM hops (1 -> 2, 3 -> 4, ...) at NCCL's 1.9 GB/s, an order of magnitude below the PCIe ring.
  const v1::Cluster rtx = OneNode(8, v1::NVLINK_BRIDGE, Tree(1, 0, 0, true, 204.8), kBridgeGbps);
  REQUIRE(proto::ValidateCluster(rtx, "c.pbtxt").ok());
  Built r(rtx);
  const double shm = spec::kNcclPcieChannels * spec::kShmDirectChannelBytesPerS;
  CHECK(RingAllReduce(r, 0, 2, bytes) ==
        Approx(collectives::RingAllReduceSeconds(2, Bytes(bytes), GbpsBandwidth(kBridgeGbps), Seconds(a)).value())
            .epsilon(1e-3));
  for (int n : {4, 8}) {
    INFO("n = " << n);
    CHECK(RingAllReduce(r, 0, n, bytes) ==
          Approx(collectives::RingAllReduceSeconds(n, Bytes(bytes), Bandwidth(shm), Seconds(a)).value()).epsilon(1e-3));
  }
}

TEST_CASE("a PCIe tree: pairs under one switch meet there, a ring across sockets runs at the socket link",
          "[topology][intra-node]") {
  // 2 sockets x 2 switches x 2 GPUs; the socket link (200 Gb/s) is slower than PCIe (252 Gb/s).
  const double socket_gbps = 200;
  const v1::Cluster c = OneNode(8, v1::PCIE_TREE, Tree(2, 2, socket_gbps));
  REQUIRE(proto::ValidateCluster(c, "c.pbtxt").ok());
  Built b(c);
  CHECK(testing::CountKind(b.topo, DeviceKind::kPcieSwitch) == 4);
  CHECK(testing::CountKind(b.topo, DeviceKind::kCpu) == 2);
  CHECK((*b.router.GpuRoute(GpuId(0), GpuId(1)))->size() == 2);  // one switch
  CHECK((*b.router.GpuRoute(GpuId(0), GpuId(2)))->size() == 4);  // switch, socket, switch
  const Route& across = **b.router.GpuRoute(GpuId(1), GpuId(6));
  CHECK(across.size() == 5);  // ... and the socket link
  CHECK(b.router.BottleneckBytesPerSecond(across) == Approx(GbpsToBytesPerSecond(socket_gbps)));
  CHECK(b.topo.DeviceName(b.topo.link(across[0]).dst) == "lab/node0/pcie-switch0");
  const int64_t bytes = 256 << 20;
  const double a = kLatencyNs * 1e-9;
  // A pair under one switch: PCIe. All 8: each switch uplink and each socket-link direction carries one
  // ring edge, so the socket link is the slowest hop, with the longest latency.
  CHECK(RingAllReduce(b, 0, 2, bytes) ==
        Approx(collectives::RingAllReduceSeconds(2, Bytes(bytes), GbpsBandwidth(kPcie4Gbps), Seconds(a)).value())
            .epsilon(1e-3));
  CHECK(RingAllReduce(b, 0, 8, bytes) ==
        Approx(
            collectives::RingAllReduceSeconds(8, Bytes(bytes), GbpsBandwidth(socket_gbps), Seconds(a + 500e-9)).value())
            .epsilon(1e-3));
}

TEST_CASE("DGX-1's hybrid cube-mesh: six NVLinks per GPU, doubled pairs at twice the rate, the rest on PCIe",
          "[topology][intra-node]") {
  const double nvlink_gbps = 200;  // NVLink 2: 25 GB/s per direction per link
  const v1::Cluster c = OneNode(8, v1::HYBRID_CUBE_MESH, Tree(2, 2, 300), nvlink_gbps);
  REQUIRE(proto::ValidateCluster(c, "c.pbtxt").ok());
  Built b(c);
  std::vector<double> per_gpu(8, 0);
  for (const Link& l : b.topo.links()) {
    if (l.link_class != LinkClass::kNvlink) continue;
    per_gpu[b.topo.device(l.src).index] += l.bandwidth.bytes_per_second() / GbpsToBytesPerSecond(nvlink_gbps);
  }
  for (int g = 0; g < 8; ++g) CHECK(per_gpu[g] == Approx(6));
  CHECK(b.router.BottleneckBytesPerSecond(**b.router.GpuRoute(GpuId(0), GpuId(3))) ==
        Approx(GbpsToBytesPerSecond(2 * nvlink_gbps)));
  CHECK(b.router.BottleneckBytesPerSecond(**b.router.GpuRoute(GpuId(0), GpuId(1))) ==
        Approx(GbpsToBytesPerSecond(nvlink_gbps)));
  CHECK((*b.router.GpuRoute(GpuId(0), GpuId(5)))->size() == 5);  // no NVLink: PCIe across the sockets
}

TEST_CASE("intra-node layouts a node cannot have are refused with the field", "[topology][intra-node]") {
  auto problem = [](const v1::Cluster& c) { return std::string(proto::ValidateCluster(c, "c.pbtxt").message()); };
  CHECK_THAT(problem(OneNode(3, v1::NVLINK_BRIDGE, Tree(1, 0), kBridgeGbps)),
             Catch::Contains("node_types[0].gpus_per_node: 3 GPUs cannot be bridged in pairs"));
  CHECK_THAT(problem(OneNode(4, v1::HYBRID_CUBE_MESH, Tree(1, 0), 200)),
             Catch::Contains("node_types[0].gpus_per_node: 4 GPUs: a hybrid cube-mesh (DGX-1) has exactly 8"));
  CHECK_THAT(problem(OneNode(8, v1::PCIE_TREE, Tree(3, 0, 100))),
             Catch::Contains("node_types[0].pcie.sockets: 8 GPUs do not split evenly over 3 sockets"));
  CHECK_THAT(problem(OneNode(8, v1::PCIE_TREE, Tree(2, 3, 100))),
             Catch::Contains("node_types[0].pcie.gpus_per_switch: 3 does not divide the 4 GPUs of a socket"));
  CHECK_THAT(problem(OneNode(8, v1::PCIE_TREE, Tree(2, 0))),
             Catch::Contains("node_types[0].pcie.inter_socket_bandwidth_gbps: 0 is outside"));
  CHECK_THAT(problem(OneNode(8, v1::PCIE_TREE, Tree(1, 0, 0, true))),
             Catch::Contains("node_types[0].pcie.host_memory_bandwidth_gbytes_per_s: 0 is outside"));
  CHECK_THAT(problem(OneNode(8, v1::PCIE_TREE, Tree(1, 0, 0, true, 200, -1))),
             Catch::Contains("node_types[0].pcie.shm_connection_gbytes_per_s: -1 is outside"));
  CHECK_THAT(problem(OneNode(8, v1::PCIE_TREE, Tree(1, 0, 0, false, 0, 12.5))),
             Catch::Contains("node_types[0].pcie.shm_connection_gbytes_per_s: 12.5 is set without no_p2p"));
  CHECK_THAT(problem(OneNode(8, v1::NVSWITCH, Tree(1, 0))), Catch::Contains("node_types[0].pcie: only meaningful"));
  CHECK_THAT(problem(OneNode(8, v1::PCIE_TREE, Tree(1, 0), 450)),
             Catch::Contains("node_types[0].nvlink_bandwidth_gbps: only meaningful"));
}

}  // namespace
}  // namespace hetsim::topology
