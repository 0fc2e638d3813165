#include "service/driver/fidelity_choice.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/executor/flow_estimate.h"

namespace hetsim::driver {
namespace {

using executor::BoundaryFlows;

constexpr const char* kAggregatedRings = "aggregated ring steps";
constexpr const char* kRepresentativeFlows = "representative boundary flows";

bool OnLinks(const hetsim::v1::Fault& f) {
  switch (f.target_case()) {
    case hetsim::v1::Fault::kLinkClass:
    case hetsim::v1::Fault::kLink:
    case hetsim::v1::Fault::kInterIslandLink: return true;
    case hetsim::v1::Fault::kGpu:
    case hetsim::v1::Fault::kNode:
    case hetsim::v1::Fault::TARGET_NOT_SET: return false;
  }
  return false;
}

bool SeveralIslands(const executor::ExecutionSetup& setup) {
  for (const executor::StageSetup& s : setup.stages) {
    if (s.layout.mixed() || s.layout.island != setup.stages.front().layout.island) return true;
  }
  return false;
}

std::vector<std::string> NamesOf(const FidelityChoice& c) {
  std::vector<std::string> names;
  if (c.ring_steps == collectives::RingSteps::kAggregated) names.push_back(kAggregatedRings);
  if (c.boundary_flows == BoundaryFlows::kRepresentative) names.push_back(kRepresentativeFlows);
  return names;
}

std::string MillionsOfFlows(int64_t flows) { return absl::StrFormat("%.1f M", static_cast<double>(flows) / 1e6); }

std::string NoteOf(const FidelityChoice& c) {
  const std::string shape(ShapeClassName(c.shape));
  if (!c.approximated()) {
    return absl::StrFormat(
        "exact simulation (about %s flows): no approximation has a measured error under %.1f%% for %s shapes",
        MillionsOfFlows(c.estimated_exact_flows), kDefaultErrorLimitPct, shape);
  }
  const std::string names = absl::StrJoin(NamesOf(c), " + ");
  const std::string bound =
      c.bound_pct() >= 0
          ? absl::StrFormat("worst error measured for %s shapes %.2f%% of the iteration time", shape, c.bound_pct())
          : absl::StrFormat("error not measured for %s shapes", shape);
  if (c.chosen_by_default) {
    return absl::StrFormat(
        "approximated by default: %s instead of the exact simulation's %s flows; %s; --exact for "
        "the full simulation",
        names, MillionsOfFlows(c.estimated_exact_flows), bound);
  }
  return absl::StrFormat("approximated as asked: %s; %s; drop --ring-steps / --boundary-flows for the default", names,
                         bound);
}

}  // namespace

absl::string_view ShapeClassName(ShapeClass shape) {
  switch (shape) {
    case ShapeClass::kOneIsland: return "one-island";
    case ShapeClass::kIslands: return "several-island";
    case ShapeClass::kComputeFaults: return "compute-fault";
    case ShapeClass::kLinkFaults: return "link-fault";
    case ShapeClass::kFailures: return "failure";
  }
  return "";
}

ShapeClass ClassifyShape(const executor::ExecutionSetup& setup, const hetsim::v1::Faults& faults) {
  bool compute = faults.has_jitter() && faults.jitter().spread() > 0;
  for (const hetsim::v1::Fault& f : faults.faults()) {
    if (OnLinks(f)) return ShapeClass::kLinkFaults;
  }
  for (const hetsim::v1::Fault& f : faults.faults()) {
    if (f.kind() == hetsim::v1::FAIL) return ShapeClass::kFailures;
    compute = true;
  }
  if (compute) return ShapeClass::kComputeFaults;
  return SeveralIslands(setup) ? ShapeClass::kIslands : ShapeClass::kOneIsland;
}

double FidelityChoice::bound_pct() const {
  const MeasuredBound b = MeasuredBoundOf(shape);
  const bool rings = ring_steps == collectives::RingSteps::kAggregated;
  const bool boundary = boundary_flows == BoundaryFlows::kRepresentative;
  if (rings && boundary) return b.both_pct;
  if (rings) return b.rings_pct;
  if (boundary) return b.boundary_pct;
  return 0;
}

FidelityChoice ChooseFidelity(const executor::ExecutionSetup& setup, const hetsim::v1::Faults& faults,
                              int64_t flow_limit) {
  FidelityChoice c;
  c.shape = ClassifyShape(setup, faults);
  c.estimated_exact_flows = executor::EstimateExactFlows(setup).total();
  if (c.estimated_exact_flows <= flow_limit) return c;
  const MeasuredBound b = MeasuredBoundOf(c.shape);
  if (b.both_pct >= 0 && b.rings_pct >= 0 && b.boundary_pct >= 0 &&
      std::max({b.both_pct, b.rings_pct, b.boundary_pct}) < kDefaultErrorLimitPct) {
    c.ring_steps = collectives::RingSteps::kAggregated;
    c.boundary_flows = BoundaryFlows::kRepresentative;
    c.chosen_by_default = true;
  }
  return c;
}

hetsim::v1::ApproximationChoice ApproximationChoiceOf(const FidelityChoice& choice) {
  hetsim::v1::ApproximationChoice r;
  for (const std::string& name : NamesOf(choice)) r.add_approximations(name);
  r.set_chosen_by_default(choice.chosen_by_default);
  r.set_bound_percent(std::max(0.0, choice.bound_pct()));
  r.set_shape(std::string(ShapeClassName(choice.shape)));
  r.set_estimated_exact_flows(static_cast<uint64_t>(choice.estimated_exact_flows));
  r.set_note(NoteOf(choice));
  return r;
}

}  // namespace hetsim::driver
