// The vocabulary shared by the event queue and the simulator: who handles an event, what it carries,
// and the id that names a pending event for cancellation or rescheduling.
#ifndef HETSIM_SIM_ENGINE_EVENT_H_
#define HETSIM_SIM_ENGINE_EVENT_H_

#include <cstdint>

namespace hetsim::engine {

// Receives events. A module owns one handler object and tells its events apart by the payload
// (an index, a kind in the low bits, ...), so an event costs no allocation and no std::function.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void OnEvent(uint64_t payload) = 0;
};

// Names one scheduled event: the pool slot in the low 32 bits, the slot's generation in the high 32
// bits. A slot's generation changes every time the slot is freed, so an id whose event already ran or
// was cancelled is recognised as stale instead of touching whatever event reuses the slot.
struct EventId {
  uint64_t value = 0;  // 0 is never a valid id (generations start at 1)

  bool valid() const { return value != 0; }
  friend bool operator==(EventId a, EventId b) { return a.value == b.value; }
  friend bool operator!=(EventId a, EventId b) { return a.value != b.value; }
};

}  // namespace hetsim::engine

#endif  // HETSIM_SIM_ENGINE_EVENT_H_
