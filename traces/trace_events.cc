#include "traces/trace_events.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_format.h"

namespace hetsim::traces {

int64_t TraceTicks(Time t) {
  // t * 1024 stays below 2^63 for t under ~104 days of simulated time.
  const Time scaled = t * kTicksPerMicrosecond;
  const Time half = kMicrosecond / 2;
  return scaled >= 0 ? (scaled + half) / kMicrosecond : -((-scaled + half) / kMicrosecond);
}

std::string FormatTicks(int64_t ticks) {
  const bool negative = ticks < 0;
  const int64_t a = negative ? -ticks : ticks;
  // 1/1024 = 0.0009765625: the fraction has at most 10 decimals, all exact.
  const int64_t fraction = (a % kTicksPerMicrosecond) * 9765625;
  std::string out = absl::StrFormat("%s%d", negative ? "-" : "", a / kTicksPerMicrosecond);
  if (fraction != 0) {
    std::string digits = absl::StrFormat("%010d", fraction);
    digits.erase(digits.find_last_not_of('0') + 1);
    out += '.';
    out += digits;
  }
  return out;
}

std::string JsonEscape(absl::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<int> AssignLanes(const std::vector<std::pair<int64_t, int64_t>>& intervals) {
  std::vector<int> order(intervals.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const auto& x = intervals[a];
    const auto& y = intervals[b];
    if (x.first != y.first) return x.first < y.first;
    return x.second - x.first > y.second - y.first;
  });
  std::vector<int> lane(intervals.size(), 0);
  std::vector<int64_t> lane_end;  // last finish per lane
  for (int i : order) {
    const auto& [start, finish] = intervals[i];
    size_t l = 0;
    while (l < lane_end.size() && lane_end[l] > start) ++l;
    if (l == lane_end.size()) lane_end.push_back(finish);
    lane_end[l] = std::max(lane_end[l], finish);
    lane[i] = static_cast<int>(l);
  }
  return lane;
}

void TraceEventList::Add(int64_t ts, int64_t dur, std::string json) {
  events_.push_back({ts, dur, static_cast<int64_t>(events_.size()), std::move(json)});
}

std::string TraceEventList::Finish() {
  std::sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.dur != b.dur) return a.dur > b.dur;
    return a.order < b.order;
  });
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto add = [&](const std::string& e) {
    if (!first) out += ",\n";
    first = false;
    out += e;
  };
  for (const std::string& m : metadata_) add(m);
  for (const Event& e : events_) add(e.json);
  out += "\n]}\n";
  return out;
}

}  // namespace hetsim::traces
