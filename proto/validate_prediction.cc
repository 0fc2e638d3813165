#include "proto/validate_prediction.h"

#include <string>
#include <vector>

#include "absl/strings/str_format.h"

namespace hetsim::proto {
namespace {

using hetsim::v1::PredictedStage;

// A predicted time or size: a day in ms or a thousand TiB is far beyond any plan, so larger values are
// a unit mistake.
constexpr double kMaxPredicted = 1e9;

void CheckStage(Problems& p, const PredictedStage& s, const std::string& at) {
  if (s.has_forward_ms()) CheckRange(p, at + "forward_ms", s.forward_ms(), 0, kMaxPredicted);
  if (s.has_backward_ms()) CheckRange(p, at + "backward_ms", s.backward_ms(), 0, kMaxPredicted);
  if (s.has_boundary_transfer_ms()) {
    CheckRange(p, at + "boundary_transfer_ms", s.boundary_transfer_ms(), 0, kMaxPredicted);
  }
  if (s.has_peak_memory_gib()) CheckRange(p, at + "peak_memory_gib", s.peak_memory_gib(), 0, kMaxPredicted);
  if (s.has_compute_ms()) CheckRange(p, at + "compute_ms", s.compute_ms(), 0, kMaxPredicted);
  if (s.has_exposed_comm_ms()) CheckRange(p, at + "exposed_comm_ms", s.exposed_comm_ms(), 0, kMaxPredicted);
  if (s.has_bubble_ms()) CheckRange(p, at + "bubble_ms", s.bubble_ms(), 0, kMaxPredicted);
  if (s.has_grad_sync_ms()) CheckRange(p, at + "grad_sync_ms", s.grad_sync_ms(), 0, kMaxPredicted);
}

}  // namespace

void CheckPrediction(Problems& p, const hetsim::v1::Plan& plan) {
  if (!plan.has_prediction()) return;
  const hetsim::v1::PlanPrediction& pred = plan.prediction();
  if (pred.has_iteration_time_ms()) {
    CheckRange(p, "prediction.iteration_time_ms", pred.iteration_time_ms(), 0, kMaxPredicted);
  }
  // A plan of pipelines' stages are every pipeline's in turn, as the run report lists them.
  std::vector<bool> last;
  for (const hetsim::v1::Pipeline& pipeline : plan.pipelines()) {
    last.insert(last.end(), pipeline.stages_size(), false);
    if (!last.empty()) last.back() = true;
  }
  if (plan.pipelines().empty()) {
    last.assign(plan.stages_size(), false);
    if (!last.empty()) last.back() = true;
  }
  const int stages = static_cast<int>(last.size());
  if (!pred.stages().empty() && pred.stages_size() != stages) {
    p.Add("prediction.stages", "%d predicted stages for a plan of %d stages (give one per stage, in order, or none)",
          pred.stages_size(), stages);
    return;
  }
  for (int i = 0; i < pred.stages_size(); ++i) {
    const PredictedStage& s = pred.stages(i);
    const std::string at = absl::StrFormat("prediction.stages[%d].", i);
    CheckStage(p, s, at);
    if (last[i] && s.has_boundary_transfer_ms() && s.boundary_transfer_ms() > 0) {
      p.Add(at + "boundary_transfer_ms", plan.pipelines().empty()
                                             ? "the last stage has no boundary to a next stage"
                                             : "a pipeline's last stage has no boundary to a next stage");
    }
  }
}

}  // namespace hetsim::proto
