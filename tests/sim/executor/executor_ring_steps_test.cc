// The opt-in approximation `run --ring-steps aggregated` against the full simulation on a 256-GPU
// plan small enough to run both: gradient-synchronisation rings with one flow per ring edge for all
// steps give the iteration time within the bound docs/performance.md states, and the report names it.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/executor/executor.h"
#include "sim/executor/setup.h"
#include "tests/sim/executor/executor_test_util.h"
#include "tests/topology/topology_clusters.h"
#include "traces/metrics.h"

namespace hetsim {
namespace {

TEST_CASE("ring-steps aggregated: gradient sync within 1% of the full simulation at 256 GPUs", "[executor][approx]") {
  const auto setup = testing::MakeSetup(testing::Gpt256(testing::H100Island(32, v1::FAT_TREE, 8, 8, 2)),
                                        network::NetworkMode::kMaxMinFair);
  executor::ExecutorOptions full, approx;
  approx.grad_sync_ring_steps = collectives::RingSteps::kAggregated;
  auto exact = executor::Execute(*setup, full);
  auto fast = executor::Execute(*setup, approx);
  REQUIRE(exact.ok());
  REQUIRE(fast.ok());
  CHECK(fast->flows < exact->flows);
  // The pipeline itself is the same DAG; only the overlapped gradient sync and what it delays move.
  const double a = TimeToPicosecondsDouble(exact->iteration_time), b = TimeToPicosecondsDouble(fast->iteration_time);
  INFO("full " << a << " ps, aggregated " << b << " ps");
  CHECK(std::abs(b - a) / a <= 0.01);
  traces::ReportOptions options;
  options.approximations = {"aggregated ring steps"};
  const v1::Report report = traces::BuildReport(*setup, *fast, options);
  REQUIRE(report.approximations_size() == 1);
  CHECK(traces::BuildReport(*setup, *exact).approximations_size() == 0);
}

}  // namespace
}  // namespace hetsim
