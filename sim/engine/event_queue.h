// Pending events ordered by (time, insertion sequence): an indexed 4-ary min-heap over a pool of
// event slots with a free list. Push, pop, cancel and reschedule are O(log n) and allocate nothing once
// the pool and the heap have grown to the peak number of pending events.
//
// Why this shape: the network moves flow completions every time rates change, so cancel and
// reschedule must be cheap and must not leave tombstones behind (a lazy-deletion heap would grow with
// every move). Each heap entry carries its own key so sifting never chases a pointer; each slot
// remembers its heap position so a cancel or a move finds its entry in O(1).
#ifndef HETSIM_SIM_ENGINE_EVENT_QUEUE_H_
#define HETSIM_SIM_ENGINE_EVENT_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/engine/event.h"
#include "sim/engine/time.h"

namespace hetsim::sim {

class EventQueue {
 public:
  struct Popped {
    Time at;
    EventHandler* handler;
    uint64_t payload;
  };

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // Time of the earliest pending event; the queue must not be empty.
  Time top_time() const { return heap_.front().at; }

  // Grows the pool and the heap up front so that the first `n` pending events allocate nothing.
  void Reserve(size_t n) {
    heap_.reserve(n);
    slots_.reserve(n);
  }

  EventId Push(Time at, EventHandler* handler, uint64_t payload) {
    const uint32_t slot = AllocateSlot();
    Slot& s = slots_[slot];
    s.handler = handler;
    s.payload = payload;
    heap_.push_back(Entry{at, next_sequence_++, slot});
    SiftUp(heap_.size() - 1);
    return EventId{(static_cast<uint64_t>(s.generation) << 32) | slot};
  }

  // Removes and returns the earliest event; the queue must not be empty.
  Popped Pop() {
    const Entry top = heap_.front();
    const Slot& s = slots_[top.slot];
    const Popped popped{top.at, s.handler, s.payload};
    FreeSlot(top.slot);
    const Entry last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) SiftDown(0, last);
    return popped;
  }

  bool IsPending(EventId id) const { return FindSlot(id) != kNoSlot; }

  // Time the event is scheduled at, or kTimeMax when it is not pending.
  Time TimeOf(EventId id) const {
    const uint32_t slot = FindSlot(id);
    return slot == kNoSlot ? kTimeMax : heap_[slots_[slot].heap_index].at;
  }

  // Returns false (and does nothing) when the event already ran or was cancelled.
  bool Cancel(EventId id) {
    const uint32_t slot = FindSlot(id);
    if (slot == kNoSlot) return false;
    const size_t index = slots_[slot].heap_index;
    FreeSlot(slot);
    const Entry last = heap_.back();
    heap_.pop_back();
    if (index < heap_.size()) Replace(index, last);
    return true;
  }

  // Moves a pending event to `at`. The moved event is ordered as if inserted now, so among events at
  // the same time it runs after those already scheduled. Returns false when the event is not pending.
  bool Reschedule(EventId id, Time at) {
    const uint32_t slot = FindSlot(id);
    if (slot == kNoSlot) return false;
    const size_t index = slots_[slot].heap_index;
    Replace(index, Entry{at, next_sequence_++, slot});
    return true;
  }

 private:
  static constexpr uint32_t kNoSlot = 0xffffffffu;
  static constexpr size_t kArity = 4;

  struct Entry {
    Time at;
    uint64_t sequence;  // insertion order: breaks ties between equal times
    uint32_t slot;
  };
  struct Slot {
    EventHandler* handler = nullptr;
    uint64_t payload = 0;
    uint32_t heap_index = 0;  // position in heap_ while pending; next free slot while free
    uint32_t generation = 1;
  };

  static bool Earlier(const Entry& a, const Entry& b) {
    return a.at != b.at ? a.at < b.at : a.sequence < b.sequence;
  }

  uint32_t FindSlot(EventId id) const {
    const uint32_t slot = static_cast<uint32_t>(id.value);
    const uint32_t generation = static_cast<uint32_t>(id.value >> 32);
    if (slot >= slots_.size() || slots_[slot].generation != generation) return kNoSlot;
    return slot;
  }

  uint32_t AllocateSlot() {
    if (free_head_ != kNoSlot) {
      const uint32_t slot = free_head_;
      free_head_ = slots_[slot].heap_index;
      return slot;
    }
    slots_.emplace_back();
    return static_cast<uint32_t>(slots_.size() - 1);
  }

  void FreeSlot(uint32_t slot) {
    Slot& s = slots_[slot];
    // A new generation makes every id naming the old event stale; 0 is skipped so that no id is 0.
    if (++s.generation == 0) s.generation = 1;
    s.heap_index = free_head_;
    free_head_ = slot;
  }

  void Place(size_t index, const Entry& e) {
    heap_[index] = e;
    slots_[e.slot].heap_index = static_cast<uint32_t>(index);
  }

  // Puts `e` at `index` (whose old entry is gone) and restores the heap order in either direction.
  void Replace(size_t index, const Entry& e) {
    if (index > 0 && Earlier(e, heap_[(index - 1) / kArity])) {
      heap_[index] = e;
      SiftUp(index);
    } else {
      SiftDown(index, e);
    }
  }

  void SiftUp(size_t index) {
    const Entry e = heap_[index];
    while (index > 0) {
      const size_t parent = (index - 1) / kArity;
      if (!Earlier(e, heap_[parent])) break;
      Place(index, heap_[parent]);
      index = parent;
    }
    Place(index, e);
  }

  // Sinks the hole at `index` towards the leaves until `e` fits there.
  void SiftDown(size_t index, const Entry& e) {
    const size_t n = heap_.size();
    for (;;) {
      const size_t first = index * kArity + 1;
      if (first >= n) break;
      size_t best = first;
      const size_t end = first + kArity < n ? first + kArity : n;
      for (size_t c = first + 1; c < end; ++c) {
        if (Earlier(heap_[c], heap_[best])) best = c;
      }
      if (!Earlier(heap_[best], e)) break;
      Place(index, heap_[best]);
      index = best;
    }
    Place(index, e);
  }

  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  uint32_t free_head_ = kNoSlot;
  uint64_t next_sequence_ = 0;
};

}  // namespace hetsim::sim

#endif  // HETSIM_SIM_ENGINE_EVENT_QUEUE_H_
