// The default representative flat double tree (CollectiveRequest::representative_by_default;
// docs/decisions.md, "Representative trees by default"): a test suite of shapes where it applies
// (sizes of group and buffer, fat trees of 4 and 16 nodes per leaf, one switch), each held within
// 0.5% of the full simulation, and the shapes where it must not apply (oversubscribed fabric, part of a
// node, a stepped tree, the rule turned off as --exact does) left to the full simulation.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/collectives/simulate.h"
#include "tests/service/driver/build_topology.h"
#include "tests/sim/collectives/collectives_test_util.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim::collectives {
namespace {

using testing::H100Island;
using testing::RelativeGap;
using testing::SimulateOk;

CollectiveRequest DefaultRepTreeRequest(int gpus, int64_t bytes, bool by_default) {
  CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  for (int g = 0; g < gpus; ++g) req.gpus.push_back(GpuId(g));
  req.bytes = bytes;
  req.algorithm = CollectiveAlgorithm::kTree;
  req.ring_steps = RingSteps::kAggregated;  // the size at which the default applies, at test scale
  req.representative_by_default = by_default;
  return req;
}

struct DefaultRepShape {
  int nodes;
  v1::FabricTopology topology;
  int nodes_per_leaf;
  int gpus;  // the group: the first `gpus` GPUs
};

TEST_CASE("default representative tree: within 0.5% of the full simulation on every measured shape") {
  const DefaultRepShape shapes[] = {
      {16, v1::FAT_TREE, 4, 128},  {24, v1::FAT_TREE, 4, 192},  {32, v1::FAT_TREE, 16, 256},
      {64, v1::FAT_TREE, 16, 512}, {64, v1::FAT_TREE, 16, 256}, {16, v1::SINGLE_SWITCH, 0, 128},
  };
  double worst = 0;
  for (const DefaultRepShape& s : shapes) {
    const auto topo = *hetsim::testing::BuildTopology(H100Island(s.nodes, s.topology, 8, s.nodes_per_leaf, 1));
    topology::Router router(topo);
    for (int64_t bytes : {int64_t{64} << 20, int64_t{1} << 30}) {
      const CollectiveResult full = SimulateOk(topo, router, DefaultRepTreeRequest(s.gpus, bytes, false));
      const CollectiveResult rep = SimulateOk(topo, router, DefaultRepTreeRequest(s.gpus, bytes, true));
      INFO(s.nodes << " nodes, " << s.nodes_per_leaf << " per leaf, " << s.gpus << " GPUs, " << bytes << " B");
      CHECK_FALSE(full.shape.representative);
      CHECK(rep.shape.representative);
      CHECK(rep.shape.representative_by_default);
      CHECK(rep.shape.chunks == full.shape.chunks);
      CHECK(rep.flows < full.flows);
      const double gap = RelativeGap(rep.time, full.time);
      CHECK(gap < 0.005);
      worst = std::max(worst, gap);
    }
  }
  CHECK(worst < 0.005);
}

TEST_CASE("default representative tree: not on an oversubscribed fabric, part of a node, a stepped tree, --exact") {
  const auto over = *hetsim::testing::BuildTopology(H100Island(16, v1::FAT_TREE, 8, 4, 4));
  topology::Router over_router(over);
  CHECK_FALSE(SimulateOk(over, over_router, DefaultRepTreeRequest(128, int64_t{1} << 30, true)).shape.representative);

  const auto topo = *hetsim::testing::BuildTopology(H100Island(16, v1::FAT_TREE, 8, 4, 1));
  topology::Router router(topo);
  CollectiveRequest half_nodes = DefaultRepTreeRequest(0, int64_t{1} << 30, true);
  for (int node = 0; node < 16; ++node) {
    for (int l = 0; l < 4; ++l) half_nodes.gpus.push_back(GpuId(node * 8 + l));
  }
  CHECK_FALSE(SimulateOk(topo, router, half_nodes).shape.representative);
  CollectiveRequest stepped = DefaultRepTreeRequest(128, int64_t{1} << 30, true);
  stepped.ring_steps = RingSteps::kStepped;
  CHECK_FALSE(SimulateOk(topo, router, stepped).shape.representative);
  CHECK_FALSE(SimulateOk(topo, router, DefaultRepTreeRequest(128, int64_t{1} << 30, false)).shape.representative);
}

}  // namespace
}  // namespace hetsim::collectives
