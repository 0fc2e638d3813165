// Prints a Time as its integer picoseconds in test messages (Catch2's CHECK, INFO), as they read
// before Time became a type of its own. Tests only: output code picks its unit through base/time.h.
#ifndef HETSIM_TESTS_TIME_IO_H_
#define HETSIM_TESTS_TIME_IO_H_

#include <compare>
#include <concepts>
#include <ostream>

#include "base/time.h"

namespace hetsim {

inline std::ostream& operator<<(std::ostream& os, Time t) { return os << TimeToPicoseconds(t); }

// predicted / simulated - 1: a prediction's relative error, as the validate tests check it.
inline double RelativeError(Time predicted, Time simulated) {
  return TimeToSeconds(predicted) / TimeToSeconds(simulated) - 1;
}

// Catch2 forwards `CHECK(t == 0)` and `CHECK(t > 0)` through templates, where the literal 0 arrives as
// an int and no longer converts. In a test an integer compared with a Time is picoseconds, as the
// tests were written; code outside tests has no such comparison.
template <std::integral I>
constexpr bool operator==(Time t, I ps) {
  return t == PicosecondsToTime(ps);
}
template <std::integral I>
constexpr std::strong_ordering operator<=>(Time t, I ps) {
  return t <=> PicosecondsToTime(ps);
}

}  // namespace hetsim

using namespace hetsim::time_literals;  // NOLINT(google-build-using-namespace): 50_ps in every test

#endif  // HETSIM_TESTS_TIME_IO_H_
