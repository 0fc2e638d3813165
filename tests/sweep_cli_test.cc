// `hetsim sweep` and `hetsim sweep-merge` end to end with the real executor on the bundled HAPT
// case-study sweep: bad axes exit 2 naming the field before anything runs, rows identical whatever
// --jobs, shards merged equal the unsharded file, and the merge refuses an unfinished shard.
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "sweep_test_util.h"

namespace hetsim::testing {
namespace {

TEST_CASE("hetsim sweep: jobs, shards and merge give the same file; bad axes exit 2", "[sweep][cli]") {
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

}  // namespace
}  // namespace hetsim::testing
