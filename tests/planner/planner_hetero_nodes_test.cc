// The planner's figures on the cluster shapes of issue 39 against closed forms: a ring over a node
// with NVLink bridges waits for its PCIe hops; on a no_p2p node each hop is an SHM connection and the
// rings share the host memory (min(B_PCIe, M / 2n, C)); two islands on one flat network reach each
// other through every sending NIC.
#include <catch2/catch.hpp>

#include "base/spec/cluster.h"
#include "base/units.h"
#include "planner/cluster_model.h"
#include "proto/validate_cluster.h"
#include "sim/collectives/simulate.h"
#include "tests/base/time_io.h"
#include "tests/planner/planner_test_util.h"
#include "topology/routing.h"

namespace hetsim::planner {
namespace {

// examples/cluster-lab-pcie.pbtxt at line rate: island 0 has 8 RTX 4090 per node (no_p2p, one
// socket, 204.8 GB/s of host memory), island 1 has 4 RTX A6000 per node in NVLink-bridged pairs; PCIe
// 252 Gb/s, bridges 450 Gb/s, both islands on one 100 Gb/s network with one NIC per node.
// `shm_gbytes_per_s` > 0 sets the RTX 4090 nodes' SHM connection (0: NCCL's SHM/direct default).
absl::StatusOr<std::unique_ptr<ClusterModel>> LabPcieModel(double shm_gbytes_per_s = 0) {
  HETSIM_ASSIGN_OR_RETURN(v1::Cluster cluster,
                          hetsim::proto::LoadCluster(HETSIM_SOURCE_DIR "/examples/cluster-lab-pcie.pbtxt"));
  cluster.set_ideal(true);
  cluster.mutable_node_types(0)->mutable_pcie()->set_shm_connection_gbytes_per_s(shm_gbytes_per_s);
  return testing::ClusterModelOf(cluster, spec::DType::kBf16);
}

constexpr double kPcieBps = 252e9 / 8;

TEST_CASE("hetero nodes: a ring over NVLink-bridged pairs runs at its PCIe hops", "[planner][hetero]") {
  auto model = LabPcieModel();
  REQUIRE(model.ok());
  const IslandModel& bridged = (*model)->island(1);
  // Two GPUs of one bridge: both hops are NVLinks.
  CHECK(bridged.IntraRing(2, 2).bytes_per_s == Approx(450e9 / 8).epsilon(1e-12));
  // Four GPUs: 1 -> 2 and 3 -> 0 cross PCIe; the node's figure is that ring's, not the pair's.
  CHECK(bridged.IntraRing(4, 4).bytes_per_s == Approx(kPcieBps).epsilon(1e-12));
  CHECK(bridged.intra_node.bytes_per_s == Approx(kPcieBps).epsilon(1e-12));
  // A TP-2 group per bridge on a fully busy node keeps its NVLinks.
  CHECK(bridged.IntraRing(2, 4).bytes_per_s == Approx(450e9 / 8).epsilon(1e-12));
}

TEST_CASE("hetero nodes: no_p2p rings share the host memory, min(B, M / 2n)", "[planner][hetero]") {
  // SHM connections as fast as copy engines (NCCL_SHM_USE_CUDA_MEMCPY): the memory binds.
  auto model = LabPcieModel(100);
  REQUIRE(model.ok());
  const IslandModel& no_p2p = (*model)->island(0);
  const double m = 204.8e9;
  for (int busy : {2, 4, 8}) {
    const double expected = std::min(kPcieBps, m / (2 * busy));
    CHECK(no_p2p.IntraRing(2, busy).bytes_per_s == Approx(expected).epsilon(1e-12));
    CHECK(no_p2p.IntraRing(busy, busy).bytes_per_s == Approx(expected).epsilon(1e-12));
  }
  CHECK(no_p2p.intra_node.bytes_per_s == Approx(m / 16).epsilon(1e-12));
}

TEST_CASE("hetero nodes: no_p2p rings at NCCL's SHM rate, 2 channels x 0.95 GB/s a hop", "[planner][hetero]") {
  auto model = LabPcieModel();
  REQUIRE(model.ok());
  const IslandModel& no_p2p = (*model)->island(0);
  const double shm = spec::kNcclPcieChannels * spec::kShmDirectChannelBytesPerS;
  CHECK(shm == Approx(1.9e9));
  for (int busy : {2, 4, 8}) {
    CHECK(shm < 204.8e9 / (2 * busy));  // the receivers' loads bind, not the memory
    CHECK(no_p2p.IntraRing(2, busy).bytes_per_s == Approx(shm).epsilon(1e-12));
    CHECK(no_p2p.IntraRing(busy, busy).bytes_per_s == Approx(shm).epsilon(1e-12));
  }
  CHECK(no_p2p.intra_node.bytes_per_s == Approx(shm).epsilon(1e-12));
}

// The planner's TP all-reduce of 256 MiB on the node's first `tp` GPUs against the simulated ring.
void CheckTensorAllReduceAgainstRing(const ClusterModel& model, int island, int first_gpu, int tp) {
  const int64_t bytes = int64_t{256} << 20;
  StageGroups groups;
  groups.shape = {1, tp};
  groups.tensor_parallel = tp;
  const workload::StageCollective c{
      .op = CollectiveOp::kAllReduce, .group = workload::CollectiveGroup::kTensor, .bytes = bytes, .count = 1};
  const Time predicted = model.CollectiveTime(island, groups, c);
  topology::Router router(model.topology());
  collectives::CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  for (int g = 0; g < tp; ++g) req.gpus.push_back(GpuId(first_gpu + g));
  req.bytes = bytes;
  req.algorithm = collectives::CollectiveAlgorithm::kRing;
  auto simulated = collectives::SimulateCollective(model.topology(), router, req);
  REQUIRE(simulated.ok());
  INFO("island " << island << " TP " << tp);
  CHECK(TimeToSeconds(predicted) == Approx(TimeToSeconds(simulated->time)).epsilon(0.03));
}

TEST_CASE("hetero nodes: the TP all-reduce matches the simulated ring", "[planner][hetero]") {
  auto model = LabPcieModel();
  REQUIRE(model.ok());
  for (int tp : {2, 4, 8}) CheckTensorAllReduceAgainstRing(**model, 0, 0, tp);
  for (int tp : {2, 4}) CheckTensorAllReduceAgainstRing(**model, 1, 16, tp);
}

TEST_CASE("hetero nodes: islands on one network cross through every sending NIC", "[planner][hetero]") {
  auto model = LabPcieModel();
  REQUIRE(model.ok());
  const LinkFigures& route = (*model)->BoundaryLink(0, 1);
  CHECK(route.bytes_per_s == Approx(100e9 / 8).epsilon(1e-12));
  const double bytes = 64.0 * (1 << 20);
  // Two sending nodes of one NIC each: two paths (one without the shared network).
  CHECK((*model)->BoundaryTime(0, 1, bytes, {2, 8}) ==
        route.latency + TransferTime(Bytes(bytes), Bandwidth(route.bytes_per_s * 2)));
  CHECK((*model)->BoundaryTime(1, 0, bytes, {1, 4}) ==
        route.latency + TransferTime(Bytes(bytes), Bandwidth(route.bytes_per_s)));
}

}  // namespace
}  // namespace hetsim::planner
