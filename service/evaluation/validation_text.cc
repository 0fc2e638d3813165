#include "service/evaluation/validation_text.h"

#include "absl/strings/str_format.h"
#include "service/evaluation/rank_stats.h"

namespace hetsim::evaluation {

namespace v1 = hetsim::v1;

namespace {

void AppendPlan(std::string& out, const v1::PlanValidation& p) {
  absl::StrAppendFormat(&out, "%-24s %10.3f %10.3f %+7.1f%% %4d %4d  %s\n", p.plan_name(), p.predicted_iteration_ms(),
                        p.simulated_iteration_ms(),
                        ErrorPercent(p.predicted_iteration_ms(), p.simulated_iteration_ms()), p.predicted_rank(),
                        p.simulated_rank(), p.diagnosis());
}

void AppendStages(std::string& out, const v1::PlanValidation& p) {
  for (const v1::StageTermErrors& s : p.stages()) {
    absl::StrAppendFormat(&out, "  %s stage %d:", p.plan_name(), s.stage());
    for (const v1::QuantityError& t : s.terms()) {
      absl::StrAppendFormat(&out, " %s %.3f/%.3f", t.quantity(), t.predicted(), t.simulated());
    }
    if (!s.wrong_term().empty())
      absl::StrAppendFormat(&out, "  -> %s (%+.3f ms)", s.wrong_term(), s.wrong_term_error_ms());
    out += "\n";
  }
}

}  // namespace

std::string FormatPlanValidation(const v1::PlanValidationReport& report) {
  std::string out = absl::StrFormat("validate %d plans on \"%s\" (predicted vs simulated)\n", report.plans_size(),
                                    report.cluster_name());
  absl::StrAppendFormat(&out, "%-24s %10s %10s %8s %4s %4s  %s\n", "plan", "pred_ms", "sim_ms", "error", "rp", "rs",
                        "most wrong");
  for (const v1::PlanValidation& p : report.plans()) AppendPlan(out, p);
  out += "per stage, predicted/simulated ms of each term, and the term most wrong:\n";
  for (const v1::PlanValidation& p : report.plans()) AppendStages(out, p);
  absl::StrAppendFormat(&out, "%-22s %6s %8s %9s\n", "quantity", "count", "MAPE", "max|err|");
  for (const v1::QuantitySummary& q : report.quantities()) {
    absl::StrAppendFormat(&out, "%-22s %6d %7.1f%% %8.1f%%\n", q.quantity(), q.count(), q.mape_percent(),
                          q.max_abs_error_percent());
  }
  if (report.predicted_best().empty()) return out;
  absl::StrAppendFormat(&out,
                        "iteration time: MAPE %.1f%%, max |error| %.1f%% (%s); Kendall tau-b %.3f, Spearman rho %.3f\n",
                        report.mape_percent(), report.max_abs_error_percent(), report.worst_plan(),
                        report.kendall_tau(), report.spearman_rho());
  if (report.best_matches()) {
    absl::StrAppendFormat(&out, "best plan: the planner's pick %s is the simulated best\n", report.predicted_best());
  } else {
    absl::StrAppendFormat(&out, "best plan: the planner picks %s, simulated %.1f%% slower than the simulated best %s\n",
                          report.predicted_best(), report.best_regret_percent(), report.simulated_best());
  }
  if (!report.misranked().empty()) {
    absl::StrAppendFormat(&out, "misranked pairs:\n");
    for (const std::string& line : report.misranked()) absl::StrAppendFormat(&out, "  %s\n", line);
  }
  return out;
}

}  // namespace hetsim::evaluation
