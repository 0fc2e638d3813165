// Running sweeps with a fake evaluator: the rows and their fixed columns, failing points recorded in
// their rows, output identical whatever --jobs, --resume after a SIGKILL in the middle (no row lost,
// none twice), and shards merged into the unsharded file.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "service/sweep/fingerprint.h"
#include "service/sweep/merge.h"
#include "service/sweep/row.h"
#include "tests/service/sweep/sweep_test_util.h"

namespace hetsim::testing {
namespace {

std::vector<std::string> Lines(const std::string& text) { return absl::StrSplit(text, '\n', absl::SkipEmpty()); }

// A CSV row without its last cell, the sweep's fingerprint (checked to be one).
std::string WithoutFingerprint(const std::string& row) {
  const size_t comma = row.rfind(',');
  REQUIRE(comma != std::string::npos);
  CHECK(sweep::IsSweepFingerprint(row.substr(comma + 1)));
  return row.substr(0, comma);
}

// The file one uninterrupted single-threaded run writes.
std::string Reference(const std::string& sweep, const std::string& out) {
  FakeEvaluator fake;
  absl::StatusOr<sweep::SweepOutcome> run = sweep::RunSweep(Job(sweep, out), fake);
  REQUIRE(run.ok());
  return ReadFile(out);
}

TEST_CASE("a sweep writes one row per point with fixed columns", "[sweep]") {
  const std::string dir = SweepFolder("rows");
  const std::string sweep = WriteFile(dir, "sweep.pbtxt", kBandwidthScheduleSweep);
  FakeEvaluator fake;
  absl::StatusOr<sweep::SweepOutcome> run = sweep::RunSweep(Job(sweep, dir + "/out.csv"), fake);
  REQUIRE(run.ok());
  CHECK(run->total_points == 24);
  CHECK(run->evaluated == 24);
  CHECK(run->failed == 4);  // 7 Gb/s Eager-1F1B (no plan), 9 Gb/s x 3 schedules (OOM)
  const std::vector<std::string> lines = Lines(ReadFile(dir + "/out.csv"));
  REQUIRE(lines.size() == 25);
  CHECK(lines[0] ==
        "point,cluster.inter_island_links[0].bandwidth_gbps,plan.schedule,iteration_time_ms,tokens_per_s,"
        "samples_per_s,mfu,bubble_ratio,eta,peak_memory_gib,memory_capacity_gib,oom,num_gpus,num_stages,num_"
        "microbatches,schedule,"
        "status,message,sweep_fingerprint");
  // 1000/4 + 2 = 252 ms; 1e6 / 252 tokens/s; peak memory of the last of 3 stages: 12 GiB of its 40.
  CHECK(WithoutFingerprint(lines[4]) ==
        "3,4,ONE_F_ONE_B,252,3968.253968253968,0,0.25,0.3333333333333333,0.5,12,40,false,6,3,128,"
        "ONE_F_ONE_B,ok,");
  CHECK(WithoutFingerprint(lines[1 + 13]) ==
        "13,7,EAGER_1F1B,,,,,,,,,,,,,,infeasible,no plan fits; stage 1 needs 3 GiB more");
  CHECK(WithoutFingerprint(lines[1 + 18]) ==
        "18,9,ONE_F_ONE_B,113.11111111111111,8840.864440078585,0,0.25,0.3333333333333333,0.5,45.5,40,"
        "true,6,3,128,ONE_F_ONE_B,oom,\"stage 1 (a100, ): peak 45.50 GiB exceeds 40.00 GiB\"");
  // One fingerprint for every row of the sweep.
  const std::string fingerprint = lines[1].substr(lines[1].rfind(',') + 1);
  for (size_t i = 1; i < lines.size(); ++i) CHECK(absl::EndsWith(lines[i], "," + fingerprint));
}

TEST_CASE("a sweep's fingerprint depends on the sweep, not on its file's name", "[sweep]") {
  const std::string dir = SweepFolder("fingerprint");
  auto fingerprint_of = [&](const std::string& name, const std::string& text) {
    const std::string path = WriteFile(dir, name, text);
    FakeEvaluator fake;
    REQUIRE(sweep::RunSweep(Job(path, dir + "/" + name + ".csv"), fake).ok());
    const std::vector<std::string> lines = Lines(ReadFile(dir + "/" + name + ".csv"));
    absl::StatusOr<std::string> f = sweep::RowFingerprint(sweep::RowFormat::kCsv, lines[1]);
    REQUIRE(f.ok());
    return *f;
  };
  const std::string a = fingerprint_of("a.pbtxt", kBandwidthScheduleSweep);
  CHECK(fingerprint_of("b.pbtxt", kBandwidthScheduleSweep) == a);
  const std::string renamed = absl::StrReplaceAll(kBandwidthScheduleSweep, {{"name: \"test\"", "name: \"other\""}});
  CHECK(fingerprint_of("c.pbtxt", renamed) != a);
  const std::string filtered = absl::StrCat(kBandwidthScheduleSweep, "filter: \"plan.schedule != H_1F1B\"\n");
  CHECK(fingerprint_of("d.pbtxt", filtered) != a);
}

TEST_CASE("a point made invalid by its values gets its status and message in its row", "[sweep]") {
  const std::string dir = SweepFolder("rows");
  // The plan's A100 stages use nodes 0 and 1 of island "a100": with one node the plan is invalid.
  const std::string sweep = WriteFile(dir, "sweep.pbtxt", R"pb(
    cluster_path: "cluster-hapt-case.pbtxt"
    plan_path: "plan-hapt-case.pbtxt"
    axes {
      path: "cluster.islands[0].node_count"
      values: [ "1", "2", "3" ]
    }
  )pb");
  FakeEvaluator fake;
  absl::StatusOr<sweep::SweepOutcome> run = sweep::RunSweep(Job(sweep, dir + "/out.jsonl"), fake);
  REQUIRE(run.ok());
  CHECK(fake.calls() == 2);
  const std::vector<std::string> lines = Lines(ReadFile(dir + "/out.jsonl"));
  REQUIRE(lines.size() == 3);
  CHECK_THAT(lines[0],
             Catch::StartsWith("{\"point\":0,\"cluster.islands[0].node_count\":1,\"iteration_time_ms\":null,"));
  CHECK_THAT(lines[0], Catch::Contains("\"status\":\"invalid\",\"message\":\"") &&
                           Catch::Contains("plan-hapt-case.pbtxt: stages[2].mesh"));
  CHECK_THAT(lines[1],
             Catch::StartsWith("{\"point\":1,\"cluster.islands[0].node_count\":2,\"iteration_time_ms\":204,"));
  CHECK_THAT(lines[1],
             Catch::Contains("\"schedule\":\"H_1F1B\",\"status\":\"ok\",\"message\":\"\",\"sweep_fingerprint\":\""));
}

TEST_CASE("sweep output is identical whatever the number of jobs", "[sweep]") {
  const std::string dir = SweepFolder("jobs");
  const std::string sweep = WriteFile(dir, "sweep.pbtxt", kBandwidthScheduleSweep);
  for (const char* ext : {".csv", ".jsonl"}) {
    const std::string one = Reference(sweep, dir + "/one" + ext);
    for (int jobs : {2, 3, 8}) {
      FakeEvaluator slow(2);  // uneven delays: points finish out of order
      const std::string out = dir + "/many" + ext;
      REQUIRE(sweep::RunSweep(Job(sweep, out, jobs), slow).ok());
      INFO("jobs " << jobs << ext);
      CHECK(ReadFile(out) == one);
    }
  }
}

// Runs the sweep in a child process with slow points on 2 threads and kills it with SIGKILL once
// `rows` rows are on disk; returns the file as the kill left it.
std::string KillMidSweep(const std::string& sweep, const std::string& out, size_t rows) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    FakeEvaluator slow(15);
    const absl::StatusOr<sweep::SweepOutcome> run = sweep::RunSweep(Job(sweep, out, 2), slow);
    ::_exit(run.ok() ? 0 : 3);
  }
  for (int waited_ms = 0; waited_ms < 20000; waited_ms += 1) {
    absl::StatusOr<std::string> text = proto::ReadFileToString(out);
    if (text.ok() && Lines(*text).size() > rows) break;
    ::usleep(1000);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, WNOHANG) == 0);  // still running: the kill lands mid-sweep
  REQUIRE(::kill(child, SIGKILL) == 0);
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  return ReadFile(out);
}

TEST_CASE("a sweep killed with SIGKILL resumes with no row lost and none twice", "[sweep]") {
  const std::string dir = SweepFolder("resume");
  const std::string sweep = WriteFile(dir, "sweep.pbtxt", kBandwidthScheduleSweep);
  for (const char* ext : {".csv", ".jsonl"}) {
    const std::string reference = Reference(sweep, dir + "/reference" + ext);
    const std::string out = dir + "/killed" + ext;
    const std::string killed = KillMidSweep(sweep, out, 8);
    INFO(ext << " file at the kill:\n" << killed);
    CHECK(absl::StartsWith(reference, killed.substr(0, killed.rfind('\n') + 1)));  // a prefix, in order
    const size_t rows_at_kill = Lines(killed).size();
    CHECK(rows_at_kill < Lines(reference).size());

    sweep::SweepJob job = Job(sweep, out, 2);
    job.resume = true;
    FakeEvaluator fake;
    absl::StatusOr<sweep::SweepOutcome> run = sweep::RunSweep(job, fake);
    REQUIRE(run.ok());
    CHECK(run->resumed + run->evaluated == 24);
    CHECK(fake.calls() == 24 - run->resumed);  // finished points are not run again
    CHECK(ReadFile(out) == reference);
  }
}

TEST_CASE("resume cuts an incomplete last row and refuses another sweep's file", "[sweep]") {
  const std::string dir = SweepFolder("resume");
  const std::string sweep = WriteFile(dir, "sweep.pbtxt", kBandwidthScheduleSweep);
  const std::string reference = Reference(sweep, dir + "/reference.csv");
  const std::vector<std::string> lines = Lines(reference);
  sweep::SweepJob job = Job(sweep, dir + "/out.csv");
  job.resume = true;

  SECTION("incomplete last line") {
    // Header, rows of points 0..9, and half of the row of point 10.
    std::string partial;
    for (int i = 0; i <= 10; ++i) partial += lines[i] + "\n";
    partial += lines[11].substr(0, lines[11].size() / 2);
    WriteFile(dir, "out.csv", partial);
    FakeEvaluator fake;
    absl::StatusOr<sweep::SweepOutcome> run = sweep::RunSweep(job, fake);
    REQUIRE(run.ok());
    CHECK(run->resumed == 10);
    CHECK(fake.calls() == 14);
    CHECK(ReadFile(dir + "/out.csv") == reference);
  }
  SECTION("killed inside the header, or before it") {
    for (const std::string& start : {std::string(), lines[0].substr(0, 7)}) {
      WriteFile(dir, "out.csv", start);
      FakeEvaluator fake;
      REQUIRE(sweep::RunSweep(job, fake).ok());
      CHECK(ReadFile(dir + "/out.csv") == reference);
    }
  }
  SECTION("a finished file runs nothing") {
    WriteFile(dir, "out.csv", reference);
    FakeEvaluator fake;
    REQUIRE(sweep::RunSweep(job, fake).ok());
    CHECK(fake.calls() == 0);
    CHECK(ReadFile(dir + "/out.csv") == reference);
  }
  SECTION("a file with rows of other points is refused and left alone") {
    const std::string other = lines[0] + "\n" + lines[2] + "\n";
    WriteFile(dir, "out.csv", other);
    FakeEvaluator fake;
    absl::StatusOr<sweep::SweepOutcome> run = sweep::RunSweep(job, fake);
    REQUIRE_FALSE(run.ok());
    CHECK_THAT(std::string(run.status().message()),
               Catch::Contains(
                   "out.csv: --resume: row 0 (line 2): expected the row of point 0 starting \"0,3,ONE_F_ONE_B,\""));
    CHECK(ReadFile(dir + "/out.csv") == other);
  }
  SECTION("a file with another header is refused") {
    WriteFile(dir, "out.csv", "a,b,c\n1,2,3\n");
    FakeEvaluator fake;
    CHECK_THAT(std::string(sweep::RunSweep(job, fake).status().message()),
               Catch::Contains("the first line is not this sweep's header"));
  }
}

TEST_CASE("sweep shards merged equal the unsharded sweep", "[sweep]") {
  const std::string dir = SweepFolder("shards");
  const std::string sweep = WriteFile(dir, "sweep.pbtxt", kBandwidthScheduleSweep);
  for (const char* ext : {".csv", ".jsonl"}) {
    const std::string reference = Reference(sweep, dir + "/reference" + ext);
    const sweep::RowFormat format = sweep::RowFormatForPath(ext);
    std::vector<std::string> shards;
    for (int k = 0; k < 5; ++k) {  // 24 points over 5 shards: uneven slices
      shards.push_back(absl::StrCat(dir, "/shard", k, ext));
      sweep::SweepJob job = Job(sweep, shards.back(), 2);
      job.shard = sweep::Shard{k, 5};
      FakeEvaluator fake;
      REQUIRE(sweep::RunSweep(job, fake).ok());
    }
    std::reverse(shards.begin(), shards.end());  // the order of the shards does not matter
    absl::StatusOr<std::string> merged = sweep::MergeSweepShards(format, shards, nullptr);
    REQUIRE(merged.ok());
    CHECK(*merged == reference);

    const std::vector<std::string> missing(shards.begin() + 1, shards.end());
    CHECK_THAT(std::string(sweep::MergeSweepShards(format, missing, nullptr).status().message()),
               Catch::Contains("is in no shard"));
    std::vector<std::string> twice = shards;
    twice.push_back(shards[1]);
    CHECK_THAT(std::string(sweep::MergeSweepShards(format, twice, nullptr).status().message()),
               Catch::Contains("appears twice"));
  }
}

TEST_CASE("shards of two sweeps with the same axes are refused by their fingerprints", "[sweep]") {
  const std::string dir = SweepFolder("two-sweeps");
  const std::string a = WriteFile(dir, "a.pbtxt", kBandwidthScheduleSweep);
  const std::string b =
      WriteFile(dir, "b.pbtxt", absl::StrReplaceAll(kBandwidthScheduleSweep, {{"name: \"test\"", "name: \"other\""}}));
  for (const char* ext : {".csv", ".jsonl"}) {
    const sweep::RowFormat format = sweep::RowFormatForPath(ext);
    const std::vector<std::string> shards = {absl::StrCat(dir, "/a0", ext), absl::StrCat(dir, "/b1", ext)};
    for (int k = 0; k < 2; ++k) {
      sweep::SweepJob job = Job(k == 0 ? a : b, shards[k]);
      job.shard = sweep::Shard{k, 2};
      FakeEvaluator fake;
      REQUIRE(sweep::RunSweep(job, fake).ok());
    }
    // Same header, points 0..23 once each: only the fingerprints tell the sweeps apart.
    absl::StatusOr<std::string> merged = sweep::MergeSweepShards(format, shards, nullptr);
    REQUIRE_FALSE(merged.ok());
    CHECK_THAT(std::string(merged.status().message()),
               Catch::Contains(absl::StrCat("b1", ext)) && Catch::Contains("the shards come from different sweeps"));
  }
  // Resuming sweep a over a file of sweep b, same points: refused, the file left alone.
  sweep::SweepJob b_job = Job(b, dir + "/b.csv");
  FakeEvaluator fake_b;
  REQUIRE(sweep::RunSweep(b_job, fake_b).ok());
  const std::string b_rows = ReadFile(dir + "/b.csv");
  sweep::SweepJob resume = Job(a, dir + "/b.csv");
  resume.resume = true;
  FakeEvaluator fake;
  absl::StatusOr<sweep::SweepOutcome> run = sweep::RunSweep(resume, fake);
  REQUIRE_FALSE(run.ok());
  CHECK_THAT(std::string(run.status().message()), Catch::Contains("not of this one"));
  CHECK(ReadFile(dir + "/b.csv") == b_rows);
  CHECK(fake.calls() == 0);
}

}  // namespace
}  // namespace hetsim::testing
