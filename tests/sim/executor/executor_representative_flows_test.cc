// The opt-in approximation `run --boundary-flows representative` (sim/executor/representative_flows.h)
// against the full simulation: the groups on a hand-checkable fabric, exactness where the fabric is
// symmetric, and the error bound docs/performance.md states where ECMP collisions make it approximate.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "sim/executor/executor.h"
#include "sim/executor/representative_flows.h"
#include "sim/executor/setup.h"
#include "tests/sim/executor/executor_test_util.h"
#include "tests/topology/topology_clusters.h"
#include "traces/metrics.h"

namespace hetsim {
namespace {

using executor::BoundaryFlows;
using executor::RepresentativeFlow;

executor::ExecutorOptions Representative() {
  executor::ExecutorOptions o;
  o.boundary_flows = BoundaryFlows::kRepresentative;
  return o;
}

TEST_CASE("representative flows: one per TP rank, standing for the 16 replicas", "[executor][approx]") {
  // One non-blocking switch: GPU j of a node sends through its own NIC j, so every link of a
  // representative's route carries its flow alone and every weight is 1.
  const auto setup = testing::MakeSetup(testing::Gpt256(testing::H100Island(32)), network::NetworkMode::kMaxMinFair);
  const auto& flows = setup->boundaries[0].forward_flows;
  REQUIRE(flows.size() == 128);  // 16 replicas x 8 TP pieces
  const std::vector<RepresentativeFlow> reps = executor::RepresentativeFlows(*setup->topology, flows);
  REQUIRE(reps.size() == 8);
  std::set<int32_t> covered;
  for (const RepresentativeFlow& r : reps) {
    CHECK(r.members.size() == 16);
    CHECK(r.weights.size() == flows[r.flow].route.size());
    for (double w : r.weights) CHECK(w == 1.0);
    for (int32_t m : r.members) {
      CHECK(flows[m].bytes == flows[r.flow].bytes);
      CHECK(covered.insert(m).second);  // every flow in exactly one group
    }
  }
  CHECK(covered.size() == flows.size());
}

TEST_CASE("representative flows: exact on a symmetric fabric", "[executor][approx]") {
  const auto setup = testing::MakeSetup(testing::Gpt256(testing::H100Island(32)), network::NetworkMode::kMaxMinFair);
  const auto full = testing::MakeRun(*setup);
  const auto fast = testing::MakeRun(*setup, Representative());
  CHECK(fast.flows < full.flows);
  CHECK(fast.iteration_time == full.iteration_time);
}

TEST_CASE("representative flows: within 1% of the full simulation on a 2:1 fat tree", "[executor][approx]") {
  // 8 nodes per leaf at 2:1: a boundary's 64 flows per leaf share its uplinks, spread by ECMP.
  const auto setup = testing::MakeSetup(testing::Gpt256(testing::H100Island(32, v1::FAT_TREE, 8, 8, 2)),
                                        network::NetworkMode::kMaxMinFair);
  const std::vector<RepresentativeFlow> reps =
      executor::RepresentativeFlows(*setup->topology, setup->boundaries[0].forward_flows);
  bool shared = false;  // some representative stands for several flows on a leaf uplink
  for (const RepresentativeFlow& r : reps) {
    for (double w : r.weights) shared = shared || w > 1;
  }
  CHECK(shared);
  const auto full = testing::MakeRun(*setup);
  const auto fast = testing::MakeRun(*setup, Representative());
  // 16 transfers (8 microbatches, forward and backward) of 128 flows each run as 8.
  CHECK(full.flows - fast.flows == 16 * (128 - 8));
  const double a = TimeToPicosecondsDouble(full.iteration_time), b = TimeToPicosecondsDouble(fast.iteration_time);
  INFO("full " << a << " ps, representative " << b << " ps");
  CHECK(std::abs(b - a) / a <= 0.01);
  traces::ReportOptions options;
  options.approximations = {"representative boundary flows"};
  CHECK(traces::BuildReport(*setup, fast, options).approximations_size() == 1);
}

}  // namespace
}  // namespace hetsim
