// The PointEvaluator `hetsim sweep` uses: the point's plan (or, without one, the plan its planner
// makes) simulated by the executor with the max-min fair network, reported without wall time so that
// rows are deterministic. When planning, plan.global_batch_size (default 128, as `hetsim plan`),
// plan.micro_batch_size (0 = searched) and plan.h1f1b_epsilon are the planner's settings and a
// plan.schedule other than SCHEDULE_UNSPECIFIED replaces the planned schedule. Each point plans on one
// thread: the sweep itself runs points in parallel.
#ifndef HETSIM_SERVICE_SWEEP_EVALUATOR_H_
#define HETSIM_SERVICE_SWEEP_EVALUATOR_H_

#include <cstdint>
#include <optional>

#include "service/driver/simulate.h"
#include "service/sweep/point.h"

namespace hetsim::sweep {

// Run limits per point (--max-events, --max-wall-seconds; 0 = none): a point that reaches one fails
// with a status executor::IsRunLimit recognises (row status "limit"); the sweep goes on.
// How each point runs: its limits, and the opt-in approximations (named in every point's report).
struct PointOptions {
  uint64_t max_events = 0;
  double max_wall_seconds = 0;
  // `hetsim sweep` asks for nothing unless --exact or an approximation is given (the fidelity is then
  // chosen per point); sweeps built by code run exact unless they say otherwise.
  driver::FidelityRequest fidelity{.exact = true, .ring_steps = std::nullopt, .boundary_flows = std::nullopt};
};

class SimulationEvaluator : public PointEvaluator {
 public:
  SimulationEvaluator() = default;
  explicit SimulationEvaluator(PointOptions options) : options_(options) {}
  absl::StatusOr<hetsim::v1::Report> Evaluate(const PointInputs& point) const override;

 private:
  PointOptions options_;
};

}  // namespace hetsim::sweep

#endif  // HETSIM_SERVICE_SWEEP_EVALUATOR_H_
