// Runs one training iteration of a plan on the discrete-event engine.
//
// The HAPT DAG (sim/pipeline/dag.h) executes as it is: a node starts when all its predecessors have
// finished. Compute nodes (F, B) take their virtual stage's compute time plus its tensor-parallel
// collectives; transfer nodes (CF, CB) start their boundary's resharding flows on the network (the
// node ends with its last flow), so they contend with every other flow on shared links. After a
// stage's last backward (or bucket by bucket during it, when the plan overlaps the gradient
// reduction) each data-parallel group synchronises gradients as collectives on the same network, then
// the optimizer step runs (ZeRO >= 1: reduce-scatter, step, parameter all-gather). The iteration ends
// when every stage has finished its step.
//
//   auto setup = driver::BuildSetup(inputs, NetworkMode::kMaxMinFair);
//   auto result = Execute(**setup, ExecutorOptions{});
//   result->pipeline_end;  // == AnalyzeLongestPath(dag, durations) without contention
#ifndef HETSIM_SIM_EXECUTOR_EXECUTOR_H_
#define HETSIM_SIM_EXECUTOR_EXECUTOR_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/time.h"
#include "sim/engine/simulator.h"
#include "sim/executor/setup.h"
#include "sim/faults/fault_runtime.h"
#include "sim/faults/fault_set.h"
#include "sim/network/network.h"

namespace hetsim::executor {

enum class BoundaryFlows { kAll, kRepresentative };
// "all" or "representative", as `run --boundary-flows` names them.
absl::StatusOr<BoundaryFlows> ParseBoundaryFlows(absl::string_view name);

struct ExecutorOptions {
  uint64_t max_events = 0;      // 0 = no limit; reaching it fails the run (ResourceExhausted)
  double max_wall_seconds = 0;  // 0 = no limit; checked every few thousand events and in collectives
  // When the wall-clock limit started (the command's start, so that setup and run share it); unset:
  // when Execute starts.
  std::optional<std::chrono::steady_clock::time_point> wall_start;
  bool record_flows = false;  // keep every boundary flow's finish time (for traces)
  // Sample the busy time of these links every `link_sample_period` (for utilisation counters); a run that
  // reaches 2000 samples keeps every other one and samples half as often from then on.
  Time link_sample_period = 0;
  std::vector<LinkId> sampled_links;
  // Beside other runs on one network (ExecuteOnOneNetwork): keep sampling until every run has ended,
  // not only this one (a chart of the shared network); alone, the same as false.
  bool sample_whole_shared_run = false;
  // What-if faults (docs/faults.md), resolved against the setup's topology; null or empty = none.
  const faults::FaultSet* faults = nullptr;
  // How the gradient synchronisation's rings run: kAuto (exact for rings up to kMaxSteppedRingRanks,
  // the default) or, opted in with `run --ring-steps aggregated`, one flow per ring edge for all steps
  // (docs/decisions.md "Aggregated ring steps"; its error is measured in docs/performance.md).
  collectives::RingSteps grad_sync_ring_steps = collectives::RingSteps::kAuto;
  // Boundary transfers: every flow (the default), or, opted in with `run --boundary-flows
  // representative`, one weighted flow per group of the replicas' flows in the same role
  // (sim/executor/representative_flows.h; its error is measured in docs/performance.md).
  BoundaryFlows boundary_flows = BoundaryFlows::kAll;
};

// One data-parallel synchronisation step of a stage as it ran.
struct GradSyncRecord {
  int32_t stage;
  int32_t step;  // bucket index; the parameter all-gather comes after the buckets (its chunk at the start)
  bool param_gather;
  Time start;
  Time finish;
  bool at_start = false;  // an early parameter gather (Plan.overlap_param_gather): `step` is its chunk
};

struct ExecutionResult {
  std::vector<Time> node_start;  // per DAG node
  std::vector<Time> node_finish;
  // Boundary flows' finish times (record_flows): flow j of transfer node n at flow_offset[n] + j.
  std::vector<int64_t> flow_offset;
  std::vector<Time> flow_finish;

  // The first compute's start (0, unless every first forward waited for an early parameter gather,
  // Plan.overlap_param_gather) and the DAG's sink: the pipeline runs between them.
  Time pipeline_start = 0;
  Time pipeline_end = 0;
  std::vector<Time> last_backward_end;  // per stage
  std::vector<Time> grad_sync_end;      // per stage: buckets done (== last_backward_end when DP == 1)
  std::vector<Time> optimizer_start;    // per stage
  std::vector<Time> stage_end;          // per stage: after the step (and the parameter all-gather)
  std::vector<GradSyncRecord> grad_syncs;
  // Per stage: what the stage's own collectives in flight beside its compute tasks added to them
  // (Plan.nccl_sm_contention; the passes' hidden collectives are the setup's, VirtualStageCost).
  std::vector<Time> overlap_contention;
  // Per stage: how long its passes waited, once ready and at each later layer range's first layer, for the
  // other holders of their layer ranges to make the same ZeRO-3 gather call (SharedGradSync::GatesPasses;
  // 0 otherwise; the report's StageReport.gather_call_wait_ms).
  std::vector<Time> gather_call_wait;
  Time iteration_time = 0;  // the last stage_end

  uint64_t events = 0;
  uint64_t flows = 0;  // every flow started (boundaries and collectives)
  network::NetworkStats network_stats;
  // Per link, at the end of the iteration; empty for the second and later runs on a shared network
  // (ExecuteOnOneNetwork: the first run's are the network's).
  std::vector<network::LinkCounters> link_counters;

  // Link samples: time of sample i, and busy time of sampled link l at sample i at
  // link_busy[i * sampled_links + l].
  std::vector<Time> sample_times;
  std::vector<Time> link_busy;

  // Faults: what each did, and whether a FAIL stopped the iteration. A failed run ends at
  // faults.failed_at: nodes then running end there and are listed in `interrupted`; nodes never
  // started keep start and finish -1; iteration_time is the failure time.
  faults::FaultOutcome faults;
  std::vector<int32_t> interrupted;
  // Mixed stages (Stage.replica_groups) when faults or jitter stretched compute: per DAG node, how long each
  // replica group's part of it ran from the node's start (its own work stretched on its own GPUs, then its
  // collectives); empty (or empty for a node) otherwise: each group then ran its nominal part. GroupWaitIn.
  std::vector<std::vector<Time>> group_busy;
};

absl::StatusOr<ExecutionResult> Execute(const ExecutionSetup& setup, const ExecutorOptions& options);

// A gradient reduction the runs of ExecuteOnOneNetwork share (the layer ranges' all-reduces of
// Plan.pipelines, sim/executor/layer_range_sync.h): the runs reduce none of their stages' gradients
// themselves; each tells the sync when a stage's last backward starts and steps that stage's optimizer
// once the sync releases it. Its collectives run on the runs' engine and network, beside their flows.
class SharedGradSync {
 public:
  using Release = std::function<void(int run, int stage)>;
  virtual ~SharedGradSync() = default;
  // Before the first event: the engine and network the runs share, how to release a stage to its
  // optimizer step (`release`), how to end it after its step (`finish`: only once StepDone was called)
  // and how to let its first forward start (`gathered`: only with GathersAtStart).
  virtual absl::Status Begin(engine::Simulator* sim, network::Network* network, Release release, Release finish,
                             Release gathered) = 0;
  // Run `run`'s stage `stage` has started its last backward (now); it ends at `finish`.
  virtual void LastBackwardStarted(int run, int stage, Time finish) = 0;
  // Whether the sync gathers a stage's updated parameters after its optimizer step (ZeRO-1/2, the
  // distributed optimizer): the run then calls StepDone when the step ends, and the stage ends when the
  // sync calls `finish`.
  virtual bool GathersAfterStep() const { return false; }
  virtual void StepDone(int /*run*/, int /*stage*/) {}
  // Whether the sync gathers the step before's parameters at the iteration's start instead
  // (Plan.overlap_param_gather with ZeRO-1/2): each stage's first forward then waits until the sync
  // calls `gathered` (Begin) for it, and the stage ends at its step.
  virtual bool GathersAtStart() const { return false; }
  // ZeRO-3 across pipelines (sim/executor/gather_calls.h): whether a compute pass waits at its layer ranges'
  // gathers for the other holders' same call. Then the run asks PassReady when a compute node's DAG
  // predecessors have ended (it starts only when true, or when the sync calls `admit` for it later), asks
  // PassEnd when its duration has run (started at `start`, now `end`: when it ends, a later range's layers
  // waiting for that range's call; nullopt: the sync calls `admit` for it later, ask again) and tells
  // PassDone when it ends.
  using Admit = std::function<void(int run, int node)>;
  virtual bool GatesPasses() const { return false; }
  virtual bool PassReady(int /*run*/, int /*node*/, const Admit& /*admit*/) { return true; }
  virtual std::optional<Time> PassEnd(int /*run*/, int /*node*/, Time /*start*/, Time end) { return end; }
  // Whether PassEnd may hold the pass past its duration (a later layer range's call): its stage's
  // LastBackwardStarted then comes once its end is decided.
  virtual bool PassMayBeHeld(int /*run*/, int /*node*/) const { return false; }
  virtual void PassDone(int /*run*/, int /*node*/, const Admit& /*admit*/) {}
  // A collective that could not start (it stops the engine).
  virtual const absl::Status& failure() const = 0;
};

// Several setups of one cluster (the pipelines of Plan.pipelines, each its own GPUs) run at once on one
// engine and one network, so their flows share the links they cross; the network is built from the
// first setup's topology (every setup's must be the same cluster's). With `grad_sync`, it reduces
// every stage's gradients (the setups' own buckets must be empty, DropStageGradientSync). Faults: the
// options' (every run's the same set, or none), resolved against that topology and applied once, to
// the one network and to every run's GPUs. Results in setup order; the events, flows and link counters
// of the shared network are the first result's (the others' zero), so that their sum is the network's.
struct SharedRunResults {
  // Each run's; its `faults` says only whether and when a failure stopped it (failed, failed_at,
  // failed_fault): the transitions and effects are the shared run's, below.
  std::vector<ExecutionResult> results;
  faults::FaultOutcome faults;  // the one fault runtime's outcome (empty without faults)
};
absl::StatusOr<SharedRunResults> ExecuteOnOneNetwork(std::span<const ExecutionSetup* const> setups,
                                                     std::span<const ExecutorOptions> options,
                                                     SharedGradSync* grad_sync = nullptr);

// How long stage `stage`'s first forwards waited for their chunks' early parameter gathers
// (Plan.overlap_param_gather) after everything else they wait for had ended: the gathers' exposed part.
Time EarlyGatherWait(const ExecutionSetup& setup, const ExecutionResult& result, int stage);

// How long replica group `group` of a mixed stage waited in compute node `id` for the group that ended
// last: the difference of their parts as they ran (ExecutionResult::group_busy, under faults or jitter)
// or else nominal (VirtualStageCost.replica_groups), only the part before the node's end (a failure
// cuts it); 0 for a node that never ran.
Time GroupWaitIn(const ExecutionSetup& setup, const ExecutionResult& result, pipeline::NodeId id, int group);

// Memory of one GPU of `stage` over the iteration: (time, bytes) after each change, starting with
// the model states at time 0. Activations of a (chunk-)microbatch are allocated when its forward
// starts and freed when its backward ends (frees first at equal times). For a mixed stage, `group`
// names the replica group whose GPU it is (its states and activations); -1 is the stage's own cost.
std::vector<std::pair<Time, int64_t>> MemoryTimeline(const ExecutionSetup& setup, const ExecutionResult& result,
                                                     int stage, int group = -1);

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_EXECUTOR_H_
