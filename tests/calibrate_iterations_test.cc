// hetsim calibrate --iterations: recover known framework overheads (pass_overhead_us,
// iteration_overhead_ms) from iteration times simulated with them, and refuse malformed CSVs.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "proto/io.h"
#include "service/calibrate/iteration_source.h"
#include "tests/cli_util.h"

namespace {

using hetsim::testing::RunHetsim;

using hetsim::calibrate::ParseIterationCsv;

std::string Read(const std::string& path) {
  auto text = hetsim::proto::ReadFileToString(path);
  REQUIRE(text.ok());
  return *text;
}

void Write(const std::string& path, const std::string& text) {
  REQUIRE(hetsim::proto::WriteFileAtomically(path, text).ok());
}

}  // namespace

TEST_CASE("calibrate --iterations recovers the pass and iteration overheads", "[calibrate][cli]") {
  const std::string dir =
      (std::filesystem::temp_directory_path() / absl::StrCat("hetsim_calibrate_iter_", ::getpid())).string();
  std::filesystem::create_directories(dir);
  const std::string ex = HETSIM_SOURCE_DIR "/examples/";
  // The HAPT case's cluster, and the same with known overheads on both GPU types.
  const std::string cluster = Read(ex + "cluster-hapt-case.pbtxt");
  Write(dir + "/cluster.pbtxt", cluster);
  Write(dir + "/truth.pbtxt",
        absl::StrReplaceAll(
            cluster, {{"preset: \"A100-40GB\"",
                       "preset: \"A100-40GB\" efficiency { pass_overhead_us: 700 iteration_overhead_ms: 120 }"},
                      {"preset: \"V100-32GB\"",
                       "preset: \"V100-32GB\" efficiency { pass_overhead_us: 700 iteration_overhead_ms: 120 }"}}));
  // Two runs with different pass counts: the bundled plan and the same with half the batch.
  const std::string plan = Read(ex + "plan-hapt-case.pbtxt");
  Write(dir + "/a.pbtxt", plan);
  Write(dir + "/b.pbtxt", absl::StrReplaceAll(plan, {{"global_batch_size: 128", "global_batch_size: 64"}}));
  std::string csv = "plan,time_ms\n";
  for (const char* p : {"a", "b"}) {
    REQUIRE(RunHetsim(absl::StrCat("run ", dir, "/", p, ".pbtxt --cluster ", dir,
                                   "/truth.pbtxt --no-wall-time --report ", dir, "/", p, ".json"))
                .exit_code == 0);
    hetsim::v1::Report r;
    REQUIRE(hetsim::proto::Load(absl::StrCat(dir, "/", p, ".json"), &r).ok());
    absl::StrAppend(&csv, p, ".pbtxt,", absl::StrFormat("%.6f", r.iteration_time_ms()), "\n");
  }
  Write(dir + "/runs.csv", csv);
  REQUIRE(RunHetsim(absl::StrCat("calibrate --iterations ", dir, "/runs.csv --cluster ", dir, "/cluster.pbtxt --out ",
                                 dir, "/calibrated.pbtxt --fit-report ", dir, "/fit.txt"))
              .exit_code == 0);
  hetsim::v1::Cluster calibrated;
  REQUIRE(hetsim::proto::Load(dir + "/calibrated.pbtxt", &calibrated).ok());
  for (const hetsim::v1::GpuType& g : calibrated.gpu_types()) {
    INFO(g.name());
    CHECK(g.efficiency().pass_overhead_us() == Approx(700).epsilon(0.02));
    CHECK(g.efficiency().iteration_overhead_ms() == Approx(120).epsilon(0.02));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("calibrate --iterations: malformed CSV names the file and the line") {
  auto no_time = ParseIterationCsv("plan\na.pbtxt\n", "runs.csv");
  REQUIRE(!no_time.ok());
  CHECK(std::string(no_time.status().message()) == "runs.csv:1: header: no column \"time_ms\"");
  auto bad_time = ParseIterationCsv("plan,time_ms\na.pbtxt,12\nb.pbtxt,-3\n", "runs.csv");
  REQUIRE(!bad_time.ok());
  CHECK(std::string(bad_time.status().message()) == "runs.csv:3: time_ms: \"-3\" is not a positive number");
  auto one = ParseIterationCsv("plan,time_ms\na.pbtxt,12\n", "dir/runs.csv");
  REQUIRE(!one.ok());
  auto two = ParseIterationCsv("plan,time_ms\na.pbtxt,12\n/abs/b.pbtxt,13.5\n", "dir/runs.csv");
  REQUIRE(two.ok());
  CHECK((*two)[0].plan_path == "dir/a.pbtxt");
  CHECK((*two)[1].plan_path == "/abs/b.pbtxt");
  CHECK((*two)[1].seconds == Approx(0.0135));
}
