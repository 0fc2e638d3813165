#include "base/wall_limit.h"

#include <cmath>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hetsim {
namespace {

const WallLimit kNoWallLimit;

struct ThreadWallLimit {
  const WallLimit* limit = &kNoWallLimit;
  uint32_t calls = 0;
  bool passed = false;
};

ThreadWallLimit& ThisThread() {
  thread_local ThreadWallLimit state;
  return state;
}

}  // namespace

absl::Status RunLimitError(absl::StatusCode code, absl::string_view flag, absl::string_view message) {
  absl::Status status(code, message);
  status.SetPayload(kRunLimitPayloadUrl, absl::Cord(flag));
  return status;
}

bool IsRunLimit(const absl::Status& status) {
  return !status.ok() && status.GetPayload(kRunLimitPayloadUrl).has_value();
}

absl::Status ValidateMaxWallSeconds(double seconds, absl::string_view flag) {
  if (seconds >= 0 && std::isfinite(seconds)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s: %g must be finite and >= 0 (0 = no limit)", flag, seconds));
}

absl::Status Prefixed(const absl::Status& status, absl::string_view prefix) {
  absl::Status out(status.code(), absl::StrCat(prefix, status.message()));
  status.ForEachPayload([&out](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

double WallLimit::elapsed_seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

absl::Status WallLimit::Check(absl::string_view during) const {
  if (!limited()) return absl::OkStatus();
  const double elapsed = elapsed_seconds();
  if (elapsed <= seconds_) return absl::OkStatus();
  return RunLimitError(absl::StatusCode::kDeadlineExceeded, "max-wall-seconds",
                       absl::StrFormat("%s ran past the --max-wall-seconds limit (%g s) after %.1f s; raise it "
                                       "with --max-wall-seconds S (0 = no limit)",
                                       during, seconds_, elapsed));
}

WallLimitScope::WallLimitScope(const WallLimit& limit) : previous_(ThisThread().limit) {
  ThreadWallLimit& t = ThisThread();
  t.limit = &limit;
  t.calls = 0;
  t.passed = false;
}

WallLimitScope::~WallLimitScope() {
  ThreadWallLimit& t = ThisThread();
  t.limit = previous_;
  t.calls = 0;
  t.passed = false;
}

const WallLimit& CurrentWallLimit() { return *ThisThread().limit; }

bool WallLimitPassed() {
  ThreadWallLimit& t = ThisThread();
  if (t.passed) return true;
  if (!t.limit->limited() || (++t.calls & 1023) != 0) return false;
  t.passed = t.limit->Passed();
  return t.passed;
}

bool WallLimitPassedNow() {
  ThreadWallLimit& t = ThisThread();
  if (!t.passed) t.passed = t.limit->Passed();
  return t.passed;
}

}  // namespace hetsim
