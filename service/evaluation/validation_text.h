// The text `hetsim validate` prints for a PlanValidationReport: per plan its predicted and simulated
// iteration, error and ranks and what is most wrong; per quantity MAPE and largest error; the set's
// ranking statistics, the planner's pick against the simulated best and the misranked pairs.
#ifndef HETSIM_SERVICE_EVALUATION_VALIDATION_TEXT_H_
#define HETSIM_SERVICE_EVALUATION_VALIDATION_TEXT_H_

#include <string>

#include "proto/hetsim.pb.h"

namespace hetsim::evaluation {

std::string FormatPlanValidation(const hetsim::v1::PlanValidationReport& report);

}  // namespace hetsim::evaluation

#endif  // HETSIM_SERVICE_EVALUATION_VALIDATION_TEXT_H_
