// Shared by the collectives tests: GPU id ranges and the star network on which the ring, tree and
// broadcast closed forms are exact.
#ifndef HETSIM_TESTS_COLLECTIVES_STAR_H_
#define HETSIM_TESTS_COLLECTIVES_STAR_H_

#include <numeric>
#include <vector>

#include "base/units.h"
#include "tests/service/driver/build_topology.h"
#include "tests/topology/topology_clusters.h"
#include "topology/device_graph.h"
#include "topology/routing.h"

namespace hetsim::testing {

inline std::vector<GpuId> Range(int n, int first = 0) {
  std::vector<GpuId> v;
  for (int g = first; g < first + n; ++g) v.emplace_back(g);
  return v;
}

// n nodes with one GPU and one 400 Gb/s NIC on one switch: every GPU pair is a uniform path with
// B = 50 GB/s and a = 500 + (500 + 200) ns.
struct Star {
  explicit Star(int n) : topo(*hetsim::testing::BuildTopology(H100Island(n, v1::SINGLE_SWITCH, 1))), router(topo) {}
  topology::Topology topo;
  topology::Router router;
  const double B = GbpsToBytesPerSecond(400);
  const double a = 1200e-9;
};

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_COLLECTIVES_STAR_H_
