// Flows sharing links, priced max-min (planner/shared_links.h): closed forms of the layer ranges'
// all-reduces that overlap on the link between two islands (issue 39).
#include <catch2/catch.hpp>

#include <vector>

#include "base/time.h"
#include "planner/shared_links.h"

namespace hetsim::planner {
namespace {

constexpr double kGBps = 1e9;

SharedFlow FlowOf(Time start, double bytes, std::vector<SharedLink> links, Time latency = 0) {
  return {.start = start, .latency = latency, .bytes = bytes, .links = std::move(links)};
}

TEST_CASE("shared links: alone, a flow takes its bytes over its slowest link plus its latency", "[planner][links]") {
  const std::vector<Time> end =
      ShareLinks({FlowOf(MillisecondsToTime(5), 1e9, {{0, 10 * kGBps}, {1, 5 * kGBps}}, MicrosecondsToTime(30))});
  CHECK(end == std::vector<Time>{MillisecondsToTime(205) + MicrosecondsToTime(30)});
}

TEST_CASE("shared links: two ranges over one shared link take twice one alone's bandwidth term", "[planner][links]") {
  // Each also crosses a link of its own (its stage's NIC), faster than the shared one.
  const Time lat = MicrosecondsToTime(10);
  const std::vector<Time> end = ShareLinks({FlowOf(0, 1e9, {{0, 20 * kGBps}, {-1, 5 * kGBps}}, lat),
                                            FlowOf(0, 1e9, {{1, 20 * kGBps}, {-1, 5 * kGBps}}, lat)});
  // Alone: 1 GB at 5 GB/s = 200 ms; together each gets 2.5 GB/s.
  CHECK(end == std::vector<Time>{MillisecondsToTime(400) + lat, MillisecondsToTime(400) + lat});
  // Links of their own only: no sharing.
  CHECK(ShareLinks({FlowOf(0, 1e9, {{0, 5 * kGBps}}), FlowOf(0, 1e9, {{1, 5 * kGBps}})}) ==
        std::vector<Time>{MillisecondsToTime(200), MillisecondsToTime(200)});
}

TEST_CASE("shared links: a flow joining halfway slows the first for the time they overlap", "[planner][links]") {
  // A alone for 100 ms (half its bytes), then both at half rate until A ends at 300 ms; B has moved
  // half its bytes by then and runs alone for the rest: 100 ms, ending at 400 ms.
  const std::vector<Time> end =
      ShareLinks({FlowOf(0, 1e9, {{-1, 5 * kGBps}}), FlowOf(MillisecondsToTime(100), 1e9, {{-1, 5 * kGBps}})});
  CHECK(end == std::vector<Time>{MillisecondsToTime(300), MillisecondsToTime(400)});
}

TEST_CASE("shared links: max-min gives a flow held elsewhere less, and the rest to the others", "[planner][links]") {
  // Link -1 (10 GB/s) carries A and B; B is held to 2 GB/s by its own link 1, so A gets the other 8.
  const std::vector<Time> end =
      ShareLinks({FlowOf(0, 8e8, {{-1, 10 * kGBps}}), FlowOf(0, 2e8, {{-1, 10 * kGBps}, {1, 2 * kGBps}})});
  CHECK(end == std::vector<Time>{MillisecondsToTime(100), MillisecondsToTime(100)});
}

TEST_CASE("shared links: a flow that follows another begins when it ends, latency included", "[planner][links]") {
  // A and C share link -1 from 0, each at half its 5 GB/s: both move 1 GB by 400 ms, A then pays its
  // 10 us. B follows A (a range's next bucket): alone from 400.01 ms, 200 ms, then its own 10 us. B2
  // follows A but may not start before 700 ms: its start wins.
  const Time lat = MicrosecondsToTime(10);
  SharedFlow b = FlowOf(0, 1e9, {{-1, 5 * kGBps}}, lat);
  b.after = 0;
  SharedFlow b2 = FlowOf(MillisecondsToTime(700), 1e9, {{-1, 5 * kGBps}}, lat);
  b2.after = 0;
  const std::vector<Time> end =
      ShareLinks({FlowOf(0, 1e9, {{-1, 5 * kGBps}}, lat), FlowOf(0, 1e9, {{-1, 5 * kGBps}}), b, b2});
  CHECK(end[0] == MillisecondsToTime(400) + lat);
  CHECK(end[1] == MillisecondsToTime(400));
  // B's bytes end at 600.01 ms, before B2 begins at 700 ms; B2 then runs alone.
  CHECK(end[2] == MillisecondsToTime(600) + 2 * lat);
  CHECK(end[3] == MillisecondsToTime(900) + lat);
}

TEST_CASE("shared links: a link shared per flow gives transfers of 2 flows and 1 two thirds and one third",
          "[planner][links]") {
  // One link of C = 6 GB/s: A puts 2 of the simulator's flows on it, B 1; each flow gets C / 3, so A moves
  // 2C/3 = 4 GB/s and B C/3 = 2 GB/s. A's 0.8 GB end at 0.8 / 4 = 200 ms, when B has moved 0.4 GB of its 1 GB;
  // B's other 0.6 GB then take 100 ms alone: (a + b) / C = 1.8 / 6 = 300 ms.
  const double c = 6 * kGBps;
  const std::vector<Time> end = ShareLinks({FlowOf(0, 8e8, {{0, c, 2}}), FlowOf(0, 1e9, {{0, c, 1}})});
  CHECK(end == std::vector<Time>{MillisecondsToTime(200), MillisecondsToTime(300)});
  // In general, with A of a bytes ending first (a < 2b): a / (2C/3) = 3a / 2C, then B at (a + b) / C.
  for (const double a : {1e8, 5e8, 1.9e9}) {
    const std::vector<Time> ends = ShareLinks({FlowOf(0, a, {{0, c, 2}}), FlowOf(0, 1e9, {{0, c, 1}})});
    CHECK(TimeToSeconds(ends[0]) == Approx(3 * a / (2 * c)).epsilon(1e-9));
    CHECK(TimeToSeconds(ends[1]) == Approx((a + 1e9) / c).epsilon(1e-9));
  }
  // Of one flow each: halves, as before.
  for (const Time t : ShareLinks({FlowOf(0, 1e9, {{0, c, 1}}), FlowOf(0, 1e9, {{0, c, 1}})})) {
    CHECK(TimeToSeconds(t) == Approx(2e9 / c).epsilon(1e-9));
  }
}

TEST_CASE("shared links: a double tree beside a ring on a NIC shared per flow goes three times as fast",
          "[planner][links]") {
  // A NIC of C = 9 GB/s. A ring of one channel puts 1 flow through it and moves its bytes (ring bytes) at C alone.
  // A double tree over 2 GPUs on each of 2 nodes puts 2 flows through it (one edge of each tree) and moves 2/3 of
  // a ring's bytes there: alone it goes at C / (2/3) = 1.5 C in ring bytes. Each of the 3 flows gets C / 3: the
  // tree's 2 move 2C/3 on the wire, 2C/3 / (2/3) = C in ring bytes; the ring C / 3. With T = 0.9 GB (ring bytes)
  // and R = 0.9 GB: the tree ends at T / C = 100 ms, the ring has moved 0.3 GB and ends at
  // 100 ms + 0.6 GB / C = 166.67 ms ((2T/3 + R) / C, what the NIC moves on the wire in all over C).
  const double c = 9 * kGBps;
  const SharedLink tree(0, c / (2.0 / 3), 2, c), ring(0, c, 1, c);
  CHECK(tree.Weight() == Approx(3).epsilon(1e-12));
  CHECK(ring.Weight() == 1);
  const std::vector<Time> end = ShareLinks({FlowOf(0, 9e8, {tree}), FlowOf(0, 9e8, {ring})});
  CHECK(TimeToSeconds(end[0]) == Approx(0.1).epsilon(1e-9));
  CHECK(TimeToSeconds(end[1]) == Approx((2.0 / 3 * 9e8 + 9e8) / c).epsilon(1e-9));
}

TEST_CASE("shared links: a transfer of 2 flows held by a link of its own leaves the rest of the shared one",
          "[planner][links]") {
  // Link 0 (C = 8 GB/s) carries A (2 flows) and B (1). Shared per flow A would get 2C/3, but its own link 1 holds
  // it to C/4 = 2 GB/s; B gets the other 3C/4 = 6 GB/s. A's 0.2 GB and B's 0.6 GB both end at 100 ms.
  const double c = 8 * kGBps;
  const std::vector<Time> end = ShareLinks({FlowOf(0, 2e8, {{0, c, 2}, {1, c / 4}}), FlowOf(0, 6e8, {{0, c, 1}})});
  CHECK(end == std::vector<Time>{MillisecondsToTime(100), MillisecondsToTime(100)});
}

}  // namespace
}  // namespace hetsim::planner
