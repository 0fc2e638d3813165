// Flows sharing links, priced max-min (planner/shared_links.h): closed forms of the layer ranges'
// all-reduces that overlap on the link between two islands (issue 39).
#include <catch2/catch.hpp>

#include <vector>

#include "base/time.h"
#include "planner/shared_links.h"

namespace hetsim::planner {
namespace {

constexpr double kGBps = 1e9;

SharedFlow FlowOf(Time start, double bytes, std::vector<std::pair<int, double>> links, Time latency = 0) {
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

}  // namespace
}  // namespace hetsim::planner
