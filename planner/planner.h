// The planners behind `hetsim plan`: HAPT (seed 001), Tangram (seed 000) and two baselines, megatron
// (equal layers per stage, one TP/PP/DP everywhere, grid search blind to heterogeneity) and alpa (the
// inter-op DP with C(i) = 0 on coarse layers, Eager-1F1B). Every planner prices stages with the shared
// cost model (profile.h) and reports its plan with the same prediction (prediction.h), so their
// outputs compare directly and `hetsim validate` checks any of them against the simulator. The planner
// reads the resolved spec and returns a spec plan; the edge (service/driver/plan_messages.h) resolves the
// files' messages for it and writes its plans as messages.
#ifndef HETSIM_PLANNER_PLANNER_H_
#define HETSIM_PLANNER_PLANNER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/spec/cluster.h"
#include "base/spec/model.h"
#include "base/spec/plan.h"
#include "planner/hapt_search_internal.h"
#include "planner/prediction.h"
#include "planner/profile_cache.h"

namespace hetsim::planner {

enum class PlannerKind { kHapt, kTangram, kMegatron, kAlpa };
absl::StatusOr<PlannerKind> ParsePlannerKind(absl::string_view name);
// Megatron's --cp-comm-type names: "p2p", "all_gather" (or its help text's "allgather"), "a2a".
absl::StatusOr<spec::ContextParallelComm> ParseCpCommType(absl::string_view name);
absl::string_view PlannerName(PlannerKind kind);

// The plan-wide switches (spec::CostSwitches) are those of the plans to price and write: framework
// settings, not searched.
struct PlanRequest : spec::CostSwitches {
  spec::ModelSpec model;
  spec::ClusterSpec cluster;
  PlannerKind planner = PlannerKind::kHapt;
  int layers = 0;                  // planner layers; 0 = the planner's default
  uint64_t global_batch_size = 0;  // samples per iteration (required)
  uint64_t micro_batch_size = 0;   // 0 = searched over powers of two dividing the global batch
  uint64_t max_micro_batch_size = 16;
  // Context parallelism (Plan.context_parallel) of every stage: 1 = none; 0 = searched over the powers
  // of two up to max_context_parallel that the model's sequence allows (seq_length % (2 CP) == 0).
  int context_parallel = 1;
  int max_context_parallel = 16;
  int threads = 0;  // 0 = hardware concurrency
  // `plan --max-wall-seconds`: the search stops with a run limit (exit 2) once it has run this long,
  // checked between the searches of each micro-batch size, CP degree and expert layout. 0 = the
  // calling thread's limit (a re-plan inside `run` keeps run's), none outside every scope.
  double max_wall_seconds = 0;
  double epsilon = spec::kDefaultH1f1bEpsilon;  // H-1F1B Eq. 2
  double t_max_relative_gap = 0;                // see SearchOptions
  bool bidirectional_pruning = true;
  // HAPT on a cluster of more than one GPU type: also search plans of mixed replica groups
  // (planner/mixed_replicas.h) and keep one when it predicts faster than the DP's plan.
  bool search_mixed_replicas = true;
  // HAPT on a cluster of more than one GPU type: also search plans of one pipeline per GPU type
  // (Plan.pipelines, planner/pipelines.h) and keep one when it predicts faster than both.
  bool search_pipelines = true;
  // Tangram's improvements over the paper (seed 000): B overlap-aware cycle time, C microbatch count
  // chosen jointly (otherwise the smallest micro-batch size is used).
  bool tangram_overlap_aware = true;
  bool tangram_joint_microbatch = true;
  std::string name;  // plan name; empty = "<planner>-<model>"
  // Stage profiles kept between planning runs of this model (a re-plan after a failure reuses what the
  // first plan priced); not owned, may be null. The plan is the same with or without it.
  ProfileCache* profile_cache = nullptr;
  // What identifies the model to `profile_cache` (the edge passes the model message's bytes); the
  // cache empties itself when it changes.
  std::string profile_scope;
};

struct PlanOutcome {
  PlannerKind planner = PlannerKind::kHapt;
  spec::PlanSpec plan;
  spec::ModelSpec model;  // the model the plan indexes (granularity may be refined)
  bool refined = false;   // `model` is the request's at SUBLAYER granularity (RefineGranularity)
  int planner_layers = 0;
  Prediction prediction;
  SearchStats search;
  ProfilerStats profile;
  double planning_seconds = 0;
  std::vector<std::string> notes;  // what the planner decided and why (printed by `hetsim plan`)
  // Best alternative plans seen by the search, best first (with the chosen plan first).
  std::vector<spec::PlanSpec> alternatives;
  std::vector<Prediction> alternative_predictions;  // same order
};

// Infeasible inputs (nothing fits) come back as FailedPrecondition with what is missing.
absl::StatusOr<PlanOutcome> MakePlan(const PlanRequest& request);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_PLANNER_H_
