// `hetsim run --fault ... --replan [PLANNER]`: after the faulty iteration, plan again on what the FAIL
// faults leave (service/driver/replan.h), simulate the new plan, and put the outcome in Report.replan.
#ifndef HETSIM_SERVICE_DRIVER_RUN_REPLAN_H_
#define HETSIM_SERVICE_DRIVER_RUN_REPLAN_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "proto/hetsim.pb.h"
#include "proto/inputs.h"
#include "sim/network/network.h"

namespace hetsim::driver {

struct RunReplanOptions {
  std::string planner = "hapt";  // hapt, tangram, megatron, alpa
  network::NetworkMode network_mode = network::NetworkMode::kMaxMinFair;
  uint64_t max_events = 0;  // per simulation, as --max-events
  double max_wall_seconds = 0;
  bool record_wall_time = true;  // false: Report.replan.replan_wall_s stays 0 (--no-wall-time)
};

// Primes a profile cache by planning the full cluster (as the planner that made the running plan
// did), re-plans on the survivors of `faults`' FAIL faults reusing it, and sets report->replan.
// InvalidArgument (exit 2) when `faults` has no FAIL fault or names a target that does not exist,
// FailedPrecondition when nothing fits on what survives.
absl::Status AddReplan(const proto::PlanInputs& inputs, const hetsim::v1::Faults& faults,
                       const RunReplanOptions& options, hetsim::v1::Report* report);

// Lines for the text report: the GPUs left, the new plan, its throughput and the re-plan time.
std::string FormatReplan(const hetsim::v1::ReplanReport& replan);

}  // namespace hetsim::driver

#endif  // HETSIM_SERVICE_DRIVER_RUN_REPLAN_H_
