// Plan.deepspeed_timer_syncs: DeepSpeed's wall_clock_breakdown timers before 0.6.2 call
// torch.cuda.synchronize() at every start and stop, each a host round trip of idle GPU (the GPU type's
// sync_round_trip_us), per microbatch around the pipeline instructions (docs/cost-model.md, "DeepSpeed's
// synchronising timers"). Closed forms, with counts 1, 2, 4, 8, 16 (load, forward, backward, last stage's
// backward, each transfer) so that every position's sum is unique: the first stage loads, sends activations
// and receives gradients (forward 1 + 2 + 16, backward 4 + 16); a middle stage receives and sends both ways
// (2 + 32, 4 + 32); the last stage receives activations, loads the labels and sends gradients, its backward
// DeepSpeedEngine.backward's (1 + 2 + 16, 8 + 16); a lone stage loads once and has no transfer (1 + 2, 8).
#include <catch2/catch.hpp>

#include <utility>

#include "proto/gpu_presets.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/proto/model_shapes.h"

namespace {

using namespace hetsim::workload;

constexpr double kRoundTripUs = 76.5;  // the AMP clusters' p3.8xlarge figure (any value would do)

GpuCompute V100WithRoundTrip() {
  hetsim::v1::GpuType g;
  g.set_preset("V100-16GB");
  g.mutable_efficiency()->set_sync_round_trip_us(kRoundTripUs);
  REQUIRE(hetsim::proto::ApplyGpuPreset(&g, "c", "gpu").ok());
  auto c = hetsim::testing::GpuComputeOf(g, hetsim::v1::FP16, "c", false);
  REQUIRE(c.ok());
  return *std::move(c);
}

StageCost TimedCostOf(const ModelCost& model, int first, int count, bool timed) {
  StageConfig c = hetsim::testing::AmpStageConfig(first, count, 1);
  if (timed) {
    c.timer_syncs = {
        .load_micro_batch = 1, .forward_pass = 2, .backward_pass = 4, .last_backward_pass = 8, .pipe_transfer = 16};
  }
  return hetsim::testing::StageCostOk(model, c, V100WithRoundTrip());
}

}  // namespace

TEST_CASE("deepspeed_timer_syncs: each timer sync a round trip, counted by the stage's pipeline instructions",
          "[workload][amp]") {
  // AmpGpt2(4): layer 0 the embedding, 1-4 the blocks, 5 the tied head.
  const auto model = hetsim::testing::ModelCostOf(hetsim::testing::AmpGpt2(4), "model.pbtxt");
  REQUIRE(model.ok());
  REQUIRE(model->num_layers() == 6);
  struct Expect {
    const char* stage;
    int first, count, forward_syncs, backward_syncs;
  };
  for (const Expect e : {Expect{"first", 0, 2, 1 + 2 + 16, 4 + 16}, Expect{"middle", 2, 2, 2 + 2 * 16, 4 + 2 * 16},
                         Expect{"last", 4, 2, 1 + 2 + 16, 8 + 16}, Expect{"lone", 0, 6, 1 + 2, 8}}) {
    INFO(e.stage);
    const StageCost plain = TimedCostOf(*model, e.first, e.count, false);
    const StageCost timed = TimedCostOf(*model, e.first, e.count, true);
    // Time is in whole picoseconds: each pass rounds once.
    CHECK(hetsim::TimeToSeconds(timed.forward_time - plain.forward_time) ==
          Approx(e.forward_syncs * kRoundTripUs * 1e-6).margin(2e-12));
    CHECK(hetsim::TimeToSeconds(timed.backward_time - plain.backward_time) ==
          Approx(e.backward_syncs * kRoundTripUs * 1e-6).margin(2e-12));
    // The GPU's work is unchanged: the syncs are idle time.
    CHECK(timed.forward_flop_per_gpu == plain.forward_flop_per_gpu);
    CHECK(timed.backward_flop_per_gpu == plain.backward_flop_per_gpu);
  }
}
