// `hetsim islands` and `hetsim collective` end to end: output, exit codes and bad-input messages.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "proto/io.h"
#include "tests/app/cli/cli_util.h"

namespace {

using hetsim::testing::CliRun;
using hetsim::testing::RunHetsim;
using hetsim::testing::RunOk;

const std::string kCluster = absl::StrCat(HETSIM_SOURCE_DIR, "/examples/cluster-512gpu.pbtxt");

}  // namespace

TEST_CASE("hetsim islands prints Tangram's islands of the example cluster", "[collectives][cli]") {
  const CliRun r = RunOk("islands --cluster " + kCluster);
  CHECK_THAT(r.out, Catch::Contains("2 GPU islands"));
  CHECK_THAT(r.out, Catch::Contains("a100-80gb"));
  CHECK_THAT(r.out, Catch::Contains("h100-sxm"));
  // A loose compute tolerance joins A100 and H100 in phase 1 (HBM and bandwidth permitting).
  const CliRun loose = RunHetsim("islands --cluster " + kCluster + " --tau-c 0.9 --tau-b 0.9");
  REQUIRE(loose.exit_code == 0);
  CHECK_THAT(loose.out, Catch::Contains("1 initial islands"));
  CHECK(RunHetsim("islands --cluster " + kCluster + " --merge-factor 0.5").exit_code == 2);
}

TEST_CASE("hetsim collective prints time, algbw and busbw like nccl-tests", "[collectives][cli]") {
  const CliRun r = RunOk("collective --cluster " + kCluster + " --op all-reduce --bytes 64MiB --gpus 0-15 --algo ring");
  CHECK_THAT(r.out, Catch::Contains("busbw(GB/s)"));
  CHECK_THAT(r.out, Catch::Contains("busbw = algbw x 1.8750"));
  CHECK_THAT(r.out, Catch::Contains("67108864 ring"));
  const CliRun table = RunHetsim("collective --cluster " + kCluster + " --op all-gather --sizes 1KiB:1MiB --gpus 0-7");
  REQUIRE(table.exit_code == 0);
  int rows = 0;
  for (absl::string_view line : absl::StrSplit(table.out, '\n')) rows += !line.empty() && line[0] != '#';
  CHECK(rows == 1 + 11);  // header + 1 KiB .. 1 MiB doubling
  const CliRun automatic = RunHetsim("collective --cluster " + kCluster + " --op all-reduce --bytes 1GiB --gpus 0-31");
  REQUIRE(automatic.exit_code == 0);
  CHECK_THAT(automatic.out, Catch::Contains("(chosen)"));
  // Aggregated ring steps are marked in the row: one flow per ring edge instead of 2(n-1) per rank.
  const CliRun aggregated = RunHetsim("collective --cluster " + kCluster +
                                      " --op all-reduce --bytes 64MiB --gpus 0-15 --algo ring --ring-steps aggregated");
  REQUIRE(aggregated.exit_code == 0);
  CHECK_THAT(aggregated.out, Catch::Contains("67108864 ring-agg"));
}

TEST_CASE("hetsim collective rejects bad groups and sizes with exit 2", "[collectives][cli]") {
  auto bad = [](const std::string& args, const std::string& message) {
    const CliRun r = RunHetsim("collective --cluster " + kCluster + " " + args);
    INFO(args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(message));
  };
  bad("--op all-reduce --bytes 1GiB --gpus 0-512", "--gpus[512]: GPU id 512 is outside");
  bad("--op all-reduce --bytes 1GiB --gpus 0,1,1", "--gpus[2]: GPU 1 appears twice");
  bad("--op all-reduce --bytes 99999999999999999999 --gpus 0-3", "--bytes: 99999999999999999999 overflows");
  bad("--op all-reduce --bytes 4096TiB --gpus 0-3", "larger than the 1 PiB limit");
  bad("--op all-reduce --bytes 1 --gpus 7-3", "--gpus: \"7-3\" is an empty or negative range");
  bad("--op reduce --bytes 1 --gpus 0-3", "--op: unknown operation");
  bad("--op all-gather --bytes 1 --gpus 0-3 --algo tree", "--algo: tree does not implement all-gather");
  bad("--op send-recv --bytes 1 --gpus 0-2", "send-recv needs exactly two GPUs");
  bad("--op all-reduce --gpus 0-3", "give exactly one of --bytes and --sizes");
  bad("--op all-reduce --bytes 1 --gpus 0-3 --ring-steps lumped", "--ring-steps: unknown mode \"lumped\"");
  bad("--op all-reduce --bytes 1 --gpus 0-3 --ring-steps aggregated --chunks 4",
      "--chunks: 4 with aggregated ring steps");
}

TEST_CASE("hetsim collective: NCCL achieved bandwidth by default, line rate with --ideal", "[collectives][cli][nccl]") {
  const std::string cluster = absl::StrCat(HETSIM_SOURCE_DIR, "/validation/nccl/cluster-dgx-a100-1node.pbtxt");
  const CliRun nccl =
      RunHetsim("collective --cluster " + cluster + " --op all-reduce --bytes 1GiB --gpus 0-7 --algo ring");
  const CliRun ideal =
      RunHetsim("collective --cluster " + cluster + " --op all-reduce --bytes 1GiB --gpus 0-7 --algo ring --ideal");
  INFO(nccl.err << ideal.err);
  REQUIRE(nccl.exit_code == 0);
  REQUIRE(ideal.exit_code == 0);
  CHECK_THAT(nccl.out, Catch::Contains("NCCL achieved bandwidth"));
  CHECK_THAT(nccl.out, Catch::Contains(" Simple "));
  CHECK_THAT(ideal.out, Catch::Contains("ideal (line rate)"));
  const CliRun forced =
      RunHetsim("collective --cluster " + cluster + " --op all-reduce --bytes 1GiB --gpus 0-7 --proto LL");
  REQUIRE(forced.exit_code == 0);
  CHECK_THAT(forced.out, Catch::Contains(" LL "));
  const CliRun bad =
      RunHetsim("collective --cluster " + cluster + " --op all-reduce --bytes 1 --gpus 0-7 --proto LL64");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--proto: unknown protocol \"LL64\""));
}
