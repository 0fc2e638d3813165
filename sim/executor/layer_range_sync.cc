#include "sim/executor/layer_range_sync.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <set>
#include <utility>

#include "base/check.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "sim/collectives/algorithms.h"
#include "sim/collectives/execution.h"
#include "sim/collectives/simulate.h"
#include "sim/engine/simulator.h"
#include "sim/workload/stage_cost.h"

namespace hetsim::sim::executor {
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

// Shard j of the finest TP split `shards`: every holder's GPUs of TP rank j x t / shards.
std::vector<std::vector<GpuId>> ShardGroups(const std::vector<const ExecutionSetup*>& setups,
                                            const std::vector<LayerRangeHolder>& holders, int shards) {
  std::vector<std::vector<GpuId>> groups(shards);
  for (int j = 0; j < shards; ++j) {
    for (const LayerRangeHolder& h : holders) {
      const StageLayout& l = setups[h.pipeline]->stages[h.stage].layout;
      for (int r = 0; r < l.data_parallel; ++r) groups[j].push_back(l.Gpu(r, j * l.tensor_parallel / shards));
    }
  }
  return groups;
}

// Runs each range's shard groups on one network, each range starting at its holders' readiness.
class RangeRun : private EventHandler {
 public:
  RangeRun(const ExecutionSetup& net, std::vector<LayerRangeGroup>& groups) : net_(net), groups_(groups) {}

  absl::Status Go(RingSteps ring_steps) {
    HETSIM_ASSIGN_OR_RETURN(auto network, Network::Create(&sim_, NetworkLinks(*net_.topology), net_.network_mode));
    network_ = std::move(network);
    graphs_.resize(groups_.size());
    for (size_t g = 0; g < groups_.size(); ++g) {
      for (const std::vector<GpuId>& gpus : groups_[g].groups) {
        CollectiveRequest request;
        request.op = CollectiveOp::kAllReduce;
        request.gpus = gpus;
        request.bytes = groups_[g].bytes;
        request.ring_steps = ring_steps;
        HETSIM_RETURN_IF_ERROR(ValidateRequest(*net_.topology, request));
        HETSIM_ASSIGN_OR_RETURN(ShapeChoice choice, ChooseShape(*net_.topology, *net_.router, request));
        store_.push_back(BuildTransferGraph(*net_.topology, request, choice.shape));
        HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check("building a collective's transfers"));
        graphs_[g].push_back(&store_.back());
      }
      left_.push_back(static_cast<int>(graphs_[g].size()));
      sim_.Schedule(groups_[g].start, this, g);
    }
    sim_.Run();
    HETSIM_RETURN_IF_ERROR(failure_);
    for (const int left : left_) {
      if (left != 0) return absl::InternalError("a layer range's gradient all-reduce never ended");
    }
    return absl::OkStatus();
  }
  uint64_t events() const { return sim_.events_processed(); }
  uint64_t flows() const { return network_->stats().flows_started; }
  std::vector<LinkCounters> link_counters() const {
    std::vector<LinkCounters> out;
    for (LinkId l = 0; l < network_->num_links(); ++l) out.push_back(network_->link_counters(l));
    return out;
  }

 private:
  void OnEvent(uint64_t g) override {
    if (graphs_[g].empty() || groups_[g].bytes <= 0) {
      left_[g] = 0;
      groups_[g].finish = sim_.now();
      return;
    }
    for (const TransferGraph* graph : graphs_[g]) {
      executions_.emplace_back(network_.get(), net_.router.get(), graph, [this, g](Time at) {
        if (--left_[g] == 0) groups_[g].finish = at;
      });
      if (absl::Status s = executions_.back().Start(&sim_); !s.ok()) failure_ = s;
    }
  }

  const ExecutionSetup& net_;
  std::vector<LayerRangeGroup>& groups_;
  Simulator sim_;
  std::unique_ptr<Network> network_;
  std::deque<TransferGraph> store_;
  std::vector<std::vector<const TransferGraph*>> graphs_;
  std::deque<CollectiveExecution> executions_;
  std::vector<int> left_;
  absl::Status failure_;
};

}  // namespace

std::vector<LayerRangeGroup> LayerRangeGroups(const std::vector<const ExecutionSetup*>& setups) {
  HETSIM_CHECK(!setups.empty(), "no pipeline");
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
    g.bytes = workload::DenseGradSyncBytes(*setups[0]->model, g.first_layer, g.num_layers, g.shards,
                                           setups[0]->spec.plan.grad_reduce_in_fp32);
    out.push_back(std::move(g));
    first = end;
  }
  return out;
}

absl::StatusOr<PipelinesSyncResult> SyncPipelineGradients(const std::vector<PipelineRun>& pipelines,
                                                          RingSteps ring_steps) {
  std::vector<const ExecutionSetup*> setups;
  for (const PipelineRun& p : pipelines) setups.push_back(p.setup);
  PipelinesSyncResult out;
  out.groups = LayerRangeGroups(setups);
  for (LayerRangeGroup& g : out.groups) {
    for (const LayerRangeHolder& h : g.holders) {
      g.start = std::max(g.start, pipelines[h.pipeline].result->last_backward_end[h.stage]);
    }
  }
  RangeRun run(*setups[0], out.groups);
  HETSIM_RETURN_IF_ERROR(run.Go(ring_steps));
  out.events = run.events();
  out.flows = run.flows();
  out.link_counters = run.link_counters();

  for (const PipelineRun& p : pipelines) out.grad_sync_end.push_back(p.result->last_backward_end);
  for (const LayerRangeGroup& g : out.groups) {
    for (const LayerRangeHolder& h : g.holders) {
      Time& end = out.grad_sync_end[h.pipeline][h.stage];
      end = std::max(end, g.finish);
    }
  }
  for (size_t p = 0; p < pipelines.size(); ++p) {
    out.stage_end.emplace_back();
    Time last = 0;
    for (size_t s = 0; s < out.grad_sync_end[p].size(); ++s) {
      out.stage_end[p].push_back(out.grad_sync_end[p][s] + pipelines[p].setup->stages[s].optimizer_time);
      last = std::max(last, out.stage_end[p].back());
    }
    out.pipeline_end.push_back(last);
    out.iteration_time = std::max(out.iteration_time, last);
  }
  return out;
}

ExecutionResult WithPipelineSync(ExecutionResult result, const PipelinesSyncResult& sync, int p) {
  result.grad_sync_end = sync.grad_sync_end[p];
  result.optimizer_start = sync.grad_sync_end[p];
  result.stage_end = sync.stage_end[p];
  result.iteration_time = sync.pipeline_end[p];
  if (p == 0) {
    for (size_t l = 0; l < result.link_counters.size() && l < sync.link_counters.size(); ++l) {
      result.link_counters[l].bytes += sync.link_counters[l].bytes;
      result.link_counters[l].flows += sync.link_counters[l].flows;
      result.link_counters[l].busy_time += sync.link_counters[l].busy_time;
    }
  }
  for (size_t g = 0; g < sync.groups.size(); ++g) {
    for (const LayerRangeHolder& h : sync.groups[g].holders) {
      if (h.pipeline != p) continue;
      result.grad_syncs.push_back(
          {h.stage, static_cast<int32_t>(g), /*param_gather=*/false, sync.groups[g].start, sync.groups[g].finish});
    }
  }
  return result;
}

void DropStageGradientSync(ExecutionSetup& setup) {
  for (StageSetup& st : setup.stages) {
    st.grad_buckets.clear();
    st.bucket_ready.clear();
    st.param_gather.reset();
    st.early_param_gathers.clear();
  }
  std::fill(setup.first_bucket.begin(), setup.first_bucket.end(), -1);
}

}  // namespace hetsim::sim::executor
