// Gradient synchronisation across data-parallel pipelines of different shapes (Plan.pipelines;
// docs/cost-model.md, "Pipelines of different shapes"), as HexiScale/FlashFlex, Metis and Cephalo run
// them: every pipeline holds every layer, but the pipelines cut the layers into stages differently, so
// the gradients reduce per layer range. The cut points of all pipelines split the layers into ranges;
// each range lies inside one stage of every pipeline, and its gradients all-reduce over the GPUs of
// those stages (every replica of each), one group per shard of the finest tensor-parallel split among
// them (a GPU of TP t holds shard j x t / T of the finest T, so it joins T / t groups, as mixed replica
// groups do, replica_groups.h).
//
// Each pipeline runs on its own (Execute, without its own data-parallel buckets); a range's all-reduce
// starts when every stage that holds it has run its last backward, all on one network over the
// cluster's links (ranges contend with each other, not with the pipelines' boundary transfers, which
// have ended on all but the first stages by then). A stage steps its optimizer once all its ranges
// are reduced; the iteration ends with the last stage of the slowest pipeline.
#ifndef HETSIM_SIM_EXECUTOR_LAYER_RANGE_SYNC_H_
#define HETSIM_SIM_EXECUTOR_LAYER_RANGE_SYNC_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ids.h"
#include "base/time.h"
#include "sim/collectives/collective.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"

namespace hetsim::sim::executor {

// One pipeline as simulated (beside the others, on one network): its setup (a plan of its own stages)
// and its iteration.
struct PipelineRun {
  const ExecutionSetup* setup = nullptr;
  const ExecutionResult* result = nullptr;
};

struct LayerRangeHolder {
  int pipeline = 0;
  int stage = 0;
};

// The all-reduce of one layer range.
struct LayerRangeGroup {
  int first_layer = 0;
  int num_layers = 0;
  std::vector<LayerRangeHolder> holders;  // one stage per pipeline, in pipeline order
  int shards = 1;                         // the finest TP among the holders
  // Per shard: the GPUs that hold it, holder after holder, each holder's replicas in order.
  std::vector<std::vector<GpuId>> groups;
  int64_t bytes = 0;  // per GPU of a shard group: the range's dense gradients over `shards`
  Time start = 0;     // when the last holder ran its last backward
  Time finish = 0;
};

// The ranges of the pipelines' layers (each pipeline's stages cover every layer once, in order) and
// their groups; setups[p] is pipeline p's. Bytes from the model's parameters (DenseGradSyncBytes).
std::vector<LayerRangeGroup> LayerRangeGroups(const std::vector<const ExecutionSetup*>& setups);

struct PipelinesSyncResult {
  std::vector<LayerRangeGroup> groups;           // with start and finish
  std::vector<std::vector<Time>> grad_sync_end;  // [pipeline][stage]: its ranges reduced
  std::vector<std::vector<Time>> stage_end;      // [pipeline][stage]: after its optimizer step
  std::vector<Time> pipeline_end;                // the last stage_end of each pipeline
  Time iteration_time = 0;                       // the slowest pipeline's end
  uint64_t events = 0;
  uint64_t flows = 0;
  std::vector<LinkCounters> link_counters;  // per link: what the ranges' all-reduces moved
};

// Simulates every range's all-reduce on one network over the first setup's topology (the pipelines
// share the cluster), each starting when its holders are ready. Errors: a group without a route.
absl::StatusOr<PipelinesSyncResult> SyncPipelineGradients(const std::vector<PipelineRun>& pipelines,
                                                          RingSteps ring_steps);

// A pipeline's result as the whole iteration ran it: its stages' gradient sync, optimizer and end
// times from `sync` (pipeline `p`), so traces::BuildReport reports them; the first pipeline's link
// counters also count the ranges' all-reduces (each link's traffic reported once).
ExecutionResult WithPipelineSync(ExecutionResult result, const PipelinesSyncResult& sync, int p);

// Leaves the data-parallel reduction of a pipeline's stages to the ranges: its buckets and their
// readiness cleared, so Execute steps each stage's optimizer right after its last backward.
void DropStageGradientSync(ExecutionSetup& setup);

}  // namespace hetsim::sim::executor

#endif  // HETSIM_SIM_EXECUTOR_LAYER_RANGE_SYNC_H_
