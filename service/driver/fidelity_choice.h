// The fidelity a run gets when nobody asks (issue 43, docs/performance.md "Fast by default"): the
// exact simulation while it is affordable; above kExactFlowLimit estimated flows, the approximations
// (aggregated gradient rings, representative boundary flows) whose worst error measured against the
// exact simulation for the run's shape is under kDefaultErrorLimitPct, and the exact run otherwise.
// The bounds are measured by tests/service/driver/approximation_bounds_test.cc (which fails when a shape exceeds its
// class's bound) and the 16K runs of bench/executor_run.cc; the choice is a pure function of the setup
// and the faults, so it is deterministic.
//
//   FidelityChoice c = ChooseFidelity(setup, faults);
//   c.approximated();  c.ring_steps;  c.boundary_flows;  FidelityNote(c)
#ifndef HETSIM_SERVICE_DRIVER_FIDELITY_CHOICE_H_
#define HETSIM_SERVICE_DRIVER_FIDELITY_CHOICE_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "sim/collectives/collective.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"

namespace hetsim::driver {

// Above this many estimated flows (sim/executor/flow_estimate.h) the exact run takes seconds (about
// 2 us a flow on this project's machine: docs/performance.md), so the default looks for approximations.
inline constexpr int64_t kExactFlowLimit = 1'000'000;
// The default uses an approximation only for shapes whose worst measured error is under this.
inline constexpr double kDefaultErrorLimitPct = 0.5;

// What decides how far an approximation can be off: where the replicas are alike and what the faults hit.
enum class ShapeClass {
  kOneIsland,      // every stage on one island (any fabric, oversubscription, interleaving, MoE, CP)
  kIslands,        // stages on several islands, or mixed stages (replica groups of different GPUs)
  kComputeFaults,  // SLOW GPUs or nodes, jitter: compute only
  kLinkFaults,     // any fault on links (SLOW, FLAP, FAIL): one replica's routes differ from the others'
  kFailures,       // a FAIL of a GPU or node: the iteration stops
};
absl::string_view ShapeClassName(ShapeClass shape);  // "one island", ...

// Worst |error| of the iteration time against the exact simulation, in percent, for each approximation
// alone and both together; a negative value: not measured for the class, so never used by default.
struct MeasuredBound {
  double rings_pct = -1;
  double boundary_pct = -1;
  double both_pct = -1;
};
MeasuredBound MeasuredBoundOf(ShapeClass shape);

ShapeClass ClassifyShape(const executor::ExecutionSetup& setup, const hetsim::v1::Faults& faults);

struct FidelityChoice {
  collectives::RingSteps ring_steps = collectives::RingSteps::kAuto;
  executor::BoundaryFlows boundary_flows = executor::BoundaryFlows::kAll;
  ShapeClass shape = ShapeClass::kOneIsland;
  int64_t estimated_exact_flows = 0;
  bool chosen_by_default = false;  // false: the approximations were asked for (or none is in force)
  bool approximated() const {
    return ring_steps == collectives::RingSteps::kAggregated ||
           boundary_flows == executor::BoundaryFlows::kRepresentative;
  }
  double bound_pct() const;  // the measured bound of what is in force (0 when exact)
};

// The default: exact up to `flow_limit` estimated flows, then both approximations if the shape's
// measured bound for them together is under kDefaultErrorLimitPct, else exact.
FidelityChoice ChooseFidelity(const executor::ExecutionSetup& setup, const hetsim::v1::Faults& faults,
                              int64_t flow_limit = kExactFlowLimit);

// What the report says about `choice` (Report.approximation_choice): the one line of the text report and the HTML
// page names what is in force, its measured bound and how to turn it off.
hetsim::v1::ApproximationChoice ApproximationChoiceOf(const FidelityChoice& choice);

}  // namespace hetsim::driver

#endif  // HETSIM_SERVICE_DRIVER_FIDELITY_CHOICE_H_
