// The corpus of published nccl-tests logs, committed in tests/corpus/third_party/nccl-tests-logs/ (sources, licences
// and SHA-256 in tests/corpus/sources.txt, what each shows in tests/calibrate_data/real/README.md): what
// ParseNcclLog reads from each, or the refusal and its reason; a missing file fails. Row counts are the
// rows of nonzero size in the published table, counted by eye from the file (0-byte rows move nothing
// and are left out).
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "proto/io.h"
#include "proto/validate_cluster.h"
#include "service/calibrate/nccl_fit.h"
#include "service/calibrate/nccl_fit_guards.h"
#include "service/calibrate/nccl_log.h"
#include "service/calibrate/report.h"

namespace hetsim::calibrate {
namespace {

const std::string kReal = absl::StrCat(HETSIM_CORPUS_DIR, "/nccl-tests-logs/");

struct Expected {
  const char* file;
  const char* test;  // "" for a refusal
  int ranks, hosts;
  const char* gpu_model;
  int rows;
  const char* refusal;  // the error's text after "<file>:"
};

const std::vector<Expected> kCorpus = {
    {"superbench_nccl_allreduce.log", "all_reduce", 8, 1, "A100-SXM4-40GB", 32, ""},
    {"superbench_nccl_allgather.log", "all_gather", 8, 1, "A100-SXM4-40GB", 29, ""},
    {"superbench_nccl_alltoall.log", "alltoall", 8, 1, "A100-SXM4-40GB", 29, ""},
    {"superbench_nccl_reducescatter.log", "reduce_scatter", 8, 1, "A100-SXM4-40GB", 29, ""},
    {"superbench_nccl_broadcast.log", "broadcast", 8, 1, "A100-SXM4-40GB", 32, ""},
    {"eks_blueprints_efa_t4_README.md", "all_reduce", 2, 2, "Tesla T4", 29, ""},
    {"aws_do_eks_nccl_test_p5_README.md", "", 0, 0, "", 0,
     "97: a second table (the first starts at line 84): give one nccl-tests run per file"},
    {"awsome_distributed_training_nccl_tests_README.md", "", 0, 0, "", 0,
     "192: a second table (the first starts at line 157): give one nccl-tests run per file"},
    {"deepops_nvidia_network_operator.md", "", 0, 0, "", 0,
     "244: a table without \"#  Rank ... on HOST device ...\" lines before it: the GPU count is unknown (paste the "
     "log from nccl-tests' first line, or give the run's GPUs and hosts with --log-ranks N --log-hosts H; its busbw / "
     "algbw is all_reduce's over 16 ranks)"},
    {"dstack_lambda_clusters.md", "", 0, 0, "", 0,
     "179: a table without \"#  Rank ... on HOST device ...\" lines before it: the GPU count is unknown (paste the "
     "log from nccl-tests' first line, or give the run's GPUs and hosts with --log-ranks N --log-hosts H; its busbw / "
     "algbw is all_reduce's over 16 ranks)"},
};

TEST_CASE("calibrate: the corpus of published nccl-tests logs", "[calibrate][corpus]") {
  int parsed = 0;
  for (const Expected& e : kCorpus) {
    INFO(e.file);
    absl::StatusOr<std::string> text = proto::ReadFileToString(kReal + e.file);
    REQUIRE(text.ok());
    absl::StatusOr<NcclLog> log = ParseNcclLog(*text, e.file);
    if (std::string(e.refusal).empty()) {
      INFO(log.status().message());
      REQUIRE(log.ok());
      CHECK(log->test == e.test);
      CHECK(log->ranks == e.ranks);
      CHECK(log->hosts == e.hosts);
      CHECK(log->gpu_model == e.gpu_model);
      CHECK(log->rows.size() == static_cast<size_t>(e.rows));
      ++parsed;
    } else {
      REQUIRE_FALSE(log.ok());
      CHECK(std::string(log.status().message()) == absl::StrCat(e.file, ":", e.refusal));
    }
  }
  CHECK(parsed == 6);  // of 10; before issue 41, none
}

TEST_CASE("calibrate: the corpus's tables without Rank lines read with the run's shape", "[calibrate][corpus]") {
  // Both 2 hosts of 8 GPUs (the pages say so: DGX A100 pairs, B200 x 8 nodes); 30 and 29 rows of nonzero size.
  for (const auto& [file, rows] :
       {std::pair{"deepops_nvidia_network_operator.md", 30}, std::pair{"dstack_lambda_clusters.md", 29}}) {
    INFO(file);
    absl::StatusOr<std::string> text = proto::ReadFileToString(kReal + file);
    REQUIRE(text.ok());
    absl::StatusOr<NcclLog> log = ParseNcclLog(*text, file, {.ranks = 16, .hosts = 2});
    INFO(log.status().message());
    REQUIRE(log.ok());
    CHECK(log->test == "all_reduce");
    CHECK(log->rows.size() == static_cast<size_t>(rows));
    CHECK_FALSE(ParseNcclLog(*text, file, {.ranks = 8, .hosts = 1}).ok());  // the table says 16
  }
}

TEST_CASE("calibrate: where the corpus's tests were read from", "[calibrate][corpus]") {
  for (const auto& [file, from] : {std::pair{"superbench_nccl_allgather.log", "the file name"},
                                   std::pair{"eks_blueprints_efa_t4_README.md", "the table's busbw / algbw"}}) {
    INFO(file);
    absl::StatusOr<std::string> text = proto::ReadFileToString(kReal + file);
    REQUIRE(text.ok());
    absl::StatusOr<NcclLog> log = ParseNcclLog(*text, file);
    REQUIRE(log.ok());
    CHECK(log->test_from == from);
  }
}

// Files of several runs, read run by run (ParseNcclLogRuns): the corpus's three READMEs that a one-run
// reader refused for their second table, and the held-out logs of session 27 (docs/corpus.md).
TEST_CASE("calibrate: the corpus's files of several runs, run by run", "[calibrate][corpus]") {
  auto runs = [](const char* file, NcclLogShape shape = {}) {
    absl::StatusOr<std::string> text = proto::ReadFileToString(kReal + file);
    REQUIRE(text.ok());
    return ParseNcclLogRuns(*text, file, shape);
  };
  // Two all-reduce tables behind srun's "0: " (2 x p4de, then 2 x p5), then an EKS excerpt behind
  // "[1,0]<stdout>:" (2 x p5, rows cut to 6); no Rank lines, 16 GPUs each.
  absl::StatusOr<NcclLogRuns> r = runs("awsome_distributed_training_nccl_tests_README.md", {.ranks = 16, .hosts = 2});
  INFO(r.status().message());
  REQUIRE(r.ok());
  REQUIRE(r->runs.size() == 3);
  CHECK(r->skipped.empty());
  CHECK(r->runs[0].rows.size() == 29);
  CHECK(r->runs[1].rows.size() == 32);
  CHECK(r->runs[2].rows.size() == 6);
  for (const NcclLog& log : r->runs) CHECK(log.op == hetsim::CollectiveOp::kAllReduce);
  // One and two p5 nodes, both with NVLink SHARP set up, no Rank lines: given 8 ranks on one host, the
  // one-node run (2 GiB at busbw 468.6 GB/s) is read as NVLS all-reduce; the two-node excerpt's busbw /
  // algbw is no all-reduce's over the 8 ranks given.
  r = runs("aws_do_eks_nccl_test_p5_README.md", {.ranks = 8, .hosts = 1});
  INFO(r.status().message());
  REQUIRE(r.ok());
  REQUIRE(r->runs.size() == 1);
  CHECK(r->runs[0].nvls);
  REQUIRE(r->runs[0].rows.size() == 1);
  CHECK(r->runs[0].rows[0].busbw_gbytes_per_s == Approx(468.60));
  REQUIRE(r->skipped.size() == 1);
  CHECK_THAT(r->skipped[0], Catch::Contains("cannot tell which nccl-tests test"));

  // Held out: dstack's GCP page, an all-reduce, then an all_gather_perf run, then another by its wrapper
  // script run-allgather.sh (A3 Mega, then A3 High/Edge), 2 nodes of 8 H100 each, no Rank lines, 11 rows
  // each.
  r = runs("dstack_gcp_clusters.md", {.ranks = 16, .hosts = 2});
  INFO(r.status().message());
  REQUIRE(r.ok());
  REQUIRE(r->runs.size() == 3);
  CHECK(r->runs[0].op == hetsim::CollectiveOp::kAllReduce);
  CHECK(r->runs[1].op == hetsim::CollectiveOp::kAllGather);
  CHECK(r->runs[2].op == hetsim::CollectiveOp::kAllGather);
  for (const NcclLog& log : r->runs) {
    CHECK(log.rows.size() == 11);
    CHECK(log.algorithm.empty());  // the page's later `export NCCL_ALGO=Ring` is not a run's
  }
  // The EKS T4 README: the run with its Rank lines, then an excerpt of the same table without them.
  r = runs("aws_do_eks_tf_eks_efa_README.md");
  INFO(r.status().message());
  REQUIRE(r.ok());
  REQUIRE(r->runs.size() == 1);
  CHECK(r->runs[0].ranks == 2);
  CHECK(r->runs[0].hosts == 2);
  CHECK(r->runs[0].gpu_model == "Tesla T4");
  REQUIRE(r->skipped.size() == 1);
  CHECK_THAT(r->skipped[0], Catch::Contains("a table without \"#  Rank ... on HOST device ...\" lines"));
}

TEST_CASE("calibrate: the held-out logs of sessions 27 and 28 read or refused for what they are",
          "[calibrate][corpus]") {
  const std::pair<const char*, const char*> kRefused[] = {
      // perftest's ib_write_bw result before the table was read as a row of 5 columns.
      {"deepops_roce_perf_k8s.md", "a table without \"#  Rank"},
      {"deepops_slurm_cluster_README.md", "no table rows"},
      {"deepops_slurm_perf_cluster.md", "a table without \"#  Rank"},
      {"eks_blueprints_nvidia_gpu_efa_README.md", "its busbw / algbw is all_reduce's over 16 ranks"},
      {"aws_do_eks_tf_eks_gpu_efa_README.md", "its busbw / algbw is all_reduce's over 16 ranks"},
      {"awsome_nccl_tests_aws_batch_README.md", "a table without \"#  Rank"},
      {"awsome_topology_aware_nccl_tests_README.md", "a table without \"#  Rank"},
      {"dstack_nebius_clusters.md", "its busbw / algbw is all_reduce's over 16 ranks"},
      {"aws_do_eks_karpenter_README.md", "2 nccl-tests runs, none read"},
      // It said "cannot tell which nccl-tests test printed it".
      {"superbench_nccl_reduce.log", "reduce_perf (from the file name): hetsim models"},
      // Held out in session 28: documentation pages of the benchmarks, with no run printed in them
      // (nccl-tests' README and PERFORMANCE.md, SuperBench's benchmark page, Neuron's nccom-tests).
      {"nccl_tests_README.md", "no table rows"},
      {"nccl_tests_PERFORMANCE.md", "no table rows"},
      {"superbench_micro_benchmarks.md", "no table rows"},
      {"awsome_nccom_tests_README.md", "no table rows"},
  };
  for (const auto& [file, reason] : kRefused) {
    INFO(file);
    absl::StatusOr<std::string> text = proto::ReadFileToString(kReal + file);
    REQUIRE(text.ok());
    absl::StatusOr<NcclLogRuns> r = ParseNcclLogRuns(*text, file);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(std::string(r.status().message()), Catch::Contains(reason));
  }
  // With the shape its page gives (2 pods of one GPU each), the karpenter page's two runs (EFA off, on)
  // read: all-reduces by busbw / algbw = 1.
  absl::StatusOr<std::string> karpenter = proto::ReadFileToString(kReal + "aws_do_eks_karpenter_README.md");
  REQUIRE(karpenter.ok());
  absl::StatusOr<NcclLogRuns> two = ParseNcclLogRuns(*karpenter, "karpenter.md", {.ranks = 2, .hosts = 2});
  INFO(two.status().message());
  REQUIRE(two.ok());
  CHECK(two->runs.size() == 2);
  // Without the wrapper's name the third dstack run could not be told: the refusal points at its first line.
  absl::StatusOr<std::string> gcp = proto::ReadFileToString(kReal + "dstack_gcp_clusters.md");
  REQUIRE(gcp.ok());
  std::string renamed = *gcp;
  renamed.replace(renamed.find("run-allgather.sh"), 16, "run-benchmark.sh");
  absl::StatusOr<NcclLogRuns> gcp_runs = ParseNcclLogRuns(renamed, "gcp.md", {.ranks = 16, .hosts = 2});
  REQUIRE(gcp_runs.ok());
  REQUIRE(gcp_runs->skipped.size() == 1);
  CHECK_THAT(gcp_runs->skipped[0], Catch::StartsWith("gcp.md:438: cannot tell which nccl-tests test"));
  // With the shape its page gives (a DGX pair over RoCE, 8 GPUs each), the RoCE page's table reads.
  absl::StatusOr<std::string> text = proto::ReadFileToString(kReal + "deepops_roce_perf_k8s.md");
  REQUIRE(text.ok());
  absl::StatusOr<NcclLogRuns> r = ParseNcclLogRuns(*text, "deepops_roce_perf_k8s.md", {.ranks = 16, .hosts = 2});
  INFO(r.status().message());
  REQUIRE(r.ok());
  CHECK(r->runs.size() == 1);
}

// Held out in session 39 (docs/corpus.md): CSCS's documentation pages (CC0-1.0). Its NCCL page pastes an all-reduce on
// 2 nodes of 4 GH200 over Slingshot with the CXI hook, then the same run without it (marked (*) on the page): both
// read, and the fit's guard names the pair as runs of different conditions (fitted together, the calibrate refusal
// named a launch latency and the second run's mid-size rows). The Sarus page's run is 2 hosts of one GH200 each.
TEST_CASE("calibrate: the held-out logs of session 39 read, the runs of two conditions named", "[calibrate][corpus]") {
  const auto read = [](const char* file) {
    absl::StatusOr<std::string> text = proto::ReadFileToString(kReal + file);
    REQUIRE(text.ok());
    absl::StatusOr<NcclLogRuns> runs = ParseNcclLogRuns(*text, file);
    INFO(runs.status().message());
    REQUIRE(runs.ok());
    return *std::move(runs);
  };
  const NcclLogRuns r = read("cscs_docs_communication_nccl.md");
  REQUIRE(r.runs.size() == 2);
  for (const NcclLog& log : r.runs) {
    CHECK(log.op == hetsim::CollectiveOp::kAllReduce);
    CHECK(log.ranks == 8);
    CHECK(log.hosts == 2);
    CHECK(log.gpu_model == "NVIDIA GH200 120GB");
    CHECK(log.rows.size() == 25);  // 8 B to 128 MiB
  }
  const std::vector<std::string> named = DisagreeingRuns({&r.runs[0], &r.runs[1]});
  REQUIRE(named.size() == 1);
  CHECK_THAT(named[0], Catch::Contains("takes 1916.4 us and 43293 us at 134217728 B (lines 202 and 252, 22.6 times)"));
  CHECK(DisagreeingRuns({&r.runs[0]}).empty());
  const NcclLogRuns one = read("cscs_docs_sarus_suite_index.md");
  REQUIRE(one.runs.size() == 1);
  CHECK(one.runs[0].ranks == 2);
  CHECK(one.runs[0].hosts == 2);
  CHECK(one.runs[0].rows.size() == 8);  // 1 MiB to 128 MiB
}

// Held out in session 40: CSCS's December 2025 container-image page, the same two all-reduce runs as the communication
// page (its lines shifted), read and the two conditions named; CSCS's NVSHMEM page, whose tables are NVSHMEM's
// perftest's, refused as such (it said "no table rows" at the file's last line).
TEST_CASE("calibrate: the held-out logs of session 40 read or refused for what they are", "[calibrate][corpus]") {
  absl::StatusOr<std::string> image = proto::ReadFileToString(kReal + "cscs_docs_image_nccl_tests_2025-12.md");
  REQUIRE(image.ok());
  absl::StatusOr<NcclLogRuns> runs = ParseNcclLogRuns(*image, "image.md");
  INFO(runs.status().message());
  REQUIRE(runs.ok());
  REQUIRE(runs->runs.size() == 2);
  for (const NcclLog& log : runs->runs) {
    CHECK(log.op == hetsim::CollectiveOp::kAllReduce);
    CHECK(log.ranks == 8);
    CHECK(log.hosts == 2);
    CHECK(log.rows.size() == 25);
  }
  const std::vector<std::string> named = DisagreeingRuns({&runs->runs[0], &runs->runs[1]});
  REQUIRE(named.size() == 1);
  CHECK_THAT(named[0], Catch::Contains("takes 1916.4 us and 43293 us at 134217728 B (lines 112 and 180, 22.6 times)"));
  absl::StatusOr<std::string> nvshmem = proto::ReadFileToString(kReal + "cscs_docs_communication_nvshmem.md");
  REQUIRE(nvshmem.ok());
  absl::StatusOr<NcclLogRuns> refused = ParseNcclLogRuns(*nvshmem, "nvshmem.md");
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()),
             Catch::StartsWith("nvshmem.md:108: no nccl-tests table: this table's columns (size(B) count type scope "
                               "latency(us) ...) are NVSHMEM's perftest's"));
}

// The Sarus page's run (`--network=disable_rdzv_get`) on the machine it ran on: a poor fit (the fit absorbs 1 and
// 2 MiB's ~340 us into a Simple step latency of 346 us) whose cause is named, the floor; fitted on the rows the
// refusal points at, it is a good fit.
TEST_CASE("calibrate: the Sarus page's floor at 1-2 MiB is named as the poor fit's cause", "[calibrate][corpus]") {
  absl::StatusOr<v1::Cluster> clariden =
      proto::LoadCluster(absl::StrCat(HETSIM_SOURCE_DIR, "/validation/clusters/clariden-gh200-32.pbtxt"));
  REQUIRE(clariden.ok());
  absl::StatusOr<std::string> text = proto::ReadFileToString(kReal + "cscs_docs_sarus_suite_index.md");
  REQUIRE(text.ok());
  const auto fit = [&](const std::string& log_text) {
    absl::StatusOr<NcclLog> log = ParseNcclLog(log_text, "sarus.md");
    REQUIRE(log.ok());
    std::vector<NcclLog> logs = {*std::move(log)};
    v1::Cluster cluster = *clariden;
    absl::StatusOr<SourceFit> f = NcclTestsSource(std::move(logs), NcclFitOptions{}).Fit(cluster);
    INFO(f.status().message());
    REQUIRE(f.ok());
    return *std::move(f);
  };
  const SourceFit poor = fit(*text);
  REQUIRE(poor.problems.size() == 3);
  // The prediction at 2 MiB, two ranks on two nodes: each sends the 2097152 B once at the island's 25 GB/s x 0.925
  // (the cluster's NCCL efficiency, session 44), 90.7 us, plus the ROCE preset's 8 us launch and two Simple steps of
  // 3 us; 339.61 / 104.7 = 3.2.
  CHECK(poor.problems[2] ==
        "sarus.md:68-69: 1048576 to 2097152 B take 339.61 to 355.53 us, within 10 % as the size doubles: a floor 3.2 "
        "times the 104.7 us the cluster's presets predict at 2097152 B, which no term of the model has (the network "
        "transport's, e.g. its rendezvous protocol) and the fit absorbs into its latencies; fit the log on its rows "
        "twice as slow as the floor or more, from 16777216 B (line 72), or write this fit with --accept-poor-fit");
  // The rows from line 72 on alone (the lines before them blanked, so that the line numbers stay).
  std::vector<std::string> lines = absl::StrSplit(*text, '\n');
  for (int line = 68; line <= 71; ++line) lines[line - 1].clear();
  const SourceFit good = fit(absl::StrJoin(lines, "\n"));
  CHECK(good.problems.empty());
  CHECK(MeanAbsolutePercentError({good}) < 1);
}

}  // namespace
}  // namespace hetsim::calibrate
