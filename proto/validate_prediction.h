// Validation of a plan's PlanPrediction (a planner's predicted times and memory, Plan.prediction):
// every value given is finite and in [0, 10^9] (ms or GiB), and `stages` is empty or has one entry
// per plan stage. Problems are added with their field path ("prediction.stages[1].forward_ms").
#ifndef HETSIM_PROTO_VALIDATE_PREDICTION_H_
#define HETSIM_PROTO_VALIDATE_PREDICTION_H_

#include "proto/hetsim.pb.h"
#include "proto/validate_problems.h"

namespace hetsim::proto {

void CheckPrediction(Problems& p, const hetsim::v1::Plan& plan);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_VALIDATE_PREDICTION_H_
