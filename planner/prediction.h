// The planner's prediction of a pipeline: per stage t_i (forward + backward per microbatch, collectives
// included), c_i (boundary transfer after stage i), memory at the stage's launch count, and in total
//  - HAPT Eq. 13:  sum_i (t_i + 2 c_i) + (B - 1) max(t_max, max_i c_i),
//  - the longest path of the pipeline DAG (sim/pipeline/dag.h) under the plan's schedule and warm-up
//    counts with the same node costs (what the simulator computes without contention), and
//  - that plus the data-parallel gradient synchronisation each stage starts after its last backward.
// Also what the run report shows of an iteration (throughput, MFU, TFLOP/s per GPU, bubble ratio and
// HAPT's eta, Eq. 25), computed by the report's own pipeline::ComputeIterationMetrics from the
// predicted times: every stage computes t_i for each of the B microbatches.
#ifndef HETSIM_PLANNER_PREDICTION_H_
#define HETSIM_PLANNER_PREDICTION_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "base/time.h"
#include "planner/cluster_model.h"
#include "planner/hapt_search_internal.h"
#include "sim/pipeline/dag.h"
#include "sim/pipeline/iteration_metrics.h"
#include "sim/workload/model_cost.h"

namespace hetsim::planner {

struct StagePrediction {
  Time forward = 0, backward = 0;
  Time t = 0;      // forward + backward
  Time comm = 0;   // c_i
  int warmup = 1;  // launch count as executed
  int64_t peak_bytes = 0;
  int64_t capacity_bytes = 0;
  Time grad_sync = 0;
  Time last_backward_end = 0;  // when its last backward ends on the DAG's longest path
  // Plan.overlap_param_gather (Predict's first_forward_release): how long its first forward waits for its
  // parameters' all-gathers after its DAG predecessors have ended (the report's EarlyGatherWait).
  Time gather_wait = 0;
  // A mixed stage's groups (SearchedStage::groups), in order: each its own passes and memory; the
  // stage's peak_bytes and capacity_bytes are then its tightest group's.
  struct Group {
    Time forward = 0, backward = 0;
    int64_t peak_bytes = 0, capacity_bytes = 0;
  };
  std::vector<Group> groups;
  // A mixed stage: peak_bytes and capacity_bytes set to its tightest group's (the largest share of its
  // GPU's capacity, the first on a tie).
  void SetTightestGroup();
};

struct Prediction {
  std::vector<StagePrediction> stages;
  int64_t microbatches = 0;
  Time t_max = 0;
  Time cycle = 0;  // max(t_max, max c_i)
  Time eq13 = 0;
  Time pipeline = 0;                   // DAG longest path
  Time iteration = 0;                  // pipeline + exposed gradient synchronisation
  pipeline::IterationMetrics metrics;  // over `iteration`, bubble over `pipeline`
  bool fits_memory = true;
  // A plan of pipelines (Plan.pipelines, planner/pipelines.h): `stages` holds every pipeline's in turn,
  // and each pipeline's own figures are here; empty for a plan of one pipeline.
  struct Pipeline {
    int stages = 0;
    int64_t microbatches = 0;
    Time t_max = 0;
    Time pipeline = 0;  // its DAG's longest path
    Time end = 0;       // after its layer ranges' all-reduces and its stages' optimizer steps
  };
  std::vector<Pipeline> pipelines;
};

// A pipeline's compute passes as its prediction's DAG times them (Predict's `passes`): per stage its compute
// nodes in order, and per DAG node when its predecessors have all ended (`ready`), its start and its end,
// and whether it is a backward pass.
struct PredictedPasses {
  std::vector<std::vector<pipeline::NodeId>> nodes;
  std::vector<Time> ready, start, end;
  std::vector<bool> backward;
};

// Warm-up counts as the plan's schedule runs them (explicit counts win); `work` is what the model asks
// of the iteration (WorkOf). With `virtual_stages` chunks per stage (INTERLEAVED_1F1B) each chunk
// costs its share of its stage's priced times as priced alone (SearchedStage::chunks, from the plan
// reader; 1/v without them) and holds that share of its activations (the largest chunk's for the
// chunk-microbatches in flight); the boundary from the last stage back to the first is the last
// stage's comm_out. `tied_sync` (Plan.tied_embedding_grad_sync): the tied embedding's all-reduce
// between the first and the last stage, which both wait for once both have run their last backward,
// before their own gradient synchronisation (as the simulator's executor runs it).
// `first_forward_release`, empty or one per stage: the earliest each stage's first forward may start
// (Plan.overlap_param_gather: when its parameters' all-gathers at the iteration's start end); the DAG's
// longest path then starts each there, and the stage's gather_wait is what its forward waits beyond its
// DAG predecessors. `node_release`, empty or one per DAG node: the earliest each node may start besides
// (ZeRO-3's per-call gathers across pipelines, planner/pipelines.h ZeroThreeCallReleases). `passes`, when
// not null, receives the DAG's compute passes as timed.
absl::StatusOr<Prediction> Predict(const ClusterModel& cluster, const std::vector<SearchedStage>& stages,
                                   int64_t microbatches, spec::ScheduleKind schedule, double epsilon,
                                   const std::vector<int>& explicit_warmups, const pipeline::IterationWork& work,
                                   int virtual_stages = 1, Time tied_sync = 0,
                                   const std::vector<Time>& first_forward_release = {},
                                   const std::vector<Time>& node_release = {}, PredictedPasses* passes = nullptr);

// Samples, tokens per sample and model FLOPs of an iteration of `global_batch_size` samples.
pipeline::IterationWork WorkOf(const workload::ModelCost& model, uint64_t global_batch_size);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_PREDICTION_H_
