// Building blocks of a Chrome Trace Event file that every viewer (Perfetto, speedscope, the DevTools
// Performance panel, catapult) draws the same way:
//   - timestamps in microseconds quantized to 1/1024 us (~1 ns) and printed exactly: every printed
//     value is a binary fraction a double holds exactly, so ts + dur of a slice equals the ts of a
//     slice that touches it in integer picoseconds, once parsed by any JSON reader;
//   - lanes: slices of one kind on one GPU that overlap in time go to separate lanes (threads), so the
//     slices of a thread never partially overlap (viewers require X slices on a thread to nest);
//   - events written in time order, the longer first at equal start, so that slices nest in file order.
#ifndef HETSIM_TRACES_TRACE_EVENTS_H_
#define HETSIM_TRACES_TRACE_EVENTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/time.h"

namespace hetsim::traces {

// Trace time unit: 1/1024 microsecond. Rounds to nearest; monotonic, so touching and nested
// intervals in picoseconds stay touching and nested in ticks.
inline constexpr int64_t kTicksPerMicrosecond = 1024;
int64_t TraceTicks(Time t);
// Ticks as microseconds, exactly (e.g. 1536 -> "1.5", 1 -> "0.0009765625").
std::string FormatTicks(int64_t ticks);

// A JSON string's contents (quotes, backslashes and control characters escaped).
std::string JsonEscape(absl::string_view s);

// Assigns each interval [start, finish) (ticks) the lowest lane whose previous interval ended at or
// before its start, taking intervals by start, longer first at equal start. Returns the lane of each
// input in input order; lanes used = 1 + max.
std::vector<int> AssignLanes(const std::vector<std::pair<int64_t, int64_t>>& intervals);

// The file: metadata first, then events sorted by (ts, longer first, insertion order).
class TraceEventList {
 public:
  void AddMetadata(std::string json) { metadata_.push_back(std::move(json)); }
  // `json` is the whole event object; `ts` and `dur` (ticks) only order it.
  void Add(int64_t ts, int64_t dur, std::string json);
  std::string Finish();

 private:
  struct Event {
    int64_t ts, dur;
    int64_t order;
    std::string json;
  };
  std::vector<std::string> metadata_;
  std::vector<Event> events_;
};

}  // namespace hetsim::traces

#endif  // HETSIM_TRACES_TRACE_EVENTS_H_
