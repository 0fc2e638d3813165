// The PointEvaluator `hetsim sweep` uses: the point's plan (or, without one, the plan its planner
// makes) simulated by the executor with the max-min fair network, reported without wall time so that
// rows are deterministic. When planning, plan.global_batch_size (default 128, as `hetsim plan`),
// plan.micro_batch_size (0 = searched) and plan.h1f1b_epsilon are the planner's settings and a
// plan.schedule other than SCHEDULE_UNSPECIFIED replaces the planned schedule. Each point plans on one
// thread: the sweep itself runs points in parallel.
#ifndef HETSIM_SERVICE_SWEEP_EVALUATOR_H_
#define HETSIM_SERVICE_SWEEP_EVALUATOR_H_

#include <cstdint>

#include "service/sweep/point.h"
#include "sim/executor/executor.h"

namespace hetsim::sweep {

// Run limits per point (--max-events, --max-wall-seconds; 0 = none): a point that reaches one fails
// with a status sim::executor::IsRunLimit recognises (row status "limit"); the sweep goes on.
// How each point runs: its limits, and the opt-in approximations (named in every point's report).
struct PointOptions {
  uint64_t max_events = 0;
  double max_wall_seconds = 0;
  sim::RingSteps grad_sync_ring_steps = sim::RingSteps::kAuto;
  sim::executor::BoundaryFlows boundary_flows = sim::executor::BoundaryFlows::kAll;
  bool choose_fidelity = false;  // driver::SimulateOptions.choose_fidelity (`hetsim sweep` without --exact)
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
