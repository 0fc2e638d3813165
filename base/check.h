// HETSIM_CHECK: an invariant of the code (not of the input) that must hold in every build. A failure
// is a programming error: it prints the file, line, condition and message and aborts. Bad input is
// never checked this way; it returns an absl::Status naming the file and field path.
//
//   HETSIM_CHECK(at >= now_, "event at %d ps, before now (%d ps)", at, now_);
//
// The message is a printf format (checked by the compiler) and its arguments; the failure path is a
// cold function out of line, so a check on a hot path costs one compare and branch.
#ifndef HETSIM_BASE_CHECK_H_
#define HETSIM_BASE_CHECK_H_

namespace hetsim::internal {

[[noreturn]] [[gnu::cold]] [[gnu::format(printf, 4, 5)]] void CheckFailed(const char* file, int line,
                                                                          const char* condition, const char* format,
                                                                          ...);

}  // namespace hetsim::internal

#define HETSIM_CHECK(cond, ...)                                                           \
  do {                                                                                    \
    if (!(cond)) ::hetsim::internal::CheckFailed(__FILE__, __LINE__, #cond, __VA_ARGS__); \
  } while (false)

#endif  // HETSIM_BASE_CHECK_H_
