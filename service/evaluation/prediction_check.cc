#include "service/evaluation/prediction_check.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/str_format.h"
#include "service/evaluation/rank_stats.h"

namespace hetsim::evaluation {
namespace {

namespace v1 = hetsim::v1;

void AddError(v1::PlanValidation& out, const std::string& quantity, double predicted, double simulated,
              absl::string_view unit) {
  v1::QuantityError* e = out.add_errors();
  e->set_quantity(quantity);
  e->set_predicted(predicted);
  e->set_simulated(simulated);
  e->set_error_percent(ErrorPercent(predicted, simulated));
  e->set_unit(std::string(unit));
}

constexpr std::array<const char*, 4> kTerms = {"compute", "exposed_comm", "bubble", "grad_sync"};

// The four predicted terms of one stage; nullopt where the prediction does not say.
std::array<std::optional<double>, 4> PredictedTerms(const v1::PlanPrediction& pred, const v1::PredictedStage& s,
                                                    int64_t microbatches) {
  std::array<std::optional<double>, 4> t;
  if (s.has_compute_ms()) {
    t[0] = s.compute_ms();
  } else if (s.has_forward_ms() && s.has_backward_ms()) {
    t[0] = static_cast<double>(microbatches) * (s.forward_ms() + s.backward_ms());
  }
  if (s.has_exposed_comm_ms()) t[1] = s.exposed_comm_ms();
  if (s.has_bubble_ms()) t[2] = s.bubble_ms();
  if (s.has_grad_sync_ms()) t[3] = s.grad_sync_ms();
  const int missing = static_cast<int>(std::count(t.begin(), t.end(), std::nullopt));
  if (missing == 1 && pred.has_iteration_time_ms()) {
    double known = 0;
    for (const std::optional<double>& v : t) known += v.value_or(0);
    *std::find(t.begin(), t.end(), std::nullopt) = std::max(0.0, pred.iteration_time_ms() - known);
  }
  return t;
}

v1::StageTermErrors CompareTerms(const v1::PlanPrediction& pred, int i, const v1::StageReport& sim,
                                 int64_t microbatches) {
  const std::array<std::optional<double>, 4> predicted = PredictedTerms(pred, pred.stages(i), microbatches);
  const std::array<double, 4> simulated = {sim.compute_busy_ms(), sim.exposed_comm_ms(), sim.idle_ms(),
                                           sim.grad_sync_ms() + sim.optimizer_ms()};
  v1::StageTermErrors out;
  out.set_stage(i);
  double worst = -1;
  for (size_t k = 0; k < kTerms.size(); ++k) {
    if (!predicted[k]) continue;
    v1::QuantityError* e = out.add_terms();
    e->set_quantity(kTerms[k]);
    e->set_predicted(*predicted[k]);
    e->set_simulated(simulated[k]);
    e->set_error_percent(ErrorPercent(*predicted[k], simulated[k]));
    e->set_unit("ms");
    const double diff = *predicted[k] - simulated[k];
    if (std::fabs(diff) > worst) {
      worst = std::fabs(diff);
      out.set_wrong_term(kTerms[k]);
      out.set_wrong_term_error_ms(diff);
    }
  }
  return out;
}

std::string Diagnosis(const v1::PlanValidation& v) {
  const v1::StageTermErrors* worst = nullptr;
  for (const v1::StageTermErrors& s : v.stages()) {
    if (!s.wrong_term().empty() &&
        (worst == nullptr || std::fabs(s.wrong_term_error_ms()) > std::fabs(worst->wrong_term_error_ms()))) {
      worst = &s;
    }
  }
  if (worst != nullptr) {
    for (const v1::QuantityError& t : worst->terms()) {
      if (t.quantity() != worst->wrong_term()) continue;
      return absl::StrFormat("stage %d: %s %s by %.3f ms (predicted %.3f, simulated %.3f)", worst->stage(),
                             t.quantity(), t.predicted() < t.simulated() ? "under-predicted" : "over-predicted",
                             std::fabs(worst->wrong_term_error_ms()), t.predicted(), t.simulated());
    }
  }
  if (v.predicted_iteration_ms() > 0) {
    return absl::StrFormat(
        "iteration %s by %.1f%% (no stage terms predicted)",
        v.predicted_iteration_ms() < v.simulated_iteration_ms() ? "under-predicted" : "over-predicted",
        std::fabs(ErrorPercent(v.predicted_iteration_ms(), v.simulated_iteration_ms())));
  }
  return "";
}

// A plan of pipelines' stage computes its own pipeline's microbatches; a plan of one pipeline's, the plan's.
int64_t MicrobatchesOf(const v1::Report& report, const v1::StageReport& stage, int64_t microbatches) {
  for (const v1::PipelineReport& p : report.pipelines()) {
    if (!stage.pipeline().empty() && p.name() == stage.pipeline()) return p.num_microbatches();
  }
  return microbatches;
}

}  // namespace

v1::PlanValidation ComparePrediction(const v1::Plan& plan, int64_t microbatches, const v1::Report& report,
                                     absl::string_view plan_file) {
  const v1::PlanPrediction& pred = plan.prediction();
  v1::PlanValidation out;
  out.set_plan_file(std::string(plan_file));
  out.set_plan_name(plan.name());
  out.set_planner(pred.planner());
  out.set_simulated_iteration_ms(report.iteration_time_ms());
  if (pred.has_iteration_time_ms()) {
    out.set_predicted_iteration_ms(pred.iteration_time_ms());
    AddError(out, "prediction.iteration_time_ms", pred.iteration_time_ms(), report.iteration_time_ms(), "ms");
  }
  for (int i = 0; i < pred.stages_size() && i < report.stages_size(); ++i) {
    const v1::PredictedStage& s = pred.stages(i);
    const v1::StageReport& r = report.stages(i);
    const std::string at = absl::StrFormat("prediction.stages[%d].", i);
    if (s.has_forward_ms()) AddError(out, at + "forward_ms", s.forward_ms(), r.forward_ms_per_microbatch(), "ms");
    if (s.has_backward_ms()) AddError(out, at + "backward_ms", s.backward_ms(), r.backward_ms_per_microbatch(), "ms");
    if (s.has_boundary_transfer_ms()) {
      double simulated = 0;
      for (const v1::BoundaryReport& b : report.boundaries()) {
        if (b.from_stage() == static_cast<uint32_t>(i)) simulated = b.transfer_ms();
      }
      AddError(out, at + "boundary_transfer_ms", s.boundary_transfer_ms(), simulated, "ms");
    }
    if (s.has_peak_memory_gib()) AddError(out, at + "peak_memory_gib", s.peak_memory_gib(), r.peak_memory_gib(), "GiB");
    *out.add_stages() = CompareTerms(pred, i, r, MicrobatchesOf(report, r, microbatches));
  }
  out.set_diagnosis(Diagnosis(out));
  return out;
}

}  // namespace hetsim::evaluation
