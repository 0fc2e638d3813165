// The discrete-event run loop: a clock, the pending events, and limits that stop a run.
//
// Handlers run one at a time in (time, insertion order); a handler may schedule, cancel or move
// events, including at the current time (those run after every event already scheduled for it).
// Nothing here knows what an event means.
#ifndef HETSIM_SIM_ENGINE_SIMULATOR_H_
#define HETSIM_SIM_ENGINE_SIMULATOR_H_

#include <cinttypes>
#include <cstddef>
#include <cstdint>

#include "base/check.h"
#include "base/time.h"
#include "sim/engine/event.h"
#include "sim/engine/event_queue_internal.h"

namespace hetsim::engine {

// Why a run returned.
enum class RunOutcome {
  kQueueEmpty,  // no event is pending
  kTimeLimit,   // the next event is later than RunUntil's end
  kEventLimit,  // the max-events limit was reached
  kStopped,     // a handler called Stop()
};
const char* RunOutcomeName(RunOutcome outcome);

class Simulator {
 public:
  Simulator() = default;
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Time now() const { return now_; }

  // Schedules `handler->OnEvent(payload)` at absolute time `at`, which must not be in the past
  // (a programming error: the process aborts with a message).
  EventId Schedule(Time at, EventHandler* handler, uint64_t payload) {
    HETSIM_CHECK(at >= now_, "event scheduled at %" PRId64 " ps, before now (%" PRId64 " ps)", TimeToPicoseconds(at),
                 TimeToPicoseconds(now_));
    return queue_.Push(at, handler, payload);
  }
  EventId ScheduleAfter(Time delay, EventHandler* handler, uint64_t payload) {
    return Schedule(delay >= kTimeMax - now_ ? kTimeMax : now_ + delay, handler, payload);
  }

  // False when the event is no longer pending (already ran or cancelled); stale ids are harmless.
  bool Cancel(EventId id) { return queue_.Cancel(id); }
  // Moves a pending event to `at` (not in the past); it then runs after the events already scheduled
  // for `at`. False when the event is no longer pending.
  bool Reschedule(EventId id, Time at) {
    HETSIM_CHECK(at >= now_, "event rescheduled to %" PRId64 " ps, before now (%" PRId64 " ps)", TimeToPicoseconds(at),
                 TimeToPicoseconds(now_));
    return queue_.Reschedule(id, at);
  }
  bool IsPending(EventId id) const { return queue_.IsPending(id); }
  // kTimeMax when the event is not pending.
  Time TimeOf(EventId id) const { return queue_.TimeOf(id); }

  // Runs events until none is left, the event limit is hit, or a handler calls Stop().
  RunOutcome Run() { return RunUntil(kTimeMax); }
  // Runs every event scheduled at or before `end`. When none is left (kTimeLimit or kQueueEmpty) the
  // clock moves to `end`, except for Run() whose end is kTimeMax: its clock stays at the last event.
  RunOutcome RunUntil(Time end);
  // Makes the current Run/RunUntil return after the running handler.
  void Stop() { stop_requested_ = true; }

  // A run stops with kEventLimit once `events_processed()` reaches this total (0 = no limit).
  void set_max_events(uint64_t max_events) { max_events_ = max_events; }
  uint64_t max_events() const { return max_events_; }
  uint64_t events_processed() const { return events_processed_; }
  size_t pending_events() const { return queue_.size(); }
  void ReserveEvents(size_t n) { queue_.Reserve(n); }

 private:
  EventQueue queue_;
  Time now_ = 0;
  uint64_t events_processed_ = 0;
  uint64_t max_events_ = 0;
  bool stop_requested_ = false;
};

}  // namespace hetsim::engine

#endif  // HETSIM_SIM_ENGINE_SIMULATOR_H_
