// Pending events ordered by (time, insertion sequence), as a ladder queue (Tang, Goh, Thng, 2005):
//   - bottom: the few imminent events, in a vector sorted latest-first (pop from the back);
//   - rungs: calendars of buckets 2^shift picoseconds wide, each bucket an unsorted doubly linked
//     list of event slots. When the clock reaches a bucket it is sorted into the bottom, or, if it
//     holds many events at distinct times, spread over a finer rung below (so the bottom stays small);
//   - top: an unsorted list of events beyond the rungs; when the rungs are used up, the top is spread
//     over a fresh rung sized to about one event per bucket.
// An event is moved a few times in its life (top, rung buckets, bottom), each an O(1) list operation
// or a sort of a handful of events: O(1) amortized per event whatever the number pending, where a
// heap pays O(log n) dependent cache misses (measured in docs/performance.md: std::priority_queue of
// bare 64-bit keys manages under 9 M events/s at 1e5 pending here).
//
// Cancel and reschedule are O(1) (O(log b) in the small bottom): every pending event owns a slot
// that knows which list it is on, so it is unlinked on the spot and nothing dead is left behind.
// Slots come from a pool with a free list: nothing is allocated per event once the pool, the bottom
// and the rungs have grown to their peak sizes. Events may be pushed at any time, earlier than
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
  // Where a pending slot is; any other value is its rung and bucket.
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

  static constexpr unsigned kBucketBits = 24;  // location = rung << 24 | bucket
  static constexpr uint64_t kMaxBuckets = uint64_t{1} << 22;
  static constexpr size_t kMaxRungs = 16;
  static constexpr size_t kBottomMax = 48;  // a larger bucket of distinct times gets its own rung

  struct Rung {
    std::vector<uint32_t> heads;  // bucket lists
    uint64_t start = 0;
    uint64_t end = 0;             // events from here on belong to an outer rung or the top
    unsigned shift = 0;           // bucket width is 2^shift ps
    uint32_t cursor = 0;          // next bucket to visit
    uint64_t BucketStart(uint32_t b) const { return start + (static_cast<uint64_t>(b) << shift); }
  };

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
      return;
    }
    // The deepest rung covers the earliest times; each outer rung starts where the inner one ends.
    for (size_t r = depth_; r-- > 0;) {
      Rung& rung = rungs_[r];
      if (at < rung.end) {
        const uint32_t bucket = static_cast<uint32_t>((at - rung.start) >> rung.shift);
        Link(slot, rung.heads[bucket]);
        s.location = static_cast<uint32_t>(r << kBucketBits) | bucket;
        return;
      }
    }
    Link(slot, top_);
    s.location = kInTop;
    top_min_ = std::min(top_min_, at);
    top_max_ = std::max(top_max_, at);
    ++top_count_;
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
    uint32_t* head = &top_;
    if (s.location == kInTop) {
      --top_count_;
    } else {
      head = &rungs_[s.location >> kBucketBits].heads[s.location & ((1u << kBucketBits) - 1)];
    }
    if (s.prev != kNone) {
      slots_[s.prev].next = s.next;
    } else {
      *head = s.next;
    }
    if (s.next != kNone) slots_[s.next].prev = s.prev;
  }

  // Makes bottom_.back() the earliest pending event if its time is at most `limit`; says whether it
  // did. Out of line: the callers' fast path (a non-empty bottom) stays small enough to inline.
  [[gnu::noinline]] bool Settle(uint64_t limit) {
    for (;;) {
      if (!bottom_.empty()) return bottom_.back().at <= limit;
      if (live_ == 0) return false;
      if (depth_ == 0) {
        SpreadTop();
        continue;
      }
      Rung& rung = rungs_[depth_ - 1];
      const uint32_t buckets = static_cast<uint32_t>(rung.heads.size());
      while (rung.cursor < buckets && rung.heads[rung.cursor] == kNone) ++rung.cursor;
      // Everything before the cursor's bucket now belongs to the bottom (pushes included).
      bottom_end_ = std::min(rung.BucketStart(rung.cursor), rung.end);
      if (rung.cursor == buckets) {
        --depth_;  // rung used up: back to the outer rung (whose cursor is still on our bucket)
        continue;
      }
      if (bottom_end_ > limit) return false;  // the earliest event is in a bucket beyond `limit`
      uint32_t& head = rung.heads[rung.cursor];
      size_t count = 0;
      for (uint32_t slot = head; slot != kNone && count <= kBottomMax; slot = slots_[slot].next) {
        ++count;
      }
      uint64_t lo = 0;
      uint64_t hi = 0;
      if (count > kBottomMax && depth_ < kMaxRungs) {  // large: are its times distinct?
        count = 0;
        lo = ~uint64_t{0};
        for (uint32_t slot = head; slot != kNone; slot = slots_[slot].next) {
          ++count;
          lo = std::min(lo, slots_[slot].at);
          hi = std::max(hi, slots_[slot].at);
        }
      }
      if (hi > lo) {
        // Many distinct times: a finer rung for this bucket; the cursor stays here so that events
        // pushed later between the new rung's end and the bucket's end are still seen in order.
        const uint64_t bucket_end = std::min(rung.BucketStart(rung.cursor + 1), rung.end);
        const uint32_t list = head;
        head = kNone;
        BuildRung(depth_, list, count, lo, hi, bucket_end);
        continue;
      }
      for (uint32_t slot = head; slot != kNone; slot = slots_[slot].next) {
        Slot& s = slots_[slot];
        s.location = kInBottom;
        bottom_.push_back(BottomEntry{s.at, s.sequence, slot});
      }
      head = kNone;
      ++rung.cursor;
      bottom_end_ = std::min(rung.BucketStart(rung.cursor), rung.end);
      if (bottom_.size() > 1) std::sort(bottom_.begin(), bottom_.end(), Later);
    }
  }

  // The rungs are used up: the top becomes the outermost rung.
  void SpreadTop() {
    const uint32_t list = top_;
    const size_t count = top_count_;
    const uint64_t lo = top_min_;
    const uint64_t hi = top_max_;
    top_ = kNone;
    top_count_ = 0;
    top_min_ = ~uint64_t{0};
    top_max_ = 0;
    BuildRung(0, list, count, lo, hi, ~uint64_t{0});
  }

  // Makes rung `level` the deepest: about one event per bucket over [lo, hi], with a power-of-two
  // bucket width (a shift, no division), ending at `end_cap` at the latest; relinks `list` into it.
  void BuildRung(size_t level, uint32_t list, size_t count, uint64_t lo, uint64_t hi,
                 uint64_t end_cap) {
    if (rungs_.size() <= level) rungs_.resize(level + 1);
    Rung& rung = rungs_[level];
    const uint64_t span = hi - lo;
    const uint64_t target = std::clamp<uint64_t>(count, 1, kMaxBuckets);
    unsigned shift = 0;
    while ((span >> shift) >= target) ++shift;
    const uint64_t buckets = (span >> shift) + 1;
    rung.heads.assign(buckets, kNone);
    rung.start = lo;
    rung.shift = shift;
    rung.cursor = 0;
    __extension__ using Wide = unsigned __int128;
    const Wide end = static_cast<Wide>(lo) + (static_cast<Wide>(buckets) << shift);
    rung.end = end > end_cap ? end_cap : static_cast<uint64_t>(end);
    depth_ = level + 1;
    bottom_end_ = lo;
    for (uint32_t slot = list; slot != kNone;) {
      Slot& s = slots_[slot];
      const uint32_t next = s.next;
      const uint32_t bucket = static_cast<uint32_t>((s.at - lo) >> shift);
      Link(slot, rung.heads[bucket]);
      s.location = static_cast<uint32_t>(level << kBucketBits) | bucket;
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

  std::vector<Rung> rungs_;          // [0, depth_) in use, the deepest last
  size_t depth_ = 0;

  uint32_t top_ = kNone;
  size_t top_count_ = 0;
  uint64_t top_min_ = ~uint64_t{0};  // bounds of the top's times (may be loose after unlinks)
  uint64_t top_max_ = 0;
};

}  // namespace hetsim::sim

#endif  // HETSIM_SIM_ENGINE_EVENT_QUEUE_H_
