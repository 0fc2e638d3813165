#include "base/check.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace hetsim::internal {

void CheckFailed(const char* file, int line, const char* condition, const char* format, ...) {
  std::fprintf(stderr, "%s:%d: internal error: check failed: %s: ", file, line, condition);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::abort();
}

}  // namespace hetsim::internal
