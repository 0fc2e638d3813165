#include "service/fidelity/stats.h"

#include <cmath>

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "service/evaluation/rank_stats.h"

namespace hetsim::fidelity {
namespace {

namespace v1 = hetsim::v1;

// The groups of at least two cases, in the order their first case appears; every value is "higher is
// better" (throughput, bus bandwidth), so the best case is the largest.
void SummarizeGroups(v1::FidelitySet* set) {
  set->clear_groups();
  std::vector<std::string> order;
  absl::flat_hash_map<std::string, std::vector<const v1::FidelityCase*>> members;
  for (const v1::FidelityCase& c : set->cases()) {
    auto [it, fresh] = members.try_emplace(c.group());
    if (fresh) order.push_back(c.group());
    it->second.push_back(&c);
  }
  double tau = 0, agree = 0, regret = 0;
  for (const std::string& name : order) {
    const std::vector<const v1::FidelityCase*>& cases = members[name];
    if (cases.size() < 2) continue;
    std::vector<double> measured, predicted;
    const v1::FidelityCase *measured_best = cases[0], *predicted_best = cases[0];
    for (const v1::FidelityCase* c : cases) {
      measured.push_back(c->measured());
      predicted.push_back(c->predicted());
      if (c->measured() > measured_best->measured()) measured_best = c;
      if (c->predicted() > predicted_best->predicted()) predicted_best = c;
    }
    v1::FidelityGroup* g = set->add_groups();
    g->set_name(name);
    g->set_cases(static_cast<uint32_t>(cases.size()));
    g->set_kendall_tau(evaluation::KendallTauB(measured, predicted));
    g->set_measured_best(measured_best->name());
    g->set_predicted_best(predicted_best->name());
    // Ties in the measurement: any case measured as fast as the best is a right pick.
    g->set_top1_agrees(predicted_best->measured() >= measured_best->measured());
    g->set_regret_percent((1 - predicted_best->measured() / measured_best->measured()) * 100);
    tau += g->kendall_tau();
    agree += g->top1_agrees();
    regret += g->regret_percent();
  }
  const int n = set->groups_size();
  set->set_group_kendall_tau(n ? tau / n : 0);
  set->set_top1_agreement(n ? agree / n : 0);
  set->set_mean_regret_percent(n ? regret / n : 0);
}

}  // namespace

void SummarizeSet(hetsim::v1::FidelitySet* set) {
  std::vector<double> measured, predicted;
  double sum = 0, worst = -1;
  for (const hetsim::v1::FidelityCase& c : set->cases()) {
    const double e = std::fabs(c.error_percent());
    sum += e;
    if (e > worst) {
      worst = e;
      set->set_worst_case(c.name());
    }
    measured.push_back(c.measured());
    predicted.push_back(c.predicted());
  }
  set->set_mape_percent(set->cases().empty() ? 0 : sum / set->cases_size());
  set->set_max_abs_error_percent(std::max(0.0, worst));
  set->set_kendall_tau(evaluation::KendallTauB(measured, predicted));
  double signed_sum = 0;
  for (const v1::FidelityCase& c : set->cases()) signed_sum += c.error_percent();
  set->set_signed_error_percent(set->cases().empty() ? 0 : signed_sum / set->cases_size());
  SummarizeGroups(set);

  set->clear_violations();
  const hetsim::v1::ValidationBounds& b = set->bounds();
  if (b.max_mape_percent() > 0 && set->mape_percent() > b.max_mape_percent()) {
    set->add_violations(absl::StrFormat("MAPE %.2f%% > %g%%", set->mape_percent(), b.max_mape_percent()));
  }
  if (b.max_abs_error_percent() > 0) {
    for (const hetsim::v1::FidelityCase& c : set->cases()) {
      if (std::fabs(c.error_percent()) > b.max_abs_error_percent()) {
        set->add_violations(absl::StrFormat("case %s: |error| %.2f%% > %g%%", c.name(), std::fabs(c.error_percent()),
                                            b.max_abs_error_percent()));
      }
    }
  }
  if (b.min_top1_agreement() > 0 && set->top1_agreement() < b.min_top1_agreement()) {
    set->add_violations(
        absl::StrFormat("top plan right in %.3f of the groups < %g", set->top1_agreement(), b.min_top1_agreement()));
  }
  if (b.max_mean_regret_percent() > 0 && set->mean_regret_percent() > b.max_mean_regret_percent()) {
    set->add_violations(
        absl::StrFormat("mean regret %.2f%% > %g%%", set->mean_regret_percent(), b.max_mean_regret_percent()));
  }
  if (b.max_calibrated_mape_percent() > 0) {
    const v1::FidelityCalibration* three = nullptr;
    for (const v1::FidelityCalibration& c : set->calibrations())
      if (c.k() == 3) three = &c;
    if (three == nullptr) {
      set->add_violations(
          "calibrated MAPE (k = 3) not evaluated: the set needs at least 4 training runs, each with its calibration "
          "probes");
    } else if (three->mape_percent() > b.max_calibrated_mape_percent()) {
      set->add_violations(absl::StrFormat("calibrated MAPE (k = 3) %.2f%% > %g%%", three->mape_percent(),
                                          b.max_calibrated_mape_percent()));
    }
  }
}

}  // namespace hetsim::fidelity
