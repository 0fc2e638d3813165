// HETSIM_CHECK: an invariant of the code (not of the input) that must hold in every build. A failure
// is a programming error: it prints the file, line, condition and message and aborts. Bad input is
// never checked this way; it returns an absl::Status naming the file and field path.
#ifndef HETSIM_BASE_CHECK_H_
#define HETSIM_BASE_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define HETSIM_CHECK(cond, message)                                                                              \
  do {                                                                                                           \
    if (!(cond)) {                                                                                               \
      std::fprintf(stderr, "%s:%d: internal error: check failed: %s: %s\n", __FILE__, __LINE__, #cond, message); \
      std::abort();                                                                                              \
    }                                                                                                            \
  } while (false)

#endif  // HETSIM_BASE_CHECK_H_
