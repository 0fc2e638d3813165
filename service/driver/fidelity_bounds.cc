// The measured bounds behind the default fidelity (fidelity_choice.h): the worst |error| of iteration
// time against the exact simulation, in percent, over the shapes of tests/service/driver/approximation_bounds_test.cc
// (which fails when a shape exceeds its class's bound) and the bundled 16,384-GPU Llama 3 run
// (docs/performance.md, "Fast by default", where every figure below is listed). Rounded up.
#include "service/driver/fidelity_choice.h"

namespace hetsim::driver {
namespace {

// One island: the 16K run is the worst (rings 0.0176%, boundary flows 0.164%, both 0.351%: ECMP
// collisions on the Clos that a representative does not see); the 256- and 512-GPU shapes stay under
// 0.022% (MoE's boundary flows).
constexpr MeasuredBound kOneIsland{.rings_pct = 0.018, .boundary_pct = 0.17, .both_pct = 0.36};

}  // namespace

MeasuredBound MeasuredBoundOf(ShapeClass shape) {
  switch (shape) {
    case ShapeClass::kOneIsland: return kOneIsland;
    // Islands and stragglers measured at most 0.0016% on their own shapes; at scale they keep the
    // fabric's one-island error, so their bound is that one.
    case ShapeClass::kIslands: return kOneIsland;
    case ShapeClass::kComputeFaults: return kOneIsland;
    // A NIC link 100x slower on one replica's route: its representative does not cross it (0.79%).
    case ShapeClass::kLinkFaults: return {.rings_pct = 0.018, .boundary_pct = 0.80, .both_pct = 0.80};
    case ShapeClass::kFailures: return {};  // not measured: the default stays exact
  }
  return {};
}

}  // namespace hetsim::driver
