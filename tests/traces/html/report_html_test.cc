// The HTML reports (traces/html/): the run page's schedule holds one row per stage and one block per
// forward and backward, with hover titles, and is byte-identical across calls; the page is
// self-contained; chart helpers (ticks, numbers, escaping); the sweep CSV reader and its refusals.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/wall_limit.h"
#include "tests/sim/executor/executor_test_util.h"
#include "traces/html/page_internal.h"
#include "traces/html/run_html.h"
#include "traces/html/svg_internal.h"
#include "traces/html/sweep_html.h"
#include "traces/html/validate_html.h"
#include "traces/metrics.h"

namespace hetsim::testing {
namespace {

int Count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// The page of `plan` simulated on the two-island test cluster (max-min sharing).
std::string RunPageOf(const v1::Plan& plan) {
  const auto setup = MakeSetup(MakeInputs(TwoIslandCluster(2, 2, 10, 1000), plan), NetworkMode::kMaxMinFair);
  const auto run = MakeRun(*setup);
  const v1::Report report = hetsim::traces::BuildReport(*setup, run);
  return hetsim::traces::html::RunReportHtml({setup.get(), &run, &report, {}, {}});
}

TEST_CASE("run report: one schedule row per stage, one block per forward and backward", "[report]") {
  // Two stages of TP 2, 4 microbatches of 1F1B (the chrome trace test's run).
  const v1::Plan plan = MakePlan({{"fast", 0, 0, 2, 2, 1, 1.0, 2.0, 2}, {"fast", 1, 0, 2, 2, 1, 1.0, 2.0, 1}}, 4,
                                 v1::ONE_F_ONE_B, 1000000);
  const std::string html = RunPageOf(plan);
  CHECK(Count(html, "<g class=\"stage\"") == 2);
  CHECK(Count(html, "<rect class=\"b F\"") == 2 * 4);
  CHECK(Count(html, "<rect class=\"b B\"") == 2 * 4);
  CHECK(Count(html, "<rect class=\"b O\"") == 2);  // the optimizer step of each stage
  // Activations 0 -> 1 and gradients 1 -> 0 of each microbatch.
  CHECK(Count(html, "<rect class=\"b T\"") == 2 * 4);
  CHECK(Count(html, "<title>F3: forward of microbatch 3 on stage 1\n") == 1);
  CHECK(html == RunPageOf(plan));  // the same run draws the same bytes
  // Self-contained: no URL but the SVG namespace, no external script or stylesheet.
  std::string stripped = html;
  for (size_t at; (at = stripped.find("http://www.w3.org/2000/svg")) != std::string::npos;) stripped.erase(at, 26);
  CHECK(stripped.find("http") == std::string::npos);
  CHECK(stripped.find("<script src") == std::string::npos);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
}

TEST_CASE("run report: a mixed stage's replica groups get a table row each, with share, idle and OOM",
          "[report][replicas]") {
  // A saved report (hetsim report R.json): a mixed stage of an A100 group beside an L40S group, the L40S out of
  // memory, and a plain stage without groups.
  v1::Report report;
  report.set_plan_name("mixed");
  report.set_num_stages(2);
  v1::StageReport* mixed = report.add_stages();
  mixed->set_gpu_type("a100 (A100-80GB) + l40s (L40S)");
  const struct {
    const char* island;
    const char* type;
    uint32_t tp, dp;
    uint64_t share;
    double idle, peak;
    bool oom;
  } groups[] = {{"a100", "a100 (A100-80GB)", 4, 1, 8, 706.13, 62.67, false},
                {"l40s", "l40s (L40S)", 4, 2, 4, 0, 52.25, true}};
  for (const auto& g : groups) {
    v1::ReplicaGroupReport* line = mixed->add_replica_groups();
    line->set_island(g.island);
    line->set_gpu_type(g.type);
    line->set_tensor_parallel(g.tp);
    line->set_data_parallel(g.dp);
    line->set_micro_batch_share(g.share);
    line->set_idle_ms(g.idle);
    line->set_peak_memory_gib(g.peak);
    line->set_oom(g.oom);
  }
  report.add_stages()->set_index(1);
  const std::string html = hetsim::traces::html::RunReportHtml({nullptr, nullptr, &report, {}, {}});
  CHECK(Count(html, "<h2>Replica groups</h2>") == 1);
  CHECK(Count(html, "<td>a100 (A100-80GB)</td><td>a100</td><td>4 x 1</td><td>8</td>") == 1);
  CHECK(Count(html, "<td>706.1</td><td>62.67</td><td>no</td>") == 1);
  CHECK(Count(html, "<td>l40s (L40S)</td><td>l40s</td><td>4 x 2</td><td>4</td>") == 1);
  CHECK(Count(html, "<td>0.0</td><td>52.25</td><td>yes</td>") == 1);
  // A plan without mixed stages has no such table.
  mixed->clear_replica_groups();
  CHECK(Count(hetsim::traces::html::RunReportHtml({nullptr, nullptr, &report, {}, {}}), "Replica groups") == 0);
}

TEST_CASE("run report: a schedule past the page's block budget draws runs of operations as one block", "[report]") {
  // 2 stages x 30,000 microbatches: 120,000 forwards and backwards, 60,000 transfers (activations
  // 0 -> 1, gradients 1 -> 0) and a few gradient syncs, against a budget of 100,000 blocks: 2
  // operations per drawn block.
  const v1::Plan plan = MakePlan({{"fast", 0, 0, 2, 2, 1, 1.0, 2.0, 1}, {"fast", 1, 0, 2, 2, 1, 1.0, 2.0, 1}}, 30000,
                                 v1::ONE_F_ONE_B, 1000);
  const std::string html = RunPageOf(plan);
  CHECK(Count(html, "<rect class=\"b F\"") == 0);
  CHECK(Count(html, "<rect class=\"b M\"") == (120000 + 60000) / 2);
  CHECK(Count(html, "<rect class=\"b O\"") == 2);
  CHECK(Count(html, "<title>2 operations drawn as one block") == (120000 + 60000) / 2);
  CHECK(html.size() < 40'000'000);
}

TEST_CASE("report helpers: ticks, numbers, escaping", "[report]") {
  using hetsim::traces::html::NiceTicks;
  CHECK(NiceTicks(0, 10, 5) == std::vector<double>{0, 2, 4, 6, 8, 10});
  CHECK(NiceTicks(0, 3045.6, 8) == std::vector<double>{0, 500, 1000, 1500, 2000, 2500, 3000});
  CHECK(NiceTicks(0.2, 0.9, 4) == std::vector<double>{0.2, 0.4, 0.6, 0.8});
  // Ranges no chart should see still end, with few ticks: denormals, +-1 around 1e18, the whole
  // double range (its width overflows), a flat range.
  CHECK(NiceTicks(0, 1e-310, 6) == std::vector<double>{0, 1e-310});
  CHECK(NiceTicks(1e18, 1e18 + 1, 6).size() <= 2);
  CHECK(NiceTicks(-1.7e308, 1.7e308, 6) == std::vector<double>{-1.7e308});
  CHECK(NiceTicks(5, 5, 6) == std::vector<double>{5});
  CHECK(NiceTicks(0, 1, 1'000'000'000).size() <= 202);
  CHECK(hetsim::traces::html::Num(11279.4, 4) == "11279");
  CHECK(hetsim::traces::html::Num(0.314807, 3) == "0.315");
  CHECK(hetsim::traces::html::Num(2.5, 4) == "2.5");
  CHECK(hetsim::traces::html::Coord(-0.01) == "0");
  CHECK(hetsim::traces::html::HtmlEscape("a<b & \"c\"") == "a&lt;b &amp; &quot;c&quot;");
}

TEST_CASE("sweep CSV: quoted cells, the axes, and what is not a sweep's output", "[report]") {
  using hetsim::traces::html::ParseSweepCsv;
  const std::string header =
      "point,cluster.islands[1].node_count,plan.schedule,iteration_time_ms,tokens_per_s,status,message";
  const std::string csv = header + "\n0,4,H_1F1B,10.5,100,ok,\n1,8,H_1F1B,,,invalid,\"bad, really \"\"bad\"\"\"\n";
  auto t = ParseSweepCsv(csv, "s.csv");
  REQUIRE(t.ok());
  CHECK(t->axes == std::vector<std::string>{"cluster.islands[1].node_count", "plan.schedule"});
  REQUIRE(t->rows.size() == 2);
  CHECK(t->rows[1].back() == "bad, really \"bad\"");
  const std::string html = hetsim::traces::html::SweepReportHtml(*t, "dir/s.pbtxt");
  CHECK(html.find("hetsim sweep: s.pbtxt") != std::string::npos);
  CHECK(Count(html, "<svg class=\"chart\"") == 2);  // iteration time and tokens/s
  CHECK(html == hetsim::traces::html::SweepReportHtml(*t, "dir/s.pbtxt"));

  CHECK(ParseSweepCsv(csv, "s.csv", header).ok());
  auto other = ParseSweepCsv(csv, "s.csv", std::string("point,plan.num_microbatches,iteration_time_ms,status"));
  REQUIRE_FALSE(other.ok());
  CHECK_THAT(std::string(other.status().message()), Catch::StartsWith("s.csv: line 1: header"));
  auto not_sweep = ParseSweepCsv("name,time_ms\nfoo,1\n", "t.csv");
  REQUIRE_FALSE(not_sweep.ok());
  CHECK_THAT(std::string(not_sweep.status().message()), Catch::StartsWith("t.csv: line 1: not a sweep's output"));
  auto short_row = ParseSweepCsv(header + "\n0,4\n", "s.csv");
  REQUIRE_FALSE(short_row.ok());
  CHECK_THAT(std::string(short_row.status().message()), Catch::Contains("line 2: 2 cells"));
  CHECK_FALSE(ParseSweepCsv("", "e.csv").ok());
}

TEST_CASE("sweep page: OOM and failed points as such, categories as categories, axes without effect named",
          "[report]") {
  using hetsim::traces::html::ParseSweepCsv;
  const std::string header = "point,plan.gpu_preset,cluster.islands[1].node_count,iteration_time_ms,status,message";
  const std::string long_message(120, 'm');
  // Three GPU presets (categories); node_count moves nothing (a fixed plan); one point out of memory,
  // one infeasible.
  const std::string csv = header +
                          "\n0,A100-80GB,4,10,ok,\n1,A100-80GB,8,10,ok,\n2,H100-SXM,4,6,oom,needs more\n"
                          "3,H100-SXM,8,6,oom,needs more\n4,L40S,4,,infeasible," +
                          long_message + "\n5,L40S,8,,infeasible,x\n";
  auto t = ParseSweepCsv(csv, "s.csv");
  REQUIRE(t.ok());
  const std::string html = hetsim::traces::html::SweepReportHtml(*t, "s.pbtxt");
  // Category names as ticks, in the sweep's order; not a number line.
  CHECK(html.find(">A100-80GB</text>") != std::string::npos);
  CHECK(html.find(">L40S</text>") != std::string::npos);
  CHECK(html.find("plan.gpu_preset (A100-80GB") == std::string::npos);
  // The OOM points are a marker series of their own, in the legend; the failed ones are counted.
  CHECK(Count(html, "(out of memory)</title>") == 2);
  CHECK(html.find(">out of memory</text>") != std::string::npos);
  CHECK(html.find("2 points not simulated (2 infeasible)") != std::string::npos);
  // node_count changes no result: said; the preset does.
  CHECK(html.find("No result changes with cluster.islands[1].node_count") != std::string::npos);
  CHECK(html.find("No result changes with plan.gpu_preset") == std::string::npos);
  // A long message keeps its row one line high and shows whole on hover.
  CHECK(html.find("<td class=\"long\" title=\"" + long_message) != std::string::npos);
}

TEST_CASE("sweep page: idle GPUs that reshape the fabric by parts in 10^4 still move no result", "[report]") {
  // Issue 41: the bundled 512-GPU plan with its H100 island grown from 32 to 40 nodes runs 2957.31,
  // 2957.29, 2957.05 ms with a bubble of 21.540%, 21.540%, 21.570% (a fat tree of more switches); the page
  // must still say the plan cannot use them. 2957.05 is 0.0088% under 2957.31 and the bubble moves 0.03
  // points, both under 0.1 (percent of a value, points of a share); 10.02 against 10 is 0.2%, a bubble of
  // 0.217 against 0.215 is 0.2 points: both over it.
  const std::string header =
      "point,cluster.islands[1].node_count,iteration_time_ms,bubble_ratio,num_gpus,status,message";
  auto idle = hetsim::traces::html::ParseSweepCsv(
      header + "\n0,32,2957.31,0.21540,512,ok,\n1,36,2957.29,0.21540,512,ok,\n2,40,2957.05,0.21570,512,ok,\n", "s.csv");
  REQUIRE(idle.ok());
  CHECK(hetsim::traces::html::SweepReportHtml(*idle, "s.pbtxt")
            .find("No result changes with cluster.islands[1].node_count (none by more than 0.1%)") !=
        std::string::npos);
  for (const std::string rows :
       {"\n0,32,10,0.2,512,ok,\n1,36,10.02,0.2,512,ok,\n", "\n0,32,10,0.215,512,ok,\n1,36,10,0.217,512,ok,\n",
        // A text cell that differs (the status, a message) is a change.
        "\n0,32,10,0.2,512,ok,\n1,36,10,0.2,512,oom,x\n"}) {
    auto used = hetsim::traces::html::ParseSweepCsv(header + rows, "s.csv");
    REQUIRE(used.ok());
    CHECK(hetsim::traces::html::SweepReportHtml(*used, "s.pbtxt").find("No result changes") == std::string::npos);
  }
}

TEST_CASE("sweep page: the GPUs' memory capacity is a dashed line on the peak-memory chart", "[report]") {
  // Issue 41: a capacity line on memory charts. One capacity for every point: one flat line, named with it.
  const std::string header =
      "point,plan.tensor_parallel,iteration_time_ms,peak_memory_gib,memory_capacity_gib,status,message";
  auto one =
      hetsim::traces::html::ParseSweepCsv(header + "\n0,1,9,95,80,oom,x\n1,2,8,60,80,ok,\n2,4,7,40,80,ok,\n", "s.csv");
  REQUIRE(one.ok());
  const std::string flat = hetsim::traces::html::SweepReportHtml(*one, "s.pbtxt");
  CHECK(flat.find("GPU memory (80 GiB)") != std::string::npos);
  // Rows written before the column existed draw no line.
  auto old = hetsim::traces::html::ParseSweepCsv(
      "point,plan.tensor_parallel,iteration_time_ms,peak_memory_gib,status,message\n0,1,9,95,oom,x\n1,2,8,60,ok,\n",
      "s.csv");
  REQUIRE(old.ok());
  CHECK(hetsim::traces::html::SweepReportHtml(*old, "s.pbtxt").find("GPU memory") == std::string::npos);
}

TEST_CASE("sweep page: on GPU presets the capacity line is a step, each preset's capacity up to the next tick",
          "[report]") {
  // Issue 41: A100-40GB then A100-80GB on the x axis. A slope from 40 to 80 GiB would draw capacities no GPU
  // has; the step's corner sits at the second tick's x with the first preset's 40 GiB: three vertices,
  // (x0, y40) (x1, y40) (x1, y80).
  auto t = hetsim::traces::html::ParseSweepCsv(
      "point,cluster.gpu_types[0].preset,iteration_time_ms,peak_memory_gib,memory_capacity_gib,status,message\n"
      "0,A100-40GB,9,30,40,ok,\n1,A100-80GB,8,30,80,ok,\n",
      "s.csv");
  REQUIRE(t.ok());
  const std::string html = hetsim::traces::html::SweepReportHtml(*t, "s.pbtxt");
  const size_t title = html.find("<title>GPU memory</title>");
  REQUIRE(title != std::string::npos);
  const size_t start = html.rfind("points=\"", title) + 8;
  const std::vector<std::string> vertices = absl::StrSplit(html.substr(start, html.find('"', start) - start), ' ');
  REQUIRE(vertices.size() == 3);
  const std::vector<std::string> a = absl::StrSplit(vertices[0], ','), b = absl::StrSplit(vertices[1], ','),
                                 c = absl::StrSplit(vertices[2], ',');
  CHECK(b[0] == c[0]);  // the corner at the second tick
  CHECK(b[1] == a[1]);  // with the first preset's capacity
  CHECK(a[0] != b[0]);
  CHECK(a[1] != c[1]);
  CHECK(html.find("stroke-dasharray=\"5 3\"><title>GPU memory</title>") != std::string::npos);
}

TEST_CASE("sweep page: 20,000 distinct values on two axes draw in linear time, fingerprint as a sentence", "[report]") {
  // Ranks came from a linear search per row (10^4 x 10^4 comparisons per chart); the fingerprint, the same
  // in every row, is said once instead of filling a column.
  std::string csv = "point,a,b,iteration_time_ms,status,message,sweep_fingerprint\n";
  for (int i = 0; i < 20000; ++i) absl::StrAppendFormat(&csv, "%d,v%d,w%d,%d,ok,,0123456789abcdef\n", i, i, i % 2, i);
  auto t = hetsim::traces::html::ParseSweepCsv(csv, "s.csv");
  REQUIRE(t.ok());
  CHECK(t->axes == std::vector<std::string>{"a", "b"});
  const std::string html = hetsim::traces::html::SweepReportHtml(*t, "s.pbtxt");
  CHECK(html.find("Sweep fingerprint 0123456789abcdef.") != std::string::npos);
  CHECK(html.find("<th>sweep_fingerprint</th>") == std::string::npos);
  CHECK(html.find(">v19999<") != std::string::npos);
}

TEST_CASE("html: drawing stops at the calling thread's wall-clock limit", "[report][limits]") {
  hetsim::traces::html::Table table{{"n"}, {}, false, ""};
  for (int i = 0; i < 5000; ++i) table.rows.push_back({absl::StrCat("row", i)});
  hetsim::traces::html::Page whole("t", "s");
  whole.AddTable(table);
  CHECK(whole.Finish().find(">row4999<") != std::string::npos);
  const WallLimit past(1e-9, WallLimit::Clock::now() - std::chrono::seconds(1));
  const WallLimitScope scope(past);
  hetsim::traces::html::Page cut("t", "s");
  cut.AddTable(table);  // polled every 1,024 rows: stops there, and the command refuses the page
  CHECK(cut.Finish().find(">row4999<") == std::string::npos);
}

TEST_CASE("validate report: a point per stage and plan, error bars per stage", "[report]") {
  hetsim::traces::html::ValidateData d;
  d.plan_name = "p";
  d.cluster_name = "c";
  d.stages = {{0, 10, 11, 1, 1, 20, 20}, {1, 12, 12, 0, 0, 30, 33}};
  d.iteration_pred_ms = 100;
  d.iteration_sim_ms = 110;
  d.top_plans = {{"rank 1", 90, 95}};
  d.kendall_tau = 1.0;
  const std::string html = hetsim::traces::html::ValidateReportHtml(d);
  CHECK(Count(html, "class=\"identity\"") == 2);  // both scatters have the y = x line
  CHECK(html.find("stage 0: predicted 10.000 ms, simulated 11.000 ms (-9.1%)") != std::string::npos);
  CHECK(Count(html, "class=\"errorbar\"") == 2);  // the non-zero errors: stage 0 compute, stage 1 memory
  CHECK(html.find("Kendall tau 1.00") != std::string::npos);
}

}  // namespace

}  // namespace hetsim::testing
