// hetsim calibrate --iterations: recover known framework overheads (pass_overhead_us,
// iteration_overhead_ms) and the GEMM efficiency from iteration times simulated with them, fit only as
// many values as there are runs, and refuse malformed CSVs.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "proto/io.h"
#include "proto/validate_cluster.h"
#include "service/calibrate/iteration_source.h"
#include "tests/app/cli/cli_util.h"

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

namespace {

// `hetsim run PLAN --cluster CLUSTER`'s iteration time in ms.
double IterationMs(const std::string& dir, const std::string& plan, const std::string& cluster) {
  const std::string report = absl::StrCat(dir, "/", plan, ".", cluster, ".json");
  REQUIRE(RunHetsim(absl::StrCat("run ", dir, "/", plan, ".pbtxt --cluster ", dir, "/", cluster,
                                 ".pbtxt --no-wall-time --report ", report))
              .exit_code == 0);
  hetsim::v1::Report r;
  REQUIRE(hetsim::proto::Load(report, &r).ok());
  return r.iteration_time_ms();
}

}  // namespace

TEST_CASE("calibrate --iterations: three runs make the held-out run's prediction true", "[calibrate][cli]") {
  const std::string dir =
      (std::filesystem::temp_directory_path() / absl::StrCat("hetsim_calibrate_iter_", ::getpid())).string();
  std::filesystem::create_directories(dir);
  const std::string ex = HETSIM_SOURCE_DIR "/examples/";
  // The HAPT case's cluster, and "the machine": the same with slower GEMMs and larger overheads on both
  // GPU types (A100 preset efficiency 0.72, V100 0.67).
  const std::string cluster = Read(ex + "cluster-hapt-case.pbtxt");
  Write(dir + "/cluster.pbtxt", cluster);
  const std::string slower = "efficiency { max_efficiency: 0.64 pass_overhead_us: 150 iteration_overhead_ms: 90 }";
  Write(dir + "/truth.pbtxt",
        absl::StrReplaceAll(cluster, {{"preset: \"A100-40GB\"", "preset: \"A100-40GB\" " + slower},
                                      {"preset: \"V100-32GB\"", "preset: \"V100-32GB\" " + slower}}));
  // Three measured runs: the bundled plan, the same with half the batch (fewer passes, same fixed
  // cost), with microbatches of 4 samples (more GEMM time per pass); and a fourth held out.
  const std::string plan = Read(ex + "plan-hapt-case.pbtxt");
  Write(dir + "/a.pbtxt", plan);
  Write(dir + "/b.pbtxt", absl::StrReplaceAll(plan, {{"global_batch_size: 128", "global_batch_size: 64"}}));
  Write(dir + "/c.pbtxt", absl::StrReplaceAll(plan, {{"micro_batch_size: 1", "micro_batch_size: 4"}}));
  Write(dir + "/d.pbtxt", absl::StrReplaceAll(plan, {{"global_batch_size: 128", "global_batch_size: 96"},
                                                     {"micro_batch_size: 1", "micro_batch_size: 2"}}));
  std::string csv = "plan,time_ms\n";
  for (const char* p : {"a", "b", "c"}) {
    absl::StrAppend(&csv, p, ".pbtxt,", absl::StrFormat("%.6f", IterationMs(dir, p, "truth")), "\n");
  }
  Write(dir + "/runs.csv", csv);
  const auto fitted =
      RunHetsim(absl::StrCat("calibrate --iterations ", dir, "/runs.csv --cluster ", dir, "/cluster.pbtxt --out ", dir,
                             "/calibrated.pbtxt --fit-report ", dir, "/fit.txt"));
  INFO(fitted.err);
  REQUIRE(fitted.exit_code == 0);
  const double truth = IterationMs(dir, "d", "truth"), before = IterationMs(dir, "d", "cluster"),
               after = IterationMs(dir, "d", "calibrated");
  INFO("held-out run: truth " << truth << " ms, before " << before << " ms, after " << after << " ms");
  CHECK(std::abs(before / truth - 1) > 0.05);
  // Within 1.5%: three runs hold six values (session 27: the memory-bound kernels' and the collectives'
  // besides), and the prior shares part of the GEMMs' slowdown with the memory-bound kernels (1.06%).
  CHECK(std::abs(after / truth - 1) < 0.015);

  // Every value moved towards the machine's.
  hetsim::v1::Cluster calibrated;
  REQUIRE(hetsim::proto::Load(dir + "/calibrated.pbtxt", &calibrated).ok());
  auto presets = hetsim::proto::LoadCluster(dir + "/cluster.pbtxt");
  REQUIRE(presets.ok());
  for (int i = 0; i < calibrated.gpu_types_size(); ++i) {
    const hetsim::v1::ComputeEfficiency &is = calibrated.gpu_types(i).efficiency(),
                                        &was = presets->gpu_types(i).efficiency();
    INFO(calibrated.gpu_types(i).name());
    CHECK(is.max_efficiency() < was.max_efficiency());
    CHECK(is.pass_overhead_us() > was.pass_overhead_us());
    CHECK(is.iteration_overhead_ms() > was.iteration_overhead_ms());
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
  auto none = ParseIterationCsv("plan,time_ms\n", "dir/runs.csv");
  REQUIRE(!none.ok());
  CHECK(std::string(none.status().message()) == "dir/runs.csv:1: no runs: at least one measured iteration is needed");
  auto two = ParseIterationCsv("plan,time_ms\na.pbtxt,12\n/abs/b.pbtxt,13.5\n", "dir/runs.csv");
  REQUIRE(two.ok());
  CHECK((*two)[0].plan_path == "dir/a.pbtxt");
  CHECK((*two)[1].plan_path == "/abs/b.pbtxt");
  CHECK((*two)[1].seconds == Approx(0.0135));
}
