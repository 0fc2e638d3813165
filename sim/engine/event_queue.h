// Pending events ordered by (time, insertion sequence), as a two-tier calendar queue in the spirit
// of the ladder queue (Tang, Goh, Thng, 2005):
//   - bottom: the few imminent events, in a vector sorted latest-first (pop from the back);
//   - calendar: buckets of 2^shift picoseconds, each an unsorted doubly linked list of event slots;
//     a bucket is sorted into the bottom only when the clock reaches it;
//   - top: an unsorted list of events beyond the calendar; when the calendar is used up, the top is
//     spread over a fresh calendar sized to about one event per bucket.
// An event is moved two or three times in its life (top, bucket, bottom), each an O(1) list
// operation or a sort of a bucket of a few events: O(1) amortized per event whatever the number
// pending, where a heap pays O(log n) dependent cache misses (measured in docs/performance.md:
// std::priority_queue of bare 64-bit keys manages under 9 M events/s at 1e5 pending here).
//
// Cancel and reschedule are O(1) (O(log b) in the small bottom): every pending event owns a slot
// that knows which list it is on, so it is unlinked on the spot and nothing dead is left behind.
// Slots come from a pool with a free list: nothing is allocated per event once the pool, the bottom
// and the calendar have grown to their peak sizes. Events may be pushed at any time, earlier than
// pending ones included (the simulator only forbids the past).
#ifndef HETSIM_SIM_ENGINE_EVENT_QUEUE_H_
#define HETSIM_SIM_ENGINE_EVENT_QUEUE_H_

#include <algorithm>
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

  bool empty() const { return live_ == 0; }
  size_t size() const { return live_; }

  // True when the earliest pending event is at or before `end`; it is then the one Pop() returns.
  bool HasEventNotAfter(Time end) {
    if (!bottom_.empty()) return bottom_.back().at <= static_cast<uint64_t>(end);  // fast path
    return Settle(static_cast<uint64_t>(end));
  }

  // Grows the pool up front so that the first `n` pending events allocate no slot.
  void Reserve(size_t n) { slots_.reserve(n); }

  // `at` must not be negative.
  EventId Push(Time at, EventHandler* handler, uint64_t payload) {
    const uint32_t slot = AllocateSlot();
    Slot& s = slots_[slot];
    s.handler = handler;
    s.payload = payload;
    Insert(slot, static_cast<uint64_t>(at));
    ++live_;
    return EventId{(static_cast<uint64_t>(s.generation) << 32) | slot};
  }

  // Removes and returns the earliest event; the queue must not be empty.
  Popped Pop() {
    if (bottom_.empty()) Settle(~uint64_t{0});
    const BottomEntry e = bottom_.back();
    bottom_.pop_back();
    const Slot& s = slots_[e.slot];
    const Popped popped{static_cast<Time>(e.at), s.handler, s.payload};
    FreeSlot(e.slot);
    --live_;
    return popped;
  }

  bool IsPending(EventId id) const { return FindSlot(id) != kNone; }

  // Time the event is scheduled at, or kTimeMax when it is not pending.
  Time TimeOf(EventId id) const {
    const uint32_t slot = FindSlot(id);
    return slot == kNone ? kTimeMax : static_cast<Time>(slots_[slot].at);
  }

  // Returns false (and does nothing) when the event already ran or was cancelled.
  bool Cancel(EventId id) {
    const uint32_t slot = FindSlot(id);
    if (slot == kNone) return false;
    Unlink(slot);
    FreeSlot(slot);
    --live_;
    return true;
  }

  // Moves a pending event to `at` (not negative). The moved event is ordered as if inserted now, so
  // among events at the same time it runs after those already scheduled. Returns false when the
  // event is not pending.
  bool Reschedule(EventId id, Time at) {
    const uint32_t slot = FindSlot(id);
    if (slot == kNone) return false;
    Unlink(slot);
    Insert(slot, static_cast<uint64_t>(at));
    return true;
  }

 private:
  static constexpr uint32_t kNone = 0xffffffffu;
  // Where a pending slot is; any other value is its calendar bucket.
  static constexpr uint32_t kInBottom = 0xfffffffeu;
  static constexpr uint32_t kInTop = 0xfffffffdu;
  static constexpr uint32_t kFree = 0xfffffffcu;

  struct Slot {
    EventHandler* handler = nullptr;
    uint64_t payload = 0;
    uint64_t at = 0;
    uint64_t sequence = 0;  // insertion order: breaks ties between equal times
    uint32_t next = kNone;  // list links (calendar bucket or top); next free slot while free
    uint32_t prev = kNone;
    uint32_t location = kFree;
    uint32_t generation = 1;
  };
  struct BottomEntry {
    uint64_t at;
    uint64_t sequence;
    uint32_t slot;
  };
  static bool Later(const BottomEntry& a, const BottomEntry& b) {
    return a.at != b.at ? a.at > b.at : a.sequence > b.sequence;
  }

  void Insert(uint32_t slot, uint64_t at) {
    Slot& s = slots_[slot];
    s.at = at;
    s.sequence = next_sequence_++;
    if (at < bottom_end_) {
      const BottomEntry e{at, s.sequence, slot};
      // Latest first; a new event is later than every equal-time one, so it goes before them. Events
      // for the current time (the common case) land at the back: nothing to shift.
      bottom_.insert(std::lower_bound(bottom_.begin(), bottom_.end(), e, Later), e);
      s.location = kInBottom;
    } else if (at < calendar_end_) {
      const uint32_t bucket = static_cast<uint32_t>((at - calendar_start_) >> shift_);
      Link(slot, buckets_[bucket]);
      s.location = bucket;
    } else {
      Link(slot, top_);
      s.location = kInTop;
      top_min_ = std::min(top_min_, at);
      top_max_ = std::max(top_max_, at);
      ++top_count_;
    }
  }

  void Link(uint32_t slot, uint32_t& head) {
    Slot& s = slots_[slot];
    s.prev = kNone;
    s.next = head;
    if (head != kNone) slots_[head].prev = slot;
    head = slot;
  }

  void Unlink(uint32_t slot) {
    Slot& s = slots_[slot];
    if (s.location == kInBottom) {
      const BottomEntry e{s.at, s.sequence, slot};
      bottom_.erase(std::lower_bound(bottom_.begin(), bottom_.end(), e, Later));
      return;
    }
    uint32_t& head = s.location == kInTop ? top_ : buckets_[s.location];
    if (s.location == kInTop) --top_count_;
    if (s.prev != kNone) {
      slots_[s.prev].next = s.next;
    } else {
      head = s.next;
    }
    if (s.next != kNone) slots_[s.next].prev = s.prev;
  }

  // Makes bottom_.back() the earliest pending event if its time is at most `limit`; says whether it
  // did. Out of line: the callers' fast path (a non-empty bottom) stays small enough to inline.
  [[gnu::noinline]] bool Settle(uint64_t limit) {
    for (;;) {
      if (!bottom_.empty()) return bottom_.back().at <= limit;
      if (live_ == 0) return false;
      const uint32_t buckets = static_cast<uint32_t>(buckets_.size());
      while (cursor_ < buckets && buckets_[cursor_] == kNone) ++cursor_;
      // Everything before the cursor's bucket now belongs to the bottom (pushes included).
      bottom_end_ = calendar_start_ + (static_cast<uint64_t>(cursor_) << shift_);
      if (cursor_ == buckets) {
        SpreadTop();
        continue;
      }
      if (bottom_end_ > limit) return false;  // the earliest event is in a bucket beyond `limit`
      // Move the cursor's bucket into the bottom, sorted latest first.
      for (uint32_t slot = buckets_[cursor_]; slot != kNone; slot = slots_[slot].next) {
        Slot& s = slots_[slot];
        s.location = kInBottom;
        bottom_.push_back(BottomEntry{s.at, s.sequence, slot});
      }
      buckets_[cursor_] = kNone;
      ++cursor_;
      bottom_end_ = calendar_start_ + (static_cast<uint64_t>(cursor_) << shift_);
      if (bottom_.size() > 1) std::sort(bottom_.begin(), bottom_.end(), Later);
    }
  }

  // The calendar is used up: spread the top over a fresh calendar of about one event per bucket,
  // starting at the earliest top event, with a power-of-two bucket width (a shift, no division).
  void SpreadTop() {
    const uint64_t span = top_max_ - top_min_;  // the top is not empty when this is called
    const uint64_t target = std::max<uint64_t>(top_count_, 1);
    unsigned shift = 0;
    while ((span >> shift) >= target) ++shift;
    const uint64_t buckets = (span >> shift) + 1;
    buckets_.assign(buckets, kNone);
    calendar_start_ = top_min_;
    shift_ = shift;
    cursor_ = 0;
    bottom_end_ = calendar_start_;
    __extension__ using Wide = unsigned __int128;
    const Wide end = static_cast<Wide>(calendar_start_) + (static_cast<Wide>(buckets) << shift);
    calendar_end_ = end > ~uint64_t{0} ? ~uint64_t{0} : static_cast<uint64_t>(end);
    uint32_t slot = top_;
    top_ = kNone;
    top_count_ = 0;
    top_min_ = ~uint64_t{0};
    top_max_ = 0;
    while (slot != kNone) {
      const uint32_t next = slots_[slot].next;
      const uint32_t bucket = static_cast<uint32_t>((slots_[slot].at - calendar_start_) >> shift_);
      Link(slot, buckets_[bucket]);
      slots_[slot].location = bucket;
      slot = next;
    }
  }

  uint32_t FindSlot(EventId id) const {
    const uint32_t slot = static_cast<uint32_t>(id.value);
    const uint32_t generation = static_cast<uint32_t>(id.value >> 32);
    if (slot >= slots_.size() || slots_[slot].generation != generation ||
        slots_[slot].location == kFree) {
      return kNone;
    }
    return slot;
  }

  uint32_t AllocateSlot() {
    if (free_head_ != kNone) {
      const uint32_t slot = free_head_;
      free_head_ = slots_[slot].next;
      return slot;
    }
    slots_.emplace_back();
    return static_cast<uint32_t>(slots_.size() - 1);
  }

  void FreeSlot(uint32_t slot) {
    Slot& s = slots_[slot];
    s.location = kFree;
    // A new generation makes every id naming the old event stale; 0 is skipped so that no id is 0.
    if (++s.generation == 0) s.generation = 1;
    s.next = free_head_;
    free_head_ = slot;
  }

  std::vector<Slot> slots_;
  uint32_t free_head_ = kNone;
  uint64_t next_sequence_ = 0;
  size_t live_ = 0;

  std::vector<BottomEntry> bottom_;  // latest first
  uint64_t bottom_end_ = 0;          // events before this time go to the bottom

  std::vector<uint32_t> buckets_;    // list heads
  uint64_t calendar_start_ = 0;
  uint64_t calendar_end_ = 0;        // events from this time on go to the top
  unsigned shift_ = 0;               // bucket width is 2^shift_ ps
  uint32_t cursor_ = 0;              // next bucket to move into the bottom

  uint32_t top_ = kNone;
  size_t top_count_ = 0;
  uint64_t top_min_ = ~uint64_t{0};  // bounds of the top's times (may be loose after unlinks)
  uint64_t top_max_ = 0;
};

}  // namespace hetsim::sim

#endif  // HETSIM_SIM_ENGINE_EVENT_QUEUE_H_
