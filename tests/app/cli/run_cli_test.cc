// `hetsim run` as a user runs it: exit 0 with a table, a report and a trace; exit 2 for bad input
// with nothing written; OOM flagged on stderr, and exit 3 with --fail-on-oom.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "proto/io.h"

namespace {

namespace fs = std::filesystem;

struct RunResult {
  int exit_code;
  std::string out;
  std::string err;
};

// `hetsim run ARGS` through the shell, stdout and stderr captured in `dir`.
RunResult HetsimRun(const fs::path& dir, const std::string& args) {
  const fs::path out = dir / "stdout", err = dir / "stderr";
  const std::string command = absl::StrCat(HETSIM_BINARY, " run ", args, " >", out.string(), " 2>", err.string());
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, *hetsim::proto::ReadFileToString(out.string()),
          *hetsim::proto::ReadFileToString(err.string())};
}

fs::path EmptyDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / absl::StrCat("hetsim_run_cli_", name, "_", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

const std::string kPlan = absl::StrCat(HETSIM_SOURCE_DIR, "/examples/plan-hapt-case.pbtxt");
const std::string kCluster = absl::StrCat(HETSIM_SOURCE_DIR, "/examples/cluster-hapt-case.pbtxt");

TEST_CASE("run: exit 0, the table on stdout, a report and a trace written", "[cli][run]") {
  const fs::path dir = EmptyDir("ok");
  const fs::path report = dir / "report.json", trace = dir / "trace.json";
  const RunResult r = HetsimRun(
      dir, absl::StrCat(kPlan, " --cluster ", kCluster, " --report ", report.string(), " --trace ", trace.string()));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("MFU"));
  CHECK_THAT(r.out, Catch::Contains("v100 (V100-32GB)"));  // the GPU-type column is not cut
  CHECK(r.err.empty());
  CHECK(fs::file_size(report) > 0);
  CHECK(fs::file_size(trace) > 0);
}

TEST_CASE("run: bad input exits 2 naming the problem and writes no report or trace", "[cli][run]") {
  const fs::path dir = EmptyDir("bad");
  const fs::path report = dir / "report.json", trace = dir / "trace.json";
  const std::string outputs = absl::StrCat(" --report ", report.string(), " --trace ", trace.string());
  // A plan whose first stage starts at layer 1.
  const std::string bad_plan = (dir / "plan.pbtxt").string();
  std::string text = *hetsim::proto::ReadFileToString(kPlan);
  const std::string first = "first_layer: 22";
  REQUIRE(text.find(first) != std::string::npos);
  absl::StrReplaceAll({{first, "first_layer: 23"}}, &text);
  REQUIRE(hetsim::proto::WriteFileAtomically(bad_plan, text).ok());
  RunResult r = HetsimRun(dir, absl::StrCat(bad_plan, " --cluster ", kCluster, outputs));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("plan.pbtxt"));
  CHECK_THAT(r.err, Catch::Contains("stages[1].first_layer"));
  // A missing cluster file; an unknown network mode; --trace-replica beyond every stage's DP.
  r = HetsimRun(dir, absl::StrCat(kPlan, " --cluster ", (dir / "none.pbtxt").string(), outputs));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("none.pbtxt"));
  r = HetsimRun(dir, absl::StrCat(kPlan, " --cluster ", kCluster, " --network psychic", outputs));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--network"));
  r = HetsimRun(dir, absl::StrCat(kPlan, " --cluster ", kCluster, " --trace-replica 5", outputs));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--trace-replica"));
  // None of the failures left an output, not even a partial one.
  CHECK_FALSE(fs::exists(report));
  CHECK_FALSE(fs::exists(trace));
  for (const auto& entry : fs::directory_iterator(dir)) {
    INFO(entry.path());
    CHECK(entry.path().filename().string().find("report") == std::string::npos);
    CHECK(entry.path().filename().string().find("trace") == std::string::npos);
  }
}

TEST_CASE("run: a plan that does not fit is reported OOM, --fail-on-oom exits 3", "[cli][run]") {
  const fs::path dir = EmptyDir("oom");
  // HAPT's case study with 16 samples per microbatch instead of 1: activations outgrow the GPUs.
  std::string text = *hetsim::proto::ReadFileToString(kPlan);
  const std::string mbs = "micro_batch_size: 1\n";
  REQUIRE(text.find(mbs) != std::string::npos);
  absl::StrReplaceAll({{mbs, "micro_batch_size: 16\n"}}, &text);
  const std::string plan = (dir / "plan.pbtxt").string();
  REQUIRE(hetsim::proto::WriteFileAtomically(plan, text).ok());
  const fs::path report = dir / "report.json";

  RunResult r = HetsimRun(dir, absl::StrCat(plan, " --cluster ", kCluster, " --quiet"));
  CHECK(r.exit_code == 0);  // simulated and flagged, not an error by default
  CHECK_THAT(r.err, Catch::Contains("stage 0 (v100 node 0, GPUs 0-1, v100 (V100-32GB)) needs"));
  CHECK_THAT(r.err, Catch::Contains("GiB more than its 32 GiB"));

  r = HetsimRun(dir, absl::StrCat(plan, " --cluster ", kCluster, " --quiet --fail-on-oom --report ", report.string()));
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err, Catch::Contains("GiB more than its 40 GiB"));
  // The report still says which stage and by how much.
  const std::string json = *hetsim::proto::ReadFileToString(report.string());
  CHECK_THAT(json, Catch::Contains("\"oom\": true"));
  CHECK_THAT(json, Catch::Contains("\"oom_excess_gib\""));
}

}  // namespace

TEST_CASE("run: an output that is an input is refused and the input kept", "[cli][run]") {
  const fs::path dir = EmptyDir("output_is_input");
  const std::string plan = (dir / "plan.pbtxt").string();
  const std::string text = *hetsim::proto::ReadFileToString(kPlan);
  REQUIRE(hetsim::proto::WriteFileAtomically(plan, text).ok());
  RunResult r = HetsimRun(dir, absl::StrCat(plan, " --cluster ", kCluster, " --report ", plan, " -q"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("plan.pbtxt: is also an input of this command"));
  CHECK(*hetsim::proto::ReadFileToString(plan) == text);
  fs::remove_all(dir);
}
