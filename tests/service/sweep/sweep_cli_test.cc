// `hetsim sweep` and `hetsim sweep-merge` end to end with the real executor on the bundled HAPT
// case-study sweep: bad axes exit 2 naming the field before anything runs, rows identical whatever
// --jobs, shards merged equal the unsharded file, and the merge refuses an unfinished shard.
#include <unistd.h>

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "tests/app/cli/cli_util.h"
#include "tests/service/sweep/sweep_test_util.h"

namespace hetsim::testing {
namespace {

TEST_CASE("hetsim sweep: jobs, shards and merge give the same file, bad axes exit 2", "[sweep][cli]") {
  const std::string dir = SweepFolder("cli");
  const std::string sweep = dir + "/sweep-bandwidth.pbtxt";
  REQUIRE(Hetsim(dir, absl::StrCat("sweep ", sweep, " -o ", dir, "/one.csv -j 1")).exit_code == 0);
  const std::string one = ReadFile(dir + "/one.csv");
  CHECK(std::count(one.begin(), one.end(), '\n') == 25);  // header + 8 bandwidths x 3 schedules
  CHECK(one.find(",ok,") != std::string::npos);

  REQUIRE(Hetsim(dir, absl::StrCat("sweep ", sweep, " -o ", dir, "/two.csv -j 2")).exit_code == 0);
  CHECK(ReadFile(dir + "/two.csv") == one);

  std::string shards;
  for (int k = 0; k < 3; ++k) {
    REQUIRE(Hetsim(dir, absl::StrCat("sweep ", sweep, " -o ", dir, "/s", k, ".csv --shard ", k, "/3")).exit_code == 0);
    shards += absl::StrCat(" ", dir, "/s", k, ".csv");
  }
  REQUIRE(Hetsim(dir, absl::StrCat("sweep-merge ", dir, "/merged.csv", shards, " --sweep ", sweep)).exit_code == 0);
  CHECK(ReadFile(dir + "/merged.csv") == one);

  // Shard 2 loses its last row (points 2, 5, ..., 23): only the sweep knows point 23 should be there.
  std::string s2 = ReadFile(dir + "/s2.csv");
  s2.erase(s2.rfind('\n', s2.size() - 2) + 1);
  WriteFile(dir, "s2.csv", s2);
  const Ran cut = Hetsim(dir, absl::StrCat("sweep-merge ", dir, "/bad.csv", shards, " --sweep ", sweep));
  CHECK(cut.exit_code == 2);
  CHECK_THAT(cut.err, Catch::Contains("point 23 is in no shard"));

  WriteFile(dir, "bad-axis.pbtxt", R"pb(
    cluster_path: "cluster-hapt-case.pbtxt"
    plan_path: "plan-hapt-case.pbtxt"
    axes {
      path: "cluster.inter_island_links[1].bandwidth_gbps"
      values: [ "3", "5" ]
    }
  )pb");
  const Ran bad = Hetsim(dir, absl::StrCat("sweep ", dir, "/bad-axis.pbtxt -o ", dir, "/never.csv"));
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("bad-axis.pbtxt: axes[0].path: cluster.inter_island_links[1]:") &&
                          Catch::Contains("has 1 inter_island_links"));
  CHECK_FALSE(std::filesystem::exists(dir + "/never.csv"));
  CHECK(Hetsim(dir, absl::StrCat("sweep ", sweep, " --resume")).exit_code == 2);  // --resume needs -o
}

TEST_CASE("hetsim sweep plans each point when the sweep has no plan", "[sweep][cli]") {
  const std::string dir = SweepFolder("cli");
  WriteFile(dir, "planned.pbtxt", R"pb(
    cluster_path: "cluster-512gpu.pbtxt"
    model_path: "model-gpt39b.pbtxt"
    axes {
      path: "planner"
      values: [ "hapt", "megatron" ]
    }
    axes {
      path: "plan.global_batch_size"
      values: [ "256" ]
    }
  )pb");
  REQUIRE(Hetsim(dir, absl::StrCat("sweep ", dir, "/planned.pbtxt -o ", dir, "/planned.jsonl")).exit_code == 0);
  const std::string rows = ReadFile(dir + "/planned.jsonl");
  INFO(rows);
  CHECK(std::count(rows.begin(), rows.end(), '\n') == 2);
  CHECK_THAT(rows, Catch::StartsWith("{\"point\":0,\"planner\":\"hapt\",\"plan.global_batch_size\":256,"));
  CHECK_THAT(rows, Catch::Contains("\"num_gpus\":512,") &&
                       Catch::Contains("\"schedule\":\"H-1F1B\",\"status\":\"ok\"") &&
                       Catch::Contains("\"schedule\":\"1F1B\",\"status\":\"ok\""));
}

// The CSV rows of a sweep of tests/planner_data/`plan` on the bundled `cluster` over `axes` (Sweep text),
// run in a folder of its own named by `tag`.
std::string SweepRows(const std::string& tag, const std::string& cluster, const std::string& plan,
                      const std::string& axes) {
  const std::string dir = SweepFolder(tag);
  WriteFile(dir, "sweep.pbtxt",
            absl::StrCat("cluster_path: \"", cluster, "\"\nplan_path: \"", HETSIM_SOURCE_DIR, "/tests/planner_data/",
                         plan, "\"\n", axes));
  REQUIRE(Hetsim(dir, absl::StrCat("sweep ", dir, "/sweep.pbtxt -o ", dir, "/sweep.csv")).exit_code == 0);
  return ReadFile(dir + "/sweep.csv");
}

// The iteration_time_ms cell of point `point`'s row of a CSV sweep of `axes` axes, whose status must be ok.
double IterationMs(const std::string& rows, int point, int axes) {
  const size_t at = rows.find(absl::StrCat("\n", point, ","));
  REQUIRE(at != std::string::npos);
  const std::string row = rows.substr(at + 1, rows.find('\n', at + 1) - at - 1);
  CHECK_THAT(row, Catch::Contains(",ok,"));
  size_t cell = 0;
  for (int i = 0; i <= axes; ++i) cell = row.find(',', cell) + 1;  // past the point and the axes
  return std::stod(row.substr(cell));
}

TEST_CASE("hetsim sweep over a ZeRO-3 plan of pipelines: prefetch, and an A6000 pipeline at another microbatch count",
          "[sweep][cli]") {
  // The lab pipelines at ZeRO-3 (every pipeline 8 microbatches): zero3_prefetch hides each layer's
  // gather behind the layer before it; an A6000 pipeline at micro-batch 1 runs 16 microbatches, and the
  // others, done with their 8, join its remaining gathers (session 36; an invalid row before): it runs, and
  // takes longer (its 16 passes' gathers at 1 sample each against 8 at 2).
  const std::string rows = SweepRows("cli-zero3", "cluster-lab-pcie.pbtxt", "plan-lab-pipelines-zero3.pbtxt",
                                     "axes { path: \"plan.zero3_prefetch\" values: [\"false\", \"true\"] }\n"
                                     "axes { path: \"plan.pipelines[4].micro_batch_size\" values: [\"2\", \"1\"] }\n");
  INFO(rows);
  CHECK_THAT(rows, Catch::Contains("\n0,false,2,") && Catch::Contains("\n2,true,2,"));
  CHECK(std::count(rows.begin(), rows.end(), '\n') == 5);
  const auto ok = [&](int point) { return IterationMs(rows, point, 2); };
  CHECK(ok(2) < ok(0));  // the prefetched gathers hide behind the layers' compute
  CHECK(ok(1) > ok(0));  // 16 microbatches of 1, each pass gathering its layers, against 8 of 2
  CHECK(ok(3) > ok(2));
  CHECK_THAT(rows, !Catch::Contains("invalid"));
}

TEST_CASE("hetsim sweep over a mixed-type stage of a pipeline under ZeRO-1: the link its shard groups cross",
          "[sweep][cli]") {
  // The A100 TP-2 replica and the V100 replicas of one stage shard each layer range over the 5 Gb/s link
  // between the islands (session 36; refused before): a faster link shortens the ranges' reduce-scatters
  // and all-gathers, and so the iteration.
  const std::string rows =
      SweepRows("cli-mixed-zero", "cluster-hapt-case.pbtxt", "plan-pipelines-mixed-types-zero1.pbtxt",
                "axes { path: \"cluster.inter_island_links[0].bandwidth_gbps\" values: [\"5\", \"100\"] }\n");
  INFO(rows);
  CHECK(std::count(rows.begin(), rows.end(), '\n') == 3);
  CHECK_THAT(rows, !Catch::Contains("invalid"));
  const auto iteration = [&](int point) { return IterationMs(rows, point, 1); };
  CHECK(iteration(1) < iteration(0));
}

// Copies `from` into `dir` under `name`; returns the copy's path.
std::string CopyInto(const std::filesystem::path& dir, const std::string& from, const std::string& name) {
  const std::string to = (dir / name).string();
  REQUIRE(proto::WriteFileAtomically(to, *proto::ReadFileToString(from)).ok());
  return to;
}

TEST_CASE("sweep and report: an output over an input is refused before anything runs, the input kept", "[sweep][cli]") {
  const auto dir = std::filesystem::temp_directory_path() / absl::StrCat("hetsim_output_over_input_", ::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string examples = absl::StrCat(HETSIM_SOURCE_DIR, "/examples/");
  for (const char* name : {"cluster-hapt-case.pbtxt", "plan-hapt-case.pbtxt", "sweep-bandwidth.pbtxt"}) {
    CopyInto(dir, examples + name, name);
  }
  const std::string sweep = (dir / "sweep-bandwidth.pbtxt").string();
  const std::string sweep_text = *proto::ReadFileToString(sweep);
  // `sweep s.pbtxt -o s.pbtxt` truncated the sweep file; so did -o naming the plan it loads.
  for (const std::string& out : {sweep, (dir / "plan-hapt-case.pbtxt").string()}) {
    const std::string before = *proto::ReadFileToString(out);
    CliRun r = RunHetsim(absl::StrCat("sweep ", sweep, " -o ", out));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("is also an input of this command"));
    CHECK(*proto::ReadFileToString(out) == before);
  }
  // A page in a missing folder used to be found out after every point had run and its rows written.
  CliRun r = RunHetsim(absl::StrCat("sweep ", sweep, " -o ", (dir / "rows.csv").string(), " --html ",
                                    (dir / "missing" / "rows.html").string()));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("missing does not exist"));
  CHECK_FALSE(std::filesystem::exists(dir / "rows.csv"));
  CHECK(*proto::ReadFileToString(sweep) == sweep_text);
  // `report r.json --html r.json` replaced the report with its page.
  const std::string report = (dir / "r.json").string();
  RunOk(absl::StrCat("run ", dir.string(), "/plan-hapt-case.pbtxt --cluster ", dir.string(),
                     "/cluster-hapt-case.pbtxt -q --no-wall-time --report ", report));
  const std::string report_text = *proto::ReadFileToString(report);
  r = RunHetsim(absl::StrCat("report ", report, " --html ", report));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("r.json: is also an input of this command"));
  CHECK(*proto::ReadFileToString(report) == report_text);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hetsim::testing
