#include "sim/executor/layer_range_sync.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "sim/collectives/algorithms.h"
#include "sim/collectives/execution.h"
#include "sim/collectives/simulate.h"
#include "sim/engine/simulator.h"
#include "sim/executor/gather_calls.h"
#include "sim/workload/stage_cost.h"

namespace hetsim::executor {
namespace {

// The stage of `setup` that holds layer `layer`.
int StageHolding(const ExecutionSetup& setup, int layer) {
  const std::vector<spec::StageSpec>& stages = setup.spec.plan.stages;
  for (int s = 0; s < static_cast<int>(stages.size()); ++s) {
    if (layer >= stages[s].first_layer && layer < stages[s].first_layer + stages[s].num_layers) return s;
  }
  HETSIM_CHECK(false, "layer %d is in no stage (the plan check covers every layer)", layer);
  return -1;
}

// Shard j of the finest TP split `shards`: every holder's GPUs of TP rank j x t / shards (t each replica's:
// a mixed stage's groups each their own), each replica's context-parallel ranks in turn (a holder's
// pipeline's context_parallel: every CP rank holds the whole shard), StageLayout::DataGroup's order.
std::vector<std::vector<GpuId>> ShardGroups(const std::vector<const ExecutionSetup*>& setups,
                                            const std::vector<LayerRangeHolder>& holders, int shards) {
  std::vector<std::vector<GpuId>> groups(shards);
  for (int j = 0; j < shards; ++j) {
    for (const LayerRangeHolder& h : holders) {
      const StageLayout& l = setups[h.pipeline]->stages[h.stage].layout;
      for (int r = 0; r < l.data_parallel; ++r) {
        for (int c = 0; c < l.context_parallel; ++c)
          groups[j].push_back(l.Gpu(r, j * l.ReplicaTensorParallel(r) / shards, c));
      }
    }
  }
  return groups;
}

// The ranges' all-reduces as the pipelines' shared gradient reduction: a range starts once each of its
// holders has run its layers' last backward, on the pipelines' engine and network; a stage is released
// to its optimizer step once all its ranges have ended.
class RangeSync : public SharedGradSync, private engine::EventHandler {
 public:
  RangeSync(const std::vector<const ExecutionSetup*>& setups, std::vector<LayerRangeGroup>& groups,
            collectives::RingSteps ring_steps)
      : setups_(setups), groups_(groups), ring_steps_(ring_steps), calls_(setups, groups) {}

  // ZeRO-3: each pass waits at its ranges' gathers for every holder's same call (gather_calls.h).
  bool GatesPasses() const override { return !calls_.empty(); }
  bool PassReady(int run, int node, const Admit& admit) override { return calls_.Ready(run, node, sim_->now(), admit); }
  std::optional<Time> PassEnd(int run, int node, Time start, Time end) override {
    return calls_.PassEnd(run, node, start, end);
  }
  bool PassMayBeHeld(int run, int node) const override { return calls_.MayHold(run, node); }
  void PassDone(int run, int node, const Admit& admit) override { calls_.Done(run, node, sim_->now(), admit); }
  std::string StuckGathers() const { return calls_.Stuck(setups_); }

  absl::Status Begin(engine::Simulator* sim, network::Network* network, Release release, Release finish,
                     Release gathered) override {
    sim_ = sim;
    network_ = network;
    release_ = std::move(release);
    finish_ = std::move(finish);
    gathered_ = std::move(gathered);
    const bool at_start = setups_.front()->spec.plan.overlap_param_gather;
    for (const ExecutionSetup* setup : setups_) ranges_of_.emplace_back(setup->num_stages(), 0);
    gathers_of_ = ranges_of_;
    for (size_t g = 0; g < groups_.size(); ++g) {
      LayerRangeGroup& group = groups_[g];
      // ZeRO-3 reduce-scatters too, and gathers nothing after the step: its passes gather each layer
      // (ExecutionSetup::range_gathers).
      const bool zero = group.zero_stage == 1 || group.zero_stage == 2;
      any_zero_ = any_zero_ || zero;
      group.gather_at_start = zero && at_start;
      // The dense buckets, then the experts' (ExpertBuckets).
      buckets_.push_back(RangeBuckets(group));
      dense_buckets_.push_back(static_cast<int>(buckets_.back().size()));
      for (const int64_t b : ExpertBuckets(group)) buckets_.back().push_back(b);
      group.bucket_start.assign(buckets_.back().size(), kNoTime);
      group.bucket_finish.assign(buckets_.back().size(), kNoTime);
      HETSIM_RETURN_IF_ERROR(BuildBucketGraphs(group, group.zero_stage > 0, buckets_.back(), dense_buckets_.back()));
      gathers_.emplace_back();
      if (zero) HETSIM_RETURN_IF_ERROR(BuildGathers(group, gathers_.back()));
      holders_left_.emplace_back(buckets_.back().size(), static_cast<int>(group.holders.size()));
      ready_.emplace_back(buckets_.back().size(), false);
      next_.push_back(0);
      in_flight_.push_back(false);
      steps_left_.push_back(static_cast<int>(group.holders.size()));
      for (const LayerRangeHolder& h : group.holders) {
        ++ranges_of_[h.pipeline][h.stage];
        ++gathers_of_[h.pipeline][h.stage];
      }
    }
    HETSIM_CHECK(!any_zero_ || std::all_of(groups_.begin(), groups_.end(),
                                           [](const LayerRangeGroup& g) { return g.zero_stage > 0; }),
                 "every range or none gathers (the plan check requires one zero_stage)");
    gathers_at_start_ = any_zero_ && at_start;
    gathers_after_step_ = any_zero_ && !at_start;
    // Plan.overlap_param_gather: the step before's gathers go out at the start, once every run has begun.
    if (gathers_at_start_) sim_->Schedule(sim_->now(), this, kStartGathers);
    return absl::OkStatus();
  }

  bool GathersAfterStep() const override { return gathers_after_step_; }
  bool GathersAtStart() const override { return gathers_at_start_; }

  // Holder (run, stage) has stepped its shards: a range whose holders all have gathers its parameters.
  void StepDone(int run, int stage) override {
    for (size_t g = 0; g < groups_.size(); ++g) {
      for (const LayerRangeHolder& h : groups_[g].holders) {
        if (h.pipeline != run || h.stage != stage || --steps_left_[g] > 0) continue;
        groups_[g].gather_start = sim_->now();
        StartAll(gathers_[g], [this, g] { GatherDone(static_cast<int>(g)); });
      }
    }
  }

  void LastBackwardStarted(int run, int stage, Time finish) override {
    for (size_t g = 0; g < groups_.size(); ++g) {
      for (const LayerRangeHolder& h : groups_[g].holders) {
        if (h.pipeline != run || h.stage != stage) continue;
        const int n = dense_buckets_[g];
        for (int k = 0; k < static_cast<int>(buckets_[g].size()); ++k) {
          sim_->Schedule(ReadyAt(groups_[g], h, finish, k, n), this, (uint64_t{g} << 32) | static_cast<uint64_t>(k));
        }
      }
    }
  }

  const absl::Status& failure() const override { return failure_; }

 private:
  const ExecutionSetup& net() const { return *setups_.front(); }

  // One collective of a range on each of its communicators: the transfer graphs and the bytes per GPU.
  struct Part {
    std::vector<const collectives::TransferGraph*> graphs;
    int64_t bytes = 0;
  };

  // The transfer graphs of `op` over `bytes`, one per group of `comms` (a range's shard groups or its
  // expert-data-parallel groups), built before the run (routes checked).
  absl::StatusOr<Part> BuildGraphs(const std::vector<std::vector<GpuId>>& comms, CollectiveOp op, int64_t bytes) {
    Part out;
    out.bytes = bytes;
    for (const std::vector<GpuId>& gpus : comms) {
      collectives::CollectiveRequest request;
      request.op = op;
      request.gpus = gpus;
      request.bytes = bytes;
      request.ring_steps = ring_steps_;
      HETSIM_RETURN_IF_ERROR(collectives::ValidateRequest(*net().topology, request));
      HETSIM_ASSIGN_OR_RETURN(collectives::ShapeChoice choice,
                              collectives::ChooseShape(*net().topology, *net().router, request));
      store_.push_back(collectives::BuildTransferGraph(*net().topology, request, choice.shape));
      HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check("building a collective's transfers"));
      out.graphs.push_back(&store_.back());
    }
    return out;
  }

  // The reduction's graphs of every bucket of `group` (`sizes`: its first `dense` over the shard groups,
  // the rest over the expert-data-parallel groups), built once per distinct size of a kind.
  absl::Status BuildBucketGraphs(const LayerRangeGroup& group, bool zero, const std::vector<int64_t>& sizes,
                                 int dense) {
    std::vector<Part>& out = graphs_.emplace_back();
    for (int k = 0; k < static_cast<int>(sizes.size()); ++k) {
      if (k > 0 && k != dense && sizes[k] == sizes[k - 1]) {
        out.push_back(out.back());
        continue;
      }
      HETSIM_ASSIGN_OR_RETURN(out.emplace_back(),
                              BuildGraphs(k < dense ? group.groups : group.expert_groups,
                                          zero ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce, sizes[k]));
    }
    return absl::OkStatus();
  }

  // ZeRO-1/2: the parameters' all-gather after the steps (or at the start), the dense part over the shard
  // groups and the experts' over their groups, at once.
  absl::Status BuildGathers(const LayerRangeGroup& group, std::vector<Part>& out) {
    HETSIM_ASSIGN_OR_RETURN(out.emplace_back(), BuildGraphs(group.groups, CollectiveOp::kAllGather, group.param_bytes));
    if (ExpertBuckets(group).empty()) return absl::OkStatus();
    HETSIM_ASSIGN_OR_RETURN(out.emplace_back(),
                            BuildGraphs(group.expert_groups, CollectiveOp::kAllGather, group.expert_param_bytes));
    return absl::OkStatus();
  }

  // Starts every group's collective of each of `parts`; `done` once all have ended (at once when there
  // is nothing to move).
  void StartAll(const std::vector<Part>& parts, std::function<void()> done) {
    int count = 0;
    for (const Part& part : parts) count += part.bytes > 0 ? static_cast<int>(part.graphs.size()) : 0;
    if (count == 0) {
      done();
      return;
    }
    auto left = std::make_shared<int>(count);
    for (const Part& part : parts) {
      if (part.bytes > 0) StartGraphs(part.graphs, left, done);
    }
  }

  void StartGraphs(const std::vector<const collectives::TransferGraph*>& graphs, const std::shared_ptr<int>& left,
                   const std::function<void()>& done) {
    for (const collectives::TransferGraph* graph : graphs) {
      executions_.emplace_back(network_, net().router.get(), graph, [left, done](Time) {
        if (--*left == 0) done();
      });
      if (absl::Status s = executions_.back().Start(sim_); !s.ok() && failure_.ok()) {
        failure_ = s;
        sim_->Stop();
      }
    }
  }

  // When holder `h`'s last backward, started now and ending at `finish`, is done with bucket k of the
  // range's n: its end; with Plan.overlap_grad_reduce (and one model chunk per stage), the layers run
  // last to first, each an equal part of it, and the range's buckets fill in equal parts of its layers'
  // share (bucket k once k + 1 of n are done; one bucket: once the range's first layer is).
  Time ReadyAt(const LayerRangeGroup& group, const LayerRangeHolder& h, Time finish, int k, int n) const {
    // The experts' buckets (after the n dense ones) once the range's layers are all done.
    k = std::min(k, n - 1);
    const ExecutionSetup& setup = *setups_[h.pipeline];
    const bool one_chunk = setup.virtual_stages.size() == setup.stages.size();
    if (!setup.spec.plan.overlap_grad_reduce || !one_chunk) return finish;
    const spec::StageSpec& st = setup.spec.plan.stages[h.stage];
    const Time d = finish - sim_->now();
    const int stage_end = st.first_layer + st.num_layers;
    if (group.tied) {
      // The tied group (one bucket) waits for the head's backward on a stage without the embedding.
      const int from = st.first_layer > 0 ? group.first_layer + group.num_layers - 1 : group.first_layer;
      return sim_->now() + d * (stage_end - from) / st.num_layers;
    }
    // Layers of the stage run before the range's: those after it.
    const int64_t before = stage_end - group.first_layer - group.num_layers;
    const int64_t done = before * n + int64_t{group.num_layers} * (k + 1);  // in n-ths of a layer
    return sim_->now() + d * done / (int64_t{st.num_layers} * n);
  }

  // A holder of bucket k of group g is ready: once all are, the bucket may start.
  void OnEvent(uint64_t value) override {
    if (value == kStartGathers) {
      StartGathers();
      return;
    }
    const int g = static_cast<int>(value >> 32);
    const int k = static_cast<int>(value & 0xffffffffu);
    if (--holders_left_[g][k] > 0) return;
    ready_[g][k] = true;
    TryLaunch(g);
  }

  // The next bucket of group g, once it is ready and the one before has ended (one at a time over the
  // group's communicators).
  void TryLaunch(int g) {
    const int k = next_[g];
    if (in_flight_[g] || k >= static_cast<int>(buckets_[g].size()) || !ready_[g][k]) return;
    in_flight_[g] = true;
    LayerRangeGroup& group = groups_[g];
    group.bucket_start[k] = sim_->now();
    if (k == 0) group.start = sim_->now();
    StartAll({graphs_[g][k]}, [this, g] { BucketDone(g); });
  }

  void BucketDone(int g) {
    groups_[g].bucket_finish[next_[g]] = sim_->now();
    in_flight_[g] = false;
    if (++next_[g] == static_cast<int>(buckets_[g].size())) {
      GroupDone(g);
      return;
    }
    TryLaunch(g);
  }

  // Plan.overlap_param_gather: every range gathers the step before's parameters at once, each over its
  // own communicators (Megatron's distributed optimizer launches them after the step and the next
  // forward waits for them; hetsim's grain is the stage: its first forward waits for all its ranges).
  void StartGathers() {
    for (size_t g = 0; g < groups_.size(); ++g) {
      groups_[g].gather_start = sim_->now();
      StartAll(gathers_[g], [this, g] { EarlyGatherDone(static_cast<int>(g)); });
    }
  }

  void EarlyGatherDone(int g) {
    groups_[g].gather_finish = sim_->now();
    for (const LayerRangeHolder& h : groups_[g].holders) {
      if (--gathers_of_[h.pipeline][h.stage] == 0) gathered_(h.pipeline, h.stage);
    }
  }

  void GroupDone(int g) {
    groups_[g].finish = sim_->now();
    for (const LayerRangeHolder& h : groups_[g].holders) {
      if (--ranges_of_[h.pipeline][h.stage] == 0) release_(h.pipeline, h.stage);
    }
  }

  void GatherDone(int g) {
    groups_[g].gather_finish = sim_->now();
    for (const LayerRangeHolder& h : groups_[g].holders) {
      if (--gathers_of_[h.pipeline][h.stage] == 0) finish_(h.pipeline, h.stage);
    }
  }

  const std::vector<const ExecutionSetup*>& setups_;
  std::vector<LayerRangeGroup>& groups_;
  const collectives::RingSteps ring_steps_;
  GatherCalls calls_;
  engine::Simulator* sim_ = nullptr;
  network::Network* network_ = nullptr;
  Release release_;
  Release finish_;
  Release gathered_;
  static constexpr uint64_t kStartGathers = ~uint64_t{0};
  bool any_zero_ = false;
  bool gathers_after_step_ = false;
  bool gathers_at_start_ = false;
  std::deque<collectives::TransferGraph> store_;
  std::vector<std::vector<int64_t>> buckets_;   // per group: its buckets' bytes (RangeBuckets, then ExpertBuckets)
  std::vector<int> dense_buckets_;              // per group: how many of them are RangeBuckets
  std::vector<std::vector<Part>> graphs_;       // per group, per bucket: the reduction
  std::vector<std::vector<Part>> gathers_;      // per group: ZeRO's gather, dense and experts' parts
  std::vector<std::vector<int>> holders_left_;  // per group, per bucket: holders not yet ready
  std::vector<std::vector<bool>> ready_;        // per group, per bucket: every holder is
  std::vector<int> next_;                       // per group: its next bucket to reduce
  std::vector<bool> in_flight_;                 // per group: a bucket is being reduced
  std::vector<int> steps_left_;                 // per group: holders not yet stepped
  std::vector<std::vector<int>> ranges_of_;     // [pipeline][stage]: its ranges not yet reduced
  std::vector<std::vector<int>> gathers_of_;    // [pipeline][stage]: its ranges not yet gathered (ZeRO)
  std::deque<collectives::CollectiveExecution> executions_;
  absl::Status failure_;
};

// Each range's reduction as a record of its holders' pipelines (step = the range's index). Gathers at
// the start (Plan.overlap_param_gather) as one record per stage, from the first of its ranges' to the
// end of the last, as a single pipeline's early gather of its one chunk (step 0; EarlyGatherWait).
void AddRangeRecords(const std::vector<LayerRangeGroup>& groups, std::vector<ExecutionResult>& results) {
  std::map<std::pair<int, int>, std::pair<Time, Time>> early;  // (pipeline, stage) -> its gathers' span
  for (const LayerRangeGroup& group : groups) {
    if (!group.gather_at_start || group.gather_finish < 0) continue;
    for (const LayerRangeHolder& h : group.holders) {
      auto [it, added] = early.try_emplace({h.pipeline, h.stage}, group.gather_start, group.gather_finish);
      if (added) continue;
      it->second.first = std::min(it->second.first, group.gather_start);
      it->second.second = std::max(it->second.second, group.gather_finish);
    }
  }
  for (const auto& [at, span] : early) {
    results[at.first].grad_syncs.push_back(
        {at.second, 0, /*param_gather=*/true, span.first, span.second, /*at_start=*/true});
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].finish < 0) continue;  // a failure stopped the iteration first
    for (const LayerRangeHolder& h : groups[g].holders) {
      results[h.pipeline].grad_syncs.push_back(
          {h.stage, static_cast<int32_t>(g), /*param_gather=*/false, groups[g].start, groups[g].finish});
      if (groups[g].gather_finish < 0 || groups[g].gather_at_start) continue;
      results[h.pipeline].grad_syncs.push_back(
          {h.stage, static_cast<int32_t>(g), /*param_gather=*/true, groups[g].gather_start, groups[g].gather_finish});
    }
  }
}

// Plan.tied_embedding_grad_sync on a model whose head shares the embedding's matrix (the plan check
// refuses the switch on an untied model; a model without a tied head has nothing to sync).
bool TiedSync(const ExecutionSetup& setup) {
  return setup.spec.plan.tied_embedding_grad_sync && workload::TiedGradSyncBytes(*setup.model, 1, false) > 0;
}

// The tied embedding's group: the first and the last stage of every pipeline (a 1-stage pipeline's
// one stage once), one shard group per shard of the finest TP among them.
LayerRangeGroup TiedGroup(const std::vector<const ExecutionSetup*>& setups) {
  LayerRangeGroup g;
  g.tied = true;
  g.num_layers = setups[0]->model->num_layers();
  for (int p = 0; p < static_cast<int>(setups.size()); ++p) {
    const int last = setups[p]->num_stages() - 1;
    // A 1-stage pipeline's one stage holds both: one copy.
    const std::vector<int> stages = last == 0 ? std::vector<int>{0} : std::vector<int>{0, last};
    for (const int stage : stages) {
      g.holders.push_back({p, stage});
      g.shards = std::max(g.shards, setups[p]->stages[stage].layout.tensor_parallel);
    }
  }
  g.groups = ShardGroups(setups, g.holders, g.shards);
  const workload::ModelCost& model = *setups[0]->model;
  g.bytes = workload::TiedGradSyncBytes(
      model, g.shards, workload::TiedGradientsInFp32(model.dtype(), setups[0]->spec.plan.grad_reduce_in_fp32));
  // ZeRO-1/2: the matrix is a bucket of its own (Megatron's _does_param_require_new_bucket), sharded
  // over every copy: reduce-scatter, each holder steps its 1/n, all-gather. ZeRO-3: reduce-scatter, and
  // each copy's passes gather it (RangeGathersOf).
  g.zero_stage = setups[0]->spec.plan.stages[0].zero_stage;
  if (g.zero_stage >= 1) g.param_bytes = workload::TiedGradSyncBytes(model, g.shards, false);
  return g;
}

// `bytes` in pieces of `bucket` (the last the remainder), or one piece when `bucket` is 0 or more.
std::vector<int64_t> CutIntoBuckets(int64_t bytes, int64_t bucket) {
  if (bucket <= 0 || bytes <= bucket) return {bytes};
  std::vector<int64_t> out;
  for (int64_t done = 0; done < bytes; done += bucket) out.push_back(std::min(bucket, bytes - done));
  return out;
}

// The experts' groups of the range `g`: shard e (< g.expert_shards) of the finest expert split among its
// holders (EP `ep` x ETP `etp`), held by every holder's GPUs that hold it (StageLayout::ExpertShardGroup:
// expert rank e of each copy at the finest layout, a GPU of a coarser holder or group in (ETP x EP) / its
// own of these groups), holder after holder.
std::vector<std::vector<GpuId>> ExpertGroupsOf(const std::vector<const ExecutionSetup*>& setups,
                                               const LayerRangeGroup& g, int ep, int etp) {
  std::vector<std::vector<GpuId>> out(g.expert_shards);
  for (int e = 0; e < g.expert_shards; ++e) {
    for (const LayerRangeHolder& h : g.holders) {
      const StageLayout& l = setups[h.pipeline]->stages[h.stage].layout;
      HETSIM_CHECK(ep % l.expert_parallel == 0 && etp % l.ExpertTensorParallel() == 0,
                   "a range's holder at an expert split that does not divide the finest (plan check)");
      for (const GpuId gpu : l.ExpertShardGroup(e, ep, etp)) out[e].push_back(gpu);
    }
  }
  return out;
}

// MoE: the experts' part of range `g` (its groups, gradient and, under ZeRO-1/2, parameter bytes per GPU of a
// group), at the finest expert split among its holders (the largest ETP x EP; a mixed holder's is its finest
// group's): the holders may lay the experts out differently, each EP and ETP dividing the finest's.
void AddExperts(const std::vector<const ExecutionSetup*>& setups, LayerRangeGroup& g) {
  const workload::ModelCost& model = *setups[0]->model;
  if (workload::ExpertParamsOfLayers(model, g.first_layer, g.num_layers, 1) <= 0) return;
  const StageLayout* finest = nullptr;
  for (const LayerRangeHolder& h : g.holders) {
    const StageLayout& l = setups[h.pipeline]->stages[h.stage].layout;
    if (finest == nullptr || l.expert_data_groups() > finest->expert_data_groups()) finest = &l;
  }
  g.expert_shards = finest->expert_data_groups();
  g.expert_parallel = finest->expert_parallel;
  g.expert_tensor_parallel = finest->ExpertTensorParallel();
  g.expert_groups = ExpertGroupsOf(setups, g, g.expert_parallel, g.expert_tensor_parallel);
  const bool fp32 = setups[0]->spec.plan.grad_reduce_in_fp32;
  g.expert_bytes = workload::ExpertGradSyncBytes(model, g.first_layer, g.num_layers, g.expert_shards, fp32);
  if (g.zero_stage >= 1) {
    g.expert_param_bytes = workload::ExpertGradSyncBytes(model, g.first_layer, g.num_layers, g.expert_shards, false);
  }
}

}  // namespace

std::vector<int64_t> RangeBuckets(const LayerRangeGroup& group) {
  if (group.tied) return {group.bytes};
  return CutIntoBuckets(group.bytes, group.bucket_bytes);
}

std::vector<int64_t> ExpertBuckets(const LayerRangeGroup& group) {
  if (group.expert_bytes <= 0 || group.expert_groups.empty() || group.expert_groups.front().size() <= 1) return {};
  return CutIntoBuckets(group.expert_bytes, group.bucket_bytes);
}

absl::Status CheckRangeBuckets(const std::vector<LayerRangeGroup>& groups, std::string_view where) {
  int64_t buckets = 0, events = 0;
  for (const LayerRangeGroup& g : groups) {
    const bool cut = !g.tied && g.bucket_bytes > 0 && g.bytes > g.bucket_bytes;
    int64_t mine = cut ? (g.bytes + g.bucket_bytes - 1) / g.bucket_bytes : 1;
    const bool experts = g.expert_bytes > 0 && !g.expert_groups.empty() && g.expert_groups.front().size() > 1;
    if (experts) mine += g.bucket_bytes > 0 ? (g.expert_bytes + g.bucket_bytes - 1) / g.bucket_bytes : 1;
    buckets += mine;
    events += mine * static_cast<int64_t>(g.holders.size());
    if (buckets > kMaxRangeBuckets || events > spec::kMaxGradBucketEvents) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: grad_bucket_bytes: %d cuts the layer ranges' gradients into more than %d buckets, or more than %d "
          "buckets x the stages holding them (layers %d-%d alone hold %d bytes per GPU, %d buckets on %d stages)",
          where, g.bucket_bytes, kMaxRangeBuckets, spec::kMaxGradBucketEvents, g.first_layer,
          g.first_layer + g.num_layers - 1, g.bytes, mine, g.holders.size()));
    }
  }
  return absl::OkStatus();
}

std::vector<LayerRangeGroup> LayerRangeGroups(const std::vector<const ExecutionSetup*>& setups) {
  HETSIM_CHECK(!setups.empty(), "no pipeline");
  const workload::ModelCost& model = *setups[0]->model;
  const bool fp32 = setups[0]->spec.plan.grad_reduce_in_fp32;
  const bool tied = TiedSync(*setups[0]);
  std::set<int> cuts;
  for (const ExecutionSetup* setup : setups) {
    for (const spec::StageSpec& s : setup->spec.plan.stages) cuts.insert(s.first_layer + s.num_layers);
  }
  std::vector<LayerRangeGroup> out;
  int first = 0;
  for (const int end : cuts) {
    LayerRangeGroup g;
    g.first_layer = first;
    g.num_layers = end - first;
    for (int p = 0; p < static_cast<int>(setups.size()); ++p) {
      const int stage = StageHolding(*setups[p], first);
      g.holders.push_back({p, stage});
      g.shards = std::max(g.shards, setups[p]->stages[stage].layout.tensor_parallel);
    }
    g.groups = ShardGroups(setups, g.holders, g.shards);
    g.bytes = tied ? workload::RangeGradSyncBytesWithoutTied(model, g.first_layer, g.num_layers, g.shards, fp32)
                   : workload::DenseGradSyncBytes(model, g.first_layer, g.num_layers, g.shards, fp32);
    g.without_tied = tied;
    g.bucket_bytes = static_cast<int64_t>(setups[0]->spec.plan.grad_bucket_bytes);
    g.zero_stage = setups[0]->spec.plan.stages[g.holders[0].stage].zero_stage;
    // The parameters in the model's element type: the gradient bytes without fp32 reduction.
    if (g.zero_stage >= 1) {
      g.param_bytes = tied
                          ? workload::RangeGradSyncBytesWithoutTied(model, g.first_layer, g.num_layers, g.shards, false)
                          : workload::DenseGradSyncBytes(model, g.first_layer, g.num_layers, g.shards, false);
    }
    AddExperts(setups, g);
    out.push_back(std::move(g));
    first = end;
  }
  if (tied) out.push_back(TiedGroup(setups));
  return out;
}

std::vector<RangeGather> RangeGathersOf(const std::vector<LayerRangeGroup>& groups) {
  std::vector<RangeGather> out;
  for (const LayerRangeGroup& g : groups) {
    if (g.zero_stage != 3) continue;
    RangeGather& r = out.emplace_back();
    r.first_layer = g.first_layer;
    r.num_layers = g.num_layers;
    r.groups = g.groups;
    r.bytes = g.param_bytes;
    r.tied = g.tied;
    r.without_tied = g.without_tied;
  }
  return out;
}

absl::StatusOr<PipelinesResult> ExecutePipelines(const std::vector<const ExecutionSetup*>& setups,
                                                 std::span<const ExecutorOptions> options,
                                                 collectives::RingSteps ring_steps) {
  PipelinesResult out;
  out.sync.groups = LayerRangeGroups(setups);
  RangeSync sync(setups, out.sync.groups, ring_steps);
  absl::StatusOr<SharedRunResults> run = ExecuteOnOneNetwork(setups, options, &sync);
  // A run that ended with passes still waiting for their gather calls (not a limit that stopped it).
  if (!run.ok() && run.status().code() == absl::StatusCode::kInternal && !sync.StuckGathers().empty()) {
    return absl::FailedPreconditionError(sync.StuckGathers());
  }
  HETSIM_ASSIGN_OR_RETURN(SharedRunResults shared, std::move(run));
  out.results = std::move(shared.results);
  out.sync.faults = std::move(shared.faults);
  AddRangeRecords(out.sync.groups, out.results);
  for (const ExecutionResult& r : out.results) {
    out.sync.grad_sync_end.push_back(r.grad_sync_end);
    out.sync.stage_end.push_back(r.stage_end);
    out.sync.pipeline_end.push_back(r.iteration_time);
    out.sync.iteration_time = std::max(out.sync.iteration_time, r.iteration_time);
  }
  return out;
}

void DropStageGradientSync(ExecutionSetup& setup) {
  for (StageSetup& st : setup.stages) {
    // Freed, not only cleared: every pipeline of a plan keeps its setup, each stage's buckets up to
    // spec::kMaxGradBuckets (24 MB) of them, so 1,000 pipelines kept 24 GB (session 37).
    std::vector<GradSyncStep>().swap(st.grad_buckets);
    std::vector<BucketReady>().swap(st.bucket_ready);
    st.param_gather.reset();
    st.early_param_gathers.clear();
    st.tied_grad_sync_time = 0;
  }
  std::fill(setup.first_bucket.begin(), setup.first_bucket.end(), -1);
}

}  // namespace hetsim::executor
