// The user's run limits (--max-events, --max-wall-seconds): a simulation that reaches one stops and
// returns a status marked with a payload, so that commands tell it from a bug (exit 2, not 1) and a
// sweep records the point as "limit" instead of "error".
#ifndef HETSIM_SIM_EXECUTOR_RUN_LIMIT_H_
#define HETSIM_SIM_EXECUTOR_RUN_LIMIT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "base/wall_limit.h"

namespace hetsim::sim::executor {

using ::hetsim::IsRunLimit;
using ::hetsim::kRunLimitPayloadUrl;
using ::hetsim::RunLimitError;

inline absl::Status EventLimitError(uint64_t max_events, double simulated_ms) {
  return RunLimitError(absl::StatusCode::kResourceExhausted, "max-events",
                       absl::StrFormat("the simulation reached the --max-events limit (%d events) at %.3f ms of "
                                       "simulated time, before the iteration ended; raise it with --max-events N "
                                       "(0 = no limit)",
                                       max_events, simulated_ms));
}

inline absl::Status WallLimitError(double max_wall_seconds, double simulated_ms, uint64_t events) {
  return RunLimitError(absl::StatusCode::kDeadlineExceeded, "max-wall-seconds",
                       absl::StrFormat("the simulation ran past the --max-wall-seconds limit (%g s) at %.3f ms of "
                                       "simulated time (%d events), before the iteration ended; raise it with "
                                       "--max-wall-seconds S (0 = no limit)",
                                       max_wall_seconds, simulated_ms, events));
}

}  // namespace hetsim::sim::executor

#endif  // HETSIM_SIM_EXECUTOR_RUN_LIMIT_H_
