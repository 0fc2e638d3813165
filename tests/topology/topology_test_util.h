// Counting helpers the topology tests share.
#ifndef HETSIM_TESTS_TOPOLOGY_TEST_UTIL_H_
#define HETSIM_TESTS_TOPOLOGY_TEST_UTIL_H_

#include "topology/device_graph.h"

namespace hetsim::testing {

// How many devices of `kind` the topology has.
inline int CountKind(const topology::Topology& t, topology::DeviceKind kind) {
  int n = 0;
  for (const auto& d : t.devices()) n += d.kind == kind;
  return n;
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_TOPOLOGY_TEST_UTIL_H_
