// Helpers the collective tests share: a simulation that must succeed, a transfer graph run alone, and
// relative gaps.
#ifndef HETSIM_TESTS_COLLECTIVES_TEST_UTIL_H_
#define HETSIM_TESTS_COLLECTIVES_TEST_UTIL_H_

#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>

#include "base/time.h"
#include "sim/collectives/execution.h"
#include "sim/collectives/simulate.h"
#include "sim/engine/simulator.h"
#include "tests/base/time_io.h"
#include "tests/sim/collectives/collectives_star.h"

namespace hetsim::testing {

// The collective simulated on `topo`; the test fails, with the status, if it cannot run.
inline collectives::CollectiveResult SimulateOk(const topology::Topology& topo, topology::Router& router,
                                                const collectives::CollectiveRequest& req,
                                                network::NetworkMode mode = network::NetworkMode::kMaxMinFair) {
  auto r = collectives::SimulateCollective(topo, router, req, mode);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return *r;
}

// `g` alone on a fresh network of `topo`, from its start to its last transfer's end; `flows`, when
// given, receives the network flows it started.
inline Time RunGraph(const topology::Topology& topo, topology::Router& router, const collectives::TransferGraph& g,
                     network::NetworkMode mode = network::NetworkMode::kMaxMinFair, uint64_t* flows = nullptr) {
  engine::Simulator sim;
  auto network = network::Network::Create(&sim, collectives::NetworkLinks(topo), mode);
  REQUIRE(network.ok());
  collectives::CollectiveExecution run(network->get(), &router, &g);
  REQUIRE(run.Start(&sim).ok());
  sim.Run();
  REQUIRE(run.done());
  if (flows != nullptr) *flows = run.flows();
  return run.finish_time() - run.start_time();
}

// |a - b| relative to the larger of the two.
inline double RelativeGap(Time a, Time b) {
  return std::abs(TimeToPicosecondsDouble(a - b)) / TimeToPicosecondsDouble(std::max(a, b));
}

// `op` of `bytes` over GPUs 0..n-1 of `topo` with `algorithm` (and `chunks`; 0 = chosen from the size),
// max-min fair; the status is the caller's to check (the algorithm may refuse the group).
inline absl::StatusOr<collectives::CollectiveResult> SimulateOnFirstGpus(const topology::Topology& topo,
                                                                         CollectiveOp op, int n, int64_t bytes,
                                                                         collectives::CollectiveAlgorithm algorithm,
                                                                         int32_t chunks = 0) {
  topology::Router router(topo);
  collectives::CollectiveRequest req;
  req.op = op;
  req.gpus = Range(n);
  req.bytes = bytes;
  req.algorithm = algorithm;
  req.chunks = chunks;
  return collectives::SimulateCollective(topo, router, req, network::NetworkMode::kMaxMinFair);
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_COLLECTIVES_TEST_UTIL_H_
