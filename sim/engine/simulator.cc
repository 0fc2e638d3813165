#include "sim/engine/simulator.h"

namespace hetsim::engine {

const char* RunOutcomeName(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::kQueueEmpty: return "queue-empty";
    case RunOutcome::kTimeLimit: return "time-limit";
    case RunOutcome::kEventLimit: return "event-limit";
    case RunOutcome::kStopped: return "stopped";
  }
  return "unknown";
}

RunOutcome Simulator::RunUntil(Time end) {
  stop_requested_ = false;
  RunOutcome outcome = RunOutcome::kQueueEmpty;
  for (;;) {
    if (queue_.empty()) {
      outcome = RunOutcome::kQueueEmpty;
      break;
    }
    if (!queue_.HasEventNotAfter(end)) {
      outcome = RunOutcome::kTimeLimit;
      break;
    }
    if (max_events_ != 0 && events_processed_ >= max_events_) return RunOutcome::kEventLimit;
    const EventQueue::Popped event = queue_.PopChecked();  // HasEventNotAfter settled it
    now_ = event.at;
    ++events_processed_;
    event.handler->OnEvent(event.payload);
    if (stop_requested_) {
      stop_requested_ = false;
      return RunOutcome::kStopped;
    }
  }
  if (end != kTimeMax && end > now_) now_ = end;
  return outcome;
}

}  // namespace hetsim::engine
