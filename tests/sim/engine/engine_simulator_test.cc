// The event engine: order by (time, insertion), cancellation, rescheduling, limits, determinism.
#include <catch2/catch.hpp>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/time.h"
#include "sim/engine/event_queue_internal.h"
#include "sim/engine/simulator.h"
#include "tests/base/time_io.h"

namespace hetsim::engine {
namespace {

// Logs (time, payload) of every event it receives.
class Recorder : public EventHandler {
 public:
  explicit Recorder(Simulator* sim) : sim_(sim) {}
  void OnEvent(uint64_t payload) override { log.emplace_back(sim_->now(), payload); }
  std::vector<std::pair<Time, uint64_t>> log;

 private:
  Simulator* sim_;
};

TEST_CASE("events run in time order", "[engine]") {
  Simulator sim;
  Recorder rec(&sim);
  const std::vector<Time> times = {50_ps, 10_ps, 40_ps, 0_ps, 30_ps, 20_ps, 1000_ps, 5_ps};
  for (size_t i = 0; i < times.size(); ++i) sim.Schedule(times[i], &rec, i);
  CHECK(sim.pending_events() == times.size());
  CHECK(sim.Run() == RunOutcome::kQueueEmpty);
  std::vector<std::pair<Time, uint64_t>> expected;
  for (size_t i = 0; i < times.size(); ++i) expected.emplace_back(times[i], i);
  std::sort(expected.begin(), expected.end());
  CHECK(rec.log == expected);
  CHECK(sim.now() == 1000_ps);
  CHECK(sim.events_processed() == times.size());
}

TEST_CASE("equal times run in insertion order, including events added at the current time", "[engine]") {
  Simulator sim;
  Recorder rec(&sim);
  // A handler that, at time 7, schedules two more events at time 7: they must follow 1..4.
  struct Spawner : EventHandler {
    Simulator* sim;
    Recorder* rec;
    void OnEvent(uint64_t) override {
      rec->OnEvent(100);
      sim->Schedule(sim->now(), rec, 101);
      sim->Schedule(sim->now(), rec, 102);
    }
  } spawner;
  spawner.sim = &sim;
  spawner.rec = &rec;
  sim.Schedule(7_ps, &spawner, 0);
  for (uint64_t i = 1; i <= 4; ++i) sim.Schedule(7_ps, &rec, i);
  sim.Schedule(6_ps, &rec, 0);
  sim.Run();
  const std::vector<std::pair<Time, uint64_t>> expected = {{6_ps, 0}, {7_ps, 100}, {7_ps, 1},   {7_ps, 2},
                                                           {7_ps, 3}, {7_ps, 4},   {7_ps, 101}, {7_ps, 102}};
  CHECK(rec.log == expected);
}

TEST_CASE("cancelled events never run and stale ids are refused", "[engine]") {
  Simulator sim;
  Recorder rec(&sim);
  const EventId a = sim.Schedule(10_ps, &rec, 1);
  const EventId b = sim.Schedule(20_ps, &rec, 2);
  const EventId c = sim.Schedule(5_ps, &rec, 3);  // the earliest: cancelling it removes the heap top
  CHECK(sim.IsPending(a));
  CHECK(sim.Cancel(c));
  CHECK_FALSE(sim.Cancel(c));
  CHECK_FALSE(sim.IsPending(c));
  CHECK(sim.TimeOf(c) == kTimeMax);
  CHECK(sim.Cancel(b));
  sim.Run();
  CHECK(rec.log == std::vector<std::pair<Time, uint64_t>>{{10_ps, 1}});
  CHECK_FALSE(sim.Cancel(a));  // already ran

  // The freed slots are reused; the old ids must not reach the new events.
  const EventId d = sim.Schedule(30_ps, &rec, 4);
  const EventId e = sim.Schedule(40_ps, &rec, 5);
  CHECK_FALSE(sim.Cancel(a));
  CHECK_FALSE(sim.Cancel(b));
  CHECK_FALSE(sim.Reschedule(c, 50_ps));
  CHECK(sim.IsPending(d));
  CHECK(sim.IsPending(e));
  sim.Run();
  CHECK(rec.log.size() == 3);
}

TEST_CASE("rescheduled events move and queue behind events already at their new time", "[engine]") {
  Simulator sim;
  Recorder rec(&sim);
  const EventId a = sim.Schedule(100_ps, &rec, 1);
  sim.Schedule(50_ps, &rec, 2);
  const EventId c = sim.Schedule(10_ps, &rec, 3);
  CHECK(sim.Reschedule(a, 50_ps));   // earlier, ties with 2 and runs after it
  CHECK(sim.Reschedule(c, 200_ps));  // later
  CHECK(sim.TimeOf(a) == 50_ps);
  CHECK(sim.TimeOf(c) == 200_ps);
  sim.Run();
  const std::vector<std::pair<Time, uint64_t>> expected = {{50_ps, 2}, {50_ps, 1}, {200_ps, 3}};
  CHECK(rec.log == expected);
  CHECK_FALSE(sim.Reschedule(a, 300_ps));
}

TEST_CASE("RunUntil stops before later events and moves the clock to its end", "[engine]") {
  Simulator sim;
  Recorder rec(&sim);
  sim.Schedule(10_ps, &rec, 1);
  sim.Schedule(20_ps, &rec, 2);
  sim.Schedule(30_ps, &rec, 3);
  CHECK(sim.RunUntil(20_ps) == RunOutcome::kTimeLimit);
  CHECK(rec.log.size() == 2);
  CHECK(sim.now() == 20_ps);
  CHECK(sim.RunUntil(25_ps) == RunOutcome::kTimeLimit);
  CHECK(sim.now() == 25_ps);
  CHECK(sim.RunUntil(100_ps) == RunOutcome::kQueueEmpty);
  CHECK(sim.now() == 100_ps);
  CHECK(rec.log.size() == 3);
  CHECK(sim.ScheduleAfter(5_ps, &rec, 4).valid());
  CHECK(sim.TimeOf(sim.ScheduleAfter(7_ps, &rec, 5)) == 107_ps);
}

TEST_CASE("the event limit stops a run and a later run resumes", "[engine]") {
  Simulator sim;
  Recorder rec(&sim);
  for (uint64_t i = 0; i < 10; ++i) sim.Schedule(PicosecondsToTime(i), &rec, i);
  sim.set_max_events(4);
  CHECK(sim.Run() == RunOutcome::kEventLimit);
  CHECK(sim.events_processed() == 4);
  CHECK(rec.log.size() == 4);
  sim.set_max_events(0);
  CHECK(sim.Run() == RunOutcome::kQueueEmpty);
  CHECK(rec.log.size() == 10);
  CHECK(RunOutcomeName(RunOutcome::kEventLimit) == std::string("event-limit"));
}

TEST_CASE("a handler can stop the run", "[engine]") {
  Simulator sim;
  struct Stopper : EventHandler {
    Simulator* sim;
    int calls = 0;
    void OnEvent(uint64_t payload) override {
      ++calls;
      if (payload == 1) sim->Stop();
    }
  } stopper;
  stopper.sim = &sim;
  sim.Schedule(1_ps, &stopper, 0);
  sim.Schedule(2_ps, &stopper, 1);
  sim.Schedule(3_ps, &stopper, 0);
  CHECK(sim.Run() == RunOutcome::kStopped);
  CHECK(stopper.calls == 2);
  CHECK(sim.now() == 2_ps);
  CHECK(sim.Run() == RunOutcome::kQueueEmpty);
  CHECK(stopper.calls == 3);
}

// Random pushes, pops, cancels and moves against a std::map keyed by (time, insertion order). Times
// never precede the last popped one (the simulator's clock guarantees it), and many events share a
// time so that the insertion-order tie-break is exercised at every step.
TEST_CASE("the event queue matches a reference ordered map under random operations", "[engine]") {
  // Three time distributions: spread out with many ties; clustered near now with rare far events
  // (deep rungs); and a few huge times (near kTimeMax) mixed in.
  const int mix = GENERATE(0, 1, 2);
  std::mt19937_64 rng(12345 + mix);
  EventQueue queue;
  std::map<std::pair<Time, uint64_t>, uint64_t> reference;          // (time, seq) -> payload
  std::vector<std::pair<EventId, std::pair<Time, uint64_t>>> live;  // id -> reference key
  uint64_t seq = 0;
  Time clock = 0;
  Recorder unused(nullptr);
  const auto later = [&] {
    const uint64_t r = rng() % 100;
    Time delay = PicosecondsToTime(r < 30 ? 0 : r < 60 ? rng() % 8 : rng() % 100000);
    if (mix == 1) delay = PicosecondsToTime(r < 90 ? rng() % 4096 : rng() % 1'000'000'000'000);
    if (mix == 2 && r < 2) return kTimeMax - PicosecondsToTime(rng() % 3);
    return clock > kTimeMax - delay ? kTimeMax : clock + delay;
  };
  for (int step = 0; step < 200000; ++step) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 4 || live.empty()) {
      const Time at = later();
      const uint64_t payload = rng();
      const EventId id = queue.Push(at, &unused, payload);
      reference[{at, seq}] = payload;
      live.push_back({id, {at, seq}});
      ++seq;
    } else if (op < 7) {
      REQUIRE(!queue.empty());
      const auto expected = reference.begin();
      const EventQueue::Popped popped = queue.Pop();
      REQUIRE(popped.at == expected->first.first);
      REQUIRE(popped.payload == expected->second);
      clock = popped.at;
      const auto it =
          std::find_if(live.begin(), live.end(), [&](const auto& l) { return l.second == expected->first; });
      REQUIRE(it != live.end());
      REQUIRE_FALSE(queue.IsPending(it->first));
      *it = live.back();
      live.pop_back();
      reference.erase(expected);
    } else if (op < 8) {
      const size_t k = rng() % live.size();
      REQUIRE(queue.Cancel(live[k].first));
      REQUIRE_FALSE(queue.IsPending(live[k].first));
      reference.erase(live[k].second);
      live[k] = live.back();
      live.pop_back();
    } else {
      const size_t k = rng() % live.size();
      const Time at = later();
      REQUIRE(queue.Reschedule(live[k].first, at));
      const uint64_t payload = reference[live[k].second];
      reference.erase(live[k].second);
      live[k].second = {at, seq++};
      reference[live[k].second] = payload;
      REQUIRE(queue.TimeOf(live[k].first) == at);
    }
    REQUIRE(queue.size() == reference.size());
  }
}

// An EventQueue beside a reference ordered map of (time, insertion sequence) -> payload: each pop is
// checked against the map's first entry, each cancel or move of a possibly stale id against the map.
struct CheckedQueue {
  explicit CheckedQueue(uint64_t seed) : rng(seed) {}
  void Push(Time at) {
    const uint64_t payload = rng();
    ids.push_back({queue.Push(at, &unused, payload), {at, seq}});
    reference[{at, seq++}] = payload;
  }
  Time PopChecked() {
    const auto expected = reference.begin();
    const EventQueue::Popped popped = queue.Pop();
    REQUIRE(popped.at == expected->first.first);
    REQUIRE(popped.payload == expected->second);
    reference.erase(expected);
    return popped.at;
  }
  bool Pending(size_t k) const { return reference.count(ids[k].second) != 0; }
  void CancelChecked(size_t k) {
    REQUIRE(queue.Cancel(ids[k].first) == Pending(k));
    reference.erase(ids[k].second);
  }
  void MoveChecked(size_t k, Time at) {
    const bool pending = Pending(k);
    REQUIRE(queue.Reschedule(ids[k].first, at) == pending);
    if (!pending) return;
    const uint64_t payload = reference[ids[k].second];
    reference.erase(ids[k].second);
    ids[k].second = {at, seq++};
    reference[ids[k].second] = payload;
  }
  void DrainChecked() {
    while (!reference.empty()) PopChecked();
    CHECK(queue.empty());
  }

  std::mt19937_64 rng;
  EventQueue queue;
  Recorder unused{nullptr};
  std::map<std::pair<Time, uint64_t>, uint64_t> reference;
  std::vector<std::pair<EventId, std::pair<Time, uint64_t>>> ids;  // every id pushed, with its key
  uint64_t seq = 0;
};

// Tens of thousands pending (so that the coarse calendar has many buckets and rungs are built from
// them), with cancels and moves frequent enough to trigger sweeps of dead entries, against a
// reference ordered set. Pops and pushes alternate as in the hold model.
TEST_CASE("the event queue stays exact with tens of thousands pending", "[engine]") {
  CheckedQueue q(99);
  std::mt19937_64& rng = q.rng;
  Time clock = 0;
  for (int i = 0; i < 30000; ++i) q.Push(PicosecondsToTime(rng() % 2'000'000));
  for (int step = 0; step < 300000; ++step) {
    const uint64_t op = rng() % 100;
    // Mostly 1 ps .. 2 us ahead; some ties at the same instant; a few far in the future.
    const uint64_t r = rng() % 100;
    const Time at = clock + PicosecondsToTime(r < 10 ? 0 : r < 98 ? 1 + rng() % 2'000'000 : rng() % 1'000'000'000);
    if (op < 45) {
      clock = q.PopChecked();
    } else if (op < 90) {
      q.Push(at);
    } else {
      // Cancel or move a random event; its id may be stale (already popped): both must agree.
      const size_t k = rng() % q.ids.size();
      REQUIRE(q.queue.IsPending(q.ids[k].first) == q.Pending(k));
      if (op < 95) {
        q.CancelChecked(k);
      } else {
        q.MoveChecked(k, at);
      }
      q.ids[k] = q.ids.back();
      q.ids.pop_back();
    }
    REQUIRE(q.queue.size() == q.reference.size());
    if (q.reference.empty()) q.Push(clock);
  }
  q.DrainChecked();
}

// A network's pattern at scale: thousands of flows end at one instant (a large bottom), and each starts
// successors a little later (later than the whole bottom, before the next bucket), some moved or
// cancelled, with limits checked in between as RunUntil does. Against a reference ordered map, over
// seeds that start from nothing, from spread events, from bursts at the first instants, and from a few
// events far apart (wide buckets: the bottom fills with distinct times until it becomes a rung).
TEST_CASE("the event queue stays exact when a large instant spawns slightly later events", "[engine]") {
  Recorder unused(nullptr);
  for (int seed = 0; seed < 180; ++seed) {
    INFO("seed " << seed);
    std::mt19937_64 rng(seed);
    EventQueue queue;
    std::map<std::pair<Time, uint64_t>, uint64_t> reference;
    std::vector<std::pair<EventId, std::pair<Time, uint64_t>>> ids;
    uint64_t seq = 0;
    const auto push = [&](Time at) {
      const uint64_t payload = rng();
      ids.push_back({queue.Push(at, &unused, payload), {at, seq}});
      reference[{at, seq++}] = payload;
    };
    const int mode = seed % 6;
    const bool wide = mode >= 4;
    const int spread = mode == 0 ? 0 : wide ? 3 + static_cast<int>(rng() % 20) : static_cast<int>(rng() % 5000);
    for (int i = 0; i < spread; ++i) push(PicosecondsToTime(rng() % (wide ? 1'000'000'000'000 : 10'000'000)));
    const int burst = mode == 5 ? 0 : 300 + static_cast<int>(rng() % 3000);
    for (int i = 0; i < burst; ++i) push(mode == 3 ? 5_ps : 1000_ps);
    Time clock = 0;
    for (int steps = 0; !reference.empty(); ++steps) {
      const Time limit = rng() % 3 == 0 ? kTimeMax : clock + PicosecondsToTime(rng() % 5000);
      REQUIRE(queue.HasEventNotAfter(limit) == (reference.begin()->first.first <= limit));
      const EventQueue::Popped popped = queue.Pop();
      REQUIRE(popped.at == reference.begin()->first.first);
      REQUIRE(popped.payload == reference.begin()->second);
      clock = popped.at;
      reference.erase(reference.begin());
      if (steps >= 8000) continue;
      for (int k = static_cast<int>(rng() % 4); k > 0; --k) {
        push(clock + (rng() % 4 == 0 ? 0 : PicosecondsToTime(rng() % 3000)));
      }
      if (rng() % 3 != 0) continue;
      auto& [id, key] = ids[rng() % ids.size()];
      if (reference.count(key) == 0) continue;
      if (rng() % 2 == 0) {
        REQUIRE(queue.Cancel(id));
        reference.erase(key);
      } else {
        const Time at = clock + PicosecondsToTime(rng() % 5000);
        REQUIRE(queue.Reschedule(id, at));
        const uint64_t payload = reference[key];
        reference.erase(key);
        key = {at, seq++};
        reference[key] = payload;
      }
    }
    CHECK(queue.empty());
  }
}

// Events pushed into a rung that already exists (ahead of its cursor) are appended to the rung's array
// of pushes; once the taken ones outnumber what is left, the rung is spread again. Here a rung built
// from 3,000 events spread over 10 ms outlives thousands of pops, and pushes at most 0.3 ms ahead land
// in it or in the finer rungs of its crowded buckets (some 200,000 of the run's pushes, spreading rungs
// again a few dozen times), with cancels and moves of possibly stale ids leaving dead entries in those
// arrays. Against a reference ordered map.
TEST_CASE("pushes into a long-lived rung keep the queue exact as the rung is spread again", "[engine]") {
  CheckedQueue q(2042);
  std::mt19937_64& rng = q.rng;
  for (int i = 0; i < 3000; ++i) q.Push(PicosecondsToTime(rng() % 10'000'000'000));
  for (int step = 0; step < 300'000; ++step) {
    const Time clock = q.PopChecked();
    q.Push(clock + PicosecondsToTime(rng() % 300'000'000));
    if (rng() % 4 != 0) continue;
    const size_t k = rng() % q.ids.size();
    if (rng() % 2 == 0) {
      const bool pending = q.Pending(k);
      q.CancelChecked(k);
      if (pending) q.Push(clock + PicosecondsToTime(rng() % 300'000'000));  // keeps 3,000 pending
    } else {
      q.MoveChecked(k, clock + PicosecondsToTime(rng() % 300'000'000));
    }
    REQUIRE(q.queue.size() == q.reference.size());
  }
  q.DrainChecked();
}

TEST_CASE("a million moves keep the queue exact", "[engine]") {
  EventQueue queue;
  Recorder unused(nullptr);
  std::vector<EventId> ids;
  for (int i = 0; i < 100; ++i) ids.push_back(queue.Push(1'000'000_ps + PicosecondsToTime(i), &unused, i));
  // A million moves, as a busy network moves flow completions.
  for (int round = 0; round < 10000; ++round) {
    for (int i = 0; i < 100; ++i)
      REQUIRE(queue.Reschedule(ids[i], 1'000'000_ps + PicosecondsToTime((round * 7 + i) % 5000)));
  }
  for (int i = 0; i < 50; ++i) REQUIRE(queue.Cancel(ids[i]));
  CHECK(queue.size() == 50);
  Time last = 0;
  std::vector<uint64_t> payloads;
  while (!queue.empty()) {
    const EventQueue::Popped p = queue.Pop();
    CHECK(p.at >= last);
    last = p.at;
    payloads.push_back(p.payload);
  }
  std::sort(payloads.begin(), payloads.end());
  std::vector<uint64_t> expected;
  for (uint64_t i = 50; i < 100; ++i) expected.push_back(i);
  CHECK(payloads == expected);
}

TEST_CASE("events can be scheduled before a pending event that RunUntil did not reach", "[engine]") {
  Simulator sim;
  Recorder rec(&sim);
  sim.Schedule(100_ps, &rec, 1);
  CHECK(sim.RunUntil(10_ps) == RunOutcome::kTimeLimit);
  sim.Schedule(20_ps, &rec, 2);
  sim.Schedule(10_ps, &rec, 3);
  CHECK(sim.RunUntil(50_ps) == RunOutcome::kTimeLimit);
  sim.Schedule(60_ps, &rec, 4);
  sim.Run();
  const std::vector<std::pair<Time, uint64_t>> expected = {{10_ps, 3}, {20_ps, 2}, {60_ps, 4}, {100_ps, 1}};
  CHECK(rec.log == expected);
}

// Two runs of the same seeded workload (events spawning events, cancels, moves) log the same trace.
TEST_CASE("runs are deterministic", "[engine]") {
  const auto run = [](uint64_t seed) {
    Simulator sim;
    struct Chaos : EventHandler {
      Simulator* sim;
      std::mt19937_64 rng;
      std::vector<EventId> ids;
      std::vector<std::pair<Time, uint64_t>> log;
      void OnEvent(uint64_t payload) override {
        log.emplace_back(sim->now(), payload);
        for (int i = 0; i < 2 && sim->events_processed() < 20000; ++i) {
          ids.push_back(sim->Schedule(sim->now() + PicosecondsToTime(rng() % 50), this, rng()));
        }
        if (!ids.empty() && rng() % 3 == 0) sim->Cancel(ids[rng() % ids.size()]);
        if (!ids.empty() && rng() % 3 == 0) {
          sim->Reschedule(ids[rng() % ids.size()], sim->now() + PicosecondsToTime(rng() % 50));
        }
      }
    } chaos;
    chaos.sim = &sim;
    chaos.rng.seed(seed);
    sim.Schedule(0, &chaos, 0);
    sim.Run();
    return chaos.log;
  };
  const auto a = run(7);
  const auto b = run(7);
  CHECK(a.size() > 1000);
  CHECK(a == b);
  CHECK(run(8) != a);
  CHECK(std::is_sorted(a.begin(), a.end(), [](const auto& x, const auto& y) { return x.first < y.first; }));
}

TEST_CASE("time conversions round as documented", "[engine]") {
  CHECK(SecondsToTime(1.5e-9) == 1500_ps);
  CHECK(NanosecondsToTime(3) == 3000_ps);
  CHECK(TimeToSeconds(kSecond) == 1.0);
  CHECK(MillisecondsToTime(2.5) == 2'500'000'000_ps);  // a fraction rounds as SecondsToTime
  CHECK(MillisecondsToTime(int64_t{2}) == 2_ms);       // an integer is exact
  CHECK(SecondsToTime(1e9) == kTimeMax);               // clamped, not overflowed
  CHECK(SecondsToTime(-1.0) == Time());
  CHECK(TimeToPicoseconds(kTimeMax) == std::numeric_limits<int64_t>::max());
}

// Time is a type of its own (issue 38): no number converts into it or out of it without a named
// helper, and no arithmetic mixes it with a floating-point number.
template <typename T>
concept MultipliesTime = requires(Time t, T x) {
  t* x;
};
template <typename T>
concept AddsToTime = requires(Time t, T x) {
  t + x;
};
static_assert(sizeof(Time) == 8 && std::is_trivially_copyable_v<Time>);
static_assert(!std::is_convertible_v<int64_t, Time> && !std::is_constructible_v<Time, int64_t>);
static_assert(!std::is_constructible_v<Time, double> && !std::is_convertible_v<double, Time>);
static_assert(!std::is_convertible_v<Time, int64_t> && !std::is_convertible_v<Time, double>);
static_assert(MultipliesTime<int> && MultipliesTime<uint64_t> && !MultipliesTime<double> && !MultipliesTime<Time>);
static_assert(AddsToTime<Time> && !AddsToTime<int64_t> && !AddsToTime<double>);

TEST_CASE("Time arithmetic is int64 picoseconds arithmetic", "[engine]") {
  const Time zero = 0;  // the literal 0 is the one number that converts
  CHECK(zero == Time());
  CHECK(kSecond / kNanosecond == 1'000'000'000);  // Time / Time: a count
  CHECK(7_ns / 2 == 3500_ps);
  CHECK(7_ps / 2 == 3_ps);    // truncates as int64 does
  CHECK(-7_ps / 2 == -3_ps);  // toward zero
  CHECK(7_ps % 2 == 1_ps);
  CHECK(kMicrosecond % (300 * kNanosecond) == 100_ns);
  CHECK(3 * kNanosecond == kNanosecond * 3);
  CHECK(AbsTime(-5_ps) == 5_ps);
  CHECK(TimeRatio(kMillisecond, kSecond) == 1e-3);
  Time t = 1_us;
  t += 500_ns;
  t -= 1_ns;
  t *= 2;
  CHECK(t == 2'998'000_ps);
}

}  // namespace
}  // namespace hetsim::engine
