// What each planner hands back for one micro-batch size, before MakePlan turns the best one into a
// Plan (planner.cc). Internal to planner/.
#ifndef HETSIM_PLANNER_CANDIDATES_INTERNAL_H_
#define HETSIM_PLANNER_CANDIDATES_INTERNAL_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/spec/plan.h"
#include "planner/hapt_search_internal.h"
#include "planner/layers_internal.h"
#include "planner/profile.h"

namespace hetsim::planner {

struct PipelineCandidate {
  std::vector<SearchedStage> stages;
  spec::ScheduleKind schedule = spec::ScheduleKind::kH1F1B;
  bool explicit_warmups = true;
  int planner_layers = 0;
  SearchStats search;
  std::vector<std::string> notes;
  std::vector<std::vector<SearchedStage>> alternatives;  // other plans, best first
  // The mixed-replicas family's (planner/mixed_search.h): chunks a stage under INTERLEAVED_1F1B, ZeRO-3's
  // prefetch (Plan.zero3_prefetch), and why it took what the family's search added since session 40.
  int virtual_stages = 1;
  bool zero3_prefetch = false;
  std::vector<std::string> why;
};

struct PlannerContext {
  Profiler* profiler;  // for the micro-batch size being planned
  int64_t microbatches;
  int layers;  // requested planner layers (0 = planner default)
  int threads;
  double epsilon;
  double t_max_relative_gap;
  bool bidirectional_pruning;
  bool tangram_overlap_aware;
};

std::optional<PipelineCandidate> PlanMegatron(const PlannerContext& ctx);
std::optional<PipelineCandidate> PlanTangram(const PlannerContext& ctx);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_CANDIDATES_INTERNAL_H_
