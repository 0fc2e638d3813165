// The overhead fit of `hetsim calibrate --iterations` and `hetsim fidelity --calibration`
// (service/calibrate/overhead_fit.h) on runs whose times are exactly linear in the six values:
// without a prior it recovers the values that made them; with the default prior a few runs move the
// values part of the way and many runs all of it; it says when a value is pinned at its bound or the fit
// explains little; the runs choose which values move by leave-one-out error.
#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <vector>

#include "service/calibrate/overhead_fit.h"

namespace hetsim::calibrate {
namespace {

// A run simulated at `simulated` s, whose GEMMs are `gemm_s` of it and which has `passes` passes on its
// critical path, measured as if the true values were `truth`.
OverheadProbe LinearRun(double simulated, double gemm_s, double passes, const OverheadValues& truth,
                        double network_s = 0) {
  OverheadProbe p;
  p.simulated = simulated;
  p.gemm_probe = simulated + kGemmProbe * gemm_s;
  p.pass_probe = simulated + kPassProbe * passes;
  p.network_probe = simulated + kNetworkProbe * network_s;
  p.measured = simulated + truth[0] * gemm_s + truth[1] + truth[2] * passes + truth[3] * network_s;
  return p;
}

const OverheadBounds kBounds{-0.3, 1.0, 0.05, 200e-6};
// Widths so wide the prior weighs nothing: the plain least-squares fit.
const hetsim::calibrate::OverheadPrior kFlat{1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 0.02};

}  // namespace

TEST_CASE("overhead fit: three runs recover the GEMM scale and both overheads exactly", "[calibrate]") {
  const OverheadValues truth = {0.08, 0.12, 400e-6, 0};
  const std::vector<OverheadProbe> runs = {LinearRun(2.0, 1.5, 64, truth), LinearRun(1.1, 0.7, 32, truth),
                                           LinearRun(4.0, 3.4, 40, truth), LinearRun(0.5, 0.2, 128, truth)};
  const auto fit = FitOverheadValues(std::span(runs).first(3), kBounds, kFlat);
  CHECK(fit.x[0] == Approx(truth[0]).epsilon(1e-9));
  CHECK(fit.x[1] == Approx(truth[1]).epsilon(1e-9));
  CHECK(fit.x[2] == Approx(truth[2]).epsilon(1e-9));
  CHECK(fit.cost_after == Approx(0).margin(1e-16));
  CHECK(fit.explained() == Approx(1));
  // The held-out fourth run is predicted exactly.
  CHECK(PredictWith(runs[3], fit.x) == Approx(runs[3].measured).epsilon(1e-12));
  CHECK(FitConcerns(fit, kBounds).empty());
}

TEST_CASE("overhead fit: the prior lets one run move the values part of the way, many runs all of it", "[calibrate]") {
  const OverheadValues truth = {0.06, 0.05, 100e-6, 0};
  std::vector<OverheadProbe> runs;
  // Runs of 1-5 s with 200-1100 passes: each value changes them by a few percent.
  for (int i = 0; i < 40; ++i) runs.push_back(LinearRun(1.0 + 0.1 * i, 0.3 + 0.07 * i, 200 + 150 * (i % 7), truth));
  const auto one = FitOverheadValues(std::span(runs).first(1), kBounds);
  // Every value moves the way the run asks, and the run is explained only in part.
  for (int j = 0; j < 3; ++j) {
    INFO("value " << j);
    CHECK(one.x[j] > 0);
  }
  CHECK(PredictWith(runs[0], one.x) < runs[0].measured);
  CHECK(PredictWith(runs[0], one.x) > runs[0].simulated);
  // Forty runs that agree outweigh the prior.
  const auto many = FitOverheadValues(runs, kBounds);
  CHECK(many.x[0] == Approx(truth[0]).epsilon(0.05));
  CHECK(many.x[1] == Approx(truth[1]).epsilon(0.05));
  CHECK(many.x[2] == Approx(truth[2]).epsilon(0.05));
  CHECK(many.explained() > 0.99);
}

TEST_CASE("overhead fit: a value the runs push past its bound is pinned there, and said so", "[calibrate]") {
  // The runs ask for GEMMs 50% faster; the cluster's efficiency allows only 30% (bound -0.3).
  const OverheadValues truth = {-0.5, 0, 0, 0};
  const std::vector<OverheadProbe> runs = {LinearRun(2.0, 1.8, 16, truth)};
  const auto fit = FitOverheadValues(runs, kBounds);
  CHECK(fit.x[0] == Approx(-0.3));
  CHECK(fit.pinned[0]);
  const auto concerns = FitConcerns(fit, kBounds);
  REQUIRE(!concerns.empty());
  CHECK_THAT(concerns[0], Catch::Contains("GEMM time scale pinned at its lower bound"));
  // An overhead cannot go below zero: the iteration overhead's lower bound is the cluster's -0.05 s.
  const OverheadValues faster = {0, -0.2, 0, 0};
  const std::vector<OverheadProbe> two = {LinearRun(2.0, 0, 16, faster), LinearRun(1.0, 0, 8, faster)};
  const auto clipped = FitOverheadValues(two, kBounds);
  CHECK(clipped.x[1] == Approx(-0.05));
  CHECK(clipped.pinned[1]);
}

TEST_CASE("overhead fit: runs no value can explain are called a weak fit", "[calibrate]") {
  // Same work, same passes, measured 10% apart both ways: no cluster-wide value moves one without the other.
  std::vector<OverheadProbe> runs = {LinearRun(1.0, 0.5, 10, {0, 0, 0, 0}), LinearRun(1.0, 0.5, 10, {0, 0, 0, 0})};
  runs[0].measured = 1.1;
  runs[1].measured = 0.9;
  const auto fit = FitOverheadValues(runs, kBounds);
  CHECK(fit.explained() < 0.25);
  const auto concerns = FitConcerns(fit, kBounds);
  REQUIRE(!concerns.empty());
  CHECK_THAT(concerns.back(), Catch::Contains("the fit explains"));
}

TEST_CASE("overhead fit: the runs choose the values that predict the run left out", "[calibrate]") {
  // Inter-node transfers 60% slower than the cluster says, the runs' exposed transfer time 5-40% of them.
  const OverheadValues truth = {0, 0, 0, 0.6};
  std::vector<OverheadProbe> runs;
  for (int i = 0; i < 5; ++i) runs.push_back(LinearRun(1.0 + 0.2 * i, 0.5 + 0.05 * i, 32, truth, 0.05 + 0.1 * i));
  const OverheadFit fit = ChooseAndFit(std::span(runs).first(4), kBounds, kFlat);
  CHECK(ValueNames(fit.free) == "inter-node time scale");
  CHECK(fit.x[3] == Approx(0.6).epsilon(1e-6));
  CHECK(fit.held_out_error == Approx(0).margin(1e-9));
  CHECK(PredictWith(runs[4], fit.x) == Approx(runs[4].measured).epsilon(1e-9));
  // Three runs are too few to choose from: every value moves, held by its prior.
  const OverheadFit three = ChooseAndFit(std::span(runs).first(3), kBounds);
  CHECK(three.free == kAllValues);
  CHECK(three.held_out_error == -1);
}

TEST_CASE("overhead fit: runs whose errors follow no value choose none and leave the cluster as it stands",
          "[calibrate]") {
  // Alike runs measured 8% slow and 8% fast: whatever some say, the others contradict.
  std::vector<OverheadProbe> runs(4, LinearRun(1.0, 0.5, 10, {0, 0, 0, 0}, 0.1));
  for (int i = 0; i < 4; ++i) runs[i].measured = i % 2 ? 0.92 : 1.08;
  const OverheadFit fit = ChooseAndFit(runs, kBounds);
  CHECK(ValueNames(fit.free) == "none");
  CHECK(fit.x == OverheadValues{0, 0, 0, 0});
  CHECK(fit.held_out_error == Approx(0.08).epsilon(1e-9));
}

TEST_CASE("overhead fit: the candidate sets and their names", "[calibrate]") {
  const std::vector<ValueMask> candidates = CandidateValues();
  REQUIRE(candidates.size() == 13);
  CHECK(ValueNames(candidates.front()) == "none");
  CHECK(ValueNames(candidates[7]) == "GEMM time scale + iteration overhead");
  CHECK(candidates.back() == kAllValues);
}

}  // namespace hetsim::calibrate
