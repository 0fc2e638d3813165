// CollNet (CollectiveAlgorithm::kCollNet, NCCL's CollNetDirect on InfiniBand switches that reduce) against
// its closed form: intra-node reduce-scatter (one direct step: a scatter to the heads), each GPU's segment
// S/g sent once into the switches and the sum received once, intra-node all-gather (the heads' broadcast),
// the three phases pipelined over C chunks, a rank's NVLink phases alternating (RS 1, RS 2, AG 1, RS 3,
// AG 2, ..., AG C):
//   t_rs = a + (g-1) S/(gCB),  t_net = a_net + S/(gCR)
//   time = 2 C t_rs           when t_net <= t_rs    (the NVLink never waits)
//          2 t_rs + C t_net   when t_net >= 2 t_rs  (the NICs never wait)
// and the schedule's recurrence otherwise (CollNetPipelineSeconds); with one chunk 2 t_rs + t_net, the
// phases one after the other. B is a GPU's NVLink rate, R a NIC's; the hierarchical ring moves 2(N-1)/N
// of each segment through every NIC each way in 2(N-1) steps.
#include <algorithm>

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
                                           CollectiveAlgorithm algo, int32_t chunks = 0) {
  topology::Router router(topo);
  CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.gpus = Range(n);
  req.bytes = bytes;
  req.algorithm = algo;
  req.chunks = chunks;
  req.inter_node = CollectiveAlgorithm::kRing;
  return SimulateCollective(topo, router, req, network::NetworkMode::kMaxMinFair);
}

constexpr double kNvlinkLatency = 1e-6, kNetLatency = 1.2e-6;  // GPU-switch-GPU; GPU-NIC-switch-NIC-GPU

TEST_CASE("collnet all-reduce, one chunk: 2(a + (g-1) S/(gB)) + a_net + S/(gR)", "[collectives][collnet]") {
  const double B = GbpsToBytesPerSecond(3600);  // H100Island: 450 GB/s per GPU per direction on NVLink
  const double R = GbpsToBytesPerSecond(400);   // one 400 Gb/s NIC per GPU
  const double a = kNvlinkLatency, a_net = kNetLatency;
  for (int nodes : {2, 4}) {
    INFO(nodes);
    const auto topo = *hetsim::testing::BuildTopology(SharpIsland(nodes, true));
    const int64_t bytes = kGiB;
    const auto r = AllReduce(topo, 8 * nodes, bytes, CollectiveAlgorithm::kCollNet, 1);
    INFO(r.status().message());
    REQUIRE(r.ok());
    const double expected = 2 * (a + 7 * bytes / 8.0 / B) + a_net + bytes / 8.0 / R;
    CHECK(CollNetAllReduceSeconds(8, Bytes(bytes), Bandwidth(B), Seconds(a), Bandwidth(R), Seconds(a_net), 1).value() ==
          Approx(expected).epsilon(1e-9));
    CHECK(TimeToSeconds(r->time) == Approx(expected).epsilon(1e-3));
    CHECK(r->estimates.at(0).seconds.value() == Approx(expected).epsilon(1e-6));
    // The hierarchical ring sends 2(N-1)/N of each segment through every NIC each way.
    const auto hier = AllReduce(topo, 8 * nodes, bytes, CollectiveAlgorithm::kHierarchical);
    REQUIRE(hier.ok());
    CHECK(TimeToSeconds(hier->time) == Approx(HierarchicalAllReduceSeconds(8, nodes, Bytes(bytes), Bandwidth(B),
                                                                           Seconds(a), Bandwidth(R), Seconds(a_net))
                                                  .value())
                                           .epsilon(1e-3));
    if (nodes > 2) CHECK(r->time < hier->time);
  }
}

// Pipelined, the busier of the NVLink (7/4 S/B per GPU, 2.1 ms at 1 GiB on these nodes) and the NICs (S/(gR),
// 2.7 ms at 400 Gb/s) sets the time, the other hiding behind it; CollNet then beats the flat ring, whose NICs
// carry 2(n-1)/n S/(gR), as NCCL measures.
TEST_CASE("collnet all-reduce pipelined by chunks: 2C t_rs, or 2 t_rs + C t_net", "[collectives][collnet]") {
  const double B = GbpsToBytesPerSecond(3600);
  const double a = kNvlinkLatency, a_net = kNetLatency;
  const int64_t bytes = kGiB;
  for (double nic_gbps : {800.0, 400.0, 50.0}) {  // NVLink-bound; between; NIC-bound
    const double R = GbpsToBytesPerSecond(nic_gbps);
    v1::Cluster c = SharpIsland(4, true);
    c.mutable_islands(0)->set_nic_bandwidth_gbps(nic_gbps);
    const auto topo = *hetsim::testing::BuildTopology(c);
    for (int32_t chunks : {2, 4, 16}) {
      INFO(nic_gbps << " Gb/s NICs, " << chunks << " chunks");
      const auto r = AllReduce(topo, 32, bytes, CollectiveAlgorithm::kCollNet, chunks);
      INFO(r.status().message());
      REQUIRE(r.ok());
      const double t_rs = a + 7 * bytes / 8.0 / chunks / B, t_net = a_net + bytes / 8.0 / chunks / R;
      const double expected =
          CollNetAllReduceSeconds(8, Bytes(bytes), Bandwidth(B), Seconds(a), Bandwidth(R), Seconds(a_net), chunks)
              .value();
      if (nic_gbps == 800.0) CHECK(expected == Approx(2 * chunks * t_rs).epsilon(1e-9));
      if (nic_gbps == 50.0) CHECK(expected == Approx(2 * t_rs + chunks * t_net).epsilon(1e-9));
      CHECK(expected >= std::max(2 * chunks * t_rs, 2 * t_rs + chunks * t_net) * (1 - 1e-9));
      CHECK(r->estimates.at(0).seconds.value() == Approx(expected).epsilon(1e-6));
      CHECK(TimeToSeconds(r->time) == Approx(expected).epsilon(1e-3));
      CHECK(
          TimeToSeconds(r->time) <
          CollNetAllReduceSeconds(8, Bytes(bytes), Bandwidth(B), Seconds(a), Bandwidth(R), Seconds(a_net), 1).value());
    }
    // By default the chunks are cut as NCCL cuts them, by size: at 1 GiB each rail's 128 MiB in 64 pieces
    // of 2 MiB (at least 512 KiB, at most 64 chunks).
    const auto best = AllReduce(topo, 32, bytes, CollectiveAlgorithm::kCollNet);
    REQUIRE(best.ok());
    CHECK(best->shape.chunks == 64);
    const double at64 =
        CollNetAllReduceSeconds(8, Bytes(bytes), Bandwidth(B), Seconds(a), Bandwidth(R), Seconds(a_net), 64).value();
    CHECK(best->estimates.at(0).seconds.value() == Approx(at64).epsilon(1e-6));
    CHECK(TimeToSeconds(best->time) == Approx(at64).epsilon(0.01));
    // At 400 Gb/s the flat ring's NICs carry 2(n-1)/n S/(gR), more than CollNet's NVLink and NICs: auto
    // takes CollNet. (At 800 Gb/s the ring's NICs are faster than CollNet's NVLink; at 50 Gb/s it offers.)
    const auto chosen = AllReduce(topo, 32, bytes, CollectiveAlgorithm::kAuto);
    REQUIRE(chosen.ok());
    bool offered = false;
    for (const AlgorithmEstimate& e : chosen->estimates) {
      if (e.algorithm != CollectiveAlgorithm::kCollNet) continue;
      offered = true;
      CHECK(e.seconds.value() == Approx(at64).epsilon(1e-6));
    }
    CHECK(offered);
    // At 400 Gb/s auto takes in-network reduction over the flat ring: CollNetDirect, or CollNetChain (session 35),
    // whose chains load a GPU's link as much (2 (g-1)/g S) and whose fill is shorter on these ideal links.
    if (nic_gbps == 400.0) {
      CHECK((chosen->shape.algorithm == CollectiveAlgorithm::kCollNet ||
             chosen->shape.algorithm == CollectiveAlgorithm::kCollNetChain));
    }
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
  CHECK(Supports(CollectiveAlgorithm::kCollNet, CollectiveOp::kAllGather));
  CHECK(Supports(CollectiveAlgorithm::kCollNet, CollectiveOp::kReduceScatter));
  CHECK_FALSE(Supports(CollectiveAlgorithm::kCollNet, CollectiveOp::kAllToAll));
}

absl::StatusOr<CollectiveResult> Collective(const topology::Topology& topo, CollectiveOp op, int n, int64_t bytes,
                                            int32_t chunks) {
  return testing::SimulateOnFirstGpus(topo, op, n, bytes, CollectiveAlgorithm::kCollNet, chunks);
}

// CollNet's all-gather (the switches gather each rail's segment across the nodes, then its head broadcasts
// it in the node) and reduce-scatter (a scatter to the heads, then the switches' reduce-scatter): two
// stages on their own links, pipelined over C chunks,
//   t_net = a_net + (N-1) S/(N g C R),  t_nvl = a + (g-1) S/(gCB),
//   time = t_net + t_nvl + (C-1) max(t_net, t_nvl)
// where a ring across the n = N g GPUs moves (n-1)/n S/g through each NIC in n-1 steps.
TEST_CASE("collnet all-gather and reduce-scatter: t_net + t_nvl + (C-1) max(t_net, t_nvl)", "[collectives][collnet]") {
  const double B = GbpsToBytesPerSecond(3600), R = GbpsToBytesPerSecond(400);
  const double a = kNvlinkLatency, a_net = kNetLatency;
  const auto topo = *hetsim::testing::BuildTopology(SharpIsland(4, true));
  const int64_t bytes = kGiB;
  for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
    for (int32_t chunks : {1, 4, 16}) {
      INFO(CollectiveOpName(op) << ", " << chunks << " chunks");
      const auto r = Collective(topo, op, 32, bytes, chunks);
      INFO(r.status().message());
      REQUIRE(r.ok());
      const double t_net = a_net + 3.0 * bytes / (4 * 8.0 * chunks * R);
      const double t_nvl = a + 7.0 * bytes / (8.0 * chunks * B);
      const double expected = t_net + t_nvl + (chunks - 1) * std::max(t_net, t_nvl);
      CHECK(CollNetAllGatherSeconds(8, 4, Bytes(bytes), Bandwidth(B), Seconds(a), Bandwidth(R), Seconds(a_net), chunks)
                .value() == Approx(expected).epsilon(1e-9));
      CHECK(r->estimates.at(0).seconds.value() == Approx(expected).epsilon(1e-6));
      CHECK(TimeToSeconds(r->time) == Approx(expected).epsilon(1e-3));
    }
    // The default cuts 1 GiB's 128 MiB segments into 64 chunks, and beats the ring across the 32 GPUs,
    // whose NICs carry (n-1)/n S/g where CollNet's carry (N-1)/N S/g and the NVLink runs beside them.
    const auto best = Collective(topo, op, 32, bytes, 0);
    REQUIRE(best.ok());
    CHECK(best->shape.chunks == 64);
    topology::Router router(topo);
    CollectiveRequest req;
    req.op = op;
    req.gpus = Range(32);
    req.bytes = bytes;
    req.algorithm = CollectiveAlgorithm::kRing;
    const auto ring = SimulateCollective(topo, router, req, network::NetworkMode::kMaxMinFair);
    REQUIRE(ring.ok());
    CHECK(best->time < ring->time);
  }
  // NCCL runs them with a NIC per GPU only.
  v1::Cluster half = SharpIsland(4, true);
  half.mutable_islands(0)->set_nics_per_node(4);
  const auto shared_nics = *hetsim::testing::BuildTopology(half);
  const auto refused = Collective(shared_nics, CollectiveOp::kAllGather, 32, bytes, 0);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains("a NIC for every GPU"));
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
  CHECK(TimeToSeconds(r->time) == Approx(r->estimates.at(0).seconds.value()).epsilon(0.02));
}

// NCCL's tuner derates CollNetDirect's all-reduce to 0.85 of its bandwidth on compute capability 9.0 and
// later (src/graph/tuning.cc, NVIDIA/nccl 5067397: `if (minCompCap >= 90) busBw *= .85`), the generation
// read from the GPU type's preset: an H100-SXM island's 1 GiB all-reduce moves its bytes at 0.85 of the
// rate of the same island whose GPU type names no preset (its NCCL figures the same as H100's and B200's);
// the all-gather is not derated.
TEST_CASE("collnet: NCCL's 0.85 on Hopper's all-reduce, from the GPU preset", "[collectives][collnet]") {
  const auto time = [](const char* preset, CollectiveOp op) {
    v1::Cluster c = SharpIsland(4, true);
    c.set_ideal(false);
    c.mutable_gpu_types(0)->set_preset(preset);
    const auto topo = *hetsim::testing::BuildTopology(c);
    const auto r = testing::SimulateOnFirstGpus(topo, op, 32, kGiB, CollectiveAlgorithm::kCollNet, 0);
    REQUIRE(r.ok());
    CHECK(TimeToSeconds(r->time) == Approx(r->estimates.at(0).seconds.value()).epsilon(0.02));
    return TimeToSeconds(r->time - r->shape.launch_latency);
  };
  const double none = time("", CollectiveOp::kAllReduce);
  CHECK(time("H100-SXM", CollectiveOp::kAllReduce) == Approx(none / 0.85).epsilon(0.01));
  CHECK(time("B200", CollectiveOp::kAllReduce) == Approx(none / 0.85).epsilon(0.01));
  CHECK(time("H100-SXM", CollectiveOp::kAllGather) == Approx(time("", CollectiveOp::kAllGather)).epsilon(1e-6));
}

}  // namespace
}  // namespace hetsim::collectives
