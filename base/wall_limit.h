// The wall-clock limit of one command (--max-wall-seconds), honoured wherever the work can be long:
// the execution setup, the collectives a gradient synchronisation builds and starts (a ring or tree
// of 800,000 ranks is minutes of route building inside one event), calibration fits and HTML
// rendering. A limit reached is a run limit: a status carrying kRunLimitPayloadUrl, so commands exit
// 2 (the user asked for it) and sweeps record the point as "limit".
//
// The limit travels two ways. Code that returns a status takes a `const WallLimit&` and calls
// Check(). Loops deep inside builders that return no status (a transfer graph, a route set) call
// WallLimitPassed(), which reads the limit the calling thread installed with a WallLimitScope, and
// stop early; their caller turns that into the status with Check(). The scope is per thread, so the
// threads of a sweep each honour their own point's limit, and nothing outlives the command.
#ifndef HETSIM_BASE_WALL_LIMIT_H_
#define HETSIM_BASE_WALL_LIMIT_H_

#include <chrono>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace hetsim {

inline constexpr absl::string_view kRunLimitPayloadUrl = "hetsim/run-limit";

// ResourceExhausted (events, memory) or DeadlineExceeded (wall time), marked with the flag's name.
absl::Status RunLimitError(absl::StatusCode code, absl::string_view flag, absl::string_view message);

// True when `status` came from a run limit (--max-events, --max-wall-seconds, --max-memory).
bool IsRunLimit(const absl::Status& status);

// `status` with `prefix` before its message ("plan.pbtxt: "), its code and payloads kept: a run limit
// stays one (exit 2, sweep status "limit") however many callers name where it happened.
absl::Status Prefixed(const absl::Status& status, absl::string_view prefix);

// InvalidArgument unless `seconds` is finite and >= 0 (0 = no limit), naming `flag` ("--max-wall-seconds"
// on the command line, "max_wall_seconds" in Python): the one check both front ends make.
absl::Status ValidateMaxWallSeconds(double seconds, absl::string_view flag);

class WallLimit {
 public:
  using Clock = std::chrono::steady_clock;
  WallLimit() = default;  // no limit
  // `max_wall_seconds` from `start`; 0 (or less) = no limit.
  explicit WallLimit(double max_wall_seconds, Clock::time_point start = Clock::now())
      : seconds_(max_wall_seconds), start_(start) {}

  bool limited() const { return seconds_ > 0; }
  double seconds() const { return seconds_; }
  Clock::time_point start() const { return start_; }
  double elapsed_seconds() const;
  bool Passed() const { return limited() && elapsed_seconds() > seconds_; }
  // OK while the limit has not passed; else DeadlineExceeded naming `during` (what was running, e.g.
  // "setting up the simulation"), the limit, the time spent and how to raise it.
  absl::Status Check(absl::string_view during) const;

 private:
  double seconds_ = 0;
  Clock::time_point start_ = Clock::now();
};

// Installs `limit` as the calling thread's for the scope's life (scopes nest; the innermost wins).
class WallLimitScope {
 public:
  explicit WallLimitScope(const WallLimit& limit);
  ~WallLimitScope();
  WallLimitScope(const WallLimitScope&) = delete;
  WallLimitScope& operator=(const WallLimitScope&) = delete;

 private:
  const WallLimit* previous_;
};

// The calling thread's limit (no limit outside every scope).
const WallLimit& CurrentWallLimit();

// True once the calling thread's limit has passed. Cheap enough for inner loops: the clock is read
// once every 1,024 calls, and once passed it stays passed.
bool WallLimitPassed();
// The same, reading the clock now: for loops whose every turn is long (a channel of a large ring).
bool WallLimitPassedNow();

}  // namespace hetsim

#endif  // HETSIM_BASE_WALL_LIMIT_H_
