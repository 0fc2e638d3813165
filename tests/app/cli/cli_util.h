// Runs the hetsim binary the way a user does, through the shell, for the command-line tests.
#ifndef HETSIM_TESTS_CLI_UTIL_H_
#define HETSIM_TESTS_CLI_UTIL_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "proto/io.h"

namespace hetsim::testing {

struct CliRun {
  int exit_code;    // -1 when the command did not exit normally
  std::string out;  // stdout
  std::string err;  // stderr
};

// `hetsim ARGS` with stdout and stderr captured in numbered files of a per-process folder.
inline CliRun RunHetsim(const std::string& args) {
  static int counter = 0;
  const auto dir = std::filesystem::temp_directory_path() / absl::StrCat("hetsim_cli_run_", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string out = (dir / absl::StrCat(counter, ".out")).string();
  const std::string err = (dir / absl::StrCat(counter++, ".err")).string();
  const int status = std::system(absl::StrCat(HETSIM_BINARY, " ", args, " >", out, " 2>", err).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, *proto::ReadFileToString(out), *proto::ReadFileToString(err)};
}

// `hetsim ARGS`, which must succeed (its stderr shown when it does not).
inline CliRun RunOk(const std::string& args) {
  CliRun r = RunHetsim(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r;
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_CLI_UTIL_H_
