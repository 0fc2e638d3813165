// A set of plans' prediction checks summarised the way a planner is judged: how far its iteration
// times are (MAPE, largest error), whether it ranks the plans as the simulator does (Kendall's tau-b,
// Spearman's rho, the pairs it orders wrongly), and whether the plan it would pick is the fastest
// simulated one (and if not, how much slower it is).
#ifndef HETSIM_SERVICE_EVALUATION_PREDICTION_SET_H_
#define HETSIM_SERVICE_EVALUATION_PREDICTION_SET_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/hetsim.pb.h"

namespace hetsim::evaluation {

// Fills ranks, quantities, the iteration-time statistics, the best plans and the misranked pairs of
// `report` from its plans (ComparePrediction's output). Plans without a predicted iteration time
// take no part in the ranking. Ties keep file order (the first plan wins).
void SummarizePredictions(hetsim::v1::PlanValidationReport* report);

// The predicted vs simulated iteration-time chart (SVG) of a summarised report; InvalidArgument when
// no plan predicts its iteration time.
absl::StatusOr<std::string> PredictionChartSvg(const hetsim::v1::PlanValidationReport& report);

}  // namespace hetsim::evaluation

#endif  // HETSIM_SERVICE_EVALUATION_PREDICTION_SET_H_
