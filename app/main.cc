// hetsim: a discrete-event simulator of large-model training on heterogeneous GPU clusters.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/cli/commands.h"

#if defined(__SANITIZE_ADDRESS__)
#define HETSIM_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HETSIM_UNDER_ASAN 1
#endif
#endif

namespace {

void PrintUsage(std::FILE* out) {
  std::fprintf(out, "usage: hetsim <command> [options]   (hetsim <command> --help for its options)\n\ncommands:\n");
  for (const auto& c : hetsim::cli::AllCommands()) std::fprintf(out, "  %-14s %s\n", c.name, c.summary);
}

// The exact simulation's state (link records, flows, transfer graphs, the event pool: hundreds of MB) is
// read at random, so on 4 KiB pages nearly every cache miss is a TLB miss too. glibc puts its heap on
// transparent huge pages only when the tunable glibc.malloc.hugetlb=1 (glibc 2.35 and later) is in the
// environment at start: the dynamic loader reads it there, and no call sets it later. So hetsim starts
// itself once more with it (one exec, about a millisecond). Where the allocator places a block decides
// no simulated value: every report and trace stays bit-identical. 0.94 of the CPU of the exact 16K run
// (docs/performance.md, session 37; docs/decisions.md, "Huge pages for the heap").
// HETSIM_NO_HUGE_PAGES=1 leaves the heap as it is; a tunable already set is kept.
void StartWithHugePageHeap(char** argv) {
#ifndef HETSIM_UNDER_ASAN  // the sanitizers' allocator does not read glibc's tunables
  if (std::getenv("HETSIM_NO_HUGE_PAGES") != nullptr) return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::string old = tunables != nullptr ? tunables : "";
  if (old.find("glibc.malloc.hugetlb") != std::string::npos) return;  // the user's, or the second start
  const std::string value = old.empty() ? "glibc.malloc.hugetlb=1" : old + ":glibc.malloc.hugetlb=1";
  if (setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Only on failure (no /proc, say): run on without huge pages, the environment as it was.
  if (tunables != nullptr) {
    setenv("GLIBC_TUNABLES", old.c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
#endif
}

}  // namespace

int main(int argc, char** argv) {
  StartWithHugePageHeap(argv);
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    PrintUsage(stdout);
    return 0;
  }
  if (name == "--version") {
    std::printf("hetsim %s\n", HETSIM_VERSION_STRING);
    return 0;
  }
  for (const auto& c : hetsim::cli::AllCommands()) {
    if (name == c.name) return c.run(std::vector<std::string>(argv + 2, argv + argc));
  }
  std::fprintf(stderr, "hetsim: unknown command '%s'\n", name.c_str());
  PrintUsage(stderr);
  return 2;
}
