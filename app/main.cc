// hetsim: a discrete-event simulator of large-model training on heterogeneous GPU clusters.
#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/commands.h"

namespace {

void PrintUsage(std::FILE* out) {
  std::fprintf(out, "usage: hetsim <command> [options]   (hetsim <command> --help for its options)\n\ncommands:\n");
  for (const auto& c : hetsim::cli::AllCommands()) std::fprintf(out, "  %-14s %s\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv) {
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
