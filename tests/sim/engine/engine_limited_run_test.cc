// The run loop within the user's limits, shared by the executor and the Chakra replay.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "base/wall_limit.h"
#include "sim/engine/limited_run.h"
#include "sim/engine/simulator.h"
#include "tests/base/time_io.h"

namespace hetsim::engine {
namespace {

// Schedules its next event 1 ns later until `left` runs out; stops the run at event `stop_at` (0 = never).
class Chain : public EventHandler {
 public:
  Chain(Simulator* sim, uint64_t left, uint64_t stop_at = 0) : sim_(sim), left_(left), stop_at_(stop_at) {}
  void OnEvent(uint64_t n) override {
    if (stop_at_ != 0 && n == stop_at_) sim_->Stop();
    if (--left_ > 0) sim_->ScheduleAfter(1000_ps, this, n + 1);
  }

 private:
  Simulator* sim_;
  uint64_t left_;
  uint64_t stop_at_;
};

absl::Status Ok() { return absl::OkStatus(); }

TEST_CASE("a limited run goes through every slice until the queue is empty", "[engine]") {
  Simulator sim;
  Chain chain(&sim, 5000);  // five slices of 1,024 events
  sim.Schedule(0, &chain, 1);
  int slices = 0;
  absl::StatusOr<LimitedRunEnd> end = RunWithinLimits(sim, 0, WallLimit(), [&] {
    ++slices;
    return absl::OkStatus();
  });
  REQUIRE(end.ok());
  CHECK(*end == LimitedRunEnd::kQueueEmpty);
  CHECK(sim.events_processed() == 5000);
  CHECK(slices == 5);
  CHECK(sim.now() == 4999 * 1000_ps);
}

TEST_CASE("a limited run reports the event limit as a run limit with the simulated time", "[engine]") {
  Simulator sim;
  Chain chain(&sim, 5000);
  sim.Schedule(0, &chain, 1);
  absl::StatusOr<LimitedRunEnd> end = RunWithinLimits(sim, 1500, WallLimit(), Ok);
  REQUIRE_FALSE(end.ok());
  CHECK(IsRunLimit(end.status()));
  CHECK(end.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(sim.events_processed() == 1500);
  CHECK(std::string(end.status().message()).find("--max-events limit (1500 events) at 0.001 ms") != std::string::npos);
}

TEST_CASE("a limited run ends when a handler stops it, and the caller's error wins", "[engine]") {
  Simulator sim;
  Chain chain(&sim, 5000, 2000);
  sim.Schedule(0, &chain, 1);
  absl::StatusOr<LimitedRunEnd> end = RunWithinLimits(sim, 0, WallLimit(), Ok);
  REQUIRE(end.ok());
  CHECK(*end == LimitedRunEnd::kStopped);
  CHECK(sim.events_processed() == 2000);

  Simulator failing;
  Chain again(&failing, 5000, 2000);
  failing.Schedule(0, &again, 1);
  end = RunWithinLimits(failing, 0, WallLimit(),
                        [] { return absl::FailedPreconditionError("a collective could not start"); });
  CHECK(end.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(failing.events_processed() == 1024);  // the first slice
}

TEST_CASE("a limited run past its wall-clock limit stops with a run limit error", "[engine]") {
  Simulator sim;
  Chain chain(&sim, 5000);
  sim.Schedule(0, &chain, 1);
  // A limit whose start lies a second in the past has passed before the first slice ends.
  const WallLimit passed(0.001, WallLimit::Clock::now() - std::chrono::seconds(1));
  absl::StatusOr<LimitedRunEnd> end = RunWithinLimits(sim, 0, passed, Ok);
  REQUIRE_FALSE(end.ok());
  CHECK(IsRunLimit(end.status()));
  CHECK(end.status().code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(sim.events_processed() == 1024);
}

}  // namespace
}  // namespace hetsim::engine
