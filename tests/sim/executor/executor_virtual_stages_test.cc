// Interleaved 1F1B's virtual stages take the model's layers in order (pipeline::VirtualStageLayers):
// virtual stage k + 1 starts where k ends, every layer is run once, and stages whose layer count is
// not a multiple of the chunk count get near-equal chunks instead of losing layers.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "service/driver/build_setup.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"
#include "sim/pipeline/dag.h"
#include "tests/base/time_io.h"
#include "tests/sim/executor/executor_test_util.h"

namespace hetsim::testing {
namespace {

using driver::BuildSetup;

// Validated inputs of a plain 1F1B plan turned interleaved afterwards: the plan validation (which
// today also asks for layer counts divisible by virtual_stages) is not what keeps layers in place.
hetsim::proto::PlanInputs InterleavedAfterValidation(const v1::Cluster& cluster, const v1::Plan& plan, int chunks) {
  hetsim::proto::PlanInputs in = hetsim::testing::MakeInputs(cluster, plan);
  in.plan.set_schedule(v1::INTERLEAVED_1F1B);
  in.plan.set_virtual_stages(chunks);
  return in;
}

std::vector<StageSpec> TwoStages(int layers0, int layers1) {
  return {{"fast", 0, 0, 1, 1, 1, 2.0, 4.0, layers0}, {"fast", 1, 0, 1, 1, 1, 2.0, 4.0, layers1}};
}

TEST_CASE("interleaved: virtual stages run the model's layers in order, each once", "[executor][interleaved]") {
  const v1::Cluster cluster = TwoIslandCluster(2, 2, 10, 1000);
  // 4 + 4 layers, 2 chunks: k = 0..3 run layers 0-1, 2-3, 4-5, 6-7 (stage 0 holds 0-1 and 4-5).
  const auto in = hetsim::testing::MakeInputs(cluster, MakePlan(TwoStages(4, 4), 4, v1::INTERLEAVED_1F1B, 1000, 1, 2));
  auto setup = BuildSetup(in, NetworkMode::kContentionFree);
  REQUIRE(setup.ok());
  const auto& vs = (*setup)->virtual_stages;
  REQUIRE(vs.size() == 4);
  for (int k = 0; k < 4; ++k) {
    INFO("virtual stage " << k);
    CHECK(vs[k].first_layer == 2 * k);
    CHECK(vs[k].num_layers == 2);
    // A measured 2 ms / 4 ms stage is split evenly over its two chunks.
    CHECK(vs[k].cost.forward_time == hetsim::kMillisecond);
    CHECK(vs[k].cost.backward_time == 2 * hetsim::kMillisecond);
  }
}

TEST_CASE("interleaved: a stage whose layers do not divide by the chunks loses none", "[executor][interleaved]") {
  const v1::Cluster cluster = TwoIslandCluster(2, 2, 10, 1000);
  // 5 + 4 layers, 2 chunks: stage 0 gets chunks of 3 and 2 layers, stage 1 of 2 and 2; in model
  // order k = 0..3 run layers 0-2, 3-4, 5-6, 7-8.
  const auto in = InterleavedAfterValidation(cluster, MakePlan(TwoStages(5, 4), 4, v1::ONE_F_ONE_B, 1000), 2);
  auto setup = BuildSetup(in, NetworkMode::kContentionFree);
  INFO(setup.status().message());
  REQUIRE(setup.ok());
  const auto& vs = (*setup)->virtual_stages;
  REQUIRE(vs.size() == 4);
  const int first[] = {0, 3, 5, 7}, count[] = {3, 2, 2, 2};
  int total = 0;
  for (int k = 0; k < 4; ++k) {
    INFO("virtual stage " << k);
    CHECK(vs[k].first_layer == first[k]);
    CHECK(vs[k].num_layers == count[k]);
    total += vs[k].num_layers;
  }
  CHECK(total == 9);
  // Stage 0's measured 2 ms forward is shared 3:2 by its chunks: 1.2 ms and 0.8 ms.
  CHECK(vs[0].cost.forward_time == 1200 * hetsim::kMicrosecond);
  CHECK(vs[2].cost.forward_time == 800 * hetsim::kMicrosecond);
  // And the iteration runs.
  auto run = hetsim::executor::Execute(**setup, {});
  REQUIRE(run.ok());
  CHECK(run->pipeline_end == hetsim::pipeline::AnalyzeLongestPath(*(*setup)->dag, (*setup)->durations).iteration_time);
}

}  // namespace

}  // namespace hetsim::testing
