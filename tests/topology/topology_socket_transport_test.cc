// NCCL's socket transport on an ETHERNET island: a NIC shared by all GPUs of a node, and the TCP
// streams of a connection (NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD x one stream's rate) capping
// what the island's links carry.
#include <catch2/catch.hpp>

#include "base/units.h"
#include "proto/validate_cluster.h"
#include "tests/service/driver/build_topology.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim::topology {
namespace {

// 2 nodes of 8 GPUs, one 100 Gb/s Ethernet NIC per node; the NCCL model on (not ideal).
v1::Cluster CloudIsland(uint32_t threads, uint32_t sockets, double stream_gbps) {
  v1::Cluster c;
  c.set_name("cloud");
  testing::AddGpuType(c, "G", 312, 80, 2039);
  c.mutable_gpu_types(0)->mutable_efficiency()->set_max_efficiency(0.7);
  testing::AddNodeType(c, "n", "G", 8, 2400, 1000);
  testing::AddIsland(c,
                     {.name = "a", .node_type = "n", .nodes = 2, .nics = 1, .nic_gbps = 100, .fabric = v1::ETHERNET});
  v1::Island& is = *c.mutable_islands(0);
  is.set_nccl_socket_threads(threads);
  is.set_nccl_sockets_per_thread(sockets);
  is.set_tcp_stream_gbps(stream_gbps);
  return c;
}

double NicUplinkGbps(const v1::Cluster& c) {
  auto t = hetsim::testing::BuildTopology(c);
  REQUIRE(t.ok());
  // One NIC per node: all 8 GPUs of node 0 reach the fabric through the same link.
  CHECK(t->nic_of(GpuId(0)) == t->nic_of(GpuId(7)));
  return t->link(t->nic_uplink(t->nic_of(GpuId(0)))).bandwidth.bytes_per_second() * 8 / 1e9;
}

TEST_CASE("TCP streams cap an Ethernet island's NIC below the NCCL efficiency's share", "[topology][sockets]") {
  REQUIRE(proto::ValidateCluster(CloudIsland(2, 2, 10), "c.pbtxt").ok());
  // No per-stream limit: the ETHERNET preset, 80 of 100 Gb/s.
  CHECK(NicUplinkGbps(CloudIsland(0, 0, 0)) == Approx(80));
  // NCCL's default (the main thread, one stream) at a cloud's 10 Gb/s per-flow limit: 10 of 100.
  CHECK(NicUplinkGbps(CloudIsland(0, 0, 10)) == Approx(10));
  CHECK(NicUplinkGbps(CloudIsland(2, 2, 10)) == Approx(40));
  // AWS's 2 x 8 streams carry more than the preset's share: the preset's 80 Gb/s.
  CHECK(NicUplinkGbps(CloudIsland(2, 8, 10)) == Approx(80));
}

TEST_CASE("socket transport and shared-NIC values that do not fit are refused with the field", "[topology][sockets]") {
  auto problem = [](const v1::Cluster& c) { return std::string(proto::ValidateCluster(c, "c.pbtxt").message()); };
  CHECK_THAT(problem(CloudIsland(17, 1, 10)),
             Catch::Contains("islands[0].nccl_socket_threads: 17 is more than NCCL's 16"));
  CHECK_THAT(problem(CloudIsland(16, 8, 10)),
             Catch::Contains("islands[0].nccl_sockets_per_thread: 16 threads x 8 sockets is more than NCCL's 64"));
  CHECK_THAT(problem(CloudIsland(2, 8, 0)), Catch::Contains("islands[0].tcp_stream_gbps: required with"));
  v1::Cluster ib = CloudIsland(0, 0, 10);
  ib.mutable_islands(0)->set_fabric(v1::INFINIBAND);
  CHECK_THAT(problem(ib), Catch::Contains("islands[0].tcp_stream_gbps: only meaningful with fabric ETHERNET"));
  v1::Cluster nics = CloudIsland(0, 0, 0);
  nics.mutable_islands(0)->set_nics_per_node(16);
  CHECK_THAT(problem(nics), Catch::Contains("islands[0].nics_per_node: 16 NICs for 8 GPUs per node"));
}

}  // namespace
}  // namespace hetsim::topology
