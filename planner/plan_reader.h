// The planner's view of an existing plan (any planner's or hand-written, resolved: proto::ResolvePlan): every stage
// priced with the profiler's cost model (measured stage times honoured), its boundary time and warm-up counts, so that
// `hetsim validate` can put the planner's prediction beside the simulation.
#ifndef HETSIM_PLANNER_PLAN_READER_H_
#define HETSIM_PLANNER_PLAN_READER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "base/spec/plan.h"
#include "planner/hapt_search_internal.h"
#include "planner/pipelines.h"
#include "planner/prediction.h"
#include "planner/profile.h"

namespace hetsim::planner {

// A profiler that prices `plan`'s stages as the simulator runs them: the plan's micro-batch size, CP
// degree and TP communication overlap.
Profiler PlanProfiler(const workload::ModelCost& model, const ClusterModel& cluster, const spec::PlanSpec& plan);

// `plan` already validated against the profiler's cluster and model. Warm-up counts in the result are
// the plan's explicit ones (0 when derived by the schedule). With `own_gathers`, a ZeRO-3 stage's passes
// include its layers' parameter gathers over its own replicas, mixed or not, chunk by chunk
// (MixedLayerGathers); a plan of pipelines prices its ranges' gathers instead (RangeGathersOfZeroThree).
absl::StatusOr<std::vector<SearchedStage>> StagesOfPlan(Profiler& profiler, const spec::PlanSpec& plan,
                                                        bool own_gathers = true);

// StagesOfPlan + Predict with the plan's schedule.
absl::StatusOr<Prediction> PredictPlan(Profiler& profiler, const spec::PlanSpec& plan);

// A plan of pipelines (Plan.pipelines, validated against `cluster` and `model`): each pipeline priced
// as a plan of its own at its batch share and micro-batch size (PredictPlan), every layer range's
// gradient all-reduce over the stages that hold it (PriceLayerRanges), and the whole as one prediction
// (CombinePipelines: every pipeline's stages in turn, each pipeline's end, the iteration, eta). The
// plan's overlap_grad_reduce, grad_bucket_bytes and overlap_param_gather as the simulator runs them
// (RangeOptions; with the gathers at the start each pipeline predicted with its stages' first forwards
// released when their ranges' gathers end, EarlyGathers). `ranges`, when given, receives the ranges' price.
absl::StatusOr<Prediction> PredictPipelinesPlan(const workload::ModelCost& model, const ClusterModel& cluster,
                                                const spec::PlanSpec& plan, LayerRangesPrice* ranges = nullptr);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_PLAN_READER_H_
