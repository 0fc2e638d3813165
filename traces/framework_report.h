// The plan's framework in a run's report: its profile's name and, for each behaviour of the profile,
// whether the run had it on, who set it (the profile, the plan's own field, or the plan's
// framework_off) and the profile's source (docs/frameworks.md). Plans without a framework leave the
// report as it was.
#ifndef HETSIM_TRACES_FRAMEWORK_REPORT_H_
#define HETSIM_TRACES_FRAMEWORK_REPORT_H_

#include <string>

#include "base/spec/simulation.h"
#include "proto/hetsim.pb.h"

namespace hetsim::traces {

// Report.framework and framework_behaviours from the resolved plan (its profile already applied).
void AddFrameworkProfile(const spec::SimulationSpec& spec, v1::Report& report);

// The text report's lines: "framework Megatron-Core: blocking_p2p on (profile), ..."; empty without one.
std::string FormatFramework(const v1::Report& report);

}  // namespace hetsim::traces

#endif  // HETSIM_TRACES_FRAMEWORK_REPORT_H_
