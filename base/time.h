// Simulated time: integer picoseconds in a type of its own. Every duration and instant in the
// simulator is a Time; conversions from the schema's units happen once, at load, through the named
// helpers below, and nothing else turns a number into a Time or a Time into a number (no implicit
// conversion, no constructor from an integer): a Time cannot be added to a byte count, a count of
// events or a double of seconds by mistake. In base/ because every module (topology's link latencies,
// the workload's kernel times, the planner's predictions) speaks it. docs/decisions.md says why these
// names and this set of operators.
//
// The literal 0 converts (`Time t = 0;`, `t > 0`), as std::strong_ordering compares with a literal 0:
// zero is zero in any unit. No other integer does, not even a variable holding 0.
//
// Arithmetic: Time +- Time, Time * integer, Time / integer (truncates, as int64 does), Time / Time (an
// integer count, truncated), Time % Time, and TimeRatio for the ratio as a double. No operator takes a
// floating-point number: scale through TimeToPicosecondsDouble and PicosecondsToTime, which shows the
// rounding at the call site.
#ifndef HETSIM_BASE_TIME_H_
#define HETSIM_BASE_TIME_H_

#include <cmath>
#include <compare>
#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "base/strong_scalar.h"

namespace hetsim {

class Time;
template <std::integral I>
constexpr Time PicosecondsToTime(I picoseconds);
constexpr int64_t TimeToPicoseconds(Time t);

class Time : public StrongScalar<Time, int64_t> {
 public:
  constexpr Time() = default;  // zero
  // The literal 0 only (a null pointer constant); `Time t = n;` with an integer n does not compile.
  constexpr Time(struct OnlyLiteralZeroConvertsToTime_UseNanosecondsToTimeEtc* /*zero*/) {
  }  // NOLINT(google-explicit-constructor)

  // Compare, +, -, * and / by an integer and Time / Time (a count) come from StrongScalar; the
  // remainder is Time's own.
  friend constexpr Time operator%(Time a, Time b) { return Time(a.rep() % b.rep()); }
  template <std::integral I>
  friend constexpr Time operator%(Time a, I n) {
    return Time(a.rep() % static_cast<int64_t>(n));
  }

 private:
  template <std::integral I>
  friend constexpr Time PicosecondsToTime(I picoseconds);
  friend constexpr int64_t TimeToPicoseconds(Time t);

  constexpr explicit Time(int64_t ps) : StrongScalar(ps) {}
};

static_assert(sizeof(Time) == 8 && std::is_trivially_copyable_v<Time>);

// Whole units to Time, exact. Integers only: a fraction of a unit goes through SecondsToTime (which
// rounds) or PicosecondsToTime(static_cast<int64_t>(...)) with the rounding written out.
template <std::integral I>
constexpr Time PicosecondsToTime(I picoseconds) {
  return Time(static_cast<int64_t>(picoseconds));
}
template <std::integral I>
constexpr Time NanosecondsToTime(I ns) {
  return PicosecondsToTime(static_cast<int64_t>(ns) * 1'000);
}
template <std::integral I>
constexpr Time MicrosecondsToTime(I us) {
  return PicosecondsToTime(static_cast<int64_t>(us) * 1'000'000);
}
template <std::integral I>
constexpr Time MillisecondsToTime(I ms) {
  return PicosecondsToTime(static_cast<int64_t>(ms) * 1'000'000'000);
}

// The integer inside, for the few places that store or print picoseconds (the event queue's keys,
// trace files, fingerprints).
constexpr int64_t TimeToPicoseconds(Time t) { return t.rep(); }
constexpr double TimeToPicosecondsDouble(Time t) { return static_cast<double>(TimeToPicoseconds(t)); }

inline constexpr Time kPicosecond = PicosecondsToTime(1);
inline constexpr Time kNanosecond = PicosecondsToTime(1'000);
inline constexpr Time kMicrosecond = PicosecondsToTime(1'000'000);
inline constexpr Time kMillisecond = PicosecondsToTime(1'000'000'000);
inline constexpr Time kSecond = PicosecondsToTime(1'000'000'000'000);
// The longest time a run simulates: half of int64 picoseconds (about 46 days), so sums of a few such times
// still fit. The validators' limits::kMaxSimulatedPs is this bound.
inline constexpr Time kMaxSimulatedTime = PicosecondsToTime(int64_t{4'000'000'000'000'000'000});
inline constexpr Time kTimeMax = PicosecondsToTime(std::numeric_limits<int64_t>::max());
inline constexpr Time kTimeMin = PicosecondsToTime(std::numeric_limits<int64_t>::min());

// "Not reached": a node not started, an optimizer step not run. Kept at -1 ps, the value the reports
// and traces have always carried; compare with it, never add to it.
inline constexpr Time kNoTime = PicosecondsToTime(-1);

// Literals for tests and constants: 50_ps, 3_ns, 2_us, 5_ms (inside namespace hetsim as they are;
// elsewhere `using namespace hetsim::time_literals;`).
inline namespace time_literals {
constexpr Time operator""_ps(unsigned long long ps) { return PicosecondsToTime(ps); }
constexpr Time operator""_ns(unsigned long long ns) { return NanosecondsToTime(ns); }
constexpr Time operator""_us(unsigned long long us) { return MicrosecondsToTime(us); }
constexpr Time operator""_ms(unsigned long long ms) { return MillisecondsToTime(ms); }
}  // namespace time_literals

// Rounds to the nearest picosecond. Callers validate ranges first (a value beyond ~106 days of
// simulated time does not fit); this clamps rather than overflows.
inline Time SecondsToTime(double seconds) {
  const double ps = std::nearbyint(seconds * 1e12);
  if (!(ps < 9.2e18)) return kTimeMax;
  if (ps < 0) return Time();
  return PicosecondsToTime(static_cast<int64_t>(ps));
}
// Milliseconds with a fraction (a measured stage time), rounded as SecondsToTime(ms * 1e-3).
inline Time MillisecondsToTime(double ms) { return SecondsToTime(ms * 1e-3); }
inline constexpr double TimeToSeconds(Time t) { return TimeToPicosecondsDouble(t) * 1e-12; }
inline constexpr double TimeToMilliseconds(Time t) { return TimeToPicosecondsDouble(t) * 1e-9; }
inline constexpr double TimeToMicroseconds(Time t) { return TimeToPicosecondsDouble(t) * 1e-6; }
inline constexpr double TimeToNanoseconds(Time t) { return TimeToPicosecondsDouble(t) * 1e-3; }

constexpr Time AbsTime(Time t) { return t < 0 ? -t : t; }

// A duration in seconds held as a double: what the cost models' closed forms (the collectives'
// alpha-beta estimates) compute and sum below a picosecond before one rounding into a Time
// (SecondsToTime), so that the sum of many short steps is not the sum of their roundings. Not a Time
// and not a number: `Seconds(2e-6)` in, `.value()` out, and only the operator set of base/strong_scalar.h.
class Seconds : public DoubleScalar<Seconds> {
 public:
  using DoubleScalar::DoubleScalar;
};
static_assert(sizeof(Seconds) == 8 && std::is_trivially_copyable_v<Seconds>);
static_assert(!std::is_convertible_v<double, Seconds> && !std::is_convertible_v<Seconds, double>);
static_assert(!std::is_constructible_v<Seconds, Time> && !std::is_constructible_v<Time, Seconds>);

// Rounded as SecondsToTime(double).
inline Time SecondsToTime(Seconds seconds) { return SecondsToTime(seconds.value()); }
// A Time as Seconds, exact as TimeToSeconds: a link's latency added into a closed form.
inline constexpr Seconds TimeAsSeconds(Time t) { return Seconds(TimeToSeconds(t)); }

// a / b as a double (a share of a step, a speed-up).
inline constexpr double TimeRatio(Time a, Time b) { return TimeToPicosecondsDouble(a) / TimeToPicosecondsDouble(b); }

}  // namespace hetsim

#endif  // HETSIM_BASE_TIME_H_
