// `hetsim fidelity` on the hand-made set tests/fidelity_data/hand.pbtxt: one-GPU plans on ideal
// hardware with measured stage times, so every prediction is a closed form. Model FLOPs per
// iteration = 4 samples x (100 + 200) GFLOP = 1.2 TFLOP; an iteration is 4 x (f + b) ms, so
// TFLOP/s per GPU = 1.2 / (4 (f + b) 1e-3) = 300 / (f + b in ms):
//   case  f + b   predicted  measured  error
//   a     2.5     120        100       +20%
//   b     3.0     100        100         0%
//   c     2.0     150        125       +20%
//   d     2.4     125        150       -16.667%
// MAPE = (20 + 0 + 20 + 16.667) / 4 = 14.1667%, max |error| 20% (a, the first of the two).
// Kendall tau-b, measured (100, 100, 125, 150) against predicted (120, 100, 150, 125): of the 6 pairs,
// (a,b) is tied in the measurement, (c,d) discordant, the other 4 concordant:
// (4 - 1) / sqrt((6 - 1)(6 - 0)) = 3 / sqrt(30).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "proto/io.h"
#include "service/evaluation/rank_stats.h"
#include "service/fidelity/calibration.h"
#include "service/fidelity/predict.h"
#include "service/fidelity/stats.h"
#include "sim/workload/model_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/proto/model_shapes.h"
#include "tests/service/sweep/sweep_test_util.h"

namespace {

namespace v1 = hetsim::v1;
using hetsim::testing::Hetsim;
using hetsim::testing::ReadFile;

const std::string kData = std::string(HETSIM_SOURCE_DIR) + "/tests/fidelity_data";

// `hetsim fidelity <file of tests/fidelity_data> --json`, which must succeed: the results.
v1::FidelityReport FidelityJson(const std::string& file) {
  const std::string dir = hetsim::testing::SweepFolder("fidelity-json");
  const auto r = Hetsim(dir, "fidelity " + kData + "/" + file + " --json " + dir + "/r.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  v1::FidelityReport report;
  REQUIRE(hetsim::proto::Load(dir + "/r.json", &report).ok());
  REQUIRE(report.sets_size() == 1);
  REQUIRE(report.sets(0).cases_size() == 1);
  return report;
}

}  // namespace

TEST_CASE("fidelity: Kendall tau-b counts concordant and discordant pairs, ties excluded", "[fidelity]") {
  using hetsim::evaluation::KendallTauB;
  CHECK(KendallTauB({1, 2, 3, 4}, {10, 20, 30, 40}) == Approx(1.0));
  CHECK(KendallTauB({1, 2, 3, 4}, {4, 3, 2, 1}) == Approx(-1.0));
  CHECK(KendallTauB({100, 100, 125, 150}, {120, 100, 150, 125}) == Approx(3 / std::sqrt(30.0)));
  // 3 values, one swap: C = 2, D = 1 over 3 pairs: 1/3.
  CHECK(KendallTauB({1, 2, 3}, {1, 3, 2}) == Approx(1.0 / 3));
  CHECK(KendallTauB({5}, {7}) == 0.0);
  CHECK(KendallTauB({5, 5}, {1, 2}) == 0.0);  // no ranking in the measurement
}

TEST_CASE("fidelity: Eq. 3 is hetsim's hardware FLOPs under full recomputation", "[fidelity]") {
  // An independent count: the cost model's per-layer FLOPs with full recompute, over the 39.1B GPT.
  v1::Model m;
  m.set_dtype(v1::FP16);
  hetsim::testing::SetTransformer(m, {.layers = 48, .hidden = 8192, .heads = 64, .seq = 2048, .vocab = 51200});
  auto cost = hetsim::testing::ModelCostOf(m, "model");
  REQUIRE(cost.ok());
  const double per_sample = cost->HardwareFlopPerSample(0, 50, hetsim::spec::Recompute::kFull);
  CHECK(hetsim::fidelity::MegatronEq3Flop(1536, 2048, 48, 8192, 51200) == Approx(1536 * per_sample).epsilon(1e-12));
}

TEST_CASE("fidelity: MODEL_FLOPS_CAUSAL counts the attention core at half", "[fidelity]") {
  // plan-gpt: 4 samples, 4 x (1 + 2) ms on one GPU and the step; the two blocks' model FLOPs per sample
  // 72 s l h^2 (1 + s/(6h) + V/(12 l h)), the attention core's share 12 s^2 h l (4 s^2 h forward a block).
  const double s = 2048, h = 1024, l = 2, V = 51200;
  const double model = 72 * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  const double core = 12 * s * s * h * l;
  v1::ValidationCase validation_case;
  validation_case.set_name("gpt");
  v1::ValidationTrainingRun& run = *validation_case.mutable_training_run();
  run.set_plan(kData + "/plan-gpt.pbtxt");
  run.set_cluster(kData + "/cluster-one-gpu.pbtxt");
  run.set_measured_tflops_per_gpu(1);
  run.set_flop_count(v1::MODEL_FLOPS);
  const auto full = hetsim::fidelity::PredictCase(validation_case, "cases[0]");
  REQUIRE(full.ok());
  run.set_flop_count(v1::MODEL_FLOPS_CAUSAL);
  const auto causal = hetsim::fidelity::PredictCase(validation_case, "cases[0]");
  REQUIRE(causal.ok());
  // The same simulation, counted two ways.
  const double seconds = full->predicted_time_ms() * 1e-3;
  CHECK(causal->predicted_time_ms() == full->predicted_time_ms());
  CHECK(seconds >= 12e-3);  // 4 microbatches of 1 + 2 ms, then the step
  CHECK(full->predicted() == Approx(4 * model / seconds / 1e12).epsilon(1e-12));
  CHECK(causal->predicted() == Approx(4 * (model - core / 2) / seconds / 1e12).epsilon(1e-12));
  // The cost model's own count of the core, the same closed form.
  v1::Model m;
  hetsim::testing::SetTransformer(m, {.layers = 2, .hidden = 1024, .heads = 16, .seq = 2048, .vocab = 51200});
  auto cost = hetsim::testing::ModelCostOf(m, "model");
  REQUIRE(cost.ok());
  CHECK(cost->AttentionCoreFlopPerSample() == Approx(core).epsilon(1e-15));
}

TEST_CASE("fidelity: the hand-made set's predictions, errors, MAPE and tau", "[fidelity]") {
  const std::string dir = hetsim::testing::SweepFolder("fidelity");
  const auto r =
      Hetsim(dir, "fidelity " + kData + "/hand.pbtxt --check --json " + dir + "/r.json --chart " + dir + "/c.svg");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);  // bounds 15% / 25% hold
  v1::FidelityReport report;
  REQUIRE(hetsim::proto::Load(dir + "/r.json", &report).ok());
  REQUIRE(report.sets_size() == 1);
  const v1::FidelitySet& set = report.sets(0);
  REQUIRE(set.cases_size() == 4);
  const double predicted[] = {120, 100, 150, 125}, error[] = {20, 0, 20, -100.0 / 6};
  for (int i = 0; i < 4; ++i) {
    INFO("case " << set.cases(i).name());
    CHECK(set.cases(i).predicted() == Approx(predicted[i]).epsilon(1e-9));
    CHECK(set.cases(i).error_percent() == Approx(error[i]).margin(1e-7));
    CHECK(set.cases(i).unit() == "TFLOP/s per GPU");
  }
  CHECK(set.cases(0).predicted_time_ms() == Approx(10.0));
  CHECK(set.mape_percent() == Approx((20 + 0 + 20 + 100.0 / 6) / 4));
  CHECK(set.max_abs_error_percent() == Approx(20));
  CHECK(set.worst_case() == "a");
  CHECK(set.kendall_tau() == Approx(3 / std::sqrt(30.0)));
  CHECK(set.violations().empty());
  const std::string out = ReadFile(dir + "/stdout.txt");
  CHECK_THAT(out, Catch::Contains("MAPE 14.17%"));
  CHECK_THAT(out, Catch::Contains("Kendall tau 0.548"));
  CHECK_THAT(out, Catch::Contains("bounds: MAPE <= 15%, every |error| <= 25%: met"));

  // The chart: axes with units, the identity line and both bands, every case labelled; same bytes twice.
  const std::string svg = ReadFile(dir + "/c.svg");
  CHECK_THAT(svg, Catch::StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK_THAT(svg, Catch::Contains("measured TFLOP/s per GPU"));
  CHECK_THAT(svg, Catch::Contains("predicted TFLOP/s per GPU"));
  CHECK_THAT(svg, Catch::Contains("predicted = measured"));
  CHECK_THAT(svg, Catch::Contains("within 3%"));
  CHECK_THAT(svg, Catch::Contains("within 6%"));
  for (const char* name : {">a<", ">b<", ">c<", ">d<"}) CHECK_THAT(svg, Catch::Contains(name));
  REQUIRE(Hetsim(dir, "fidelity -q " + kData + "/hand.pbtxt --chart " + dir + "/c2.svg").exit_code == 0);
  CHECK(ReadFile(dir + "/c2.svg") == svg);
}

TEST_CASE("fidelity: --check exits 1 and names every bound the set breaks", "[fidelity]") {
  const std::string dir = hetsim::testing::SweepFolder("fidelity-check");
  // Bounds MAPE 10% and 18% per case: MAPE 14.17%, cases a and c at 20% break them, d (16.7%) does not.
  auto r = Hetsim(dir, "fidelity " + kData + "/hand-tight.pbtxt --check");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("hand-tight.pbtxt: bounds not met: MAPE 14.17% > 10%"));
  CHECK_THAT(r.err, Catch::Contains("bounds not met: case a: |error| 20.00% > 18%"));
  CHECK_THAT(r.err, Catch::Contains("bounds not met: case c: |error| 20.00% > 18%"));
  CHECK_THAT(r.err, !Catch::Contains("case d"));
  // Without --check the same comparison is a report, not a failure.
  r = Hetsim(dir, "fidelity " + kData + "/hand-tight.pbtxt");
  CHECK(r.exit_code == 0);
  CHECK_THAT(ReadFile(dir + "/stdout.txt"), Catch::Contains("NOT met (3)"));
}

TEST_CASE("fidelity: a collective case is predicted in nccl-tests' bus bandwidth", "[fidelity]") {
  // 1 GiB all-reduce over the 8 GPUs of one ideal NVSwitch node (300 GB/s per GPU and direction): a
  // ring's bus bandwidth is the link rate less 14 step latencies of 1 us against ~6.3 ms, within 1%.
  const v1::FidelityReport report = FidelityJson("collective.pbtxt");
  const v1::FidelityCase& c = report.sets(0).cases(0);
  CHECK(c.unit() == "GB/s bus bandwidth");
  CHECK(c.predicted() == Approx(300).epsilon(0.01));
  CHECK(c.error_percent() == Approx((c.predicted() - 240) / 240 * 100));
}

TEST_CASE("fidelity: a training run measured in tokens per second per GPU", "[fidelity]") {
  // plan-a: 4 samples of 1024 tokens in 4 x (1 + 1.5) ms on one GPU, 409,600 tokens/s.
  const v1::FidelityReport report = FidelityJson("tokens.pbtxt");
  const v1::FidelityCase& c = report.sets(0).cases(0);
  CHECK(c.unit() == "tokens/s per GPU");
  CHECK(c.measured() == 400000);
  CHECK(c.predicted() == Approx(409600).epsilon(1e-9));
  CHECK(c.error_percent() == Approx(2.4).epsilon(1e-9));
}

TEST_CASE("fidelity: a mixed stage's setup counts the replicas of every group", "[fidelity]") {
  // examples/plan-mixed-replicas: 2 stages, each 1 A100 replica of TP 4 and 2 L40S replicas of TP 4.
  const v1::FidelityReport report = FidelityJson("mixed.pbtxt");
  CHECK_THAT(report.sets(0).cases(0).setup(), Catch::StartsWith("24 GPUs: TP 4 x PP 2 x DP 3 (mixed), "));
}

TEST_CASE("fidelity: reads validation/nccl/measured.csv's list as collective cases", "[fidelity]") {
  const v1::FidelityReport report = FidelityJson("nccl.csv");
  const v1::FidelityCase& c = report.sets(0).cases(0);
  CHECK(c.name() == "cluster-dgx-ideal all-reduce 1073741824 B 0-7");
  CHECK(c.measured() == 240);
  CHECK(c.predicted() == Approx(300).epsilon(0.01));
}

TEST_CASE("fidelity: sets that measure different quantities cannot share a chart", "[fidelity]") {
  const std::string dir = hetsim::testing::SweepFolder("fidelity-units");
  const auto r = Hetsim(dir, "fidelity " + kData + "/hand.pbtxt " + kData + "/collective.pbtxt --chart " + dir +
                                 "/c.svg --json " + dir + "/r.json");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--chart: the cases measure different quantities"));
  CHECK_FALSE(std::filesystem::exists(dir + "/c.svg"));
  CHECK_FALSE(std::filesystem::exists(dir + "/r.json"));
  CHECK(ReadFile(dir + "/stdout.txt").empty());
}

namespace {

// A case of a hand-built set: measured and predicted throughput, and the probes of a run whose time is
// exactly linear in the calibrated values (calibrate::OverheadProbe): `gemm_s` of GEMM time and
// `passes` passes, predicted at `time_s`.
hetsim::v1::FidelityCase HandCase(const std::string& name, const std::string& group, double measured,
                                  double predicted) {
  hetsim::v1::FidelityCase c;
  c.set_name(name);
  c.set_group(group);
  c.set_measured(measured);
  c.set_predicted(predicted);
  c.set_error_percent((predicted - measured) / measured * 100);
  return c;
}

}  // namespace

TEST_CASE("fidelity: groups rank their plans, and the pick's regret is measured", "[fidelity]") {
  v1::FidelitySet set;
  // Group g1: measured best c (130), predicted best b (wrong: b measured 120, 1 - 120/130 = 7.69% regret).
  *set.add_cases() = HandCase("a", "g1", 100, 100);
  *set.add_cases() = HandCase("b", "g1", 120, 140);
  *set.add_cases() = HandCase("c", "g1", 130, 135);
  // Group g2: right pick; a lone case in g3 is no group.
  *set.add_cases() = HandCase("d", "g2", 50, 55);
  *set.add_cases() = HandCase("e", "g2", 60, 62);
  *set.add_cases() = HandCase("f", "g3", 10, 12);
  hetsim::fidelity::SummarizeSet(&set);
  REQUIRE(set.groups_size() == 2);
  CHECK(set.groups(0).name() == "g1");
  CHECK(set.groups(0).measured_best() == "c");
  CHECK(set.groups(0).predicted_best() == "b");
  CHECK_FALSE(set.groups(0).top1_agrees());
  CHECK(set.groups(0).regret_percent() == Approx((1 - 120.0 / 130) * 100));
  CHECK(set.groups(0).kendall_tau() == Approx(1.0 / 3));  // (a,b), (a,c) concordant, (b,c) discordant
  CHECK(set.groups(1).top1_agrees());
  CHECK(set.groups(1).regret_percent() == 0);
  CHECK(set.top1_agreement() == Approx(0.5));
  CHECK(set.group_kendall_tau() == Approx((1.0 / 3 + 1) / 2));
  CHECK(set.mean_regret_percent() == Approx((1 - 120.0 / 130) * 50));
  double signed_sum = 0;
  for (const auto& c : set.cases()) signed_sum += c.error_percent();
  CHECK(set.signed_error_percent() == Approx(signed_sum / 6));
}

TEST_CASE("fidelity: a set's ranking bounds: the share of groups whose top plan is right, the mean regret",
          "[fidelity]") {
  // Group "pair1": the mixed cluster measured slower, predicted slower (right); "pair2": measured
  // slower, predicted faster (wrong, the pick measured 10% slower): half the groups right, mean regret 5%.
  v1::FidelitySet set;
  *set.add_cases() = HandCase("homo1", "pair1", 100, 150);
  *set.add_cases() = HandCase("het1", "pair1", 90, 140);
  *set.add_cases() = HandCase("homo2", "pair2", 100, 150);
  *set.add_cases() = HandCase("het2", "pair2", 90, 160);
  // Each bound met at the set's figure, then broken by a tighter one.
  const struct {
    void (v1::ValidationBounds::*set_bound)(double);
    double met, broken;
    const char* violation;
  } kBounds[] = {
      {&v1::ValidationBounds::set_min_top1_agreement, 0.5, 0.75, "top plan right in 0.500 of the groups < 0.75"},
      {&v1::ValidationBounds::set_max_mean_regret_percent, 5, 4, "mean regret 5.00% > 4%"},
  };
  for (const auto& b : kBounds) {
    set.clear_bounds();
    (set.mutable_bounds()->*b.set_bound)(b.met);
    hetsim::fidelity::SummarizeSet(&set);
    CHECK(set.top1_agreement() == Approx(0.5));
    CHECK(set.mean_regret_percent() == Approx(5));
    CHECK(set.violations().empty());
    (set.mutable_bounds()->*b.set_bound)(b.broken);
    hetsim::fidelity::SummarizeSet(&set);
    REQUIRE(set.violations_size() == 1);
    CHECK(set.violations(0) == b.violation);
  }
}

TEST_CASE("fidelity: calibration from k runs predicts the held-out runs of a set the values explain",
          "[fidelity][calibrate]") {
  // Eight runs measured on a machine whose GEMMs are 6% slower and whose iterations cost 40 ms more
  // than the simulation's: predictions before calibration are 3-9% optimistic.
  v1::FidelitySet set;
  set.mutable_bounds()->set_max_calibrated_mape_percent(1);
  for (int i = 0; i < 8; ++i) {
    const double t = 1.0 + 0.3 * i, gemm_s = 0.4 + 0.25 * i, passes = 16 + 8 * (i % 3);
    const double measured_s = t + 0.06 * gemm_s + 0.04;
    v1::FidelityCase c = HandCase(absl::StrCat("r", i), "g", 100 / measured_s, 100 / t);
    c.set_predicted_time_ms(t * 1e3);
    c.set_measured_time_ms(measured_s * 1e3);
    c.set_gemm_probe_time_ms((t + 0.1 * gemm_s) * 1e3);
    c.set_pass_probe_time_ms((t + 1e-3 * passes) * 1e3);
    c.set_gemm_scale_min(-0.3);
    c.set_iteration_overhead_ms(20);
    c.set_pass_overhead_us(30);
    *set.add_cases() = c;
  }
  hetsim::fidelity::EvaluateCalibration(&set);
  hetsim::fidelity::SummarizeSet(&set);
  REQUIRE(set.calibrations_size() == 3);
  CHECK(set.mape_percent() > 3);
  for (const v1::FidelityCalibration& c : set.calibrations()) {
    INFO("k " << c.k());
    CHECK(c.choices() == (c.k() == 1 ? 8 : c.k() == 2 ? 28 : 56));
    CHECK(c.mape_percent() < set.mape_percent());
    CHECK(c.gemm_scale() > 0);
  }
  // Three runs that agree bring the held-out MAPE under 1%: the bound holds.
  CHECK(set.calibrations(2).mape_percent() < 1);
  CHECK(set.violations().empty());
  // Without probes (a plain `hetsim fidelity` run) there is nothing to evaluate, and the bound says so.
  for (auto& c : *set.mutable_cases()) c.clear_gemm_probe_time_ms();
  hetsim::fidelity::EvaluateCalibration(&set);
  hetsim::fidelity::SummarizeSet(&set);
  CHECK(set.calibrations().empty());
  REQUIRE(set.violations_size() == 1);
  CHECK_THAT(set.violations(0), Catch::Contains("not evaluated"));
}
