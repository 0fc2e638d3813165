// Helpers the collective tests share: a simulation that must succeed, and relative gaps.
#ifndef HETSIM_TESTS_COLLECTIVES_TEST_UTIL_H_
#define HETSIM_TESTS_COLLECTIVES_TEST_UTIL_H_

#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>

#include "base/time.h"
#include "sim/collectives/simulate.h"

namespace hetsim::testing {

// The collective simulated on `topo`; the test fails, with the status, if it cannot run.
inline sim::CollectiveResult SimulateOk(const topology::Topology& topo, topology::Router& router,
                                        const sim::CollectiveRequest& req,
                                        sim::NetworkMode mode = sim::NetworkMode::kMaxMinFair) {
  auto r = sim::SimulateCollective(topo, router, req, mode);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return *r;
}

// |a - b| relative to the larger of the two.
inline double RelativeGap(Time a, Time b) {
  return std::abs(static_cast<double>(a - b)) / static_cast<double>(std::max(a, b));
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_COLLECTIVES_TEST_UTIL_H_
