// Plan.framework at the file edge: the profile's behaviours applied to a plan's fields (the table
// itself, with a source for every value, is base/spec/framework.h), the enum mapped to hetsim's own,
// and the checks of Plan.framework_off. docs/frameworks.md.
#ifndef HETSIM_PROTO_FRAMEWORK_PROFILE_H_
#define HETSIM_PROTO_FRAMEWORK_PROFILE_H_

#include <string>

#include "base/spec/framework.h"
#include "proto/hetsim.pb.h"
#include "proto/validate_problems.h"

namespace hetsim::proto {

spec::Framework FrameworkOf(hetsim::v1::Framework framework);

// What the profile's rules depend on: the model's dtype, the schedule, the ZeRO stages.
spec::ProfileContext ProfileContextOf(const hetsim::v1::Plan& plan, const hetsim::v1::Model& model);

// Whether the plan runs as DeepSpeed's TrainSchedule can (Plan.p2p_rendezvous needs it): ONE_F_ONE_B,
// one model chunk a stage, no explicit warm-up counts on any stage of any pipeline.
bool FollowsTrainSchedule(const hetsim::v1::Plan& plan);

// Switches on every behaviour of the plan's framework profile that applies to it, unless the plan
// names it in framework_off; fields the plan sets on stay on. Idempotent; no-op without a framework.
// ValidatePlanInputs calls it, so every reader of the plan (the resolver, the planner, the exporter)
// sees the same values.
void ApplyFrameworkProfile(hetsim::v1::Plan* plan, const hetsim::v1::Model& model);

// `hetsim check`'s line for a plan with a framework (its profile applied): "  framework Megatron-Core
// (MEGATRON_CORE): blocking_p2p on, tp_backward_overlap on, ...; switched off by the plan: ...".
// Empty without a framework.
std::string DescribeFramework(const hetsim::v1::Plan& plan);

// framework_off: known behaviour names, once each, none of them set on by the plan, and a framework.
void CheckFrameworkOff(Problems& p, const hetsim::v1::Plan& plan);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_FRAMEWORK_PROFILE_H_
