// Text rendering of a planner outcome for `hetsim plan` (and the per-stage columns `hetsim validate`
// reuses).
#ifndef HETSIM_PLANNER_PLAN_TABLE_H_
#define HETSIM_PLANNER_PLAN_TABLE_H_

#include <string>

#include "planner/planner.h"

namespace hetsim::planner {

std::string RenderPlanOutcome(const planner::PlanOutcome& outcome, const std::string& cluster_name);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_PLAN_TABLE_H_
