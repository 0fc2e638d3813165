// `hetsim validate` on plans that carry a planner's prediction (Plan.prediction): each plan is
// simulated and compared (prediction_check.h), and the set is summarised (prediction_set.h).
//
//   absl::StatusOr<std::vector<std::string>> files = PlanFilesOf("plans/");   // or a list file
//   std::vector<proto::Source> plans;  // proto::Source::File(f) for each of *files
//   absl::StatusOr<v1::PlanValidationReport> r =
//       ValidatePredictionSources(plans, proto::Source::File("cluster.pbtxt"), {});
#ifndef HETSIM_SERVICE_EVALUATION_VALIDATE_PREDICTIONS_H_
#define HETSIM_SERVICE_EVALUATION_VALIDATE_PREDICTIONS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "proto/inputs.h"

namespace hetsim::evaluation {

struct ValidateOptions {
  bool chart = false;  // fill PlanValidationReport.chart_svg
  // Every plan simulated exactly (`--exact`); else at the fidelity `hetsim run` chooses
  // (service/driver/fidelity_choice.h: exact while affordable).
  bool exact = false;
};

// The plan files `source` names: a folder (its *.pbtxt, *.textproto, *.txtpb, *.json and *.pb files, in
// name order) or a list file (one path a line, relative to the list's folder; blank lines and lines
// starting with # skipped). InvalidArgument naming `source` (and the line) otherwise.
absl::StatusOr<std::vector<std::string>> PlanFilesOf(absl::string_view source);

// Validated inputs in, one after another. A plan without a prediction is InvalidArgument
// "<plan file>: prediction: required ...".
absl::StatusOr<hetsim::v1::PlanValidationReport> ValidatePredictions(const std::vector<proto::PlanInputs>& plans,
                                                                     const ValidateOptions& options);

// Loads and validates every plan against the cluster (files or messages in memory), then
// ValidatePredictions: `hetsim validate` and the API's validate().
absl::StatusOr<hetsim::v1::PlanValidationReport> ValidatePredictionSources(const std::vector<proto::Source>& plans,
                                                                           const proto::Source& cluster,
                                                                           const ValidateOptions& options);

}  // namespace hetsim::evaluation

#endif  // HETSIM_SERVICE_EVALUATION_VALIDATE_PREDICTIONS_H_
