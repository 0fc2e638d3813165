// The nccl-tests log reader on logs as users paste them (launcher prefixes, prose, every table format
// of nccl-tests' history), its refusals, the checks of a log against the island, and the fit's guards.
#include <optional>
#include <string>
#include <vector>

#include <google/protobuf/text_format.h>
#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "service/calibrate/nccl_cluster_match.h"
#include "service/calibrate/nccl_fit_guards.h"
#include "service/calibrate/nccl_log.h"
#include "service/calibrate/nccl_log_lines_internal.h"

namespace hetsim::calibrate {
namespace {

// `n` Rank lines of `model`, `per_host` per host, in nccl-tests' 2.13+ format.
std::string RankLines(int n, int per_host, const std::string& model = "NVIDIA A100-SXM4-80GB") {
  std::string out;
  for (int r = 0; r < n; ++r) {
    absl::StrAppendFormat(&out, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x%02x] %s\n", r, 100 + r,
                          absl::StrCat("node", r / per_host), r % per_host, r, model);
  }
  return out;
}

constexpr const char* kHeader13 =
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
    "#wrong\n";
constexpr const char* kRows13 =
    "     1048576        262144     float     sum      -1    30.00   34.95   61.17      0    29.90   35.07   61.37     "
    " 0\n"
    "     2097152        524288     float     sum      -1    40.00   52.43   91.75      0    39.90   52.56   91.98     "
    " 0\n";

TEST_CASE("calibrate: launcher prefixes come off, nccl-tests' own text stays", "[calibrate]") {
  CHECK(StripLauncherPrefix("[1,0]<stdout>:#  Rank  0 Group") == "#  Rank  0 Group");
  CHECK(StripLauncherPrefix("(head, rank=0, pid=3808) [1,0]<stdout>:        1024  16  float") == "1024  16  float");
  CHECK(StripLauncherPrefix("0:            8             2     float") == "8             2     float");
  CHECK(StripLauncherPrefix("node01:   #  Rank  3") == "#  Rank  3");
  CHECK(StripLauncherPrefix("2024-05-06T12:34:56.789Z      8  2  float") == "8  2  float");
  CHECK(StripLauncherPrefix("2024-05-06 12:34:56,789 [pod/w-0/c] 8  2  float") == "8  2  float");
  CHECK(StripLauncherPrefix(">    /opt/nccl-tests/build/all_reduce_perf -b 8") ==
        "/opt/nccl-tests/build/all_reduce_perf -b 8");
  CHECK(StripLauncherPrefix("           8             2     float     sum      -1") ==
        "8             2     float     sum      -1");
}

// mpirun --tag-output tags every chunk a process writes, and nccl-tests writes a row in three chunks
// (its size columns, then the out-of-place and in-place figures): a row pasted from such a run carries
// its rank tag inside it too. The format of NVIDIA/nccl#1453
// (https://github.com/NVIDIA/nccl/issues/1453, 2 x 8 H100 over RoCE), with figures of our own: it was
// refused as "#wrong: not a count or N/A" at its first row.
TEST_CASE("calibrate: a rank tag inside a row (mpirun --tag-output) comes off like the leading one", "[calibrate]") {
  CHECK(WithoutRepeatedRankTags("[0]     1048576   262144  float  sum  -1[0]   30.00  34.95  61.17  0[0]   29.90") ==
        "[0]     1048576   262144  float  sum  -1    30.00  34.95  61.17  0    29.90");
  CHECK(WithoutRepeatedRankTags("[1,0]<stdout>:  8  2  float  sum  -1[1,0]<stdout>:  5.0") ==
        "[1,0]<stdout>:  8  2  float  sum  -1   5.0");
  // A line that does not start with a rank tag is left alone (a PCI bus id, an INFO line's device).
  CHECK(WithoutRepeatedRankTags("#  Rank  0 Group  0 Pid 1 on n0 device  0 [0x18] NVIDIA H100") ==
        "#  Rank  0 Group  0 Pid 1 on n0 device  0 [0x18] NVIDIA H100");
  CHECK(WithoutRepeatedRankTags("[pod/a/b] 8 2 float sum -1[pod/a/b] 5") == "[pod/a/b] 8 2 float sum -1[pod/a/b] 5");

  std::string tagged;
  for (absl::string_view line :
       absl::StrSplit(absl::StrCat(RankLines(16, 8, "NVIDIA H100 80GB HBM3"), kHeader13), '\n', absl::SkipEmpty())) {
    absl::StrAppend(&tagged, "[0] ", line, "\n");
  }
  absl::StrAppend(&tagged,
                  "[0]      1048576        262144     float     sum      -1[0]    30.00   34.95   65.53      0[0]  "
                  "  29.90   35.07   65.76      0\n"
                  "[0]      2097152        524288     float     sum      -1[0]    40.00   52.43   98.30      0[0]  "
                  "  39.90   52.56   98.55      0\n");
  absl::StatusOr<NcclLog> log = ParseNcclLog(tagged, "all_reduce_perf.log");
  INFO(log.status().message());
  REQUIRE(log.ok());
  CHECK(log->ranks == 16);
  CHECK(log->hosts == 2);
  REQUIRE(log->rows.size() == 2);
  CHECK(log->rows[1].time_us == 40.0);
}

TEST_CASE("calibrate: the test is read from the log's own lines", "[calibrate]") {
  bool header = false;
  CHECK(TestNamedIn("# Collective test starting: all_gather_perf", &header) == "all_gather");
  CHECK(header);
  CHECK(TestNamedIn("mpirun -np 16 -x NCCL_DEBUG=INFO /opt/nccl-tests/build/reduce_scatter_perf -b 8 -e 8G", &header) ==
        "reduce_scatter");
  CHECK_FALSE(header);
  CHECK(TestNamedIn("srun --mpi=pmix all_reduce_perf_mpi -b 512M -e 8G -f 2 -g 1", &header) == "all_reduce");
  CHECK(TestNamedIn("Okay, let's break down this result for the `alltoall_perf` benchmark.", &header) == "alltoall");
  CHECK(TestNamedIn("# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592", &header).empty());

  // A command line before the table names the test when the file name does not; the header line wins.
  const std::string body = RankLines(2, 2) + kHeader13 + kRows13;
  auto log = ParseNcclLog(absl::StrCat("$ mpirun -np 2 ./build/all_gather_perf -b 1M -e 2M\n", body), "log.txt");
  REQUIRE(log.ok());
  CHECK(log->op == hetsim::CollectiveOp::kAllGather);
  CHECK(log->test_from == "line 1");
  log = ParseNcclLog(absl::StrCat("# Collective test starting: sendrecv_perf\n$ ./all_gather_perf\n", body), "x.txt");
  REQUIRE(log.ok());
  CHECK(log->op == hetsim::CollectiveOp::kSendRecv);
  // A wrapper script named after the test, as a file name would be (dstack's GCP page).
  log = ParseNcclLog(absl::StrCat("NCCL_X=0 /scripts/run-allgather.sh 8 eth1,eth2 8M 8GB 2\n", body), "x.txt");
  REQUIRE(log.ok());
  CHECK(log->op == hetsim::CollectiveOp::kAllGather);
  // A file name naming no test and a table that is no all-reduce's (busbw / algbw 1.75 on 2 ranks): unknown.
  CHECK(ParseNcclLog(body, "results.txt").status().message() ==
        "results.txt:1: cannot tell which nccl-tests "
        "test printed it (no \"# Collective test starting: "
        "X_perf\" line or X_perf command before the table, "
        "the file name names none of all_reduce, "
        "all_gather, reduce_scatter, sendrecv, alltoall, "
        "broadcast, and the table's busbw / algbw is no "
        "all-reduce's or reduce-scatter's); name the file after the test (all_gather_perf.log) to say which");
  // A file name naming a test hetsim does not model (SuperBench's nccl_reduce.log): refused as that test.
  CHECK(ParseNcclLog(body, "nccl_reduce.log").status().message() ==
        "nccl_reduce.log:1: reduce_perf (from the file name): hetsim models all_reduce, all_gather, reduce_scatter, "
        "sendrecv, alltoall and broadcast, not reduce");
  // A name that is no nccl-tests test is no test.
  log = ParseNcclLog(absl::StrCat("we first ran run_perf to warm up\n", body), "all_gather_perf.txt");
  REQUIRE(log.ok());
  CHECK(log->test_from == "the file name");
  // Tests hetsim does not model are named as such.
  CHECK(ParseNcclLog(absl::StrCat("./build/hypercube_perf -g 2\n", body), "x.txt").status().message() ==
        "x.txt:1: hypercube_perf (from line 1): hetsim models all_reduce, all_gather, reduce_scatter, sendrecv, "
        "alltoall and broadcast, not hypercube");
}

TEST_CASE("calibrate: a log of more than 10,000 rows is refused at the first row too many", "[calibrate]") {
  // The fit report simulates every row: 400,000 rows (a 46 MB log, inside the text size limit) ran for
  // minutes. nccl-tests writes one row per size.
  auto rows = [](int n) {
    std::string out;
    for (int i = 0; i < n; ++i) {
      absl::StrAppendFormat(&out, "  %d  %d  float  sum  -1  30.00  34.95  61.17  0  29.90  35.07  61.37  0\n",
                            1024 * (i + 1), 256 * (i + 1));
    }
    return out;
  };
  const std::string head = absl::StrCat(RankLines(8, 8), kHeader13);
  auto log = ParseNcclLog(absl::StrCat(head, rows(kMaxNcclLogRows)), "all_reduce_perf.txt");
  REQUIRE(log.ok());
  CHECK(log->rows.size() == static_cast<size_t>(kMaxNcclLogRows));
  log = ParseNcclLog(absl::StrCat(head, rows(kMaxNcclLogRows + 1)), "all_reduce_perf.txt");
  REQUIRE_FALSE(log.ok());
  CHECK_THAT(std::string(log.status().message()),
             Catch::StartsWith(absl::StrFormat("all_reduce_perf.txt:%d: more than 10000 table rows",
                                               8 + 1 + kMaxNcclLogRows + 1)));  // 8 Rank lines, the header
}

TEST_CASE("calibrate: every table format of nccl-tests' history", "[calibrate]") {
  const std::string ranks = RankLines(8, 8);
  // 2.17+: -S 1 appends a timestamp to each row.
  auto log = ParseNcclLog(absl::StrCat(ranks, kHeader13,
                                       "     1048576  262144  float  sum  -1  30.00  34.95  61.17  0  29.90  35.07  "
                                       "61.37  0  2025-06-03 11:43:02\n"),
                          "all_reduce_perf.log");
  REQUIRE(log.ok());
  CHECK(log->rows.front().time_us == 30.0);
  // 2.17+: per-iteration columns after each #wrong, named in the header.
  log = ParseNcclLog(
      absl::StrCat(
          ranks,
          "#  size  count  type  redop  root  time  algbw  busbw  #wrong  i_min  i_max  i_p99  i_cv%  time  "
          "algbw  busbw  #wrong  i_min  i_max  i_p99  i_cv%\n",
          "  1048576  262144  float  sum  -1  30.00  34.95  61.17  0  29.1  31.2  31.0  1.5  29.90  35.07  61.37  "
          "0  29.0  31.1  30.9  1.4\n"),
      "all_reduce_perf.log");
  REQUIRE(log.ok());
  CHECK(log->rows.front().busbw_gbytes_per_s == 61.17);
  CHECK(ParseNcclLog(absl::StrCat(ranks, "#  size  count  type  redop  root  time  algbw  busbw  #wrong  i_min\n",
                                  "  1048576  262144  float  sum  -1  30.00  34.95  61.17  0  29.1\n"),
                     "all_reduce_perf.log")
            .status()
            .message() ==
        "all_reduce_perf.log:10: the column header's per-iteration columns are not time algbw busbw #wrong i_min "
        "i_max i_p99 i_cv% out-of-place and in-place");
  // Before 2.13: no root, an error column; without redop (all_gather); with a blank redop (alltoall).
  const std::string old_ranks =
      "#   Rank  0 Pid 112372 on localhost device  0 [0x00] A100-SXM4-40GB\n"
      "#   Rank  1 Pid 112372 on localhost device  1 [0x00] A100-SXM4-40GB\n";
  log = ParseNcclLog(
      absl::StrCat(old_ranks, "#  size  count  type  redop  time  algbw  busbw  error  time  algbw  busbw  error\n",
                   "  1048576  262144  float  sum  30.00  34.95  34.95  5e-07  29.90  35.07  35.07  5e-07\n"),
      "nccl_allreduce.log");
  REQUIRE(log.ok());
  CHECK(log->rows.front().time_us == 30.0);
  CHECK(log->gpu_model == "A100-SXM4-40GB");
  log = ParseNcclLog(
      absl::StrCat(old_ranks, "#  size  count  type  time  algbw  busbw  error  time  algbw  busbw  error\n",
                   "  1048576  131072  float  30.00  34.95  17.48  N/A  29.90  35.07  17.54  N/A\n"),
      "nccl_allgather.log");
  REQUIRE(log.ok());
  CHECK(log->op == hetsim::CollectiveOp::kAllGather);
  log = ParseNcclLog(
      absl::StrCat(
          old_ranks, "#  size  count  type  redop  time  algbw  busbw  error  time  algbw  busbw  error\n",
          "           0             0   float             1.63    0.00    0.00    N/A     1.38    0.00    0.00    N/A\n"
          "  1048576  131072  float  30.00  34.95  17.48  N/A  29.90  35.07  17.54  N/A\n"),
      "nccl_alltoall.log");
  REQUIRE(log.ok());
  CHECK(log->rows.size() == 1);  // the 0-byte row moves nothing
  CHECK(log->empty_rows == 1);
}

TEST_CASE("calibrate: a pasted log with prose, commands and NCCL's lines around the table", "[calibrate]") {
  const std::string text = absl::StrCat(
      "## Results on our two nodes\n\nWe ran:\n```\n$ kubectl logs -f launcher\n",
      "Warning: Permanently added 'worker-1' (ECDSA) to the list of known hosts.\n",
      "[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor)\n",
      absl::StrReplaceAll(RankLines(4, 2), {{"#  Rank", "[1,0]<stdout>:#  Rank"}}),
      "[1,0]<stdout>:worker-0:21:21 [0] NCCL INFO Bootstrap : Using eth0:10.11.13.106<0>\n",
      "[1,0]<stdout>:NCCL version 2.18.3+cuda12.2\n",
      "[1,1]<stdout>:worker-1:21:26 [0] NCCL INFO Connected all rings\n", "[1,0]<stdout>:", kHeader13,
      "[1,0]<stdout>:worker-0:21:21 [0] NCCL INFO Launch mode Parallel\n",
      "[1,0]<stdout>:     1048576        262144     float     sum      -1    30.00   34.95   52.43      0    29.90   "
      "35.07   52.61      0\n",
      "[1,0]<stdout>:     2097152        524288     float     sum      -1    40.00   52.43   78.65      0    39.90   "
      "52.56   78.84      0\n",
      "[1,0]<stdout>:# Out of bounds values : 0 OK\n[1,0]<stdout>:# Avg bus bandwidth    : 76.46\n```\n\n",
      "So 2 nodes with 2 GPUs each reach 78 GB/s.\n16 GPUs would be next.\n");
  auto log = ParseNcclLog(text, "results.md");
  INFO(log.status().message());
  REQUIRE(log.ok());
  CHECK(log->ranks == 4);
  CHECK(log->hosts == 2);
  CHECK(log->rows.size() == 2);
  CHECK(log->op == hetsim::CollectiveOp::kAllReduce);  // busbw / algbw = 1.5 = 2 (4 - 1) / 4
  CHECK(log->test_from == "the table's busbw / algbw");
}

TEST_CASE("calibrate: logs that are not one run of one island are refused", "[calibrate]") {
  const std::string table = absl::StrCat(kHeader13, kRows13);
  auto error = [](const std::string& text) {
    return std::string(ParseNcclLog(text, "ar_allreduce.txt").status().message());
  };
  CHECK(error(absl::StrCat(RankLines(2, 2), RankLines(1, 1), table)) ==
        "ar_allreduce.txt:3: rank 0 again (first at line 1): the processes ran as separate one-rank jobs (nccl-tests "
        "built without MPI=1 under mpirun?) or two logs are pasted together");
  CHECK(error(absl::StrCat("#  Rank  5 Group  0 Pid 1 on h device  5 [0x07] NVIDIA A100-SXM4-80GB\n", table)) ==
        "ar_allreduce.txt:1: 1 \"#  Rank\" lines, but rank 5: lines were cut (paste the log from nccl-tests' first "
        "line)");
  CHECK(
      error(absl::StrCat(RankLines(1, 1), "#  Rank  1 Group  0 Pid 1 on node0 device  1 [0x07] Tesla V100-SXM2-32GB\n",
                         table)) ==
      "ar_allreduce.txt:2: rank 1 runs on \"Tesla V100-SXM2-32GB\", rank 0 on \"NVIDIA A100-SXM4-80GB\": an island has "
      "one GPU model; calibrate each island from its own logs");
  CHECK(error(absl::StrCat(RankLines(2, 2), table, table)) ==
        "ar_allreduce.txt:6: a second table (the first starts at line 3): give one nccl-tests run per file");
  CHECK(error(absl::StrCat(RankLines(2, 2), kRows13, table)) ==
        "ar_allreduce.txt:5: a second table (the first starts at line 3): give one nccl-tests run per file");
  CHECK(error(absl::StrCat(RankLines(2, 2), table, "# Avg bus bandwidth    : 76.46\n", kRows13)) ==
        "ar_allreduce.txt:7: a table row after the table ended at line 6: give one nccl-tests run per file");
  CHECK(error(absl::StrCat(RankLines(3, 2), table)) ==
        "ar_allreduce.txt:5: 3 ranks are not spread evenly over 2 hosts");
}

TEST_CASE(
    "calibrate: NVLS on one host and CollNet across hosts are read as such, other in-network reductions are "
    "refused",
    "[calibrate]") {
  const std::string body = absl::StrCat(RankLines(8, 8), kHeader13, kRows13);
  auto error = [&](const std::string& line, const std::string& file) {
    return std::string(ParseNcclLog(line + body, file).status().message());
  };
  for (const char* line : {"node:1:2 [3] NCCL INFO 24 coll channels, 16 nvls channels, 32 p2p channels\n",
                           "[1,3]<stdout>:w-0:23:75 [3] NCCL INFO Connected NVLS tree\n", "-x NCCL_ALGO=NVLS\n"}) {
    auto log = ParseNcclLog(line + body, "all_reduce.txt");
    INFO(line << log.status().message());
    REQUIRE(log.ok());
    CHECK(log->nvls);
  }
  CHECK_FALSE(ParseNcclLog(body, "all_reduce.txt")->nvls);
  // NVLS all-gather and reduce-scatter on one host are NVLS too.
  for (const char* file : {"all_gather.txt", "reduce_scatter.txt"}) {
    auto log =
        ParseNcclLog("node:1:2 [3] NCCL INFO 24 coll channels, 16 nvls channels, 32 p2p channels\n" + body, file);
    INFO(file << log.status().message());
    REQUIRE(log.ok());
    CHECK(log->nvls);
  }
  // CollNet's all-reduce across hosts is CollNet; on one host it is refused.
  auto collnet = ParseNcclLog(absl::StrCat("export NCCL_COLLNET_ENABLE=1\n", RankLines(8, 4), kHeader13, kRows13),
                              "all_reduce.txt");
  INFO(collnet.status().message());
  REQUIRE(collnet.ok());
  CHECK(collnet->collnet);
  CHECK_FALSE(collnet->nvls);
  // NCCL's NVLSTree and CollNetChain: an all-reduce across hosts is read as what it is (not as NVLS or
  // CollNetDirect); on one host, or another collective, refused (NCCL runs neither there).
  CHECK_THAT(error("mpirun -x NCCL_ALGO=NVLSTree ./all_reduce_perf\n", "x.txt"),
             Catch::StartsWith("x.txt:1: NCCL_ALGO=NVLSTree: NCCL runs NVLSTree (NVLink SHARP within each host"));
  for (const char* algo : {"NVLSTree", "CollNetChain"}) {
    auto across = ParseNcclLog(
        absl::StrCat("mpirun -x NCCL_ALGO=", algo, " ./all_reduce_perf\n", RankLines(8, 4), kHeader13, kRows13),
        "all_reduce.txt");
    INFO(algo << across.status().message());
    REQUIRE(across.ok());
    CHECK(across->nvls_tree == (std::string(algo) == "NVLSTree"));
    CHECK(across->collnet_chain == (std::string(algo) == "CollNetChain"));
    CHECK_FALSE(across->nvls);
    CHECK_FALSE(across->collnet);
  }
  CHECK_THAT(std::string(ParseNcclLog(absl::StrCat("mpirun -x NCCL_ALGO=CollNetChain ./all_gather_perf\n",
                                                   RankLines(8, 4), kHeader13, kRows13),
                                      "all_gather.txt")
                             .status()
                             .message()),
             Catch::StartsWith("all_gather.txt:1: NCCL_ALGO=CollNetChain: NCCL runs CollNetChain"));
  auto direct = ParseNcclLog(
      absl::StrCat("mpirun -x NCCL_ALGO=CollNetDirect ./all_reduce_perf\n", RankLines(8, 4), kHeader13, kRows13),
      "all_reduce.txt");
  REQUIRE(direct.ok());
  CHECK(direct->collnet);
  CHECK(error("export NCCL_COLLNET_ENABLE=1\n", "all_reduce.txt") ==
        "all_reduce.txt:1: NCCL_COLLNET_ENABLE=1 (CollNet, InfiniBand SHARP): NCCL ran NVLink SHARP (NVLS) or "
        "CollNet in-network reductions, which hetsim models as NVLS on one host and CollNet all-reduce across "
        "hosts; rerun with NCCL_NVLS_ENABLE=0 NCCL_COLLNET_ENABLE=0");
  // NVLS set up across hosts without NCCL_ALGO: NCCL may have run NVLSTree, NVLS with CollNet or no NVLS at all.
  CHECK_THAT(
      std::string(ParseNcclLog(absl::StrCat("NCCL INFO Connected NVLS tree\n", RankLines(8, 4), kHeader13, kRows13),
                               "all_reduce.txt")
                      .status()
                      .message()),
      Catch::StartsWith("all_reduce.txt:1: NCCL INFO \"Connected NVLS\""));
  // Excluded, absent, or a collective NVLS does not run: read as usual.
  CHECK(ParseNcclLog("-x NCCL_ALGO=^NVLS\n" + body, "all_reduce.txt").ok());
  CHECK(ParseNcclLog("NCCL INFO 4 coll channels, 4 collnet channels, 0 nvls channels\n" + body, "all_reduce.txt").ok());
  CHECK(ParseNcclLog("NCCL INFO Connected NVLS tree\n" + body, "alltoall_perf.txt").ok());
}

TEST_CASE("calibrate: a file of several runs gives each run, named, or says why one was not read", "[calibrate]") {
  const std::string trailer = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 76.46\n#\n";
  // A sweep of NCCL_ALGO (all-reduce on 8 GPUs), then an all_gather pasted after it without a trailer.
  const std::string text = absl::StrCat(
      "$ NCCL_ALGO=Ring mpirun -np 8 ./all_reduce_perf -b 1M -e 2M\n", RankLines(8, 8), kHeader13, kRows13, trailer,
      "$ NCCL_ALGO=Tree mpirun -np 8 ./all_reduce_perf -b 1M -e 2M\n", RankLines(8, 8), kHeader13, kRows13, trailer,
      "# Collective test starting: all_gather_perf\n", RankLines(4, 4), kHeader13, kRows13, "That is all.\n");
  absl::StatusOr<NcclLogRuns> runs = ParseNcclLogRuns(text, "sweep.txt");
  INFO(runs.status().message());
  REQUIRE(runs.ok());
  REQUIRE(runs->runs.size() == 3);
  CHECK(runs->skipped.empty());
  CHECK(RunName(runs->runs[0]) == "all_reduce on 8 GPUs (1 host), NCCL_ALGO=Ring, lines 1-15");
  CHECK(RunName(runs->runs[1]) == "all_reduce on 8 GPUs (1 host), NCCL_ALGO=Tree, lines 16-30");
  CHECK(RunName(runs->runs[2]) == "all_gather on 4 GPUs (1 host), lines 31-39");
  CHECK(runs->runs[2].op == hetsim::CollectiveOp::kAllGather);
  for (const NcclLog& log : runs->runs) CHECK(log.rows.size() == 2);
  // One run as before: ParseNcclLog's result.
  runs = ParseNcclLogRuns(absl::StrCat(RankLines(2, 2), kHeader13, kRows13, trailer, "prose\n"), "all_reduce.txt");
  REQUIRE(runs.ok());
  CHECK(runs->runs.size() == 1);
  CHECK(runs->runs[0].last_line == 9);
  // A CollNet run of a sweep is skipped with its reason; the others are read, an NVLS one as NVLS.
  runs = ParseNcclLogRuns(
      absl::StrCat(RankLines(8, 8), kHeader13, kRows13, trailer, "export NCCL_COLLNET_ENABLE=1\n", RankLines(8, 8),
                   kHeader13, kRows13, trailer, "NCCL INFO Connected NVLS tree\n", RankLines(8, 8), kHeader13, kRows13),
      "all_reduce.txt");
  REQUIRE(runs.ok());
  REQUIRE(runs->runs.size() == 2);
  CHECK_FALSE(runs->runs[0].nvls);
  CHECK(runs->runs[1].nvls);
  REQUIRE(runs->skipped.size() == 1);
  CHECK_THAT(runs->skipped[0], Catch::StartsWith("all_reduce.txt:15: NCCL_COLLNET_ENABLE=1"));
  // No run read: each one's reason.
  CHECK(std::string(ParseNcclLogRuns(absl::StrCat(kHeader13, kRows13, trailer, kHeader13, kRows13), "all_reduce.txt")
                        .status()
                        .message()) ==
        "all_reduce.txt: 2 nccl-tests runs, none read: lines 1-6: 2: a table without \"#  Rank ... on HOST device "
        "...\" lines before it: the GPU count is unknown (paste the log from nccl-tests' first line, or give the "
        "run's GPUs and hosts with --log-ranks N --log-hosts H; its busbw / algbw is all_reduce's over 8 ranks); "
        "lines 7-9: 8: a table without \"#  Rank ... on HOST device ...\" lines before it: the GPU count is unknown "
        "(paste the log from nccl-tests' first line, or give the run's GPUs and hosts with --log-ranks N --log-hosts "
        "H; its busbw / algbw is all_reduce's over 8 ranks)");
  // A broken row is the file's problem, not a run to skip.
  CHECK_THAT(
      std::string(ParseNcclLogRuns(absl::StrCat(RankLines(2, 2), kHeader13, kRows13, trailer, RankLines(2, 2),
                                                kHeader13, "  1024  256  float  sum  -1  x  1  1  0  1  1  1  0\n"),
                                   "all_reduce.txt")
                      .status()
                      .message()),
      Catch::StartsWith("all_reduce.txt:12: "));
}

v1::Cluster Cluster(const std::string& preset, int nodes) {
  v1::Cluster c;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(
      absl::StrFormat(R"pb(
                        gpu_types { name: "g" preset: "%s" }
                        node_types { name: "n" gpu_type: "g" gpus_per_node: 8 intra_node_fabric: NVSWITCH }
                        islands { name: "isl" node_type: "n" node_count: %d fabric: INFINIBAND }
                      )pb",
                      preset, nodes),
      &c));
  return c;
}

TEST_CASE("calibrate: GPU model and hosts against the island", "[calibrate]") {
  CHECK(GpuFamily("NVIDIA A100-SXM4-80GB") == "A100");
  CHECK(GpuFamily("A100-80GB") == "A100");
  CHECK(GpuFamily("NVIDIA H100 80GB HBM3") == "H100");
  CHECK(GpuFamily("Tesla V100-SXM2-16GB") == "V100");
  CHECK(GpuFamily("AMD Instinct MI300X VF") == "MI300X");
  CHECK(GpuFamily("NVIDIA Graphics Device").empty());
  // GeForce's series and number are apart (NVIDIA/nccl-tests#104's "NVIDIA GeForce GTX 1080", session 36: it was
  // "no GPU family", so an H100 cluster was fitted to it with a warning); the presets write them with a hyphen.
  CHECK(GpuFamily("NVIDIA GeForce GTX 1080") == "GTX1080");
  CHECK(GpuFamily("NVIDIA GeForce RTX 4090") == GpuFamily("RTX-4090"));
  CHECK(GpuFamily("NVIDIA GeForce RTX 2080 Ti") == GpuFamily("RTX-2080-Ti"));
  CHECK(GpuFamily("NVIDIA RTX A6000") == GpuFamily("RTX-A6000"));

  NcclLog log;
  log.file = "ar.txt";
  log.rank_line = 4;
  log.ranks = 16;
  log.hosts = 2;
  log.gpu_model = "NVIDIA H100 80GB HBM3";
  std::vector<std::string> warnings;
  // Another family: refused.
  CHECK(CheckLogAgainstIsland(log, Cluster("A100-80GB", 2), 0, warnings).message() ==
        "ar.txt:4: the log ran on \"NVIDIA H100 80GB HBM3\" (H100), island \"isl\" has GPU type \"g\" (A100-80GB): "
        "another GPU's fabric would be fitted into this one (the wrong --cluster or --island?)");
  // More hosts than nodes: refused.
  CHECK(CheckLogAgainstIsland(log, Cluster("H100-SXM", 1), 0, warnings).message() ==
        "ar.txt:4: 16 ranks on 2 hosts do not fit island \"isl\" (1 nodes of 8 GPUs)");
  CHECK(warnings.empty());
  // The same family, another variant; part of a node: warnings.
  log.gpu_model = "NVIDIA A100-SXM4-40GB";
  log.ranks = 8;
  CHECK(CheckLogAgainstIsland(log, Cluster("A100-80GB", 2), 0, warnings).ok());
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0] ==
        "ar.txt:4: the log ran on \"NVIDIA A100-SXM4-40GB\", island \"isl\"'s GPU type \"g\" is A100-80GB: another "
        "A100 variant, fitted anyway (the NCCL fabric is the node type's)");
  CHECK(warnings[1] ==
        "ar.txt:4: 4 GPUs per host, island \"isl\"'s nodes have 8: the NCCL parameters are fitted from part of a node");
  // A GPU type named after the log's GPU, priced with another GPU's preset (validation/clusters/clariden-gh200-32:
  // type "gh200", preset H100-SXM; session 37: boeschf/nccl-benchmark-on-alps-2025's Clariden logs, "NVIDIA GH200
  // 120GB", were refused as another GPU's): the name says what the cluster describes, fitted with a warning.
  warnings.clear();
  log.gpu_model = "NVIDIA GH200 120GB";
  log.ranks = 8;
  log.hosts = 2;
  v1::Cluster gh200 = Cluster("H100-SXM", 2);
  gh200.mutable_gpu_types(0)->set_name("gh200");
  gh200.mutable_node_types(0)->set_gpu_type("gh200");
  CHECK(CheckLogAgainstIsland(log, gh200, 0, warnings).ok());
  REQUIRE_FALSE(warnings.empty());
  CHECK(warnings[0] ==
        "ar.txt:4: the log ran on \"NVIDIA GH200 120GB\", island \"isl\"'s GPU type \"gh200\" is priced as preset "
        "H100-SXM: fitted to the type its name says");
  // A type whose name names no such GPU is still refused for the preset's family.
  CHECK_FALSE(CheckLogAgainstIsland(log, Cluster("H100-SXM", 2), 0, warnings).ok());
}

TEST_CASE("calibrate: the fit's guards", "[calibrate]") {
  const std::vector<FittedParameter> good = {{"node_types[0].nccl.bandwidth_efficiency", 0.775, 0.74},
                                             {"node_types[0].nccl.launch_latency_ns", 8000, 9100},
                                             {"node_types[0].nccl.ll_step_latency_ns", 300, 420}};
  CHECK(NcclFitProblems(good, 4.2, kDefaultMaxMapePercent).empty());
  const std::vector<FittedParameter> poor = {{"islands[0].nccl.bandwidth_efficiency", 0.965, 1.0},
                                             {"islands[0].nccl.launch_latency_ns", 8000, 400},
                                             {"islands[0].nccl.simple_step_latency_ns", 3000, 1}};
  const std::vector<std::string> problems = NcclFitProblems(poor, 21.5, 15);
  REQUIRE(problems.size() == 4);
  CHECK(problems[0] ==
        "islands[0].nccl.bandwidth_efficiency = 1 is at the fit's bound [0.01, 1]: the logs show what the model cannot "
        "(other hardware than the cluster's, an algorithm hetsim does not model)");
  CHECK(problems[1] ==
        "islands[0].nccl.launch_latency_ns = 400 ns is outside what a fabric does [1000, 1e+06] ns: the fit absorbs "
        "what the model cannot explain");
  CHECK_THAT(problems[2], Catch::StartsWith("islands[0].nccl.simple_step_latency_ns = 1 ns is at the fit's bound"));
  CHECK(problems[3] == "MAPE 21.50 % is above 15 % (--max-mape): the calibrated cluster does not reproduce the logs");
}

TEST_CASE("calibrate: a poor fit names the rows whose time falls as the size grows", "[calibrate]") {
  // Rows of our own in the shape of the Alps GH200 logs over Slingshot (docs/corpus.md, session 38): mid sizes
  // slower than a size four times larger, which no NCCL algorithm is.
  NcclLog log;
  log.file = "ar.txt";
  log.rows = {{10, 32768, 49.7, 0},    {11, 65536, 138.5, 0},   {12, 262144, 342.8, 0},
              {13, 1048576, 889.6, 0}, {14, 2097152, 162.2, 0}, {15, 4194304, 217.3, 0}};
  const std::vector<std::string> problems = TimeFallingRows({&log});
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] ==
        "ar.txt:12-13: 262144 to 1048576 B take up to 889.6 us, more than twice 2097152 B's 162.2 us (line 14): times "
        "that fall as the size grows are no NCCL algorithm's (the network transport's, e.g. its protocol for mid-size "
        "messages); fit the log without those rows");
  // Noise and protocol switches (a larger size a little faster) are not it.
  log.rows = {{10, 65536, 40.0, 0}, {11, 131072, 38.5, 0}, {12, 262144, 45.0, 0}};
  CHECK(TimeFallingRows({&log}).empty());
}

TEST_CASE("calibrate: a poor fit names a floor of time at the log's smallest sizes", "[calibrate]") {
  // Rows of our own in the shape of CSCS's Sarus page (docs/corpus.md, session 39): 1 to 4 MiB take ~600 us, far above
  // what the presets predict there, then the time grows with the size.
  NcclLog log;
  log.file = "ar.txt";
  log.rows = {{10, 1048576, 600, 0},  {11, 2097152, 615, 0},   {12, 4194304, 630, 0},   {13, 8388608, 700, 0},
              {14, 16777216, 800, 0}, {15, 33554432, 1000, 0}, {16, 67108864, 1600, 0}, {17, 134217728, 3000, 0}};
  const std::vector<double> presets = {40e-6, 60e-6, 100e-6, 180e-6, 340e-6, 660e-6, 1300e-6, 2600e-6};
  std::vector<std::string> problems = FloorRows({&log}, presets);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] ==
        "ar.txt:10-12: 1048576 to 4194304 B take 600 to 630 us, within 10 % as the size doubles: a floor 6.0 times "
        "the 100.0 us the cluster's presets predict at 4194304 B, which no term of the model has (the network "
        "transport's, e.g. its rendezvous protocol) and the fit absorbs into its latencies; fit the log on its rows "
        "twice as slow as the floor or more, from 67108864 B (line 16), or write this fit with --accept-poor-fit");
  // A floor the whole log long leaves no rows to fit on.
  NcclLog whole = log;
  whole.rows.resize(3);
  problems = FloorRows({&whole}, presets);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::Contains("the log has no row twice as slow as the floor"));
  // Each log's rows read their own presets: a second log after one whose presets are near its floor.
  whole.file = "near.txt";
  problems = FloorRows({&whole, &log},
                       {250e-6, 260e-6, 270e-6, 40e-6, 60e-6, 100e-6, 180e-6, 340e-6, 660e-6, 1300e-6, 2600e-6});
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::StartsWith("ar.txt:10-12: "));
  // Not a floor: near what the presets predict (a latency-bound log's small sizes), ...
  CHECK(FloorRows({&log}, {250e-6, 260e-6, 270e-6, 280e-6, 340e-6, 660e-6, 1300e-6, 2600e-6}).empty());
  // ... a plateau above faster smaller sizes (the transport's mid-size protocol), ...
  NcclLog plateau = log;
  plateau.rows.insert(plateau.rows.begin(), {9, 524288, 120, 0});
  CHECK(FloorRows({&plateau}, {30e-6, 40e-6, 60e-6, 100e-6, 180e-6, 340e-6, 660e-6, 1300e-6, 2600e-6}).empty());
  // ... times that fall as the size doubles, or one flat row alone.
  NcclLog falling = log;
  falling.rows[1].time_us = 500;
  CHECK(FloorRows({&falling}, presets).empty());
}

TEST_CASE("calibrate: a table pasted without its Rank lines takes the run's shape from the user", "[calibrate]") {
  const std::string table = absl::StrCat(kHeader13, kRows13);  // busbw / algbw 1.75: an all-reduce over 8 ranks
  auto error = [](const std::string& text, NcclLogShape shape) {
    return std::string(ParseNcclLog(text, "ar_allreduce.txt", shape).status().message());
  };
  CHECK(error(table, {}) ==
        "ar_allreduce.txt:2: a table without \"#  Rank ... on HOST device ...\" lines before it: the GPU count is "
        "unknown (paste the log from nccl-tests' first line, or give the run's GPUs and hosts with --log-ranks N "
        "--log-hosts H; its busbw / algbw is all_reduce's over 8 ranks)");
  absl::StatusOr<NcclLog> log = ParseNcclLog(table, "ar_allreduce.txt", {.ranks = 8, .hosts = 2});
  REQUIRE(log.ok());
  CHECK(log->ranks == 8);
  CHECK(log->hosts == 2);
  CHECK(log->gpu_model.empty());
  CHECK(log->rank_line == 2);  // the first row: where messages about the run point
  CHECK(log->rows.size() == 2);
  CHECK(error(table, {.ranks = 8, .hosts = 3}) ==
        "ar_allreduce.txt:2: --log-ranks 8 are not spread evenly over --log-hosts 3");
  CHECK(error(table, {.ranks = 16, .hosts = 2}) ==
        "ar_allreduce.txt:2: 16 ranks (from --log-ranks / --log-hosts), but the table's busbw / algbw (1.75) is "
        "all_reduce's over 8 ranks");
  // Rank lines win, and a shape that contradicts them is refused.
  CHECK(ParseNcclLog(absl::StrCat(RankLines(8, 4), table), "ar_allreduce.txt", {.ranks = 8, .hosts = 2}).ok());
  CHECK(error(absl::StrCat(RankLines(8, 8), table), {.ranks = 8, .hosts = 2}) ==
        "ar_allreduce.txt:1: the Rank lines show 8 ranks on 1 hosts, --log-ranks 8 --log-hosts 2 say otherwise (those "
        "are for tables pasted without Rank lines)");
  // Against the island: the GPU is assumed, with a warning.
  std::vector<std::string> warnings;
  CHECK(CheckLogAgainstIsland(*log, Cluster("A100-80GB", 2), 0, warnings).ok());
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0] ==
        "ar_allreduce.txt:2: the log names no GPU (no Rank lines; 8 GPUs on 2 hosts from --log-ranks / --log-hosts): "
        "assumed island \"isl\"'s \"g\" (A100-80GB)");
}

// The command forms of pasted logs without Rank lines (held-out inputs of session 32: a tutorial's
// `CUDA_VISIBLE_DEVICES=0,1 ./build/all_reduce_perf -b 1G -e 10G -f 2 -g 2`, NVIDIA/nccl-tests#78's
// `mpirun -n 256 -npernode 16 ...`); the figures here are our own.
TEST_CASE("calibrate: an nccl-tests command line gives the GPUs and hosts it runs on", "[calibrate]") {
  auto shape = [](absl::string_view line) {
    const std::optional<CommandShape> s = ShapeFromCommand(line);
    return s ? absl::StrCat(s->ranks, "x", s->hosts) : std::string("none");
  };
  CHECK(shape("CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 ./build/all_reduce_perf -b 1G -e 10G -f 2 -g 2") == "2x1");
  CHECK(shape("$ ./build/all_gather_perf -b 8 -e 8G -f 2 -g 8 -t 2") == "16x1");
  CHECK(shape("mpirun -n 256 -npernode 16 -hostfile /job/hostfile -x NCCL_DEBUG=WARN "
              "./nccl-tests/build/all_reduce_perf -b 8 -e 512M -f 2 -g 1 -c 0") == "256x16");
  CHECK(shape("mpirun --allow-run-as-root -np 16 --map-by ppr:8:node --hostfile h /opt/all_reduce_perf -b 8 -g 1") ==
        "16x2");
  CHECK(shape("mpirun -np 4 -H 10.0.0.1:1,10.0.0.2:1,10.0.0.3:1,10.0.0.4:1 ./build/alltoall_perf -b 8 -e 1G -g 1") ==
        "4x4");
  CHECK(shape("srun -N 2 --ntasks-per-node=8 --mpi=pmix ./all_reduce_perf -b 8 -e 8G -f 2 -g 1") == "16x2");
  // What leaves the shape to a hostfile or the allocation, and prose, say none.
  CHECK(shape("mpirun -np 16 --hostfile hosts ./build/all_reduce_perf -b 8 -g 1") == "none");
  CHECK(shape("mpirun -np 8 ./build/reduce_scatter_perf -b 8 -e 1G -f 2") == "none");  // hosts from the environment
  CHECK(shape("srun --mpi=pmix ./build/all_reduce_perf -b 512M -e 16G -f 2 -g 1") == "none");
  CHECK(shape("Next we run all_reduce_perf -g 2 on the node") == "none");
  CHECK(shape("./build/all_reduce_perf") == "none");

  // A run pasted with its command and without its Rank lines is read with the command's shape.
  const std::string log_text =
      absl::StrCat("```\nmpirun -np 8 -npernode 4 -hostfile h ./build/all_reduce_perf -b 1M -e 2M -f 2 -g 1\n",
                   kHeader13, kRows13, "```\n");
  absl::StatusOr<NcclLog> log = ParseNcclLog(log_text, "pasted.md");
  REQUIRE(log.ok());
  CHECK(log->ranks == 8);
  CHECK(log->hosts == 2);
  CHECK(log->shape_from ==
        "the command on line 2 (mpirun -np 8 -npernode 4 -hostfile h ./build/all_reduce_perf -b 1M -e 2M -f 2 -g 1)");
  // A command continued over lines is one command.
  const std::string continued = absl::StrCat("mpirun --allow-run-as-root \\\n  -np 8 -npernode 4 \\\n",
                                             "  ./build/all_reduce_perf -b 1M -e 2M -f 2 -g 1\n", kHeader13, kRows13);
  absl::StatusOr<NcclLog> joined = ParseNcclLog(continued, "pasted.md");
  REQUIRE(joined.ok());
  CHECK(joined->hosts == 2);
  // The user's --log-ranks win; a command whose shape the table's bus bandwidth factor contradicts (its
  // launcher not shown) gives none.
  CHECK(ParseNcclLog(log_text, "pasted.md", {.ranks = 8, .hosts = 1})->hosts == 1);
  const std::string wrong = absl::StrCat("./build/all_reduce_perf -b 1M -e 2M -f 2 -g 4\n", kHeader13, kRows13);
  CHECK(ParseNcclLog(wrong, "pasted.md").status().message() ==
        "pasted.md:3: a table without \"#  Rank ... on HOST device ...\" lines before it: the GPU count is unknown "
        "(paste the log from nccl-tests' first line, or give the run's GPUs and hosts with --log-ranks N --log-hosts "
        "H; its busbw / algbw is all_reduce's over 8 ranks, not the 4 of its command on line 1)");
}

}  // namespace
}  // namespace hetsim::calibrate
