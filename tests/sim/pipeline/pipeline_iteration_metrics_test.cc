// The iteration figures the run report and the planner's prediction share
// (sim/pipeline/iteration_metrics.h), on inputs small enough to work out by hand.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/pipeline/iteration_metrics.h"
#include "tests/base/time_io.h"

namespace {

namespace pl = hetsim::pipeline;
using hetsim::Time;

constexpr Time kMs = 1'000'000'000_ps;  // picoseconds per millisecond

TEST_CASE("MFU: model FLOPs over iteration seconds times the summed peak", "[pipeline][metrics]") {
  // 2.4e12 FLOP in 0.027 s on 1e14 + 3e14 FLOP/s: 2.4e12 / (0.027 * 4e14) = 2/9.
  CHECK(pl::Mfu(2.4e12, 0.027, 4e14) == Approx(2.0 / 9.0).epsilon(1e-15));
  CHECK(pl::Mfu(1e12, 0, 1e14) == 0);
  CHECK(pl::Mfu(1e12, 1, 0) == 0);
}

TEST_CASE("bubble ratio: 1 - busy / (stages x span)", "[pipeline][metrics]") {
  // Busy {6, 3} over a span of 8: 1 - 9 / 16 = 7/16.
  CHECK(pl::BubbleRatio(std::vector<double>{6, 3}, 8) == Approx(7.0 / 16.0).epsilon(1e-15));
  CHECK(pl::BubbleRatio(std::vector<double>{}, 8) == 0);
  CHECK(pl::BubbleRatio(std::vector<double>{1}, 0) == 0);
}

TEST_CASE("iteration metrics of a two-stage iteration worked out by hand", "[pipeline][metrics]") {
  // 8 samples of 1024 tokens, 4.8e12 model FLOPs, in 40 ms; the pipeline ends at 32 ms.
  // Stage 0: 2 GPUs at 1e15 FLOP/s busy 24 ms; stage 1: 1 GPU at 2e15 FLOP/s busy 12 ms.
  pl::IterationFigures f;
  f.work = {8, 1024, 4.8e12};
  f.iteration_time = 40 * kMs;
  f.span = 32 * kMs;
  f.stages = {{24 * kMs, 2, 1e15}, {12 * kMs, 1, 2e15}};
  const pl::IterationMetrics m = pl::ComputeIterationMetrics(f);
  CHECK(m.seconds == Approx(0.04).epsilon(1e-15));
  CHECK(m.samples_per_s == Approx(200).epsilon(1e-15));    // 8 / 0.04
  CHECK(m.tokens_per_s == Approx(204800).epsilon(1e-15));  // 8 * 1024 / 0.04
  CHECK(m.model_flop == 4.8e12);
  CHECK(m.mfu == Approx(0.03).epsilon(1e-15));                 // 4.8e12 / (0.04 * 4e15)
  CHECK(m.model_tflops_per_gpu == Approx(40).epsilon(1e-15));  // 4.8e12 / 0.04 / 3 / 1e12
  CHECK(m.bubble_ratio == Approx(0.4375).epsilon(1e-15));      // 1 - (24 + 12) / (2 * 32)
  // Eq. 25 over GPUs {24, 24, 12} ms with peaks {1, 1, 2}e15: 1 - 12 * 2 / (24 * 4) = 0.75.
  CHECK(m.eta == Approx(0.75).epsilon(1e-15));
}

TEST_CASE("iteration metrics: an iteration that took no time has no throughput", "[pipeline][metrics]") {
  pl::IterationFigures f;
  f.work = {8, 1024, 1e12};
  f.stages = {{0, 1, 1e15}};
  const pl::IterationMetrics m = pl::ComputeIterationMetrics(f);
  CHECK(m.samples_per_s == 0);
  CHECK(m.tokens_per_s == 0);
  CHECK(m.mfu == 0);
  CHECK(m.model_tflops_per_gpu == 0);
  CHECK(m.bubble_ratio == 0);
  CHECK(m.eta == 1.0);
}

}  // namespace
