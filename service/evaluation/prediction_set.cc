#include "service/evaluation/prediction_set.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "service/evaluation/rank_stats.h"
#include "service/evaluation/scatter_chart.h"

namespace hetsim::evaluation {
namespace {

namespace v1 = hetsim::v1;

// At most this many misranked pairs are listed (the count of the rest follows).
constexpr int kMaxMisrankedLines = 20;

// "prediction.stages[3].forward_ms" -> "forward_ms".
std::string QuantityKind(const std::string& path) {
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

void SummarizeQuantities(v1::PlanValidationReport* report) {
  struct Sum {
    int count = 0, relative = 0;
    double abs_sum = 0, max = 0;
  };
  std::map<std::string, Sum> kinds;  // ordered: output is deterministic
  std::vector<std::string> order;
  for (const v1::PlanValidation& p : report->plans()) {
    for (const v1::QuantityError& e : p.errors()) {
      const std::string kind = QuantityKind(e.quantity());
      if (!kinds.contains(kind)) order.push_back(kind);
      Sum& s = kinds[kind];
      ++s.count;
      if (e.simulated() == 0) continue;  // no relative error: listed, not averaged
      ++s.relative;
      s.abs_sum += std::fabs(e.error_percent());
      s.max = std::max(s.max, std::fabs(e.error_percent()));
    }
  }
  for (const std::string& kind : order) {
    const Sum& s = kinds[kind];
    v1::QuantitySummary* q = report->add_quantities();
    q->set_quantity(kind);
    q->set_count(s.count);
    q->set_mape_percent(s.relative > 0 ? s.abs_sum / s.relative : 0);
    q->set_max_abs_error_percent(s.max);
  }
}

// A plan's terms averaged over its stages, predicted and simulated: each stage's four terms add up to
// the iteration, so their means do too, and two plans with different stage counts compare. Empty
// unless every stage predicts all four terms.
std::map<std::string, std::pair<double, double>> MeanTerms(const v1::PlanValidation& p) {
  std::map<std::string, std::pair<double, double>> mean;
  for (const v1::StageTermErrors& s : p.stages()) {
    if (s.terms_size() != 4) return {};
    for (const v1::QuantityError& t : s.terms()) {
      mean[t.quantity()].first += t.predicted() / p.stages_size();
      mean[t.quantity()].second += t.simulated() / p.stages_size();
    }
  }
  return mean;
}

// Why `fast` (predicted faster) is simulated slower than `slow`: the term whose predicted difference
// misses its simulated difference most in the direction of the flip.
std::string WhyMisranked(const v1::PlanValidation& fast, const v1::PlanValidation& slow) {
  const auto a = MeanTerms(fast), b = MeanTerms(slow);
  if (a.empty() || b.empty()) return "";
  std::string worst;
  double worst_miss = 0, predicted = 0, simulated = 0;
  for (const auto& [term, values] : a) {
    if (!b.contains(term)) return "";
    const double dp = values.first - b.at(term).first, ds = values.second - b.at(term).second;
    if (dp - ds < worst_miss) {
      worst_miss = dp - ds;
      worst = term;
      predicted = dp;
      simulated = ds;
    }
  }
  if (worst.empty()) return "";
  return absl::StrFormat("; %s flips it: %+.1f ms predicted, %+.1f ms simulated (stage mean)", worst, predicted,
                         simulated);
}

void AddMisranked(v1::PlanValidationReport* report, const std::vector<int>& ranked) {
  int listed = 0, total = 0;
  for (size_t a = 0; a < ranked.size(); ++a) {
    for (size_t b = a + 1; b < ranked.size(); ++b) {
      const v1::PlanValidation& x = report->plans(ranked[a]);
      const v1::PlanValidation& y = report->plans(ranked[b]);
      const double dp = x.predicted_iteration_ms() - y.predicted_iteration_ms();
      const double ds = x.simulated_iteration_ms() - y.simulated_iteration_ms();
      if (dp * ds >= 0) continue;
      ++total;
      if (listed == kMaxMisrankedLines) continue;
      ++listed;
      const v1::PlanValidation& fast = dp < 0 ? x : y;  // the one the planner prefers
      const v1::PlanValidation& slow = dp < 0 ? y : x;
      report->add_misranked(absl::StrFormat("%s before %s: predicted %.3f < %.3f ms, simulated %.3f > %.3f ms%s",
                                            fast.plan_name(), slow.plan_name(), fast.predicted_iteration_ms(),
                                            slow.predicted_iteration_ms(), fast.simulated_iteration_ms(),
                                            slow.simulated_iteration_ms(), WhyMisranked(fast, slow)));
    }
  }
  if (total > listed) report->add_misranked(absl::StrFormat("... and %d more pairs", total - listed));
}

}  // namespace

void SummarizePredictions(v1::PlanValidationReport* report) {
  report->clear_quantities();
  report->clear_misranked();
  SummarizeQuantities(report);
  std::vector<int> ranked;  // plans with a predicted iteration time, in file order
  std::vector<double> predicted, simulated;
  for (int i = 0; i < report->plans_size(); ++i) {
    const v1::PlanValidation& p = report->plans(i);
    const bool has = std::any_of(p.errors().begin(), p.errors().end(), [](const v1::QuantityError& e) {
      return e.quantity() == "prediction.iteration_time_ms";
    });
    if (!has) continue;
    ranked.push_back(i);
    predicted.push_back(p.predicted_iteration_ms());
    simulated.push_back(p.simulated_iteration_ms());
  }
  if (ranked.empty()) return;
  const std::vector<double> rank_p = AverageRanks(predicted), rank_s = AverageRanks(simulated);
  double sum = 0, worst = -1;
  size_t best_p = 0, best_s = 0;
  for (size_t k = 0; k < ranked.size(); ++k) {
    v1::PlanValidation* p = report->mutable_plans(ranked[k]);
    p->set_predicted_rank(static_cast<uint32_t>(std::floor(rank_p[k])));
    p->set_simulated_rank(static_cast<uint32_t>(std::floor(rank_s[k])));
    const double e = std::fabs(ErrorPercent(predicted[k], simulated[k]));
    sum += e;
    if (e > worst) {
      worst = e;
      report->set_worst_plan(p->plan_name());
    }
    if (predicted[k] < predicted[best_p]) best_p = k;
    if (simulated[k] < simulated[best_s]) best_s = k;
  }
  report->set_mape_percent(sum / static_cast<double>(ranked.size()));
  report->set_max_abs_error_percent(worst);
  report->set_kendall_tau(KendallTauB(predicted, simulated));
  report->set_spearman_rho(SpearmanRho(predicted, simulated));
  report->set_predicted_best(report->plans(ranked[best_p]).plan_name());
  report->set_simulated_best(report->plans(ranked[best_s]).plan_name());
  report->set_best_matches(simulated[best_p] == simulated[best_s]);
  report->set_best_regret_percent(ErrorPercent(simulated[best_p], simulated[best_s]));
  AddMisranked(report, ranked);
}

absl::StatusOr<std::string> PredictionChartSvg(const v1::PlanValidationReport& report) {
  ScatterChart chart;
  chart.reference_name = "simulated";
  chart.unit = "iteration time (ms)";
  chart.inner_band_percent = 10;
  chart.outer_band_percent = 25;
  chart.summaries.push_back(absl::StrFormat("MAPE %.1f%%, max |error| %.1f%%, Kendall tau %.2f, Spearman rho %.2f",
                                            report.mape_percent(), report.max_abs_error_percent(), report.kendall_tau(),
                                            report.spearman_rho()));
  chart.summaries.push_back(
      report.best_matches()
          ? absl::StrFormat("the planner's best plan, %s, is the simulated best", report.predicted_best())
          : absl::StrFormat("the planner picks %s, %.1f%% slower than the simulated best, %s", report.predicted_best(),
                            report.best_regret_percent(), report.simulated_best()));
  for (const v1::PlanValidation& p : report.plans()) {
    if (p.predicted_rank() == 0) continue;
    chart.points.push_back({p.plan_name(), p.simulated_iteration_ms(), p.predicted_iteration_ms(),
                            ErrorPercent(p.predicted_iteration_ms(), p.simulated_iteration_ms())});
  }
  if (chart.points.empty()) return absl::InvalidArgumentError("--chart: no plan predicts its iteration time");
  return ScatterChartSvg(chart);
}

}  // namespace hetsim::evaluation
