// The fault model's pieces against closed forms: straggler profiles (windows, overlaps), jitter
// draws (determinism, means of each distribution), and run-time link capacity changes in the network
// (a degraded link, a link down and back, re-rating of flows that share a link).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/faults/compute_model.h"
#include "sim/faults/fault_set.h"
#include "sim/network/network.h"
#include "tests/base/time_io.h"

namespace hetsim::faults {
namespace {

using spec::JitterDistribution;
using spec::JitterSpec;

ResolvedFault Slow(int gpu, double factor, Time at, Time end = hetsim::kTimeMax) {
  ResolvedFault f;
  f.kind = hetsim::spec::FaultKind::kSlow;
  f.factor = factor;
  f.gpus = GpuIds({gpu});
  f.at = at;
  f.end = end;
  return f;
}

}  // namespace

TEST_CASE("faults model: a task progresses at the GPU's speed at every instant", "[faults]") {
  FaultSet set;
  set.faults = {Slow(0, 2, 7 * kMillisecond), Slow(1, 2, 0, 4 * kMillisecond), Slow(2, 2, 2 * kMillisecond),
                Slow(2, 3, 4 * kMillisecond, 6 * kMillisecond)};
  const ComputeModel model(set, 4);
  REQUIRE(model.active());
  // Straddling the start: 2 ms before 7 ms at full speed, the other 8 ms at half: 7 + 16.
  CHECK(model.FinishOn(GpuId(0), 5 * kMillisecond, 10 * kMillisecond) == 23 * kMillisecond);
  // Straddling the end: 2 ms of window do 1 ms of work, 9 ms after: 4 + 9.
  CHECK(model.FinishOn(GpuId(1), 2 * kMillisecond, 10 * kMillisecond) == 13 * kMillisecond);
  // Overlapping faults multiply: x2 from 2 ms, x6 during [4, 6): work 3 from 0 runs 2 at full speed,
  // 1 ms of work at x2 takes 2 ms (to 4 ms): 4 ms.
  CHECK(model.FinishOn(GpuId(2), 0, 3 * kMillisecond) == 4 * kMillisecond);
  // 1.5 ms of work from 3 ms: 0.5 ms by 4 ms (x2), 2 ms of x6 do 1/3 ms, 2/3 ms left at x2 from 6 ms.
  CHECK(AbsTime(model.FinishOn(GpuId(2), 3 * kMillisecond, 3 * kMillisecond / 2) -
                (6 * kMillisecond + 4 * kMillisecond / 3)) <= 1_ps);
  // A GPU without faults, and a stage: the slowest GPU decides.
  CHECK(model.FinishOn(GpuId(3), kMillisecond, kMillisecond) == 2 * kMillisecond);
  const std::vector<GpuId> gpus = GpuIds({3, 0});
  CHECK(model.Finish(gpus, 7 * kMillisecond, kMillisecond, 0) == 9 * kMillisecond);
}

TEST_CASE("faults model: no faults, no change", "[faults]") {
  const ComputeModel model(FaultSet{}, 8);
  CHECK_FALSE(model.active());
  const std::vector<GpuId> gpus = GpuIds({0, 1, 2});
  CHECK(model.Finish(gpus, 5_ps, 10_ps, 0) == 15_ps);
}

TEST_CASE("faults model: jitter draws are pure functions of seed, GPU and task", "[faults]") {
  JitterSpec j;
  j.seed = 42;
  j.distribution = JitterDistribution::kLogNormal;
  j.spread = 0.2;
  CHECK(JitterFactor(j, GpuId(3), TaskKey(0, 5, 1)) == JitterFactor(j, GpuId(3), TaskKey(0, 5, 1)));
  CHECK(JitterFactor(j, GpuId(3), TaskKey(0, 5, 1)) != JitterFactor(j, GpuId(4), TaskKey(0, 5, 1)));
  CHECK(JitterFactor(j, GpuId(3), TaskKey(0, 5, 1)) != JitterFactor(j, GpuId(3), TaskKey(1, 5, 1)));
  CHECK(JitterFactor(j, GpuId(3), TaskKey(0, 5, 1)) != JitterFactor(j, GpuId(3), TaskKey(0, 1, 5)));
  JitterSpec k = j;
  k.seed = 43;
  CHECK(JitterFactor(j, GpuId(3), TaskKey(0, 5, 1)) != JitterFactor(k, GpuId(3), TaskKey(0, 5, 1)));
}

TEST_CASE("faults model: the mean jitter factor over many tasks", "[faults]") {
  // 200 000 draws (50 GPUs x 4000 tasks). The standard error of the mean is spread / sqrt(3 N) =
  // 1.3e-4 (UNIFORM, spread 0.1) or spread / sqrt(N) = 2.2e-4 (NORMAL, LOGNORMAL): a tolerance of 0.002
  // is about ten of them. LOGNORMAL's mean is exp(spread^2 / 2) (its median is 1).
  const double spread = 0.1;
  const struct {
    JitterDistribution d;
    double mean, min, max;
  } cases[] = {{JitterDistribution::kUniform, 1.0, 0.9, 1.1},
               {JitterDistribution::kNormal, 1.0, 0.1, 2.0},
               {JitterDistribution::kLogNormal, std::exp(spread * spread / 2), 0.0, 3.0}};
  for (const auto& c : cases) {
    INFO(hetsim::spec::JitterDistributionName(c.d));
    JitterSpec j;
    j.seed = 12345;
    j.distribution = c.d;
    j.spread = spread;
    double sum = 0, sum_sq = 0;
    int n = 0;
    double lo = 10, hi = 0;
    for (int gpu = 0; gpu < 50; ++gpu) {
      for (int task = 0; task < 4000; ++task) {
        const double x = JitterFactor(j, GpuId(gpu), TaskKey(task % 2, task / 2, gpu % 4));
        sum += x;
        sum_sq += x * x;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        ++n;
      }
    }
    const double mean = sum / n;
    CHECK(std::abs(mean - c.mean) < 0.002);
    const double sd = std::sqrt(sum_sq / n - mean * mean);
    const double expected_sd = c.d == JitterDistribution::kUniform ? spread / std::sqrt(3.0) : spread;
    CHECK(std::abs(sd - expected_sd) < 0.01 * 1.5);
    CHECK(lo >= c.min);
    CHECK(hi <= c.max);
  }
}

namespace {

struct Finishes : network::FlowObserver {
  std::vector<Time> at = std::vector<Time>(8, -1_ps);
  engine::Simulator* sim = nullptr;
  void OnFlowCompleted(network::FlowId, uint64_t tag) override { at[tag] = sim->now(); }
};

// Calls `fn` at `at` from inside the engine.
struct Call : hetsim::engine::EventHandler {
  std::function<void()> fn;
  void OnEvent(uint64_t) override { fn(); }
};

}  // namespace

TEST_CASE("faults network: capacity changes re-rate flows and move their completions", "[faults]") {
  for (network::NetworkMode mode : {network::NetworkMode::kMaxMinFair, network::NetworkMode::kContentionFree}) {
    INFO(hetsim::network::NetworkModeName(mode));
    engine::Simulator sim;
    // Link 0: 1e9 B/s, link 1: 4e9 B/s. Flow 0 crosses both (bottleneck link 0).
    auto net = *network::Network::Create(
        &sim, {network::LinkSpec{Bandwidth(1e9), 0}, network::LinkSpec{Bandwidth(4e9), 0}}, mode);
    Finishes done;
    done.sim = &sim;
    const std::vector<LinkId> both = LinkIds({0, 1});
    const std::vector<LinkId> second = LinkIds({1});

    SECTION("halved from t = 0: twice the byte time") {
      net->SetLinkCapacity(LinkId(0), 0.5e9);
      net->StartFlow(both, 1000000, &done, 0);  // 1 ms at 1e9 B/s
      sim.Run();
      CHECK(done.at[0] == 2 * kMillisecond);
    }
    SECTION("down from 0.25 ms to 1.25 ms: a 1 ms transfer ends 1 ms late") {
      net->StartFlow(both, 1000000, &done, 0);
      Call down, up;
      down.fn = [&] { net->SetLinkCapacity(LinkId(0), 0); };
      up.fn = [&] { net->SetLinkCapacity(LinkId(0), 1e9); };
      sim.Schedule(kMillisecond / 4, &down, 0);
      sim.Schedule(kMillisecond + kMillisecond / 4, &up, 0);
      sim.Run();
      CHECK(AbsTime(done.at[0] - 2 * kMillisecond) <= 2_ps);
    }
    SECTION("a flow waiting for latency starts with the new capacity") {
      auto slow = *network::Network::Create(&sim, {network::LinkSpec{Bandwidth(1e9), kMillisecond}}, mode);
      const std::vector<LinkId> only = LinkIds({0});
      slow->StartFlow(only, 1000000, &done, 1);  // starts sending at 1 ms
      slow->SetLinkCapacity(LinkId(0), 2e9);
      sim.Run();
      CHECK(done.at[1] == kMillisecond + kMillisecond / 2);
    }
    SECTION("raising the bottleneck lets the other link limit") {
      net->StartFlow(both, 4000000, &done, 0);  // 4 ms at 1e9
      Call raise;
      raise.fn = [&] { net->SetLinkCapacity(LinkId(0), 8e9); };
      sim.Schedule(2 * kMillisecond, &raise, 0);  // 2e6 bytes left, now at 4e9 (link 1): 0.5 ms
      sim.Run();
      CHECK(AbsTime(done.at[0] - (2 * kMillisecond + kMillisecond / 2)) <= 2_ps);
    }
  }
  // Max-min: two flows share link 1 (2e9 B/s); link 1 halves at 1 ms. Each had 1e9 B/s (2e6 bytes:
  // 1e6 sent by 1 ms), then 0.5e9 B/s for the other 1e6 bytes: 2 ms more.
  engine::Simulator sim;
  auto net = *network::Network::Create(&sim,
                                       {network::LinkSpec{Bandwidth(1e10), 0}, network::LinkSpec{Bandwidth(2e9), 0},
                                        network::LinkSpec{Bandwidth(1e10), 0}},
                                       network::NetworkMode::kMaxMinFair);
  Finishes done;
  done.sim = &sim;
  const std::vector<LinkId> a = LinkIds({0, 1}), b = LinkIds({2, 1});
  net->StartFlow(a, 2000000, &done, 0);
  net->StartFlow(b, 2000000, &done, 1);
  Call halve;
  halve.fn = [&] { net->SetLinkCapacity(LinkId(1), 1e9); };
  sim.Schedule(kMillisecond, &halve, 0);
  sim.Run();
  CHECK(AbsTime(done.at[0] - 3 * kMillisecond) <= 2_ps);
  CHECK(AbsTime(done.at[1] - 3 * kMillisecond) <= 2_ps);
}

}  // namespace hetsim::faults
