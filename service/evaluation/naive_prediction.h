// A deliberately naive planner cost model, the yardstick of docs/validation-of-planners.md: a stage's
// time is its FLOPs over its GPUs' peak FLOP/s (no kernel efficiency, no tensor-parallel
// collectives), communication is free (boundaries, gradient synchronisation), and the iteration is
// HAPT Eq. 13 with c_i = 0: sum_i t_i + (B - 1) max_i t_i. Memory is not predicted. `hetsim validate`
// on the bundled examples/validate-naive plans shows where such a model goes wrong.
#ifndef HETSIM_SERVICE_EVALUATION_NAIVE_PREDICTION_H_
#define HETSIM_SERVICE_EVALUATION_NAIVE_PREDICTION_H_

#include "absl/status/statusor.h"
#include "proto/hetsim.pb.h"
#include "proto/inputs.h"

namespace hetsim::evaluation {

// Per stage: forward = model FLOPs of its layers for one microbatch / 3 (the forward is a third of
// forward + backward), backward = 2 x forward, over (GPUs x peak FLOP/s of the model's dtype);
// boundary_transfer_ms = exposed_comm_ms = grad_sync_ms = 0; compute_ms = B (forward + backward);
// bubble_ms = iteration - compute_ms. A plan of pipelines: each pipeline so (its own microbatches), its
// stages in turn, the iteration the slowest pipeline's. `inputs` validated (presets applied).
absl::StatusOr<hetsim::v1::PlanPrediction> NaivePrediction(const proto::PlanInputs& inputs);

}  // namespace hetsim::evaluation

#endif  // HETSIM_SERVICE_EVALUATION_NAIVE_PREDICTION_H_
