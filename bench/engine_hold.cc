// Hold model for the event queue: N events pending; each processed event schedules one more at a
// random later time, so the queue stays at N. Reports events per second at N = 1e3, 1e5, 1e6, and,
// as a yardstick measured at the same moment, a bare std::priority_queue in the same loop.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/engine/split_mix.h"

namespace hetsim::engine {
namespace {

constexpr Time kMaxIncrement = 2 * kMicrosecond;  // uniform in [1, 2 us]: mean 1 us
constexpr uint64_t kMaxIncrementPs = TimeToPicoseconds(kMaxIncrement);

class Hold : public EventHandler {
 public:
  explicit Hold(Simulator* sim) : sim_(sim) {}
  void OnEvent(uint64_t payload) override {
    sim_->Schedule(sim_->now() + 1_ps + PicosecondsToTime(rng_.Below(kMaxIncrementPs)), this, payload);
  }
  SplitMix64& rng() { return rng_; }

 private:
  Simulator* sim_;
  SplitMix64 rng_{42};  // fast, so the benchmark measures the queue, not the generator
};

void BM_EngineHold(benchmark::State& state) {
  const auto pending = static_cast<uint64_t>(state.range(0));
  constexpr uint64_t kEventsPerIteration = 1 << 20;
  Simulator sim;
  Hold hold(&sim);
  sim.ReserveEvents(pending + 1);
  for (uint64_t i = 0; i < pending; ++i) {
    sim.Schedule(1_ps + PicosecondsToTime(hold.rng().Below(kMaxIncrementPs)), &hold, i);
  }
  // Warm up: let the time distribution of pending events reach its steady state.
  sim.set_max_events(2 * pending);
  sim.Run();
  for (auto _ : state) {
    sim.set_max_events(sim.events_processed() + kEventsPerIteration);
    sim.Run();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kEventsPerIteration));
  state.counters["pending"] = static_cast<double>(sim.pending_events());
}
BENCHMARK(BM_EngineHold)->Arg(1'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// Yardstick: the same hold loop on a binary heap of bare 64-bit times (no handler, no payload, no
// tie-break, no cancel), so that a figure above can be read against the machine's mood of the moment.
void BM_StdPriorityQueueHold(benchmark::State& state) {
  const auto pending = static_cast<uint64_t>(state.range(0));
  constexpr uint64_t kEventsPerIteration = 1 << 20;
  std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<uint64_t>> queue;
  SplitMix64 rng(42);
  for (uint64_t i = 0; i < pending; ++i) queue.push(1 + rng.Below(kMaxIncrementPs));
  const auto hold = [&](uint64_t events) {
    for (uint64_t i = 0; i < events; ++i) {
      const uint64_t now = queue.top();
      queue.pop();
      queue.push(now + 1 + rng.Below(kMaxIncrementPs));
    }
  };
  hold(2 * pending);  // warm up, as above
  for (auto _ : state) hold(kEventsPerIteration);
  benchmark::DoNotOptimize(queue.top());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kEventsPerIteration));
}
BENCHMARK(BM_StdPriorityQueueHold)->Arg(100'000)->Unit(benchmark::kMillisecond);

// The network's pattern: every event moves another pending event (reschedule) before rescheduling
// itself, as a rate change moves flow completions.
class Mover : public EventHandler {
 public:
  explicit Mover(Simulator* sim) : sim_(sim) {}
  void OnEvent(uint64_t payload) override {
    const EventId other = ids_[rng_.Below(ids_.size())];
    if (sim_->IsPending(other)) {
      sim_->Reschedule(other, sim_->now() + 1_ps + PicosecondsToTime(rng_.Below(kMaxIncrementPs)));
    }
    ids_[payload] = sim_->Schedule(sim_->now() + 1_ps + PicosecondsToTime(rng_.Below(kMaxIncrementPs)), this, payload);
  }
  std::vector<EventId> ids_;
  SplitMix64 rng_{7};

 private:
  Simulator* sim_;
};

void BM_EngineHoldWithReschedule(benchmark::State& state) {
  const auto pending = static_cast<uint64_t>(state.range(0));
  constexpr uint64_t kEventsPerIteration = 1 << 20;
  Simulator sim;
  Mover mover(&sim);
  sim.ReserveEvents(pending + 1);
  for (uint64_t i = 0; i < pending; ++i) {
    mover.ids_.push_back(sim.Schedule(1_ps + PicosecondsToTime(mover.rng_.Below(kMaxIncrementPs)), &mover, i));
  }
  for (auto _ : state) {
    sim.set_max_events(sim.events_processed() + kEventsPerIteration);
    sim.Run();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kEventsPerIteration));
}
BENCHMARK(BM_EngineHoldWithReschedule)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hetsim::engine
