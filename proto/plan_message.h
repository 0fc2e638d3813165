// The way back from the spec to the file: a resolved plan (a planner's, or one read and resolved) as
// the Plan message `hetsim plan` and `run --replan` write. The inverse of proto::ResolvePlan for what a
// file can say: defaults stay unwritten where the schema's zero means them (CP and virtual stages of 1,
// EP of 1, H-1F1B's epsilon), TP and DP are always named, the CP exchange only with CP.
#ifndef HETSIM_PROTO_PLAN_MESSAGE_H_
#define HETSIM_PROTO_PLAN_MESSAGE_H_

#include "base/spec/plan.h"
#include "proto/hetsim.pb.h"

namespace hetsim::proto {

// Neither the model (inline or by path) nor Plan.tp_comm_overlap_config is written: the spec holds
// neither the model's file nor whether the file named Transformer Engine's defaults, so the caller,
// which has both messages, sets them.
hetsim::v1::Plan PlanMessage(const spec::PlanSpec& plan);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_PLAN_MESSAGE_H_
