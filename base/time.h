// Simulated time: integer picoseconds. Every duration in the simulator is a Time; conversions from
// the schema's units happen once, at load, through these helpers. In base/ because every module
// (topology's link latencies, the workload's kernel times, the planner's predictions) speaks it.
#ifndef HETSIM_BASE_TIME_H_
#define HETSIM_BASE_TIME_H_

#include <cmath>
#include <cstdint>
#include <limits>

namespace hetsim {

using Time = int64_t;  // picoseconds

inline constexpr Time kPicosecond = 1;
inline constexpr Time kNanosecond = 1'000;
inline constexpr Time kMicrosecond = 1'000'000;
inline constexpr Time kMillisecond = 1'000'000'000;
inline constexpr Time kSecond = 1'000'000'000'000;
inline constexpr Time kTimeMax = std::numeric_limits<Time>::max();

// Rounds to the nearest picosecond. Callers validate ranges first (a value beyond ~106 days of
// simulated time does not fit); this clamps rather than overflows.
inline Time SecondsToTime(double seconds) {
  const double ps = std::nearbyint(seconds * 1e12);
  if (!(ps < 9.2e18)) return kTimeMax;
  if (ps < 0) return 0;
  return static_cast<Time>(ps);
}
inline Time NanosecondsToTime(int64_t ns) { return ns * kNanosecond; }
inline double TimeToSeconds(Time t) { return static_cast<double>(t) * 1e-12; }
inline double TimeToMilliseconds(Time t) { return static_cast<double>(t) * 1e-9; }

// Time to move `bytes` at `bytes_per_second`, rounded up so that a transfer never finishes early.
inline Time TransferTime(double bytes, double bytes_per_second) {
  const double ps = std::ceil(bytes / bytes_per_second * 1e12);
  if (!(ps < 9.2e18)) return kTimeMax;
  return static_cast<Time>(ps);
}

}  // namespace hetsim

#endif  // HETSIM_BASE_TIME_H_
