// Turns a searched pipeline into a plan (spec::PlanSpec): meshes placed inside their islands (whole-
// node submeshes first, then the (1, m) submeshes packed first-fit decreasing, which always fits for
// Alpa's shapes), stage configurations, schedule and explicit warm-up counts. A mixed stage (its
// groups placed by the search, planner/mixed_replicas.h) is written with its replica groups. The edge writes it as a
// Plan message (proto/plan_message.h).
#ifndef HETSIM_PLANNER_PLAN_WRITER_H_
#define HETSIM_PLANNER_PLAN_WRITER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "base/spec/plan.h"
#include "planner/cluster_model.h"
#include "planner/hapt_search_internal.h"

namespace hetsim::planner {

// One mesh per stage, in stage order; Internal error if the shapes do not pack.
absl::StatusOr<std::vector<spec::MeshSpec>> PlaceMeshes(const ClusterModel& cluster,
                                                        const std::vector<SearchedStage>& stages);

// `shape` (the plan's settings: name, batch, schedule, CP, framework switches; its stages ignored)
// with one stage per searched stage; `explicit_warmups` writes SearchedStage::warmup into
// StageSpec::warmup_forwards (else 0: the schedule's own).
absl::StatusOr<spec::PlanSpec> WritePlan(const ClusterModel& cluster, const std::vector<SearchedStage>& stages,
                                         const spec::PlanSpec& shape, bool explicit_warmups);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_PLAN_WRITER_H_
