// ZeRO-3 gathers in lock-step (Plan.zero3_lock_step, sim/workload/gather_lock_step.h): every rank issues
// each layer's all-gather when it reaches the layer (with prefetch when it starts the layer before), on
// one stream, and the gather starts with the last rank's; against closed forms derived here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "base/time.h"
#include "sim/workload/gather_lock_step.h"
#include "tests/base/time_io.h"

namespace hetsim::testing {
namespace {

using workload::LockStepPassEnds;

Time Ms(int64_t ms) { return MillisecondsToTime(ms); }

std::vector<Time> Uniform(int layers, Time each) { return std::vector<Time>(static_cast<size_t>(layers), each); }

TEST_CASE("Two ranks in lock-step with prefetch: the slower paces every layer", "[executor][zero][lock_step]") {
  // Per layer a = 2 on the fast rank and b = 3 on the slow one, every gather G = 1, L = 4 layers. With
  // prefetch, layer i's gather is issued by each rank when it starts layer i - 1 and starts with the
  // slow rank's (one stream: never before the previous gather ended). The slow rank starts layer i at
  // G + i max(b, G) and ends at G + (L - 1) max(b, G) + b = 13, as alone. The fast rank's last layer
  // waits for the gather the slow rank issues when it starts layer L - 2: it ends at
  // G + (L - 2) max(b, G) + G + a = 10, where alone it would end at G + (L - 1) max(a, G) + a = 9.
  const Time a = Ms(2), b = Ms(3), G = Ms(1);
  const int L = 4;
  const std::vector<Time> ends = LockStepPassEnds({Uniform(L, a), Uniform(L, b)}, Uniform(L, G), true);
  CHECK(ends[1] == G + (L - 1) * std::max(b, G) + b);
  CHECK(ends[0] == G + (L - 2) * std::max(b, G) + G + a);
  // Each alone: the per-pass order's result (the fast rank's pass ends L max(a, G)-ish earlier).
  CHECK(LockStepPassEnds({Uniform(L, a)}, Uniform(L, G), true)[0] == G + (L - 1) * std::max(a, G) + a);
  CHECK(LockStepPassEnds({Uniform(L, b)}, Uniform(L, G), true)[0] == ends[1]);
}

TEST_CASE("Two ranks in lock-step without prefetch: each gather waits for the slower rank's layer",
          "[executor][zero][lock_step]") {
  // Without prefetch a rank issues layer i's gather when it ends layer i - 1: every gather starts when
  // the slow rank ends its layer, so the slow rank takes L (G + b) = 16 and the fast rank, whose last
  // layer starts when the last gather ends, (L - 1)(G + b) + G + a = 15; alone, L (G + a) = 12.
  const Time a = Ms(2), b = Ms(3), G = Ms(1);
  const int L = 4;
  const std::vector<Time> ends = LockStepPassEnds({Uniform(L, a), Uniform(L, b)}, Uniform(L, G), false);
  CHECK(ends[1] == L * (G + b));
  CHECK(ends[0] == (L - 1) * (G + b) + G + a);
  CHECK(LockStepPassEnds({Uniform(L, a)}, Uniform(L, G), false)[0] == L * (G + a));
}

TEST_CASE("Ranks slower on different layers pay the slowest of each layer, not of each pass",
          "[executor][zero][lock_step]") {
  // Rank 0 takes (a, b) on two layers, rank 1 (b, a), a = 1 < b = 3, G = 1, no prefetch. Layer 1's gather
  // is issued at G + a and G + b: it starts at G + b, and both ranks run layer 1 from 2G + b. Ends:
  // 2G + 2b = 8 and 2G + b + a = 6: the pass is 2G + 2b, where the per-pass order (each rank alone, the
  // stage waits for the slower) gives 2G + a + b = 6.
  const Time a = Ms(1), b = Ms(3), G = Ms(1);
  const std::vector<Time> ends = LockStepPassEnds({{a, b}, {b, a}}, {G, G}, false);
  CHECK(ends[0] == 2 * G + 2 * b);
  CHECK(ends[1] == 2 * G + b + a);
  CHECK(std::max(LockStepPassEnds({{a, b}}, {G, G}, false)[0], LockStepPassEnds({{b, a}}, {G, G}, false)[0]) ==
        2 * G + a + b);
  // With prefetch layer 1's gather is issued at each rank's start of layer 0 (G): it ends at 2G, and each
  // rank runs layer 1 after its layer 0: the ranks do not meet again, G + a + b each.
  const std::vector<Time> prefetched = LockStepPassEnds({{a, b}, {b, a}}, {G, G}, true);
  CHECK(prefetched[0] == G + a + b);
  CHECK(prefetched[1] == G + a + b);
}

TEST_CASE("A rank alone in lock-step is the per-pass price of its gathers", "[executor][zero][lock_step]") {
  // One rank, layers x = (4, 1, 2), gathers G = (2, 3, 1): with prefetch the first gather is exposed and
  // each later one hidden up to the layer before it (setup.cc AddGatherTimes): G0 + sum x +
  // max(0, G1 - x0) + max(0, G2 - x1) = 2 + 7 + 0 + 0 = 9; without, sum (G + x) = 13.
  const std::vector<Time> x = {Ms(4), Ms(1), Ms(2)}, G = {Ms(2), Ms(3), Ms(1)};
  CHECK(LockStepPassEnds({x}, G, true)[0] == Ms(9));
  CHECK(LockStepPassEnds({x}, G, false)[0] == Ms(13));
  // Layers that gather nothing wait for nobody: two ranks then run their own sums.
  const std::vector<Time> ends = LockStepPassEnds({{Ms(1), Ms(5)}, {Ms(5), Ms(1)}}, {Time(), Time()}, false);
  CHECK(ends[0] == Ms(6));
  CHECK(ends[1] == Ms(6));
}

}  // namespace
}  // namespace hetsim::testing
