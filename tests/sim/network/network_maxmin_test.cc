// The flow-level network against closed forms: latency + S/B, fair shares, textbook max-min rates
// with several bottlenecks, staggered starts, and the max-min optimality condition on random loads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "base/time.h"
#include "sim/engine/simulator.h"
#include "sim/network/network.h"
#include "tests/base/time_io.h"

namespace hetsim::network {
namespace {

struct Done {
  FlowId flow;
  uint64_t tag;
  Time at;
  bool operator==(const Done&) const = default;
};

class Log : public FlowObserver {
 public:
  explicit Log(engine::Simulator* sim) : sim_(sim) {}
  void OnFlowCompleted(FlowId flow, uint64_t tag) override { done.push_back({flow, tag, sim_->now()}); }
  Time TimeOfTag(uint64_t tag) const {
    for (const Done& d : done) {
      if (d.tag == tag) return d.at;
    }
    return -1_ps;
  }
  std::vector<Done> done;

 private:
  engine::Simulator* sim_;
};

std::unique_ptr<Network> MakeNetwork(engine::Simulator* sim, std::vector<LinkSpec> links,
                                     NetworkMode mode = NetworkMode::kMaxMinFair) {
  auto network = Network::Create(sim, std::move(links), mode);
  REQUIRE(network.ok());
  return *std::move(network);
}

constexpr double kGBps = 1e9;  // bytes per second

TEST_CASE("one flow takes the route's latency plus bytes over the bottleneck", "[network]") {
  engine::Simulator sim;
  Log log(&sim);
  auto net = MakeNetwork(&sim, {{Bandwidth(10 * kGBps), 1 * kMicrosecond},
                                {Bandwidth(5 * kGBps), 2 * kMicrosecond},
                                {Bandwidth(20 * kGBps), 3 * kMicrosecond}});
  const std::vector<LinkId> route = LinkIds({0, 1, 2});
  const FlowId f = net->StartFlow(route, 1'000'000, &log, 42);
  CHECK(net->IsActive(f));
  CHECK(net->active_flows() == 1);
  sim.Run();
  REQUIRE(log.done.size() == 1);
  CHECK(log.done[0].flow == f);
  CHECK(log.done[0].tag == 42);
  // 6 us of latency, then 1e6 bytes at 5 GB/s = 200 us.
  CHECK(log.done[0].at == 206 * kMicrosecond);
  CHECK_FALSE(net->IsActive(f));
  CHECK(net->active_flows() == 0);
  for (LinkId l : IdsBelow<LinkId>(3)) {
    CHECK(net->link_counters(l).bytes == 1'000'000);
    CHECK(net->link_counters(l).flows == 1);
    CHECK(net->link_counters(l).busy_time == 200 * kMicrosecond);
  }
}

TEST_CASE("k equal flows on one link each get B/k and finish together", "[network]") {
  for (int k : {1, 2, 3, 7, 64}) {
    engine::Simulator sim;
    Log log(&sim);
    const double capacity = 12.5 * kGBps;
    auto net = MakeNetwork(&sim, {{Bandwidth(capacity), 500 * kNanosecond}});
    const std::vector<LinkId> route = LinkIds({0});
    std::vector<FlowId> flows;
    for (int i = 0; i < k; ++i) flows.push_back(net->StartFlow(route, 4'000'000, &log, i));
    sim.RunUntil(500 * kNanosecond);
    for (FlowId f : flows) CHECK(net->FlowRate(f) == capacity / k);
    sim.Run();
    REQUIRE(log.done.size() == static_cast<size_t>(k));
    const Time expected = 500 * kNanosecond + TransferTime(Bytes(4'000'000.0), Bandwidth(capacity / k));
    for (const Done& d : log.done) CHECK(d.at == expected);
    // Closed form: k * 4 MB at 12.5 GB/s = k * 320 us (rounding of B/k may add a picosecond).
    CHECK(AbsTime(expected - (500 * kNanosecond + k * 320 * kMicrosecond)) <= 1_ps);
    // One recompute when they all start, one when they all end.
    CHECK(net->stats().recomputations == 2);
    CHECK(net->link_counters(LinkId(0)).bytes == int64_t{4'000'000} * k);
  }
}

TEST_CASE("flows that start at different times share from the moment they overlap", "[network]") {
  engine::Simulator sim;
  Log log(&sim);
  auto net = MakeNetwork(&sim, {{Bandwidth(1 * kGBps), 0}});
  const std::vector<LinkId> route = LinkIds({0});
  // A: 1e6 bytes from t = 0; alone for 0.4 ms (4e5 bytes), then 1e9/2 B/s for its last 6e5 bytes:
  // done at 0.4 + 1.2 = 1.6 ms. B: 1e6 bytes from 0.4 ms; 6e5 bytes shared, then alone for 4e5:
  // done at 1.6 + 0.4 = 2.0 ms.
  net->StartFlow(route, 1'000'000, &log, 0);
  struct Starter : engine::EventHandler {
    Network* net;
    Log* log;
    std::vector<LinkId> route = LinkIds({0});
    void OnEvent(uint64_t) override { net->StartFlow(route, 1'000'000, log, 1); }
  } starter;
  starter.net = net.get();
  starter.log = &log;
  sim.Schedule(400 * kMicrosecond, &starter, 0);
  sim.Run();
  CHECK(log.TimeOfTag(0) == 1600 * kMicrosecond);
  CHECK(log.TimeOfTag(1) == 2000 * kMicrosecond);
  CHECK(net->link_counters(LinkId(0)).busy_time == 2000 * kMicrosecond);
}

TEST_CASE("textbook max-min example with three bottleneck levels", "[network]") {
  // Links A (1), B (3), C (6) GB/s. f0 crosses A, B, C; f1 only A; f2 B and C; f3 only C.
  // A saturates first (f0 = f1 = 0.5), then B (f2 = 3 - 0.5 = 2.5), then C (f3 = 6 - 0.5 - 2.5 = 3).
  engine::Simulator sim;
  Log log(&sim);
  auto net = MakeNetwork(&sim, {{Bandwidth(1 * kGBps), 0}, {Bandwidth(3 * kGBps), 0}, {Bandwidth(6 * kGBps), 0}});
  const std::vector<std::vector<LinkId>> routes = {LinkIds({0, 1, 2}), LinkIds({0}), LinkIds({1, 2}), LinkIds({2})};
  std::vector<FlowId> flows;
  for (size_t i = 0; i < routes.size(); ++i) {
    flows.push_back(net->StartFlow(routes[i], 1'000'000'000, &log, i));
  }
  sim.RunUntil(0);
  CHECK(net->FlowRate(flows[0]) == Approx(0.5 * kGBps).epsilon(1e-12));
  CHECK(net->FlowRate(flows[1]) == Approx(0.5 * kGBps).epsilon(1e-12));
  CHECK(net->FlowRate(flows[2]) == Approx(2.5 * kGBps).epsilon(1e-12));
  CHECK(net->FlowRate(flows[3]) == Approx(3.0 * kGBps).epsilon(1e-12));
  // 1 GB each: f3 ends at 1/3 s; then C has 3 GB/s spare but f2 stays limited by B, so nothing
  // changes until f2 ends at 0.4 s; then f0, f1 stay at 0.5 (A) and end together at 2 s.
  sim.Run();
  CHECK(AbsTime(log.TimeOfTag(3) - kSecond / 3) <= 1_ps);
  CHECK(AbsTime(log.TimeOfTag(2) - 400 * kMillisecond) <= 1_ps);
  CHECK(log.TimeOfTag(0) == log.TimeOfTag(1));
  CHECK(AbsTime(log.TimeOfTag(0) - 2 * kSecond) <= 1_ps);
}

TEST_CASE("max-min with a shared core: rates rise when a bottleneck flow leaves", "[network]") {
  // Bertsekas-Gallager style line network: links 0, 1, 2 of 1 GB/s in a chain. f0 crosses all
  // three; f1, f2, f3 cross one link each. Every link carries two flows: everyone gets 0.5.
  // When f1 (1e8 bytes on link 0) ends at 0.2 s, f0 is still held at 0.5 by links 1 and 2.
  engine::Simulator sim;
  Log log(&sim);
  auto net = MakeNetwork(&sim, {{Bandwidth(1 * kGBps), 0}, {Bandwidth(1 * kGBps), 0}, {Bandwidth(1 * kGBps), 0}});
  const std::vector<std::vector<LinkId>> routes = {LinkIds({0, 1, 2}), LinkIds({0}), LinkIds({1}), LinkIds({2})};
  const std::vector<int64_t> bytes = {1'000'000'000, 100'000'000, 300'000'000, 500'000'000};
  std::vector<FlowId> flows;
  for (size_t i = 0; i < routes.size(); ++i) {
    flows.push_back(net->StartFlow(routes[i], bytes[i], &log, i));
  }
  sim.RunUntil(0);
  for (FlowId f : flows) CHECK(net->FlowRate(f) == 0.5 * kGBps);
  sim.RunUntil(200 * kMillisecond);
  CHECK_FALSE(net->IsActive(flows[1]));
  CHECK(net->FlowRate(flows[0]) == 0.5 * kGBps);
  // f2 ends at 0.6 s (0.3 GB at 0.5); f0 still held by link 2 until f3 ends at 1.0 s; then f0 has
  // sent 0.5 GB and finishes the other 0.5 GB alone at 1 GB/s: 1.5 s.
  sim.RunUntil(700 * kMillisecond);
  CHECK(net->FlowRate(flows[0]) == 0.5 * kGBps);
  CHECK(net->FlowRate(flows[3]) == 0.5 * kGBps);
  sim.Run();
  CHECK(log.TimeOfTag(2) == 600 * kMillisecond);
  CHECK(log.TimeOfTag(3) == 1000 * kMillisecond);
  CHECK(log.TimeOfTag(0) == 1500 * kMillisecond);
}

// Equal shares in the filling: link A (3 GB/s) carries f0, f1 and f2, and f0 also crosses B (1 GB/s),
// alone there, so B does not bind and f0's cap (1 GB/s) is an entry of the filling with the same
// share as A's (3 / 3). Whichever comes first, everyone gets 1 GB/s: f0 at its cap and A saturated by
// the other two at (3 - 1) / 2. 1 GB each ends at 1 s; then nothing else is left.
TEST_CASE("a flow's cap and a link's share that tie give every flow that share", "[network]") {
  engine::Simulator sim;
  Log log(&sim);
  auto net = MakeNetwork(&sim, {{Bandwidth(3 * kGBps), 0}, {Bandwidth(1 * kGBps), 0}});
  const std::vector<std::vector<LinkId>> routes = {LinkIds({0, 1}), LinkIds({0}), LinkIds({0})};
  std::vector<FlowId> flows;
  for (size_t i = 0; i < routes.size(); ++i) flows.push_back(net->StartFlow(routes[i], 1'000'000'000, &log, i));
  sim.RunUntil(0);
  for (FlowId f : flows) CHECK(net->FlowRate(f) == 1 * kGBps);
  sim.Run();
  for (uint64_t tag = 0; tag < 3; ++tag) CHECK(log.TimeOfTag(tag) == kSecond);
  CHECK(net->link_counters(LinkId(0)).busy_time == kSecond);
}

TEST_CASE("a shared link that cannot saturate does not couple its flows", "[network]") {
  // 100 hosts with 1 GB/s links share a core link. At 150 GB/s the core cannot saturate (100 x 1
  // GB/s fits): each flow runs at its host link's rate and a start or an end re-rates only the flows
  // on its own links. At 50 GB/s the core binds: 0.5 GB/s each, and everything is coupled.
  for (const double core : {150 * kGBps, 50 * kGBps}) {
    engine::Simulator sim;
    Log log(&sim);
    std::vector<LinkSpec> specs(101, LinkSpec{Bandwidth(1 * kGBps), 0});
    specs[100].capacity = Bandwidth(core);
    auto net = MakeNetwork(&sim, specs);
    std::vector<FlowId> flows;
    for (uint32_t h = 0; h < 100; ++h) {
      const std::vector<LinkId> route = LinkIds({h, 100});
      flows.push_back(net->StartFlow(route, 1'000'000 + h * 1000, &log, h));
    }
    sim.RunUntil(0);
    const double expected = core > 100 * kGBps ? 1 * kGBps : 0.5 * kGBps;
    for (FlowId f : flows) CHECK(net->FlowRate(f) == expected);
    const uint64_t visited_before = net->stats().flows_visited;
    CHECK(visited_before == 100);  // the start: every new flow gets a rate
    // The smallest flow (1e6 bytes) ends alone, at 1 ms or 2 ms.
    sim.RunUntil(PicosecondsToTime(static_cast<int64_t>(TimeToPicosecondsDouble(kMillisecond) * (kGBps / expected))));
    REQUIRE(log.done.size() == 1);
    CHECK(log.done[0].tag == 0);
    const uint64_t visited = net->stats().flows_visited - visited_before;
    if (core > 100 * kGBps) {
      CHECK(visited == 0);  // its links never bound: nobody else's rate can change
      CHECK(log.done[0].at == kMillisecond);
    } else {
      CHECK(visited == 99);  // the core binds: every remaining flow is re-rated (to 50/99 GB/s)
      CHECK(net->FlowRate(flows[1]) == Approx(50.0 / 99 * kGBps).epsilon(1e-12));
    }
    sim.Run();
    CHECK(log.done.size() == 100);
  }
}

TEST_CASE("zero-byte flows and empty routes complete after the latency alone", "[network]") {
  engine::Simulator sim;
  Log log(&sim);
  auto net = MakeNetwork(&sim, {{Bandwidth(1 * kGBps), 3 * kMicrosecond}, {Bandwidth(1 * kGBps), 4 * kMicrosecond}});
  const std::vector<LinkId> route = LinkIds({0, 1});
  net->StartFlow(route, 0, &log, 1);
  net->StartFlow({}, 123456, &log, 2);
  net->StartFlow({}, 0, &log, 3);
  net->StartFlow(route, 1000, nullptr, 4);  // no observer: completes silently
  sim.Run();
  CHECK(log.done.size() == 3);
  CHECK(log.TimeOfTag(1) == 7 * kMicrosecond);
  CHECK(log.TimeOfTag(2) == 0);
  CHECK(log.TimeOfTag(3) == 0);
  CHECK(net->stats().flows_completed == 4);
  CHECK(net->link_counters(LinkId(0)).bytes == 1000);
}

TEST_CASE("an observer can start the next flow from its callback", "[network]") {
  engine::Simulator sim;
  auto net = MakeNetwork(&sim, {{Bandwidth(2 * kGBps), 1 * kMicrosecond}});
  struct Chain : FlowObserver {
    Network* net;
    engine::Simulator* sim;
    std::vector<Time> ends;
    std::vector<LinkId> route = LinkIds({0});
    void OnFlowCompleted(FlowId, uint64_t tag) override {
      ends.push_back(sim->now());
      if (tag < 2) net->StartFlow(route, 2'000'000, this, tag + 1);
    }
  } chain;
  chain.net = net.get();
  chain.sim = &sim;
  net->StartFlow(chain.route, 2'000'000, &chain, 0);
  sim.Run();
  // Each hop: 1 us + 2e6 / 2e9 s = 1 ms.
  CHECK(chain.ends == std::vector<Time>{1001 * kMicrosecond, 2002 * kMicrosecond, 3003 * kMicrosecond});
  // Busy only while bytes flow: 3 x 1 ms, the latency gaps excluded.
  CHECK(net->link_counters(LinkId(0)).busy_time == 3 * kMillisecond);
}

// Random routes over random links, flows starting over time: at every checkpoint every transmitting
// flow must have a bottleneck (a saturated link on its route where no flow gets more than it), which
// characterises the unique max-min fair allocation, and no link may be over capacity.
TEST_CASE("incremental recomputation keeps the max-min optimality condition", "[network]") {
  // Variant 1 makes a third of the links 20x faster, so that many links never bind and the
  // recomputes skip them (and must still be exact).
  const int variant = GENERATE(0, 1);
  std::mt19937_64 rng(2024 + variant);
  engine::Simulator sim;
  Log log(&sim);
  const int num_links = 24;
  std::vector<LinkSpec> specs;
  for (int i = 0; i < num_links; ++i) {
    const double fast = variant == 1 && rng() % 3 == 0 ? 20 : 1;
    specs.push_back({Bandwidth(static_cast<double>(1 + rng() % 8) * kGBps * fast), PicosecondsToTime(rng() % 3000)});
  }
  auto net = MakeNetwork(&sim, specs);
  struct Planned {
    Time start;
    std::vector<LinkId> route;
    int64_t bytes;
  };
  std::vector<Planned> planned;
  for (int i = 0; i < 300; ++i) {
    std::vector<LinkId> route;
    const int hops = 1 + static_cast<int>(rng() % 4);
    while (static_cast<int>(route.size()) < hops) {
      const LinkId l = static_cast<LinkId>(rng() % num_links);
      if (std::find(route.begin(), route.end(), l) == route.end()) route.push_back(l);
    }
    planned.push_back({PicosecondsToTime(rng() % TimeToPicoseconds(5 * kMillisecond)), route,
                       static_cast<int64_t>(1 + rng() % 20'000'000)});
  }
  std::sort(planned.begin(), planned.end(), [](const Planned& a, const Planned& b) { return a.start < b.start; });
  std::vector<std::pair<FlowId, const Planned*>> started;
  size_t next = 0;
  int checkpoints_with_flows = 0;
  for (Time t = 0; t <= 20 * kMillisecond; t += 97 * kMicrosecond) {
    while (next < planned.size() && planned[next].start <= t) {
      sim.RunUntil(planned[next].start);
      started.push_back({net->StartFlow(planned[next].route, planned[next].bytes, &log, next), &planned[next]});
      ++next;
    }
    sim.RunUntil(t);
    std::vector<double> load(num_links, 0.0);
    std::vector<double> max_rate(num_links, 0.0);
    for (const auto& [id, p] : started) {
      const double rate = net->FlowRate(id);
      for (LinkId l : p->route) {
        load[l.value()] += rate;
        max_rate[l.value()] = std::max(max_rate[l.value()], rate);
      }
    }
    bool any = false;
    for (const auto& [id, p] : started) {
      const double rate = net->FlowRate(id);
      if (rate == 0) continue;  // waiting for latency, or done
      any = true;
      bool has_bottleneck = false;
      for (LinkId l : p->route) {
        const double capacity = specs[l.value()].capacity.bytes_per_second();
        if (load[l.value()] >= capacity * (1 - 1e-9) && rate >= max_rate[l.value()] * (1 - 1e-9)) {
          has_bottleneck = true;
        }
      }
      CHECK(has_bottleneck);
    }
    for (int l = 0; l < num_links; ++l) CHECK(load[l] <= specs[l].capacity.bytes_per_second() * (1 + 1e-9));
    checkpoints_with_flows += any;
  }
  sim.Run();
  CHECK(checkpoints_with_flows > 50);
  CHECK(log.done.size() == planned.size());
  CHECK(net->stats().flows_rerated > planned.size());
  // Bytes are conserved per link: what completed equals what was routed over it.
  std::vector<int64_t> routed(num_links, 0);
  for (const Planned& p : planned) {
    for (LinkId l : p.route) routed[l.value()] += p.bytes;
  }
  for (int l = 0; l < num_links; ++l) CHECK(net->link_counters(LinkId(l)).bytes == routed[l]);
}

TEST_CASE("network runs are deterministic to the picosecond", "[network]") {
  const auto run = [] {
    std::mt19937_64 rng(99);
    engine::Simulator sim;
    Log log(&sim);
    std::vector<LinkSpec> specs;
    for (int i = 0; i < 16; ++i) specs.push_back({Bandwidth((1 + i % 5) * 3.3e9), 100_ps * (i % 4)});
    auto net = MakeNetwork(&sim, specs);
    std::vector<std::vector<LinkId>> routes;
    for (int i = 0; i < 400; ++i) {
      routes.push_back({static_cast<LinkId>(rng() % 8), static_cast<LinkId>(8 + rng() % 8)});
    }
    for (int i = 0; i < 400; ++i) net->StartFlow(routes[i], 1 + rng() % 5'000'000, &log, i);
    sim.Run();
    return log.done;
  };
  const std::vector<Done> a = run();
  CHECK(a.size() == 400);
  CHECK(a == run());
}

TEST_CASE("contention-free mode ignores sharing and uses the bottleneck alone", "[network]") {
  engine::Simulator sim;
  Log log(&sim);
  auto net = MakeNetwork(&sim, {{Bandwidth(4 * kGBps), 1 * kMicrosecond}, {Bandwidth(2 * kGBps), 1 * kMicrosecond}},
                         NetworkMode::kContentionFree);
  CHECK(net->mode_name() == std::string("contention-free"));
  const std::vector<LinkId> both = LinkIds({0, 1});
  const std::vector<LinkId> first = LinkIds({0});
  for (int i = 0; i < 5; ++i) net->StartFlow(both, 2'000'000, &log, i);
  net->StartFlow(first, 2'000'000, &log, 9);
  sim.Run();
  // Each flow alone: 2 us + 2e6 / 2e9 = 1.002 ms over both links; 1 us + 0.5 ms on the first.
  for (int i = 0; i < 5; ++i) CHECK(log.TimeOfTag(i) == 1002 * kMicrosecond);
  CHECK(log.TimeOfTag(9) == 501 * kMicrosecond);
  CHECK(net->stats().recomputations == 0);
  CHECK(net->link_counters(LinkId(0)).bytes == 12'000'000);
}

TEST_CASE("bad links and mode names are refused with the field named", "[network]") {
  engine::Simulator sim;
  auto zero = Network::Create(&sim, {{Bandwidth(1e9), 0}, {Bandwidth(0), 0}}, NetworkMode::kMaxMinFair);
  REQUIRE_FALSE(zero.ok());
  CHECK_THAT(std::string(zero.status().message()), Catch::Contains("links[1].capacity"));
  auto negative = Network::Create(&sim, {{Bandwidth(1e9), -5_ps}}, NetworkMode::kMaxMinFair);
  REQUIRE_FALSE(negative.ok());
  CHECK_THAT(std::string(negative.status().message()), Catch::Contains("links[0].latency"));
  CHECK(ParseNetworkMode("max-min-fair").value() == NetworkMode::kMaxMinFair);
  CHECK(ParseNetworkMode("max-min").value() == NetworkMode::kMaxMinFair);  // the short form
  CHECK(ParseNetworkMode("contention-free").value() == NetworkMode::kContentionFree);
  CHECK_FALSE(ParseNetworkMode("fluid").ok());
}

// Three identical weighted flows started at one instant run as one flow of the summed weights, and
// every caller hears of the completion. The links count them as three flows of the parts' weights:
// 1001 bytes at weight 0.5 is 501 bytes per part (half rounds away from zero), not the 1502 of the
// merged 1.5; at weight 2.5 each part counts 3 flows and 2503 bytes.
TEST_CASE("merged weighted flows count on their links as the flows that merged", "[network]") {
  engine::Simulator sim;
  auto net =
      Network::Create(&sim, {{Bandwidth(1e9), kMicrosecond}, {Bandwidth(1e9), kMicrosecond}}, NetworkMode::kMaxMinFair);
  REQUIRE(net.ok());
  Log log(&sim);
  const std::vector<LinkId> route = LinkIds({0, 1});
  const std::vector<double> weights{0.5, 2.5};
  for (uint64_t tag = 0; tag < 3; ++tag) (*net)->StartWeightedFlow(route, weights, 1001, &log, tag);
  sim.Run();
  CHECK((*net)->stats().flows_merged == 2);
  CHECK((*net)->stats().flows_completed == 3);
  REQUIRE(log.done.size() == 3);
  for (uint64_t tag = 0; tag < 3; ++tag) CHECK(log.done[tag].tag == tag);
  CHECK((*net)->link_counters(LinkId(0)).bytes == 3 * 501);
  CHECK((*net)->link_counters(LinkId(0)).flows == 3);
  CHECK((*net)->link_counters(LinkId(1)).bytes == 3 * 2503);
  CHECK((*net)->link_counters(LinkId(1)).flows == 3 * 3);
}

// Records the hints and completions in the order the network gives them.
class HintLog : public FlowObserver {
 public:
  void OnFlowCompleted(FlowId, uint64_t tag) override { calls.emplace_back('C', tag); }
  void PrefetchCompletion(uint64_t tag) const override { calls.emplace_back('H', tag); }
  mutable std::vector<std::pair<char, uint64_t>> calls;
};

TEST_CASE("a completing flow's observer gets its hint once, with its tag, just before the completion", "[network]") {
  engine::Simulator sim;
  HintLog log;
  auto net = MakeNetwork(&sim, {{Bandwidth(10 * kGBps), 1 * kMicrosecond}, {Bandwidth(10 * kGBps), 1 * kMicrosecond}});
  const std::vector<LinkId> both = LinkIds({0, 1});
  const std::vector<LinkId> first = LinkIds({0});
  net->StartFlow(both, 2'000'000, &log, 7);   // shares link 0, ends second
  net->StartFlow(first, 1'000'000, &log, 8);  // ends first
  net->StartFlow(both, 0, &log, 9);           // no bytes: ends with its latency, never joins a link
  sim.Run();
  const std::vector<std::pair<char, uint64_t>> want = {{'H', 9}, {'C', 9}, {'H', 8}, {'C', 8}, {'H', 7}, {'C', 7}};
  CHECK(log.calls == want);
}

}  // namespace
}  // namespace hetsim::network
