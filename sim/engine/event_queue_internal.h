// Pending events ordered by (time, insertion sequence), as a ladder queue (Tang, Goh, Thng, 2005):
//   - bottom: the few imminent events, in a vector sorted latest-first (pop from the back);
//   - rungs: calendars of buckets 2^shift picoseconds wide, a few events per bucket. When the clock
//     reaches a bucket it is sorted into the bottom, or, if it holds many events at distinct times,
//     spread over a finer rung below (so the bottom stays small);
//   - coarse: a calendar of a few hundred wide buckets, each a vector; its buckets become rung 0 one
//     at a time, so that a rung holds a couple of thousand events and stays in the cache;
//   - top: an unsorted vector of the events beyond the coarse calendar; when everything else is used
//     up, the top is spread over a fresh coarse calendar.
// An event is moved a few times in its life (top, coarse, rung, bottom), each an O(1) step or a sort
// of a handful of events: O(1) amortized per event whatever the number pending, where a heap pays
// O(log n) dependent cache misses (docs/performance.md has the figures).
//
// Times are kept as raw uint64 picoseconds inside (TimeToPicoseconds at Push, PicosecondsToTime at
// Pop): the bucket arithmetic shifts and subtracts them, and unsigned keys make the 128-bit (time,
// sequence) comparison one instruction; the queue's interface speaks Time.
//
// What moves is a 24-byte entry (time, sequence, slot), never the event itself: handler and payload
// stay in a slot of a pool (one cache line), found by the entry's slot index. Entries live in arrays wherever
// they can, so that moving them streams through memory: the top and the coarse buckets are appended
// to, and a rung is built by a counting sort of its entries (one contiguous run per bucket). Events
// pushed into an existing rung are appended to the rung's own array of pushes, each bucket's chained
// through indices into it (no node pool, no free list); once the pushes already taken outnumber what
// is left in the rung, the rung is spread again into runs, which reclaims them. The only random
// access per event is its slot, which is prefetched a few dozen events before it is popped.
//
// Cancel and reschedule are O(1): they change the slot (a reschedule gives it a new sequence and
// pushes a new entry), and the old entry, whose sequence no longer matches its slot's, is dropped
// when it reaches the bottom. Dead entries are swept out when they outnumber the live ones, so the
// memory stays proportional to the pending events. Sequences are 64-bit and never reused, so a dead
// entry can never be mistaken for a live one.
//
// Nothing is allocated per event once the pool and the arrays have grown to their peak sizes. Events
// may be pushed at any time, earlier than pending ones included (the simulator only forbids the past).
#ifndef HETSIM_SIM_ENGINE_EVENT_QUEUE_INTERNAL_H_
#define HETSIM_SIM_ENGINE_EVENT_QUEUE_INTERNAL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/time.h"
#include "sim/engine/event.h"

namespace hetsim::engine {

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
    if (LiveAtBack()) return bottom_.back().at <= Key(end);  // fast path
    return Settle(Key(end));
  }

  // Grows the pool up front so that the first `n` pending events allocate no slot.
  void Reserve(size_t n) {
    slots_.reserve(n);
    top_.reserve(n);
  }

  // `at` must not be negative.
  EventId Push(Time at, EventHandler* handler, uint64_t payload) {
    const uint32_t slot = AllocateSlot();
    Slot& s = slots_[slot];
    s.handler = handler;
    s.payload = payload;
    s.sequence = next_sequence_++;
    s.at = Key(at);
    Insert(Entry{s.at, s.sequence, slot, kNone});
    ++live_;
    return EventId{(static_cast<uint64_t>(s.generation) << 32) | slot};
  }

  // Removes and returns the earliest event; the queue must not be empty.
  Popped Pop() {
    if (!LiveAtBack()) Settle(~uint64_t{0});
    return PopChecked();
  }

  // Pop() for the run loop: only right after HasEventNotAfter() returned true, which left the
  // earliest event live at the bottom's back (saves checking it twice per event).
  Popped PopChecked() {
    const Entry e = bottom_.back();
    bottom_.pop_back();
    const Slot& s = slots_[e.slot];
    const Popped popped{PicosecondsToTime(static_cast<int64_t>(e.at)), s.handler, s.payload};
    FreeSlot(e.slot);
    --live_;
    return popped;
  }

  bool IsPending(EventId id) const { return FindSlot(id) != kNone; }

  // Time the event is scheduled at, or kTimeMax when it is not pending.
  Time TimeOf(EventId id) const {
    const uint32_t slot = FindSlot(id);
    return slot == kNone ? kTimeMax : PicosecondsToTime(static_cast<int64_t>(slots_[slot].at));
  }

  // Returns false (and does nothing) when the event already ran or was cancelled.
  bool Cancel(EventId id) {
    const uint32_t slot = FindSlot(id);
    if (slot == kNone) return false;
    FreeSlot(slot);  // its entry is dead from now on
    --live_;
    NoteDeadEntry();
    return true;
  }

  // Moves a pending event to `at` (not negative). The moved event is ordered as if inserted now, so
  // among events at the same time it runs after those already scheduled. Returns false when the
  // event is not pending.
  bool Reschedule(EventId id, Time at) {
    const uint32_t slot = FindSlot(id);
    if (slot == kNone) return false;
    Slot& s = slots_[slot];
    s.sequence = next_sequence_++;  // the old entry is dead from now on
    s.at = Key(at);
    Insert(Entry{s.at, s.sequence, slot, kNone});
    NoteDeadEntry();
    return true;
  }

 private:
  static constexpr uint32_t kNone = 0xffffffffu;
  static uint64_t Key(Time t) { return static_cast<uint64_t>(TimeToPicoseconds(t)); }  // t >= 0
  static constexpr uint64_t kFreeSequence = ~uint64_t{0};

  // One cache line: a slot is read at random (pop, cancel, move), and one line is one miss.
  struct alignas(64) Slot {
    EventHandler* handler = nullptr;
    uint64_t payload = 0;
    uint64_t sequence = kFreeSequence;  // of the one live entry; kFreeSequence while free
    uint64_t at = 0;
    uint32_t generation = 1;  // the EventId's high half
    uint32_t next_free = kNone;
  };
  // One entry per pending event, plus dead ones (cancelled, or superseded by a reschedule).
  struct Entry {
    uint64_t at;
    uint64_t sequence;  // insertion order: breaks ties between equal times
    uint32_t slot;
    uint32_t next;  // the bucket's previous push (Rung::pushed only), or kNone
  };
  // (at, sequence) compared as one 128-bit key: branch-free, where a two-step comparison mispredicts
  // on the bottom's insertion sort of random times.
  static bool Later(const Entry& a, const Entry& b) {
    __extension__ using Key = unsigned __int128;
    return ((static_cast<Key>(a.at) << 64) | a.sequence) > ((static_cast<Key>(b.at) << 64) | b.sequence);
  }
  bool IsLive(const Entry& e) const { return slots_[e.slot].sequence == e.sequence; }

  static constexpr uint64_t kMaxBuckets = uint64_t{1} << 22;
  static constexpr size_t kMaxRungs = 16;
  static constexpr size_t kEventsPerBucket = 4;        // rung buckets: fewer visits, short sorts
  static constexpr size_t kBottomMax = 48;             // a larger bucket of distinct times gets its own rung
  static constexpr size_t kCoarseBucketEvents = 2048;  // a rung of this many fits the L1/L2 cache
  static constexpr uint64_t kMaxCoarseBuckets = 1024;
  static constexpr size_t kDeadSlack = 4096;      // dead entries tolerated beyond the live count
  static constexpr size_t kBottomShiftMax = 256;  // a bottom this large is not shifted for a later event
  static constexpr size_t kBottomSpill = 1024;    // a bottom this large of distinct times becomes a rung
  static constexpr size_t kTakenSlack = 2048;     // taken pushes a rung keeps before it is spread again

  // The entries pushed into bucket b since the rung was (re)spread: lists[b].count of them, the
  // latest at pushed[lists[b].head], each one's `next` the one pushed before it.
  struct PushList {
    uint32_t head = kNone;
    uint32_t count = 0;
  };
  struct Rung {
    std::vector<Entry> spread;     // the entries the rung was (re)spread from, grouped by bucket:
    std::vector<uint32_t> bounds;  //   bucket b's are spread[bounds[b], bounds[b + 1])
    std::vector<Entry> pushed;     // the entries pushed since, in push order
    std::vector<PushList> lists;   // per bucket, its entries in `pushed`
    uint32_t taken = 0;            // entries of `pushed` already handed on (dead space)
    uint64_t start = 0;
    uint64_t end = 0;         // events from here on belong to an outer rung or beyond
    unsigned shift = 0;       // bucket width is 2^shift ps
    uint32_t cursor = 0;      // next bucket to visit
    uint32_t prefetched = 0;  // PrefetchAhead's progress
    uint32_t buckets() const { return static_cast<uint32_t>(lists.size()); }
    uint64_t BucketStart(uint32_t b) const { return start + (static_cast<uint64_t>(b) << shift); }
    bool BucketEmpty(uint32_t b) const { return bounds[b] == bounds[b + 1] && lists[b].count == 0; }
    // Appends `e` to bucket b: a store at the end of one array, nothing read but the bucket's list.
    // Inlined into Insert (GCC kept it a call: about 1% of the exact 16K run, docs/performance.md).
    [[gnu::always_inline]] void Push(uint32_t b, const Entry& e) {
      PushList& list = lists[b];
      pushed.push_back(Entry{e.at, e.sequence, e.slot, list.head});
      PrefetchForAppend(pushed);
      list.head = static_cast<uint32_t>(pushed.size() - 1);
      ++list.count;
    }
  };

  // Drops dead entries from the back of the bottom; true when a live one is left there.
  bool LiveAtBack() {
    while (!bottom_.empty()) {
      if (IsLive(bottom_.back())) return true;
      bottom_.pop_back();
      --dead_;
    }
    return false;
  }

  void Insert(const Entry& e) {
    if (e.at < bottom_end_) {
      // A new event is later than every equal-time one, so one at or after the bottom's latest time is
      // later than the whole bottom: in a large bottom (thousands of flows ending at one instant) it
      // joins the next bucket instead of shifting every entry. Once one has, every event at or after
      // it must follow it there, whatever the bottom's size.
      if ((e.at >= early_min_ || (bottom_.size() > kBottomShiftMax && e.at >= bottom_.front().at)) &&
          PushToNextBucket(e)) {
        return;
      }
      if (bottom_.size() > kBottomSpill && SpillBottom()) {
        Insert(e);  // into the new rung, or into the (empty) bottom if earlier than all of it
        return;
      }
      // Latest first; a new event is later than every equal-time one, so it goes before them. Events
      // for the current time (the common case) land at the back: nothing to shift.
      bottom_.insert(std::lower_bound(bottom_.begin(), bottom_.end(), e, Later), e);
      return;
    }
    // The deepest rung covers the earliest times; each outer rung starts where the inner one ends, so
    // rung 0's end bounds them all (most pushes land beyond it).
    if (depth_ != 0 && e.at < rungs_[0].end) {
      size_t r = depth_ - 1;
      while (e.at >= rungs_[r].end) --r;  // stops at rung 0 at the latest
      Rung& rung = rungs_[r];
      rung.Push(static_cast<uint32_t>((e.at - rung.start) >> rung.shift), e);
      return;
    }
    if (e.at < coarse_.end) {
      std::vector<Entry>& bucket = coarse_.buckets[(e.at - coarse_.start) >> coarse_.shift];
      bucket.push_back(e);
      PrefetchForAppend(bucket);
      return;
    }
    top_.push_back(e);
    PrefetchForAppend(top_);
    top_min_ = std::min(top_min_, e.at);
    top_max_ = std::max(top_max_, e.at);
  }

  // Appending streams into a few dozen coarse buckets and the top at once, more streams than the
  // hardware prefetcher follows: each new cache line was a store miss. Asking for the line a few
  // entries ahead hides it (a prefetch past the end of the buffer is harmless).
  static void PrefetchForAppend(const std::vector<Entry>& v) {
    constexpr size_t kAhead = 8;  // 192 bytes: the line after next
    __builtin_prefetch(v.data() + v.size() + kAhead, 1);
  }

  // Puts `e`, later than every bottom entry and earlier than bottom_end_, into the bucket the bottom is
  // refilled from next: the cursor bucket of the deepest rung with buckets left (an outer rung's
  // cursor stays on the bucket it refined), or else the coarse calendar's. Every other pending entry
  // is at or after bottom_end_, and the bucket is sorted when taken: every bottom entry is popped
  // before `e`, and `e` before everything else.
  bool PushToNextBucket(const Entry& e) {
    for (size_t r = depth_; r-- > 0;) {
      Rung& rung = rungs_[r];
      if (rung.cursor >= rung.buckets()) continue;  // used up: Settle leaves it for the outer one
      rung.Push(rung.cursor, e);
      early_min_ = std::min(early_min_, e.at);
      return true;
    }
    if (coarse_.cursor >= coarse_.buckets.size()) return false;  // the top is spread next
    coarse_.buckets[coarse_.cursor].push_back(e);
    early_min_ = std::min(early_min_, e.at);
    return true;
  }

  // A bottom of more than kBottomSpill entries at distinct times (events pushed before a bottom_end_
  // far ahead, when the bucket it was filled from was wide) becomes the deepest rung, over [its
  // earliest time, bottom_end_), as the ladder queue's bottom does when it overflows: pushes stop
  // shifting it. Not while early entries wait in the next bucket (they precede bottom_end_ too).
  bool SpillBottom() {
    const uint64_t lo = bottom_.back().at;
    if (early_min_ != ~uint64_t{0} || depth_ >= kMaxRungs || bottom_.front().at == lo || bottom_end_ <= lo) {
      return false;
    }
    gathered_.swap(bottom_);
    bottom_.clear();
    BuildRung(depth_, gathered_, lo, bottom_end_ - 1, bottom_end_);
    gathered_.clear();
    return true;
  }

  // Makes bottom_.back() the earliest pending event if its time is at most `limit`; says whether it
  // did. Out of line: the callers' fast path (a live entry at the bottom's back) stays small.
  [[gnu::noinline]] bool Settle(uint64_t limit) {
    for (;;) {
      if (LiveAtBack()) return bottom_.back().at <= limit;
      if (live_ == 0) {
        Clear();  // whatever is left is dead
        return false;
      }
      if (depth_ == 0) {
        if (coarse_.cursor == coarse_.buckets.size()) {
          SpreadTop();
          continue;
        }
        if (!RefineCoarse(limit)) return false;
        continue;
      }
      Rung& rung = rungs_[depth_ - 1];
      const uint32_t buckets = rung.buckets();
      while (rung.cursor < buckets && rung.BucketEmpty(rung.cursor)) ++rung.cursor;
      // Everything before the cursor's bucket now belongs to the bottom (pushes included).
      bottom_end_ = std::min(rung.BucketStart(rung.cursor), rung.end);
      if (rung.cursor == buckets) {
        --depth_;  // rung used up: back to the outer rung (whose cursor is still on our bucket)
        continue;
      }
      // The earliest event is in a bucket beyond `limit` (unless PushToNextBucket put one there early).
      if (bottom_end_ > limit && early_min_ > limit) return false;
      const uint32_t b = rung.cursor;
      early_min_ = ~uint64_t{0};  // the bucket is taken now, its early entries with it
      const size_t count = rung.bounds[b + 1] - rung.bounds[b] + rung.lists[b].count;
      if (count > kBottomMax && depth_ < kMaxRungs) {
        // Large: if its times are distinct, a finer rung for this bucket. The cursor stays here so
        // that events pushed later between the new rung's end and the bucket's end are still seen
        // in order.
        gathered_.clear();
        TakeBucket(rung, b, [this](const Entry& e) { gathered_.push_back(e); });
        uint64_t lo = ~uint64_t{0};
        uint64_t hi = 0;
        for (const Entry& e : gathered_) {
          lo = std::min(lo, e.at);
          hi = std::max(hi, e.at);
        }
        if (hi > lo) {
          const uint64_t bucket_end = std::min(rung.BucketStart(b + 1), rung.end);
          // Spanning at least up to the bucket's start: with early entries (PushToNextBucket) lo is
          // before it, and an event between the rung's end and the bucket's start would otherwise
          // land in a drained bucket of this rung.
          BuildRung(depth_, gathered_, lo, std::max(hi, rung.BucketStart(b)), bucket_end);
          continue;
        }
        AddManyToBottom(gathered_);
      } else if (count > kBottomMax) {  // too deep to refine
        gathered_.clear();
        TakeBucket(rung, b, [this](const Entry& e) { gathered_.push_back(e); });
        AddManyToBottom(gathered_);
      } else {
        TakeBucket(rung, b, [this](const Entry& e) { AddToBottom(e); });
      }
      ++rung.cursor;
      bottom_end_ = std::min(rung.BucketStart(rung.cursor), rung.end);
      if (rung.taken > kTakenSlack) ReclaimTaken(rung);  // rarely true: most buckets take no push
      PrefetchAhead(rung);
    }
  }

  // Hands bucket b's entries (its spread run and its pushes) to `sink` and empties the bucket.
  template <typename Sink>
  static void TakeBucket(Rung& rung, uint32_t b, Sink sink) {
    for (uint32_t i = rung.bounds[b]; i < rung.bounds[b + 1]; ++i) sink(rung.spread[i]);
    rung.bounds[b] = rung.bounds[b + 1];
    PushList& list = rung.lists[b];
    for (uint32_t n = list.head; n != kNone; n = rung.pushed[n].next) sink(rung.pushed[n]);
    rung.taken += list.count;
    list = PushList{};
  }

  // The rung's pushes already taken are dead space in `pushed`; once they outnumber what a new
  // spread copies (the entries and buckets left), the rung is spread again, so every copy is paid
  // for by as many takes (O(1) amortized) and `pushed` stays proportional to the rung.
  [[gnu::noinline]] void ReclaimTaken(Rung& rung) {
    const size_t left = (rung.spread.size() - rung.bounds[rung.cursor]) + (rung.pushed.size() - rung.taken) +
                        (rung.buckets() - rung.cursor);
    if (rung.taken > kTakenSlack + left) Respread(rung, /*drop_dead=*/false);
  }

  // Rebuilds the spread of the buckets from the cursor on with their runs and pushes (dropping dead
  // entries if asked: it reads their slots), and empties `pushed`. The order within a bucket does not
  // matter: a bucket is sorted by (time, sequence), which no two entries share, when it is taken.
  void Respread(Rung& rung, bool drop_dead) {
    respread_.clear();
    uint32_t* bounds = rung.bounds.data();
    // Buckets before the cursor were drained (their bounds are stale): they become empty runs.
    for (uint32_t b = 0; b < rung.cursor; ++b) bounds[b] = 0;
    for (uint32_t b = rung.cursor; b < rung.buckets(); ++b) {
      const uint32_t begin = bounds[b];
      const uint32_t end = bounds[b + 1];
      bounds[b] = static_cast<uint32_t>(respread_.size());
      for (uint32_t i = begin; i < end; ++i) {
        if (!drop_dead || IsLive(rung.spread[i])) respread_.push_back(rung.spread[i]);
      }
      PushList& list = rung.lists[b];
      for (uint32_t n = list.head; n != kNone; n = rung.pushed[n].next) {
        if (!drop_dead || IsLive(rung.pushed[n])) respread_.push_back(rung.pushed[n]);
      }
      list = PushList{};
    }
    bounds[rung.buckets()] = static_cast<uint32_t>(respread_.size());
    rung.spread.swap(respread_);
    rung.pushed.clear();
    rung.taken = 0;
  }

  // Adds one entry of a small bucket to the bottom, keeping it latest-first (an insertion sort: a
  // bucket holds about one event, and copying then sorting would read back what was just written).
  void AddToBottom(const Entry& e) {
    size_t j = bottom_.size();
    bottom_.push_back(e);
    for (; j > 0 && Later(e, bottom_[j - 1]); --j) bottom_[j] = bottom_[j - 1];
    bottom_[j] = e;
  }
  // Adds a large bucket (all at one time, or too deep to refine) to the bottom.
  void AddManyToBottom(const std::vector<Entry>& entries) {
    bottom_.insert(bottom_.end(), entries.begin(), entries.end());
    std::sort(bottom_.begin(), bottom_.end(), Later);
  }

  // Asks for the slots of the events a few dozen pops ahead (buckets hold a few events), which
  // are the one random access per event. The rung itself is small enough to be in the cache.
  void PrefetchAhead(Rung& rung) {
    constexpr uint32_t kAhead = 8;
    const uint32_t end = std::min(rung.buckets(), rung.cursor + kAhead);
    for (uint32_t b = std::max(rung.prefetched, rung.cursor); b < end; ++b) {
      for (uint32_t i = rung.bounds[b]; i < rung.bounds[b + 1]; ++i) {
        __builtin_prefetch(&slots_[rung.spread[i].slot]);
      }
      for (uint32_t n = rung.lists[b].head; n != kNone; n = rung.pushed[n].next) {
        __builtin_prefetch(&slots_[rung.pushed[n].slot]);
      }
    }
    rung.prefetched = std::max(rung.prefetched, end);
  }

  // The coarse calendar and the rungs are used up: the top is spread over a new coarse calendar.
  void SpreadTop() {
    const size_t count = top_.size();
    const uint64_t lo = top_min_;
    const uint64_t span = top_max_ - lo;
    const uint64_t target = std::clamp<uint64_t>(count / kCoarseBucketEvents, 1, kMaxCoarseBuckets);
    unsigned shift = 0;
    while ((span >> shift) >= target) ++shift;
    const uint64_t buckets = (span >> shift) + 1;
    if (coarse_.buckets.size() < buckets) coarse_.buckets.resize(buckets);
    // Keep the buffers of the buckets in use (no allocation from one calendar to the next), but
    // release the others, and any buffer far larger than a bucket's share, so that a skewed
    // calendar does not pin memory.
    const size_t share = 4 * (count / buckets) + 256;
    for (size_t b = 0; b < coarse_.buckets.size(); ++b) {
      std::vector<Entry>& v = coarse_.buckets[b];
      if (b >= buckets || v.capacity() > share) std::vector<Entry>().swap(v);
    }
    coarse_.buckets.resize(buckets);
    coarse_.start = lo;
    coarse_.shift = shift;
    coarse_.cursor = 0;
    coarse_.end = lo + (buckets << shift);  // no overflow: buckets << shift <= 2 * span + 1
    if (coarse_.end < lo) coarse_.end = ~uint64_t{0};
    bottom_end_ = lo;
    for (const Entry& e : top_) coarse_.buckets[(e.at - lo) >> shift].push_back(e);
    top_.clear();
    top_min_ = ~uint64_t{0};
    top_max_ = 0;
  }

  // No rung is left: the coarse bucket at the cursor goes to the bottom (small, or all one time) or
  // becomes rung 0. Returns false when the earliest event is in a bucket beyond `limit`.
  bool RefineCoarse(uint64_t limit) {
    Coarse& c = coarse_;
    const uint32_t buckets = static_cast<uint32_t>(c.buckets.size());
    while (c.cursor < buckets && c.buckets[c.cursor].empty()) ++c.cursor;
    bottom_end_ = std::min(c.BucketStart(c.cursor), c.end);
    if (c.cursor == buckets) return true;  // used up: the caller spreads the top
    if (bottom_end_ > limit && early_min_ > limit) return false;
    early_min_ = ~uint64_t{0};  // the bucket is taken now, its early entries with it
    // The bucket's buffer is swapped out, not copied; the cursor stays on it, so that events pushed
    // later between the new rung's end and the bucket's end are still seen in order.
    gathered_.clear();
    std::swap(gathered_, c.buckets[c.cursor]);
    uint64_t lo = ~uint64_t{0};
    uint64_t hi = 0;
    for (const Entry& e : gathered_) {
      lo = std::min(lo, e.at);
      hi = std::max(hi, e.at);
    }
    if (gathered_.size() > kBottomMax && hi > lo) {
      // At least up to the bucket's start, as Settle does for rungs (early entries may precede it).
      BuildRung(0, gathered_, lo, std::max(hi, c.BucketStart(c.cursor)), std::min(c.BucketStart(c.cursor + 1), c.end));
      return true;
    }
    if (gathered_.size() > kBottomMax) {
      AddManyToBottom(gathered_);
    } else {
      for (const Entry& e : gathered_) AddToBottom(e);
    }
    ++c.cursor;
    bottom_end_ = std::min(c.BucketStart(c.cursor), c.end);
    return true;
  }

  // Makes rung `level` the deepest: a few events per bucket over [lo, hi], with a power-of-two
  // bucket width (a shift, no division), ending at `end_cap` at the latest; spreads `entries` over it
  // with a counting sort.
  void BuildRung(size_t level, const std::vector<Entry>& entries, uint64_t lo, uint64_t hi, uint64_t end_cap) {
    if (rungs_.size() <= level) rungs_.resize(level + 1);
    Rung& rung = rungs_[level];
    const uint64_t span = hi - lo;
    const uint64_t target = std::clamp<uint64_t>(entries.size() / kEventsPerBucket, 1, kMaxBuckets);
    unsigned shift = 0;
    while ((span >> shift) >= target) ++shift;
    const uint64_t buckets = (span >> shift) + 1;
    rung.lists.assign(buckets, PushList{});
    rung.bounds.assign(buckets + 1, 0);
    rung.pushed.clear();
    rung.taken = 0;
    rung.start = lo;
    rung.shift = shift;
    rung.cursor = 0;
    rung.prefetched = 0;
    __extension__ using Wide = unsigned __int128;
    const Wide end = static_cast<Wide>(lo) + (static_cast<Wide>(buckets) << shift);
    rung.end = end > end_cap ? end_cap : static_cast<uint64_t>(end);
    depth_ = level + 1;
    bottom_end_ = lo;
    // Counting sort: bounds[b + 1] counts bucket b, then becomes the end of bucket b; filling moves
    // each bucket's write position bounds[b] up to its end, so the bounds are shifted back after.
    uint32_t* bounds = rung.bounds.data();
    for (const Entry& e : entries) ++bounds[((e.at - lo) >> shift) + 1];
    for (uint64_t b = 0; b < buckets; ++b) bounds[b + 1] += bounds[b];
    rung.spread.resize(entries.size());
    Entry* spread = rung.spread.data();
    for (const Entry& e : entries) spread[bounds[(e.at - lo) >> shift]++] = e;
    for (uint64_t b = buckets; b > 0; --b) bounds[b] = bounds[b - 1];
    bounds[0] = 0;
  }

  // Drops every dead entry (cancelled or moved events) from the bottom, the rungs and the top.
  void NoteDeadEntry() {
    if (++dead_ > live_ + kDeadSlack) SweepDead();
  }
  [[gnu::noinline]] void SweepDead() {
    const auto dead = [this](const Entry& e) { return !IsLive(e); };
    bottom_.erase(std::remove_if(bottom_.begin(), bottom_.end(), dead), bottom_.end());
    top_.erase(std::remove_if(top_.begin(), top_.end(), dead), top_.end());
    for (size_t b = coarse_.cursor; b < coarse_.buckets.size(); ++b) {
      std::vector<Entry>& v = coarse_.buckets[b];
      v.erase(std::remove_if(v.begin(), v.end(), dead), v.end());
    }
    for (size_t r = 0; r < depth_; ++r) Respread(rungs_[r], /*drop_dead=*/true);
    dead_ = 0;
  }

  // No live event is left: forgets the dead entries.
  void Clear() {
    for (std::vector<Entry>& v : coarse_.buckets) v.clear();
    coarse_.cursor = static_cast<uint32_t>(coarse_.buckets.size());
    coarse_.end = 0;
    bottom_.clear();
    top_.clear();
    top_min_ = ~uint64_t{0};
    top_max_ = 0;
    depth_ = 0;
    bottom_end_ = 0;
    early_min_ = ~uint64_t{0};
    dead_ = 0;
  }

  uint32_t FindSlot(EventId id) const {
    const uint32_t slot = static_cast<uint32_t>(id.value);
    const uint32_t generation = static_cast<uint32_t>(id.value >> 32);
    if (slot >= slots_.size() || slots_[slot].generation != generation || slots_[slot].sequence == kFreeSequence) {
      return kNone;
    }
    return slot;
  }

  uint32_t AllocateSlot() {
    if (free_slot_ != kNone) {
      const uint32_t slot = free_slot_;
      free_slot_ = slots_[slot].next_free;
      return slot;
    }
    slots_.emplace_back();
    return static_cast<uint32_t>(slots_.size() - 1);
  }

  void FreeSlot(uint32_t slot) {
    Slot& s = slots_[slot];
    s.sequence = kFreeSequence;
    // A new generation makes every id naming the old event stale; 0 is skipped so that no id is 0.
    if (++s.generation == 0) s.generation = 1;
    s.next_free = free_slot_;
    free_slot_ = slot;
  }

  std::vector<Slot> slots_;
  uint32_t free_slot_ = kNone;
  uint64_t next_sequence_ = 0;
  size_t live_ = 0;
  size_t dead_ = 0;  // entries whose event was cancelled or moved, not yet dropped

  std::vector<Entry> bottom_;          // latest first
  uint64_t bottom_end_ = 0;            // events before this time go to the bottom
  uint64_t early_min_ = ~uint64_t{0};  // earliest PushToNextBucket entry not yet taken (else max)

  std::vector<Rung> rungs_;  // [0, depth_) in use, the deepest last
  size_t depth_ = 0;

  // Between the rungs and the top: a calendar of a few wide buckets, each a vector that pushes
  // append to (a few hundred buffers whose ends stay in the cache). Its buckets become rung 0, one
  // at a time, so the rungs stay small enough for the cache.
  struct Coarse {
    std::vector<std::vector<Entry>> buckets;
    uint64_t start = 0;
    uint64_t end = 0;  // events from here on belong to the top
    unsigned shift = 0;
    uint32_t cursor = 0;
    uint64_t BucketStart(uint32_t b) const { return start + (static_cast<uint64_t>(b) << shift); }
  };
  Coarse coarse_;

  std::vector<Entry> top_;
  uint64_t top_min_ = ~uint64_t{0};  // bounds of the top's times (may be loose: dead entries)
  uint64_t top_max_ = 0;

  std::vector<Entry> gathered_;  // scratch: a bucket or the top being spread
  std::vector<Entry> respread_;  // scratch: a rung's new spread (swapped with the old one)
};

}  // namespace hetsim::engine

#endif  // HETSIM_SIM_ENGINE_EVENT_QUEUE_INTERNAL_H_
