#include "sim/executor/executor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "sim/collectives/algorithms.h"
#include "sim/collectives/execution.h"
#include "sim/collectives/layout.h"
#include "sim/collectives/simulate.h"
#include "sim/engine/limited_run.h"
#include "sim/engine/simulator.h"
#include "sim/executor/reduce_chains.h"
#include "sim/executor/representative_flows.h"
#include "sim/executor/run_limit.h"

namespace hetsim::executor {
namespace {

using pipeline::NodeId;
using pipeline::NodeKind;

// kTiedSyncDone: the tied embedding's gradient all-reduce between the first and last stage ended (value:
// the stage). kContendedDone: a compute task slowed by its stage's collectives (Plan.nccl_sm_contention)
// ends, unless its finish moved since (value: the task's generation << 32 | node; a stale one is ignored).
// kEmptyStepDone: a synchronisation step with nothing to move (a model chunk without parameters to gather) ends at the
// instant it starts, as an event, never inside the call that started it. kReduceChainsDone: a gradient bucket's
// per-rank reduce calls (Plan.zero_reduce_per_rank) end, after its reduce-scatter and their fill (value: the stage).
enum EventKind : uint64_t {
  kNodeDone = 0,
  kBucketReady = 1,
  kOptimizerDone = 2,
  kSample = 3,
  kEmptyStepDone = 4,
  kTiedSyncDone = 5,
  kContendedDone = 6,
  kReduceChainsDone = 7
};
constexpr int kKindShift = 56;
constexpr size_t kMaxLinkSamples = 2000;  // link samples kept at most (Sample, ThinSamples)
uint64_t Payload(EventKind kind, uint64_t value) { return (uint64_t{kind} << kKindShift) | value; }

// Runs `sim` until its queue is empty within the options' limits; `failure` is the runs' own error (a
// collective that could not start stops the simulator), `failed` whether a stop came from a failure
// fault (the iteration then ends there).
absl::Status RunEvents(engine::Simulator& sim, const ExecutorOptions& options, const WallLimit& wall_limit,
                       const std::function<absl::Status()>& failure, const std::function<bool()>& failed) {
  HETSIM_ASSIGN_OR_RETURN(const engine::LimitedRunEnd end,
                          engine::RunWithinLimits(sim, options.max_events, wall_limit, failure));
  if (end == engine::LimitedRunEnd::kStopped && !failed())
    return absl::InternalError("the simulation stopped unexpectedly");
  return absl::OkStatus();
}

// What the runs of ExecuteOnOneNetwork share: the engine, the network, the faults (null: none), the
// gradient reduction (null: each stage its own buckets); `index` is the run's, `on_run_done` is
// called when its last stage has ended.
struct SharedRun {
  engine::Simulator* sim = nullptr;
  network::Network* network = nullptr;
  faults::FaultRuntime* faults = nullptr;
  SharedGradSync* grad_sync = nullptr;
  int index = 0;
  int first_stage = 0;  // the run's stage 0 among every run's stages, as the faults' outcome names them
  std::function<void()> on_run_done;
  const size_t* runs_left = nullptr;  // the runs that have not ended yet
  SharedGradSync::Admit admit;        // lets a run's pass start (SharedGradSync::PassReady)
};

class Run : private engine::EventHandler, private network::FlowObserver {
 public:
  // With `shared`, the run's events, flows, faults and gradient reduction are the shared ones, beside
  // other runs' (ExecuteOnOneNetwork); otherwise it has its own engine and network, and its options'
  // faults.
  Run(const ExecutionSetup& setup, const ExecutorOptions& options, const SharedRun* shared = nullptr)
      : setup_(setup),
        options_(options),
        dag_(*setup.dag),
        sim_(shared != nullptr ? *shared->sim : own_sim_),
        network_(shared != nullptr ? shared->network : nullptr),
        shared_(shared),
        faults_(shared != nullptr ? shared->faults : nullptr),
        wall_limit_(options.max_wall_seconds, options.wall_start.value_or(WallLimit::Clock::now())) {}

  const WallLimit& wall_limit() const { return wall_limit_; }

  // The shared gradient sync has reduced stage `stage`'s gradients: it steps its optimizer once its
  // last operation has ended.
  void ReleaseStage(int stage) {
    stages_[stage].buckets_done = true;
    StartOptimizerWhenDone(stage);
  }
  // The shared gradient sync has gathered stage `stage`'s updated parameters after its step.
  void FinishStage(int stage) { StageDone(stage); }
  // The shared gradient sync has gathered stage `stage`'s parameters at the iteration's start.
  void GatheredStage(int stage) {
    const NodeId first = FirstForward(stage, 0);
    if (--pending_[first] == 0) Start(first);
  }
  // The shared gradient sync lets compute node `id`, ready since ready_at_[id], start (GatesPasses), or,
  // its duration run, end (HeldAtEnd).
  void Admit(NodeId id) {
    if (ran_until_[id] != kNoTime) {
      Finish(id);
      return;
    }
    r_.gather_call_wait[dag_.node(id).stage] += sim_.now() - ready_at_[id];
    Start(id);
  }
  const absl::Status& failure() const { return failure_; }

  absl::StatusOr<ExecutionResult> Go() {
    HETSIM_RETURN_IF_ERROR(Begin());
    HETSIM_RETURN_IF_ERROR(RunEvents(
        sim_, options_, wall_limit_, [this] { return failure_; },
        [this] { return faults_ && faults_->outcome().failed; }));
    return End();
  }

  // Everything before the first event: the network (unless shared), the state, the first nodes.
  absl::Status Begin() {
    if (network_ == nullptr) {
      HETSIM_ASSIGN_OR_RETURN(own_network_, network::Network::Create(&sim_, collectives::NetworkLinks(*setup_.topology),
                                                                     setup_.network_mode));
      network_ = own_network_.get();
    }
    HETSIM_RETURN_IF_ERROR(PrepareGradSync());
    if (shared_ == nullptr && options_.faults != nullptr && !options_.faults->empty()) {
      own_faults_ = std::make_unique<faults::FaultRuntime>(*options_.faults, setup_.topology->num_gpus(), &sim_,
                                                           network_, [this](int) { sim_.Stop(); });
      faults_ = own_faults_.get();
    }

    const int n = dag_.num_nodes();
    const int S = setup_.num_stages();
    pending_.resize(n);
    flows_left_.assign(n, 0);
    r_.node_start.assign(n, kNoTime);
    r_.node_finish.assign(n, kNoTime);
    if (options_.record_flows) {
      r_.flow_offset.assign(n + 1, 0);
      for (NodeId id = 0; id < n; ++id)
        r_.flow_offset[id + 1] = r_.flow_offset[id] + static_cast<int64_t>(Flows(id).size());
      r_.flow_finish.assign(r_.flow_offset[n], kNoTime);
    }
    r_.last_backward_end.assign(S, 0);
    r_.grad_sync_end.assign(S, 0);
    r_.optimizer_start.assign(S, 0);
    r_.stage_end.assign(S, 0);
    r_.overlap_contention.assign(S, 0);
    r_.gather_call_wait.assign(S, 0);
    ready_at_.assign(GatesPasses() ? n : 0, kNoTime);
    ran_until_.assign(GatesPasses() ? n : 0, kNoTime);
    end_held_.assign(GatesPasses() ? n : 0, false);
    contention_.resize(S);
    node_generation_.assign(n, 0);
    stages_.resize(S);
    last_op_.assign(S, -1);
    for (int s = 0; s < S; ++s) {
      const auto& order = dag_.stage_compute_order()[s];
      if (!order.empty()) last_op_[s] = order.back();
      stages_[s].ready.assign(setup_.stages[s].grad_buckets.size(), false);
    }
    stages_left_ = S;

    for (NodeId id = 0; id < n; ++id) pending_[id] = static_cast<int32_t>(dag_.predecessors(id).size());
    // First: a failure wins a tie with work ending at its time (shared faults started before every run).
    if (own_faults_) own_faults_->Start();
    for (int s = 0; s < S; ++s) StartEarlyGathers(s);
    if (GradSyncShared() && shared_->grad_sync->GathersAtStart()) {
      for (int s = 0; s < S; ++s) ++pending_[FirstForward(s, 0)];
    }
    for (NodeId id = 0; id < n; ++id) {
      if (pending_[id] == 0) Start(id);
    }
    if (options_.link_sample_period > 0) Sample();
    return absl::OkStatus();
  }

  // After the last event: the run's checks and figures (the network's are every run's on it).
  absl::StatusOr<ExecutionResult> End() {
    if (!failure_.ok()) return failure_;
    if (faults_) CloseFaults();
    if (!r_.faults.failed && (stages_left_ != 0 || r_.node_finish[dag_.sink()] < 0)) {
      return absl::InternalError("the iteration did not complete: a DAG node or a collective never became ready");
    }
    r_.events = sim_.events_processed();
    r_.flows = network_->stats().flows_started;
    r_.network_stats = network_->stats();
    // The network's counters, once: a shared network's go with the first run (ExecuteOnOneNetwork).
    if (shared_ == nullptr || shared_->index == 0) {
      r_.link_counters.reserve(network_->num_links());
      for (LinkId l : IdsBelow<LinkId>(network_->num_links())) r_.link_counters.push_back(network_->link_counters(l));
    }
    return std::move(r_);
  }

 private:
  struct StageState {
    std::vector<bool> ready;  // per gradient bucket
    int next = 0;             // next bucket to launch
    bool in_flight = false;
    int groups_left = 0;
    Time step_start = 0;
    bool optimizer_started = false;
    // The optimizer step starts once the stage's last operation and every bucket have ended: under
    // interleaving a chunk with nothing to reduce may end after the buckets of the others.
    bool last_op_done = false;
    bool buckets_done = false;
    int early_done = 0;                 // early parameter gathers ended (Plan.overlap_param_gather)
    bool collective_in_flight = false;  // a step with collectives on the network (not an empty one)
  };

  // When compute node `id`, starting now, ends: its stage's compute stretched by stragglers and
  // jitter (sim/faults/compute_model.h), then its tensor-parallel collectives at fabric speed.
  Time ComputeFinish(NodeId id) {
    const Time d = setup_.durations[id];
    if (!faults_ || !faults_->stretches_compute()) return sim_.now() + d;
    const pipeline::DagNode& node = dag_.node(id);
    const bool forward = node.kind == NodeKind::kForward;
    const VirtualStageCost& vs = setup_.virtual_stages[node.virtual_stage];
    const uint64_t task = faults::TaskKey(forward ? 0 : 1, node.microbatch, node.virtual_stage);
    if (!vs.replica_groups.empty()) return MixedComputeFinish(id, vs, d, task);
    const Time work = std::min(d, forward ? vs.cost.forward_time : vs.cost.backward_time);
    return faults_->TaskFinish(FaultStage(node.stage), setup_.stages[node.stage].layout.gpus, sim_.now(), work, task) +
           (d - work);
  }

  // A mixed stage's pass: each replica group's compute stretched on its own GPUs, then the rest of its own
  // pass; a group with slack behind the slowest (its wait) absorbs a straggler up to that slack. Each
  // group's part as it ran goes to ExecutionResult::group_busy.
  Time MixedComputeFinish(NodeId id, const VirtualStageCost& vs, Time d, uint64_t task) {
    const pipeline::DagNode& node = dag_.node(id);
    const bool forward = node.kind == NodeKind::kForward;
    const StageLayout& layout = setup_.stages[node.stage].layout;
    std::vector<faults::FaultRuntime::TaskPart> parts;
    for (size_t g = 0; g < vs.replica_groups.size(); ++g) {
      const VirtualStageCost& mine = vs.replica_groups[g];
      const Time slack = forward ? vs.forward_time() - mine.forward_time() : vs.backward_time() - mine.backward_time();
      const Time work = std::min(d, forward ? mine.cost.forward_time : mine.cost.backward_time);
      parts.push_back({layout.replica_groups[g].gpus, work, std::max<Time>(0, d - slack - work)});
    }
    if (r_.group_busy.empty()) r_.group_busy.resize(static_cast<size_t>(dag_.num_nodes()));
    std::vector<Time>& busy = r_.group_busy[static_cast<size_t>(id)];
    const Time finish = faults_->TaskFinish(FaultStage(node.stage), parts, sim_.now(), task, &busy);
    for (Time& end : busy) end -= sim_.now();
    return finish;
  }

  // A FAIL fault stopped the run: close what was running at the failure (see ExecutionResult).
  void CloseFaults() {
    if (own_faults_) own_faults_->Stop();  // shared ones: stopped once, after every run
    if (own_faults_) {
      r_.faults = faults_->outcome();
    } else {  // the transitions and effects stay with the shared run (SharedRunResults::faults)
      r_.faults.failed = faults_->outcome().failed;
      r_.faults.failed_at = faults_->outcome().failed_at;
      r_.faults.failed_fault = faults_->outcome().failed_fault;
    }
    if (!r_.faults.failed) return;
    const Time t = r_.faults.failed_at;
    for (NodeId id = 0; id < dag_.num_nodes(); ++id) {
      if (r_.node_start[id] < 0 || r_.node_finish[id] >= 0) continue;
      r_.node_finish[id] = t;
      r_.interrupted.push_back(id);
      if (!options_.record_flows) continue;
      for (int64_t j = r_.flow_offset[id]; j < r_.flow_offset[id + 1]; ++j) {
        if (r_.flow_finish[j] < 0) r_.flow_finish[j] = t;
      }
    }
    for (int s = 0; s < setup_.num_stages(); ++s) {
      if (!stages_[s].optimizer_started) r_.optimizer_start[s] = kNoTime;
    }
    r_.iteration_time = t;
  }

  const std::vector<BoundaryFlow>& Flows(NodeId id) const {
    static const std::vector<BoundaryFlow> kNone;
    const pipeline::DagNode& node = dag_.node(id);
    if (node.kind == NodeKind::kCommForward) return setup_.boundaries[node.virtual_stage].forward_flows;
    if (node.kind == NodeKind::kCommBackward) return setup_.boundaries[node.virtual_stage].backward_flows;
    return kNone;
  }

  // The representatives of a boundary transfer's flows (--boundary-flows representative), per
  // boundary and direction, computed when the transfer first runs.
  const std::vector<RepresentativeFlow>& Representatives(NodeId id) {
    const pipeline::DagNode& node = dag_.node(id);
    const auto key = std::make_pair(node.virtual_stage, node.kind == NodeKind::kCommForward);
    auto it = representatives_.find(key);
    if (it == representatives_.end()) {
      it = representatives_.emplace(key, RepresentativeFlows(*setup_.topology, Flows(id))).first;
    }
    return it->second;
  }

  // The route summaries of a boundary transfer's flows (Network::SummarizeRoute), per boundary and
  // direction, computed when the transfer first runs and again after a capacity change: every
  // micro-batch's transfer starts the same flows, and summarizing each route read two link records per
  // hop of every flow (2.2 M boundary flows in the exact 16K-GPU run).
  const std::vector<network::Network::RouteSummary>& Summaries(NodeId id) {
    const pipeline::DagNode& node = dag_.node(id);
    std::vector<network::Network::RouteSummary>& summaries =
        summaries_[std::make_pair(node.virtual_stage, node.kind == NodeKind::kCommForward)];
    const std::vector<BoundaryFlow>& flows = Flows(id);
    if (summaries.size() != flows.size() || summaries.front().capacities_version != network_->capacities_version()) {
      summaries.clear();
      for (const BoundaryFlow& f : flows) summaries.push_back(network_->SummarizeRoute(f.route));
    }
    return summaries;
  }

  // One transfer graph per (stage, collective, bytes, group: SyncGroupsOf), built before the run.
  absl::Status PrepareGradSync() {
    for (int s = 0; s < setup_.num_stages(); ++s) {
      const StageSetup& st = setup_.stages[s];
      std::vector<GradSyncStep> steps = st.grad_buckets;
      if (st.param_gather) steps.push_back(*st.param_gather);
      steps.insert(steps.end(), st.early_param_gathers.begin(), st.early_param_gathers.end());
      for (const GradSyncStep& step : steps) {
        for (const bool experts : {false, true}) {
          const int64_t bytes = step.BytesOf(experts);
          if (bytes <= 0) continue;
          const std::vector<std::vector<GpuId>> groups = SyncGroupsOf(st.layout, experts);
          for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
            auto key = std::make_tuple(s, static_cast<int>(step.op), bytes, experts, g);
            if (graphs_.contains(key)) continue;
            collectives::CollectiveRequest request;
            request.op = step.op;
            request.gpus = groups[g];
            request.bytes = bytes;
            request.ring_steps = options_.grad_sync_ring_steps;
            HETSIM_RETURN_IF_ERROR(collectives::ValidateRequest(*setup_.topology, request));
            HETSIM_ASSIGN_OR_RETURN(collectives::ShapeChoice choice,
                                    collectives::ChooseShape(*setup_.topology, *setup_.router, request));
            graph_store_.push_back(collectives::BuildTransferGraph(*setup_.topology, request, choice.shape));
            HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check("building the gradient synchronisation's transfers"));
            graphs_.emplace(key, &graph_store_.back());
          }
        }
      }
    }
    return absl::OkStatus();
  }

  void Start(NodeId id) {
    r_.node_start[id] = sim_.now();
    const pipeline::DagNode& node = dag_.node(id);
    switch (node.kind) {
      case NodeKind::kForward:
      case NodeKind::kBackward: {
        if (Gated(id)) return;
        if (!computed_) r_.pipeline_start = sim_.now();  // events come in time order: the first is the earliest
        computed_ = true;
        const Time finish = ComputeFinish(id);
        if (setup_.first_bucket[id] >= 0 && plan().overlap_grad_reduce) {
          ScheduleBuckets(node.stage, setup_.first_bucket[id], finish - sim_.now());
        }
        if (GradSyncShared() && id == last_op_[node.stage] && !MayBeHeld(id)) {
          shared_->grad_sync->LastBackwardStarted(shared_->index, node.stage, finish);
        }
        if (setup_.stages[node.stage].nccl_sm_share > 0) {
          BeginContended(node.stage, id, finish);
          return;
        }
        sim_.Schedule(finish, this, Payload(kNodeDone, id));
        return;
      }
      case NodeKind::kCommForward:
      case NodeKind::kCommBackward: {
        const std::vector<BoundaryFlow>& flows = Flows(id);
        if (flows.empty()) {
          sim_.ScheduleAfter(0, this, Payload(kNodeDone, id));
          return;
        }
        if (options_.boundary_flows == BoundaryFlows::kRepresentative) {
          StartRepresentatives(id, flows);
          return;
        }
        flows_left_[id] = static_cast<int32_t>(flows.size());
        const std::vector<network::Network::RouteSummary>& summaries = Summaries(id);
        for (size_t j = 0; j < flows.size(); ++j) {
          // A few flows ahead: the route's link ids, which the start copies (the router's vectors,
          // scattered over the heap: a miss per flow).
          if (j + kRoutesAhead < flows.size()) __builtin_prefetch(flows[j + kRoutesAhead].route.data());
          network_->StartFlow(flows[j].route, summaries[j], flows[j].bytes, this, (uint64_t(id) << 32) | j);
        }
        return;
      }
      case NodeKind::kSink: Finish(id); return;
    }
  }

  // --boundary-flows representative: one (weighted) flow per group of the transfer's flows; flow tag
  // k names the group.
  void StartRepresentatives(NodeId id, const std::vector<BoundaryFlow>& flows) {
    const std::vector<RepresentativeFlow>& reps = Representatives(id);
    flows_left_[id] = static_cast<int32_t>(reps.size());
    for (size_t k = 0; k < reps.size(); ++k) {
      const BoundaryFlow& f = flows[reps[k].flow];
      const uint64_t tag = (uint64_t(id) << 32) | k;
      if (reps[k].weights.empty()) {
        network_->StartFlow(f.route, f.bytes, this, tag);
      } else {
        network_->StartWeightedFlow(f.route, reps[k].weights, f.bytes, this, tag);
      }
    }
  }

  // ZeRO-3 across pipelines: compute node `id`'s duration has run; whether it ends later, a later layer
  // range's layers waiting for that range's gather call (SharedGradSync::PassEnd). The wait counts as the
  // stage's gather-call wait and the pass is recorded as starting that much later (its busy time stays its
  // duration; the end is the same). Asked once per pass, again when the sync admits it.
  bool HeldAtEnd(NodeId id) {
    const NodeKind kind = dag_.node(id).kind;
    if (!GatesPasses() || end_held_[id] || (kind != NodeKind::kForward && kind != NodeKind::kBackward)) return false;
    if (ran_until_[id] == kNoTime) ran_until_[id] = sim_.now();
    const std::optional<Time> end = shared_->grad_sync->PassEnd(shared_->index, id, r_.node_start[id], ran_until_[id]);
    if (!end) return true;  // the sync admits it once the calls have started
    end_held_[id] = true;
    const int stage = dag_.node(id).stage;
    // A stage's last backward that may be held tells the sync its end only now (its ranges' reductions
    // wait for it; with overlap_grad_reduce its buckets are ready from now to its end).
    if (id == last_op_[stage] && MayBeHeld(id)) {
      shared_->grad_sync->LastBackwardStarted(shared_->index, stage, std::max(*end, sim_.now()));
    }
    if (*end <= ran_until_[id]) return false;
    r_.gather_call_wait[stage] += *end - ran_until_[id];
    r_.node_start[id] += *end - ran_until_[id];
    if (*end <= sim_.now()) return false;
    sim_.Schedule(*end, this, Payload(kNodeDone, id));
    return true;
  }

  void Finish(NodeId id) {
    if (HeldAtEnd(id)) return;
    r_.node_finish[id] = sim_.now();
    const pipeline::DagNode& node = dag_.node(id);
    if (node.kind == NodeKind::kSink) r_.pipeline_end = sim_.now();
    if (node.kind != NodeKind::kSink && id == last_op_[node.stage]) LastOpDone(node.stage);
    const bool compute = node.kind == NodeKind::kForward || node.kind == NodeKind::kBackward;
    if (compute && GatesPasses()) shared_->grad_sync->PassDone(shared_->index, id, shared_->admit);
    for (NodeId succ : dag_.successors(id)) {
      if (--pending_[succ] == 0) Start(succ);
    }
  }

  void OnFlowCompleted(network::FlowId, uint64_t tag) override {
    const auto id = static_cast<NodeId>(tag >> 32);
    const auto j = static_cast<int64_t>(tag & 0xffffffffu);
    if (options_.record_flows && options_.boundary_flows == BoundaryFlows::kRepresentative) {
      for (int32_t m : Representatives(id)[j].members) r_.flow_finish[r_.flow_offset[id] + m] = sim_.now();
    } else if (options_.record_flows) {
      r_.flow_finish[r_.flow_offset[id] + j] = sim_.now();
    }
    if (--flows_left_[id] == 0) Finish(id);
  }

  void OnEvent(uint64_t payload) override {
    const uint64_t value = payload & ((uint64_t{1} << kKindShift) - 1);
    switch (static_cast<EventKind>(payload >> kKindShift)) {
      case kNodeDone: Finish(static_cast<NodeId>(value)); return;
      case kBucketReady: {
        const int stage = static_cast<int>(value >> 32);
        stages_[stage].ready[value & 0xffffffffu] = true;
        TryLaunch(stage);
        return;
      }
      case kOptimizerDone: OptimizerDone(static_cast<int>(value)); return;
      case kSample: Sample(); return;
      case kEmptyStepDone: GroupDone(static_cast<int>(value)); return;
      case kTiedSyncDone: AfterLastOp(static_cast<int>(value)); return;
      case kContendedDone: ContendedDone(static_cast<NodeId>(value & 0xffffffffu), value >> 32); return;
      case kReduceChainsDone: StepDone(static_cast<int>(value)); return;
    }
  }

  // Plan.nccl_sm_contention: a stage's compute task runs at 1 - share of its speed while one of the
  // stage's own collectives (a gradient bucket, a parameter gather) is in flight, so work W with o of
  // its time beside them ends at W + share x o (sim/workload/nccl_contention.h). The finish is
  // re-planned whenever the stage's collectives start or end, each plan assuming the state holds.
  struct Contention {
    int active = 0;          // the stage's collectives in flight
    Time since = 0;          // when `active` last changed
    Time busy = 0;           // time with active > 0, up to `since`
    NodeId node = -1;        // the compute task running, or -1
    Time base_finish = 0;    // its finish without contention (stragglers and jitter included)
    Time busy_at_start = 0;  // Busy() when it started
  };

  Time Busy(const Contention& c) const { return c.busy + (c.active > 0 ? sim_.now() - c.since : Time()); }

  void BeginContended(int stage, NodeId id, Time base_finish) {
    Contention& c = contention_[stage];
    c.node = id;
    c.base_finish = base_finish;
    c.busy_at_start = Busy(c);
    ScheduleContended(stage);
  }

  // The running task's finish given what ran beside it so far and the stage's collectives now.
  void ScheduleContended(int stage) {
    const Contention& c = contention_[stage];
    const double share = setup_.stages[stage].nccl_sm_share;
    const double now = TimeToPicosecondsDouble(sim_.now());
    double finish = TimeToPicosecondsDouble(c.base_finish) + share * TimeToPicosecondsDouble(Busy(c) - c.busy_at_start);
    if (c.active > 0) finish = now + (finish - now) / (1 - share);
    const Time at = std::max(sim_.now(), PicosecondsToTime(std::llround(finish)));
    const uint64_t generation = ++node_generation_[c.node] & 0xffffffu;
    sim_.Schedule(at, this, Payload(kContendedDone, (generation << 32) | static_cast<uint64_t>(c.node)));
  }

  void ContendedDone(NodeId id, uint64_t generation) {
    if (generation != (node_generation_[id] & 0xffffffu)) return;  // re-planned since
    const int stage = dag_.node(id).stage;
    r_.overlap_contention[stage] += std::max<Time>(0, sim_.now() - contention_[stage].base_finish);
    contention_[stage].node = -1;
    Finish(id);
  }

  // One of the stage's collectives starts (+1) or ends (-1).
  void CollectiveInFlight(int stage, int delta) {
    if (setup_.stages[stage].nccl_sm_share <= 0) return;
    Contention& c = contention_[stage];
    c.busy = Busy(c);
    c.since = sim_.now();
    c.active += delta;
    if (c.node >= 0) ScheduleContended(stage);
  }

  // Overlapped reduction: the buckets a compute of duration `d` fills, from `first` on, are ready
  // (piece + 1) / pieces of the way through it.
  void ScheduleBuckets(int stage, int first, Time d) {
    const std::vector<BucketReady>& ready = setup_.stages[stage].bucket_ready;
    for (size_t j = first; j < ready.size() && ready[j].node == ready[first].node; ++j) {
      const Time at = sim_.now() + d * (ready[j].piece + 1) / ready[j].pieces;
      sim_.Schedule(at, this, Payload(kBucketReady, (uint64_t(stage) << 32) | j));
    }
  }

  // Plan.overlap_param_gather: the step before's parameter all-gather, chunk by chunk in forward
  // order; each chunk's first forward waits for its own.
  void StartEarlyGathers(int stage) {
    const std::vector<GradSyncStep>& gathers = setup_.stages[stage].early_param_gathers;
    if (gathers.empty()) return;
    for (size_t c = 0; c < gathers.size(); ++c) ++pending_[FirstForward(stage, static_cast<int>(c))];
    LaunchStep(stage, gathers[0]);
  }

  NodeId FirstForward(int stage, int chunk) const { return dag_.Forward(0, chunk * setup_.num_stages() + stage); }

  // An early gather ended: its chunk may start; the next chunk's gather goes out.
  void EarlyGatherDone(int stage) {
    StageState& st = stages_[stage];
    const std::vector<GradSyncStep>& gathers = setup_.stages[stage].early_param_gathers;
    const int chunk = st.early_done++;
    r_.grad_syncs.push_back({stage, chunk, true, st.step_start, sim_.now(), /*at_start=*/true});
    if (st.early_done < static_cast<int>(gathers.size())) LaunchStep(stage, gathers[st.early_done]);
    const NodeId first = FirstForward(stage, chunk);
    if (--pending_[first] == 0) Start(first);
    // A bucket that became ready meanwhile waited for the network (one collective at a time).
    if (st.early_done == static_cast<int>(gathers.size())) TryLaunch(stage);
  }

  void LastOpDone(int stage) {
    r_.last_backward_end[stage] = sim_.now();
    if (setup_.stages[stage].tied_grad_sync_time > 0) {
      TiedStageReady(stage);
      return;
    }
    AfterLastOp(stage);
  }

  // Plan.tied_embedding_grad_sync: the first and the last stage all-reduce the tied embedding's
  // gradients once both have run their last backward (DeepSpeed's ReduceTiedGrads), then go on.
  void TiedStageReady(int stage) {
    if (++tied_ready_ < 2) return;
    const int last = setup_.num_stages() - 1;
    const Time end = sim_.now() + setup_.stages[stage].tied_grad_sync_time;
    sim_.Schedule(end, this, Payload(kTiedSyncDone, 0));
    sim_.Schedule(end, this, Payload(kTiedSyncDone, last));
  }

  // After the stage's last operation (and its tied-gradient all-reduce): the gradient reduction and
  // the optimizer step.
  void AfterLastOp(int stage) {
    StageState& st = stages_[stage];
    st.last_op_done = true;
    if (setup_.stages[stage].grad_buckets.empty() && !GradSyncShared()) st.buckets_done = true;
    if (!plan().overlap_grad_reduce) std::fill(st.ready.begin(), st.ready.end(), true);
    TryLaunch(stage);
    StartOptimizerWhenDone(stage);
  }

  // How the faults' outcome names stage `stage`: among every shared run's stages, in run order.
  int FaultStage(int stage) const { return (shared_ != nullptr ? shared_->first_stage : 0) + stage; }

  // The stage's gradients are reduced by the shared sync (SharedGradSync), not by its own buckets.
  bool GradSyncShared() const { return shared_ != nullptr && shared_->grad_sync != nullptr; }
  // Its passes wait at their ZeRO-3 gathers for the other holders' same calls (SharedGradSync::GatesPasses).
  bool GatesPasses() const { return GradSyncShared() && shared_->grad_sync->GatesPasses(); }
  // Compute node `id` may end after its duration, held at a later layer range's gather call.
  bool MayBeHeld(NodeId id) const { return GatesPasses() && shared_->grad_sync->PassMayBeHeld(shared_->index, id); }

  // Compute node `id` is ready now: whether it waits for the other holders' gather calls (then the sync
  // admits it later, Admit); a node already admitted starts.
  bool Gated(NodeId id) {
    if (!GatesPasses() || ready_at_[id] != kNoTime) return false;
    ready_at_[id] = sim_.now();
    return !shared_->grad_sync->PassReady(shared_->index, id, shared_->admit);
  }

  void TryLaunch(int stage) {
    StageState& st = stages_[stage];
    const StageSetup& setup = setup_.stages[stage];
    if (st.in_flight || st.early_done < static_cast<int>(setup.early_param_gathers.size()) ||
        st.next >= static_cast<int>(setup.grad_buckets.size()) || !st.ready[st.next]) {
      return;
    }
    LaunchStep(stage, setup.grad_buckets[st.next]);
  }

  void LaunchStep(int stage, const GradSyncStep& step) {
    StageState& st = stages_[stage];
    const StageSetup& setup = setup_.stages[stage];
    st.in_flight = true;
    st.step_start = sim_.now();
    // Both parts at once, every group of each: the dense parameters' and the experts'.
    const int dense = step.bytes > 0 ? setup.layout.tensor_parallel : 0;
    const int expert = step.expert_bytes > 0 ? setup.layout.expert_data_groups() : 0;
    if (dense + expert == 0) {  // a model chunk with nothing to gather (its first forward still waits)
      st.groups_left = 1;
      sim_.Schedule(sim_.now(), this, Payload(kEmptyStepDone, stage));
      return;
    }
    st.groups_left = dense + expert;
    st.collective_in_flight = true;
    CollectiveInFlight(stage, 1);
    for (int g = 0; g < dense + expert; ++g) {
      const bool experts = g >= dense;
      const auto key =
          std::make_tuple(stage, static_cast<int>(step.op), step.BytesOf(experts), experts, experts ? g - dense : g);
      executions_.emplace_back(
          network_, setup_.router.get(), graphs_.at(key), [this, stage](Time) { GroupDone(stage); }, &routed_paths_);
      // Routes were checked when the transfer graphs were built; Start cannot fail on them now.
      // It can run out of --max-wall-seconds, though: an 800,000-rank ring routes for minutes.
      if (absl::Status s = executions_.back().Start(&sim_); !s.ok() && failure_.ok()) {
        failure_ = s;
        sim_.Stop();
      }
    }
  }

  void GroupDone(int stage) {
    StageState& st = stages_[stage];
    if (--st.groups_left > 0) return;
    const Time chains = ReduceChainsTime(stage);
    if (chains > 0) {  // the calls' kernels hold the stream (and their SMs) until their chains have drained
      sim_.Schedule(sim_.now() + chains, this, Payload(kReduceChainsDone, stage));
      return;
    }
    StepDone(stage);
  }

  // Plan.zero_reduce_per_rank: what the bucket whose reduce-scatter just ended costs beyond it as DeepSpeed's one
  // Reduce per data-parallel rank (reduce_chains.h); 0 for any other step.
  Time ReduceChainsTime(int stage) {
    const StageState& st = stages_[stage];
    const StageSetup& setup = setup_.stages[stage];
    if (!plan().zero_reduce_per_rank || st.early_done < static_cast<int>(setup.early_param_gathers.size()) ||
        st.next >= static_cast<int>(setup.grad_buckets.size())) {
      return 0;
    }
    const GradSyncStep& bucket = setup.grad_buckets[st.next];
    if (bucket.op != CollectiveOp::kReduceScatter || bucket.bytes <= 0) return 0;
    return ReduceChainsExtraTime(sim_.now() - st.step_start, bucket.bytes, setup.layout.gradient_group_size(),
                                 ChainNodes(stage));
  }

  // The nodes one data-parallel group of the stage spans (every group alike: the TP ranks' groups are laid the same).
  int64_t ChainNodes(int stage) {
    if (chain_nodes_.empty()) chain_nodes_.assign(setup_.stages.size(), -1);
    if (chain_nodes_[stage] >= 0) return chain_nodes_[stage];
    const std::vector<std::vector<GpuId>> groups = SyncGroupsOf(setup_.stages[stage].layout, false);
    return chain_nodes_[stage] =
               static_cast<int64_t>(collectives::GroupByNode(*setup_.topology, groups.front()).size());
  }

  // A synchronisation step's collectives have ended (and a bucket's reduce chains, Plan.zero_reduce_per_rank).
  void StepDone(int stage) {
    StageState& st = stages_[stage];
    st.in_flight = false;
    if (st.collective_in_flight) {
      st.collective_in_flight = false;
      CollectiveInFlight(stage, -1);
    }
    const StageSetup& setup = setup_.stages[stage];
    if (st.early_done < static_cast<int>(setup.early_param_gathers.size())) {
      EarlyGatherDone(stage);
      return;
    }
    const int buckets = static_cast<int>(setup.grad_buckets.size());
    const bool gather = st.next >= buckets;
    r_.grad_syncs.push_back({stage, st.next, gather, st.step_start, sim_.now()});
    if (gather) {
      StageDone(stage);
      return;
    }
    if (++st.next == buckets) {
      st.buckets_done = true;
      StartOptimizerWhenDone(stage);
    } else {
      TryLaunch(stage);
    }
  }

  void StartOptimizerWhenDone(int stage) {
    StageState& st = stages_[stage];
    if (!st.last_op_done || !st.buckets_done || st.optimizer_started) return;
    r_.grad_sync_end[stage] = sim_.now();
    r_.optimizer_start[stage] = sim_.now();
    stages_[stage].optimizer_started = true;
    Time finish = sim_.now() + setup_.stages[stage].optimizer_time;
    if (faults_ && faults_->stretches_compute()) {
      const StageSetup& ss = setup_.stages[stage];
      // A mixed stage: each replica group steps its own shard on its own GPUs.
      std::vector<faults::FaultRuntime::TaskPart> parts;
      for (size_t g = 0; g < ss.replica_groups.size(); ++g)
        parts.push_back({ss.layout.replica_groups[g].gpus, ss.replica_groups[g].optimizer_time, 0});
      if (parts.empty()) parts.push_back({ss.layout.gpus, ss.optimizer_time, 0});
      finish = faults_->TaskFinish(FaultStage(stage), parts, sim_.now(), faults::TaskKey(2, 0, stage));
    }
    sim_.Schedule(finish, this, Payload(kOptimizerDone, stage));
  }

  void OptimizerDone(int stage) {
    if (GradSyncShared() && shared_->grad_sync->GathersAfterStep()) {
      shared_->grad_sync->StepDone(shared_->index, stage);
      return;
    }
    const StageSetup& setup = setup_.stages[stage];
    if (setup.param_gather && setup.early_param_gathers.empty()) {
      LaunchStep(stage, *setup.param_gather);
      return;
    }
    StageDone(stage);
  }

  void StageDone(int stage) {
    r_.stage_end[stage] = sim_.now();
    r_.iteration_time = std::max(r_.iteration_time, sim_.now());
    if (--stages_left_ > 0) return;
    // Nothing pending may outlive the iteration (shared faults: once every run has ended).
    if (own_faults_) own_faults_->Stop();
    if (shared_ != nullptr && shared_->on_run_done) shared_->on_run_done();
  }

  void Sample() {
    if (sample_period_ == 0) sample_period_ = options_.link_sample_period;
    r_.sample_times.push_back(sim_.now());
    for (LinkId l : options_.sampled_links) r_.link_busy.push_back(network_->link_counters(l).busy_time);
    if (r_.sample_times.size() >= kMaxLinkSamples) ThinSamples();
    const bool others_left = options_.sample_whole_shared_run && shared_ != nullptr && shared_->runs_left != nullptr &&
                             *shared_->runs_left > 0;
    if (stages_left_ > 0 || others_left) sim_.ScheduleAfter(sample_period_, this, Payload(kSample, 0));
  }

  // The period is set from the fault-free critical path (about 200 samples an iteration); a straggler 1000 times
  // slower made 200,000 samples of every traced link (a trace of 900 MB, 14 GB of memory at 100,000 times). At
  // kMaxLinkSamples every other sample goes and the period doubles: the busy times are cumulative, so the busy
  // share between the samples kept is exact, and the run keeps fewer than kMaxLinkSamples samples.
  void ThinSamples() {
    const size_t links = options_.sampled_links.size();
    size_t kept = 0;
    for (size_t i = 0; i < r_.sample_times.size(); i += 2, ++kept) {
      r_.sample_times[kept] = r_.sample_times[i];
      std::copy_n(r_.link_busy.begin() + static_cast<std::ptrdiff_t>(i * links), links,
                  r_.link_busy.begin() + static_cast<std::ptrdiff_t>(kept * links));
    }
    r_.sample_times.resize(kept);
    r_.link_busy.resize(kept * links);
    sample_period_ *= 2;
  }

  const spec::PlanSpec& plan() const { return setup_.spec.plan; }

  const ExecutionSetup& setup_;
  const ExecutorOptions& options_;
  const pipeline::PipelineDag& dag_;
  engine::Simulator own_sim_;
  engine::Simulator& sim_;
  std::unique_ptr<network::Network> own_network_;
  network::Network* network_ = nullptr;
  const SharedRun* shared_ = nullptr;
  faults::FaultRuntime* faults_ = nullptr;  // own_faults_ or the shared ones; null without faults
  std::vector<int32_t> pending_;
  std::vector<Time> ready_at_;   // per compute node, when it was ready (GatesPasses; kNoTime: not yet)
  std::vector<Time> ran_until_;  // per compute node, when its duration had run (GatesPasses; kNoTime: not yet)
  std::vector<bool> end_held_;   // per compute node, its end decided (HeldAtEnd)
  std::vector<int32_t> flows_left_;
  std::vector<NodeId> last_op_;
  bool computed_ = false;  // a compute node has started
  std::vector<StageState> stages_;
  std::vector<Contention> contention_;     // per stage (Plan.nccl_sm_contention)
  std::vector<uint32_t> node_generation_;  // per DAG node: how often its contended finish was planned
  std::vector<int64_t> chain_nodes_;       // per stage: the nodes a DP group spans (ChainNodes; -1: not yet)
  int stages_left_ = 0;
  Time sample_period_ = 0;  // link samples' period: options_.link_sample_period, doubled by ThinSamples
  int tied_ready_ = 0;      // stages (first, last) whose last backward ended, for the tied all-reduce
  std::deque<collectives::TransferGraph> graph_store_;
  // (stage, op, bytes, experts, group index) -> the group's transfer graph (SyncGroupsOf).
  std::map<std::tuple<int, int, int64_t, bool, int>, const collectives::TransferGraph*> graphs_;
  // The graphs' routes on network_, shared by their executions (declared before them: it outlives them).
  collectives::RoutedPathsCache routed_paths_;
  std::deque<collectives::CollectiveExecution> executions_;
  std::map<std::pair<int, bool>, std::vector<RepresentativeFlow>> representatives_;
  std::map<std::pair<int, bool>, std::vector<network::Network::RouteSummary>> summaries_;  // Summaries()
  static constexpr size_t kRoutesAhead = 4;
  absl::Status failure_;
  const WallLimit wall_limit_;
  std::unique_ptr<faults::FaultRuntime> own_faults_;
  ExecutionResult r_;
};

}  // namespace

absl::StatusOr<BoundaryFlows> ParseBoundaryFlows(absl::string_view name) {
  if (name == "all") return BoundaryFlows::kAll;
  if (name == "representative") return BoundaryFlows::kRepresentative;
  return absl::InvalidArgumentError(absl::StrFormat("boundary-flows: \"%s\" is not one of all, representative", name));
}

absl::StatusOr<ExecutionResult> Execute(const ExecutionSetup& setup, const ExecutorOptions& options) {
  Run run(setup, options);
  // Building and starting the collectives are long too; each checks the thread's limit (without one
  // of its own, the caller's holds).
  std::optional<WallLimitScope> scope;
  if (run.wall_limit().limited()) scope.emplace(run.wall_limit());
  return run.Go();
}

namespace {

// The faults every run of ExecuteOnOneNetwork shares: one set, or none.
absl::StatusOr<const faults::FaultSet*> SharedFaults(std::span<const ExecutorOptions> options) {
  const faults::FaultSet* set = options.front().faults;
  for (const ExecutorOptions& o : options) {
    if (o.faults != set) return absl::InternalError("runs on one network must share one set of faults");
  }
  return set != nullptr && !set->empty() ? set : nullptr;
}

// The runs' shared network, faults and gradient sync, built in that order; `failed` when a FAIL fault
// stopped the engine.
struct SharedState {
  engine::Simulator sim;
  std::unique_ptr<network::Network> network;
  std::unique_ptr<faults::FaultRuntime> faults;
  bool failed = false;
};

}  // namespace

absl::StatusOr<SharedRunResults> ExecuteOnOneNetwork(std::span<const ExecutionSetup* const> setups,
                                                     std::span<const ExecutorOptions> options,
                                                     SharedGradSync* grad_sync) {
  HETSIM_CHECK(!setups.empty() && setups.size() == options.size(), "one options per setup, at least one setup");
  HETSIM_ASSIGN_OR_RETURN(const faults::FaultSet* fault_set, SharedFaults(options));
  SharedState state;
  HETSIM_ASSIGN_OR_RETURN(state.network,
                          network::Network::Create(&state.sim, collectives::NetworkLinks(*setups.front()->topology),
                                                   setups.front()->network_mode));
  if (fault_set != nullptr) {
    state.faults = std::make_unique<faults::FaultRuntime>(*fault_set, setups.front()->topology->num_gpus(), &state.sim,
                                                          state.network.get(), [&state](int) {
                                                            state.failed = true;
                                                            state.sim.Stop();
                                                          });
  }
  std::vector<std::unique_ptr<Run>> runs;
  std::deque<SharedRun> shared(setups.size());
  size_t runs_left = setups.size();
  int first_stage = 0;
  if (grad_sync != nullptr) {
    HETSIM_RETURN_IF_ERROR(grad_sync->Begin(
        &state.sim, state.network.get(), [&runs](int run, int stage) { runs[run]->ReleaseStage(stage); },
        [&runs](int run, int stage) { runs[run]->FinishStage(stage); },
        [&runs](int run, int stage) { runs[run]->GatheredStage(stage); }));
  }
  if (state.faults) state.faults->Start();  // first: a failure wins a tie with work ending at its time
  std::optional<WallLimitScope> scope;      // as in Execute: the first run's limit, else the caller's
  for (size_t i = 0; i < setups.size(); ++i) {
    shared[i] = {&state.sim,
                 state.network.get(),
                 state.faults.get(),
                 grad_sync,
                 static_cast<int>(i),
                 first_stage,
                 [&] {
                   // Nothing pending may outlive the iteration: the faults stop when every run has ended.
                   if (--runs_left == 0 && state.faults) state.faults->Stop();
                 },
                 &runs_left,
                 [&runs](int run, int node) { runs[run]->Admit(node); }};
    first_stage += setups[i]->num_stages();
    runs.push_back(std::make_unique<Run>(*setups[i], options[i], &shared[i]));
    if (i == 0 && runs.front()->wall_limit().limited()) scope.emplace(runs.front()->wall_limit());
    HETSIM_RETURN_IF_ERROR(runs.back()->Begin());
  }
  const auto failure = [&runs, grad_sync] {
    for (const auto& run : runs) {
      if (!run->failure().ok()) return run->failure();
    }
    return grad_sync != nullptr ? grad_sync->failure() : absl::OkStatus();
  };
  HETSIM_RETURN_IF_ERROR(
      RunEvents(state.sim, options.front(), runs.front()->wall_limit(), failure, [&state] { return state.failed; }));
  if (state.faults && state.failed) state.faults->Stop();  // the failure's time closes what was down
  SharedRunResults out;
  if (state.faults) out.faults = state.faults->outcome();
  for (size_t i = 0; i < runs.size(); ++i) {
    HETSIM_ASSIGN_OR_RETURN(ExecutionResult r, runs[i]->End());
    if (i > 0) {
      // The events, flows and link counters are the shared network's: counted once, with the first
      // (the others' link_counters are empty: a run costs its own links, not the cluster's).
      r.events = 0;
      r.flows = 0;
      r.network_stats = {};
    }
    out.results.push_back(std::move(r));
  }
  return out;
}

Time EarlyGatherWait(const ExecutionSetup& setup, const ExecutionResult& result, int stage) {
  const pipeline::PipelineDag& dag = *setup.dag;
  Time wait = 0;
  for (const GradSyncRecord& g : result.grad_syncs) {
    if (g.stage != stage || !g.at_start) continue;
    Time others = 0;  // when the forward's DAG predecessors had all ended
    bool all_ended = true;
    for (NodeId p : dag.predecessors(dag.Forward(0, g.step * setup.num_stages() + stage))) {
      all_ended = all_ended && result.node_finish[p] >= 0;
      others = std::max(others, result.node_finish[p]);
    }
    if (all_ended) wait += std::max<Time>(0, g.finish - others);
  }
  return wait;
}

Time GroupWaitIn(const ExecutionSetup& setup, const ExecutionResult& result, NodeId id, int group) {
  const auto at = static_cast<size_t>(id);
  if (result.node_start[at] < 0 || result.node_finish[at] < 0) return 0;
  const Time ran = result.node_finish[at] - result.node_start[at];
  Time span = 0, mine = 0;
  if (at < result.group_busy.size() && !result.group_busy[at].empty()) {
    const std::vector<Time>& busy = result.group_busy[at];
    span = *std::max_element(busy.begin(), busy.end());
    mine = busy[static_cast<size_t>(group)];
  } else {
    const pipeline::DagNode& node = setup.dag->node(id);
    const VirtualStageCost& vs = setup.virtual_stages[node.virtual_stage];
    const VirtualStageCost& own = vs.replica_groups[static_cast<size_t>(group)];
    const Time slack = node.kind == NodeKind::kForward ? vs.forward_time() - own.forward_time()
                                                       : vs.backward_time() - own.backward_time();
    span = setup.durations[at];
    mine = std::max<Time>(0, span - slack);
  }
  return std::min(span, ran) - std::min(mine, ran);
}

std::vector<std::pair<Time, int64_t>> MemoryTimeline(const ExecutionSetup& setup, const ExecutionResult& result,
                                                     int stage, int group) {
  const pipeline::PipelineDag& dag = *setup.dag;
  const workload::StageMemory& memory =
      group < 0 ? setup.stages[stage].cost.memory : setup.stages[stage].replica_groups[group].cost.memory;
  struct Change {
    Time time;
    int64_t delta;
  };
  std::vector<Change> changes;
  for (NodeId id : dag.stage_compute_order()[stage]) {
    const pipeline::DagNode& node = dag.node(id);
    const VirtualStageCost& vs = setup.virtual_stages[node.virtual_stage];
    const int64_t bytes = (group < 0 ? vs.cost : vs.replica_groups[group].cost).memory.activation_bytes_per_microbatch;
    // Nodes a failure left unstarted (-1) never allocated nor freed anything.
    if (node.kind == NodeKind::kForward && result.node_start[id] >= 0)
      changes.push_back({result.node_start[id], bytes});
    if (node.kind == NodeKind::kBackward && result.node_finish[id] >= 0)
      changes.push_back({result.node_finish[id], -bytes});
  }
  std::stable_sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    return a.time != b.time ? a.time < b.time : a.delta < b.delta;
  });
  std::vector<std::pair<Time, int64_t>> out;
  int64_t live = 0;
  out.emplace_back(Time(), memory.ModelStateBytes());
  for (const Change& c : changes) {
    live += c.delta;
    // A backward under full recompute needs one layer's full activations while anything is live.
    const int64_t bytes = memory.ModelStateBytes() + live + (live > 0 ? memory.recompute_working_bytes : 0);
    if (out.back().first == c.time) {
      out.back().second = bytes;
    } else {
      out.emplace_back(c.time, bytes);
    }
  }
  return out;
}

}  // namespace hetsim::executor
