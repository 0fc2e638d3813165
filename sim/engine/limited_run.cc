#include "sim/engine/limited_run.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace hetsim::engine {

absl::StatusOr<LimitedRunEnd> RunWithinLimits(Simulator& sim, uint64_t max_events, const WallLimit& wall_limit,
                                              absl::FunctionRef<absl::Status()> after_slice) {
  constexpr uint64_t kSlice = 1 << 10;  // an event of a 16,384-GPU collective can take milliseconds
  for (;;) {
    uint64_t limit = sim.events_processed() + kSlice;
    if (max_events > 0) limit = std::min(limit, max_events);
    sim.set_max_events(limit);
    const RunOutcome outcome = sim.Run();
    HETSIM_RETURN_IF_ERROR(after_slice());
    switch (outcome) {
      case RunOutcome::kQueueEmpty: return LimitedRunEnd::kQueueEmpty;
      case RunOutcome::kStopped: return LimitedRunEnd::kStopped;
      case RunOutcome::kEventLimit: break;
      case RunOutcome::kTimeLimit:
        return absl::InternalError("the simulation stopped at a time limit it was not given");
    }
    if (max_events > 0 && sim.events_processed() >= max_events) {
      return EventLimitError(max_events, TimeToMilliseconds(sim.now()));
    }
    if (wall_limit.Passed()) {
      return WallLimitError(wall_limit.seconds(), TimeToMilliseconds(sim.now()), sim.events_processed());
    }
    HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check("the simulation"));
  }
}

absl::Status EventLimitError(uint64_t max_events, double simulated_ms) {
  return RunLimitError(absl::StatusCode::kResourceExhausted, "max-events",
                       absl::StrFormat("the simulation reached the --max-events limit (%d events) at %.3f ms of "
                                       "simulated time, before the iteration ended; raise it with --max-events N "
                                       "(0 = no limit)",
                                       max_events, simulated_ms));
}

absl::Status WallLimitError(double max_wall_seconds, double simulated_ms, uint64_t events) {
  return RunLimitError(absl::StatusCode::kDeadlineExceeded, "max-wall-seconds",
                       absl::StrFormat("the simulation ran past the --max-wall-seconds limit (%g s) at %.3f ms of "
                                       "simulated time (%d events), before the iteration ended; raise it with "
                                       "--max-wall-seconds S (0 = no limit)",
                                       max_wall_seconds, simulated_ms, events));
}

}  // namespace hetsim::engine
