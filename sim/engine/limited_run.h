// A simulator run within the user's limits (--max-events, --max-wall-seconds): the one run loop the
// executor and the Chakra replay share. The run goes in slices of events so that a long run checks
// the wall clock between them; reaching a limit is a run limit error (base/wall_limit.h), which
// commands tell from a bug (exit 2) and sweeps record as "limit".
#ifndef HETSIM_SIM_ENGINE_LIMITED_RUN_H_
#define HETSIM_SIM_ENGINE_LIMITED_RUN_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/wall_limit.h"
#include "sim/engine/simulator.h"

namespace hetsim::engine {

// How a run that reached no limit ended.
enum class LimitedRunEnd {
  kQueueEmpty,  // no event is left
  kStopped,     // a handler called Stop(); the caller knows why
};

// Runs `sim` until its queue is empty or a handler stops it. After every slice (and the last one)
// `after_slice` may end the run with the caller's own error (a failure its handlers recorded).
// Reaching `max_events` (0 = no limit), `wall_limit` or the calling thread's CurrentWallLimit() ends it
// with a run limit error that names the flag and the simulated time reached.
absl::StatusOr<LimitedRunEnd> RunWithinLimits(Simulator& sim, uint64_t max_events, const WallLimit& wall_limit,
                                              absl::FunctionRef<absl::Status()> after_slice);

// The run limit errors, for callers that stop a simulation themselves.
absl::Status EventLimitError(uint64_t max_events, double simulated_ms);
absl::Status WallLimitError(double max_wall_seconds, double simulated_ms, uint64_t events);

}  // namespace hetsim::engine

#endif  // HETSIM_SIM_ENGINE_LIMITED_RUN_H_
