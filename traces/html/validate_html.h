// The HTML report of `hetsim validate --html`: the planner's predictions against the simulation.
// A scatter of predicted vs simulated times with the identity line (per-stage compute, the iteration,
// and the top-k plans when given), the relative error of each stage's compute, communication and
// memory as error bars from zero, and the table. Takes the data it plots, so any command that has
// predictions and simulations can draw it.
#ifndef HETSIM_TRACES_HTML_VALIDATE_HTML_H_
#define HETSIM_TRACES_HTML_VALIDATE_HTML_H_

#include <optional>
#include <string>
#include <vector>

namespace hetsim::traces::html {

struct ValidateStage {
  int stage = 0;
  double compute_pred_ms = 0, compute_sim_ms = 0;  // forward + backward of one microbatch
  double comm_pred_ms = 0, comm_sim_ms = 0;        // the stage's outgoing boundary transfer
  double memory_pred_gib = 0, memory_sim_gib = 0;  // peak per GPU
};

struct ValidatePlan {
  std::string label;  // "rank 0: 4 stages ..."
  double predicted_ms = 0, simulated_ms = 0;
};

struct ValidateData {
  std::string plan_name, cluster_name;
  std::vector<ValidateStage> stages;
  double iteration_pred_ms = 0, iteration_sim_ms = 0;
  std::vector<ValidatePlan> top_plans;  // --top-k
  std::optional<double> kendall_tau;
};

std::string ValidateReportHtml(const ValidateData& data);

}  // namespace hetsim::traces::html

#endif  // HETSIM_TRACES_HTML_VALIDATE_HTML_H_
