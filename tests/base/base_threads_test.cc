// base/threads.h: every body runs exactly once, also when the system refuses threads.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <vector>

#include <catch2/catch.hpp>

#include "base/threads.h"

TEST_CASE("RunOnThreads runs body(t) once for every t", "[threads]") {
  for (int threads : {0, 1, 2, 7}) {
    std::vector<std::atomic<int>> runs(static_cast<size_t>(std::max(threads, 1)));
    hetsim::RunOnThreads(threads, [&](int t) { runs[static_cast<size_t>(t)]++; });
    for (const std::atomic<int>& r : runs) CHECK(r.load() == 1);
  }
}

#if defined(__SANITIZE_ADDRESS__)
#define HETSIM_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HETSIM_TEST_UNDER_ASAN 1
#endif
#endif

#ifndef HETSIM_TEST_UNDER_ASAN
// In a child process whose address space cannot hold another thread's stack, std::thread throws;
// RunOnThreads must still run every body (on the calling thread) and not terminate.
TEST_CASE("RunOnThreads runs the bodies of refused threads on the caller", "[threads]") {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t used = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE));
    const rlimit limit{used + (1 << 20), used + (1 << 20)};  // 1 MiB more: no room for an 8 MiB stack
    ::setrlimit(RLIMIT_AS, &limit);
    std::vector<int> runs(64, 0);
    std::atomic<int> total{0};
    hetsim::RunOnThreads(64, [&](int t) {
      runs[static_cast<size_t>(t)]++;
      total++;
    });
    bool once = total.load() == 64;
    for (int r : runs) once = once && r == 1;
    ::_exit(once ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));  // not killed by std::terminate's abort
  CHECK(WEXITSTATUS(status) == 0);
}
#endif
