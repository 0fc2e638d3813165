// `hetsim validate PLAN` for a plan without a prediction: hetsim's own planner's cost model (t_i, c_i,
// memory, HAPT Eq. 13, the DAG plus gradient synchronisation) against the simulation of the plan, per
// stage and in total; with top_k, the planner's K best plans of the same model, each predicted and
// simulated, so Kendall's tau says whether the cost model ranks plans as the simulator does.
#ifndef HETSIM_SERVICE_EVALUATION_OWN_PREDICTION_H_
#define HETSIM_SERVICE_EVALUATION_OWN_PREDICTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/time.h"
#include "planner/planner.h"
#include "proto/inputs.h"

namespace hetsim::evaluation {

// The simulated counterparts of the planner's per-stage terms.
struct SimulatedStages {
  std::vector<Time> t, comm;  // per physical stage: its chunks' forward + backward, its longest boundary
  std::vector<int64_t> peak;  // per stage: peak memory, bytes
  Time iteration = 0, pipeline = 0;
  // A plan of pipelines: the stages above are every pipeline's in turn; per pipeline its span and its
  // end after its layer ranges' all-reduces and optimizer steps. Empty for one pipeline.
  struct Pipeline {
    std::string name;
    Time pipeline = 0, end = 0;
  };
  std::vector<Pipeline> pipelines;
};

// The planner's prediction of `inputs` (valid) as `hetsim validate` prints it: one pipeline through the
// plan's profiler (PredictPlan), a plan of pipelines with its layer ranges (PredictPipelinesPlan).
absl::StatusOr<planner::Prediction> PredictOwnPlan(const proto::PlanInputs& inputs);

// At the fidelity `hetsim run` chooses (exact while affordable), or in full with `exact`.
absl::StatusOr<SimulatedStages> SimulateStages(const proto::PlanInputs& inputs, bool exact = false);

struct RankedPlan {
  double predicted_ms = 0;
  double simulated_ms = 0;
};

struct OwnValidation {
  planner::Prediction prediction;
  SimulatedStages simulated;
  std::vector<RankedPlan> top_plans;  // the planner's best first; empty without top_k
  double kendall_tau = 0;             // of top_plans' predicted against simulated times (tau-b)
};

// `inputs` valid; `top_k` > 0 re-plans the model with `planner` (no t_max pruning) and keeps up to K;
// `exact`: every plan simulated in full (SimulateStages).
absl::StatusOr<OwnValidation> ValidateOwnPrediction(const proto::PlanInputs& inputs, int top_k,
                                                    planner::PlannerKind planner, bool exact = false);

// The text `hetsim validate` prints: the per-stage table, the iteration, the boundaries whose transfer
// exceeds t_max, and with top_k > 0 the ranked plans of `planner_name` and their Kendall's tau-b.
std::string FormatOwnValidation(const proto::PlanInputs& inputs, const OwnValidation& v, int top_k,
                                absl::string_view planner_name);

}  // namespace hetsim::evaluation

#endif  // HETSIM_SERVICE_EVALUATION_OWN_PREDICTION_H_
