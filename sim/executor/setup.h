// Everything the executor needs before simulating one iteration of a plan, derived once from the
// resolved spec (base/spec/simulation.h) and the cluster's topology: the topology and its routes, each stage's GPUs and
// parallel groups, the cost of every virtual stage, the point-to-point flows of every stage boundary (with resharding),
// the uncontended boundary transfer times c_i and t_max that H-1F1B derives its warm-up counts from, the schedule, the
// HAPT DAG and the durations of its nodes.
//
//   auto setup = BuildExecutionSetup(spec, std::move(topology), NetworkMode::kMaxMinFair);
//   (driver::BuildSetup makes both from validated inputs)
//   setup->dag->num_nodes(); setup->durations; setup->boundaries[k].forward_flows
#ifndef HETSIM_SIM_EXECUTOR_SETUP_H_
#define HETSIM_SIM_EXECUTOR_SETUP_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/spec/defaults.h"
#include "base/spec/plan.h"
#include "base/spec/simulation.h"
#include "base/time.h"
#include "sim/collectives/collective.h"
#include "sim/executor/collective_load.h"
#include "sim/executor/point_flows.h"
#include "sim/network/network.h"
#include "sim/pipeline/dag.h"
#include "sim/pipeline/schedule.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "topology/device_graph.h"
#include "topology/routing.h"

namespace hetsim::executor {

// A placed stage: its parallelism (spec::StageParallelism: TP, DP, EP, ETP, the spec's own fields and
// defaults) on its GPUs, and how tensor, context and data parallelism split them (Megatron's order:
// tensor-parallel ranks innermost, then context-parallel ranks, so a replica is `tensor_parallel` x
// `context_parallel` consecutive GPUs of the mesh).
struct StageLayout : spec::StageParallelism {
  std::vector<GpuId> gpus;   // the mesh, node-major
  int context_parallel = 1;  // the plan's
  int32_t island = 0;
  // A mixed stage (Stage.replica_groups): its groups, each a plain layout (island, TP, DP, its replicas'
  // share of every microbatch), replicas numbered group after group; gpus is theirs in that order,
  // tensor_parallel the largest TP (the finest shard the gradients reduce by), data_parallel the
  // replicas of every group, island the first group's. Empty for a plain stage.
  std::vector<StageLayout> replica_groups;
  uint64_t micro_batch_share = 0;  // a group's: samples of each microbatch one of its replicas computes

  bool mixed() const { return !replica_groups.empty(); }

  GpuId Gpu(int replica, int tp_rank, int cp_rank = 0) const {
    if (mixed()) {
      const StageLayout& g = GroupOfReplica(replica);
      return g.Gpu(replica, tp_rank, cp_rank);
    }
    return gpus[(replica * context_parallel + cp_rank) * tensor_parallel + tp_rank];
  }
  // The group of replica `replica` of a mixed stage, which becomes its index inside the group.
  const StageLayout& GroupOfReplica(int& replica) const;
  // The replica group of the stage's `index`-th GPU (an index into gpus); 0 for a plain stage.
  int GroupOfGpu(size_t index) const;
  int ReplicaTensorParallel(int replica) const {
    return mixed() ? GroupOfReplica(replica).tensor_parallel : tensor_parallel;
  }
  // Where each replica's samples of a microbatch of `micro_batch_size` begin, and the end (DP + 1 values).
  std::vector<int64_t> ReplicaSampleStarts(uint64_t micro_batch_size) const;
  std::vector<GpuId> TensorGroup(int replica, int cp_rank = 0) const;  // one TP group of a replica
  // One TP rank across the replicas and their CP ranks: the gradient reduction group (DP x CP GPUs). In a
  // mixed stage, shard `tp_rank` of the finest TP split: a GPU of a replica with TP t holds shard
  // tp_rank x t / tensor_parallel, and so joins tensor_parallel / t of these groups.
  std::vector<GpuId> DataGroup(int tp_rank) const;
  int gradient_group_size() const { return data_parallel * context_parallel; }
  // The GPUs that hold the same shard of the same experts, Megatron-LM's expert-data-parallel group:
  // expert rank `index` (< ETP x EP) of every block of ETP x EP GPUs. The experts' gradients reduce,
  // and their ZeRO shards gather, over it. In a mixed stage, shard `index` of the finest split (the
  // stage's ETP x EP, its finest group's): a GPU of a group with its own coarser EP e and ETP t holds
  // (ETP x EP) / (t x e) such shards and joins each of their groups, as DataGroup does for TP.
  std::vector<GpuId> ExpertDataGroup(int index) const;
  // The same for shard `index` of a split of `ep` x `etp` that this layout's (each group's) EP and ETP
  // divide: a layer range's finest over its holders (executor::AddExperts).
  std::vector<GpuId> ExpertShardGroup(int index, int ep, int etp) const;
  int expert_data_groups() const { return ExpertTensorParallel() * expert_parallel; }
  int expert_gradient_group_size() const;  // the copies of the experts: every group's GPUs over its ETP x EP
};

// The groups a stage's collectives over `group` run on: every TP group (of each replica and CP rank),
// or for the experts (MoE parallel folding: Megatron-LM's expert rank order tp-ep-dp laid over the
// stage's GPUs in their dense order tp-cp-dp) every expert-TP group of ETP consecutive GPUs, every
// EP group of GPUs ETP apart within each block of ETP x EP, or every such block. Each is timed (an isomorphic one by
// mapping, see CollectiveTimer); the slowest sets the stage's time.
std::vector<std::vector<GpuId>> GroupsOf(const StageLayout& l, workload::CollectiveGroup group);

// The transfers between virtual stages k and k+1 of one microbatch: activations forward (k -> k+1)
// and their gradients backward (k+1 -> k), resharded between the two stages' (DP, TP) layouts.
struct BoundaryTransfer {
  int32_t from_stage = 0;  // physical stages of virtual stages k and k+1
  int32_t to_stage = 0;
  int64_t bytes_per_microbatch = 0;
  std::vector<BoundaryFlow> forward_flows;
  std::vector<BoundaryFlow> backward_flows;
  // Each direction's flows alone on the network (in the run's network mode): what the DAG's CF / CB
  // nodes cost without other traffic, and c_i for H-1F1B (the larger of the two).
  Time forward_time = 0;
  Time backward_time = 0;
  topology::LinkClass slowest_link_class = topology::LinkClass::kNvlink;
};

// One MoE layer of a pass: its expert-parallel all-to-alls (dispatch and combine) and its compute.
struct MoeLayerTimes {
  int layer = 0;
  Time dispatch = 0;
  Time compute = 0;
};

// The cost of one virtual stage (a physical stage, or one model chunk of it when interleaved): its layers
// (spec::LayerRange) and what they cost.
struct VirtualStageCost : spec::LayerRange {
  workload::StageCost cost;
  // Tensor-/expert-parallel collective time per microbatch (issue order, all counts), including the
  // all-gather that reassembles activations (forward) or gradients (backward) scattered over the
  // TP ranks at a stage boundary. Timed by simulating each distinct collective alone on the flows
  // (see docs/metrics.md: the TP group's NVSwitch links carry nothing else).
  Time forward_collective_time = 0;
  Time backward_collective_time = 0;
  // Plan.tp_comm_overlap: the part of the tensor-parallel collective time hidden behind the pass's
  // compute (at most the TP collective time and at most the compute time); Plan.tp_backward_overlap:
  // the backward's input-gradient reductions hidden behind the column-parallel weight gradients
  // (at most either); 0 otherwise.
  Time forward_hidden_comm_time = 0;
  Time backward_hidden_comm_time = 0;
  // Of the TP collectives, those around Transformer Engine's linears: all the TP overlap may hide
  // (LayerCollective::userbuffers; the embedding's, head's and routed experts' stay exposed).
  Time forward_userbuffers_comm_time = 0;
  Time backward_userbuffers_comm_time = 0;
  // The MoE layers in each pass's order, with their EP all-to-alls' time and their compute: what
  // Plan.moe_a2a_overlap may hide behind a paired pass (PairMoeDispatch).
  std::vector<MoeLayerTimes> forward_moe_layers;
  std::vector<MoeLayerTimes> backward_moe_layers;
  // The links those collectives load per microbatch (every replica's group, each as if alone; sorted
  // by link): the flows never run them, so the report adds them (collective_load.h).
  std::vector<LinkLoad> forward_link_load;
  std::vector<LinkLoad> backward_link_load;
  // Context parallelism's key/value ring (cp_ring.h): the time its steps take on the fabric and
  // the part of it the attention compute does not hide (in forward_time / backward_time).
  Time cp_forward_exchange_time = 0;
  Time cp_backward_exchange_time = 0;
  Time cp_forward_exposed_time = 0;
  Time cp_backward_exposed_time = 0;
  int64_t cp_bytes = 0;  // one GPU's ring sends per microbatch, forward + backward
  // ZeRO-3's parameter all-gathers on the critical path of the pass (after Plan.zero3_prefetch); part
  // of the collective times above.
  Time forward_gather_exposed_time = 0;
  Time backward_gather_exposed_time = 0;
  // The same per layer of the virtual stage, in layer order (empty without ZeRO-3's gathers): where in a
  // pass each layer starts (gather_calls.h, a later layer range's call).
  std::vector<Time> layer_forward_gather_exposed;
  std::vector<Time> layer_backward_gather_exposed;
  // Each layer's gather, whole (exposed or not), in layer order: what Plan.zero3_lock_step paces (lock_step.h).
  std::vector<Time> layer_gather_time;
  // Plan.nccl_sm_contention: what the NCCL collectives hidden behind the pass's compute (ZeRO-3's
  // prefetched gathers, Megatron-LM's asynchronous TP backward, the context-parallel exchange) add to it:
  // their hidden time x the share of the GPU's SMs their channels hold (sim/workload/nccl_contention.h).
  Time forward_contention_time = 0;
  Time backward_contention_time = 0;
  // A mixed stage: each replica group's own costs and pass times (StageLayout::replica_groups' order).
  // The fields above are the slowest group's (by forward + backward), whose costs the stage reports;
  // the waits make each pass as long as its slowest group's, since every replica runs in lockstep.
  std::vector<VirtualStageCost> replica_groups;
  Time forward_wait_time = 0;
  Time backward_wait_time = 0;
  Time forward_time() const {
    return cost.forward_time + forward_collective_time - forward_hidden_comm_time + cp_forward_exposed_time +
           forward_contention_time + forward_wait_time;
  }
  Time backward_time() const {
    return cost.backward_time + backward_collective_time - backward_hidden_comm_time + cp_backward_exposed_time +
           backward_contention_time + backward_wait_time;
  }
};

// A data-parallel synchronisation step of one stage, for a bucket of its gradients or its parameter
// all-gather: one collective per data-parallel group (TP of them) of the dense parameters' `bytes`,
// and beside them one per expert-data-parallel group (ETP x EP of them) of the experts' `expert_bytes`
// (Megatron-LM keeps the experts in their own buffers, on their own communicators). A part whose
// groups are single GPUs is 0. Bytes per GPU, as nccl-tests counts them.
struct GradSyncStep {
  CollectiveOp op;
  int64_t bytes = 0;
  int64_t expert_bytes = 0;
  int64_t BytesOf(bool experts) const { return experts ? expert_bytes : bytes; }
};

// The groups each part of a GradSyncStep runs on: the DP x CP group of every TP rank (`experts`
// false), or every expert-data-parallel group.
std::vector<std::vector<GpuId>> SyncGroupsOf(const StageLayout& l, bool experts);

// Where an overlapped reduction's bucket becomes ready: `piece + 1` of `pieces` equal parts into the
// compute of `node`, the last operation of the bucket's model chunk on its stage (Megatron-LM reduces
// each chunk's gradients as soon as its last backward has produced them).
struct BucketReady {
  pipeline::NodeId node = -1;
  int piece = 0;
  int pieces = 1;
};

// What one replica group of a mixed stage runs on and holds (StageSetup::replica_groups).
struct ReplicaGroupSetup {
  workload::StageCost cost;  // its replicas' whole-stage cost (its TP, its share; ZeRO over the stage)
  std::string gpu_type_name;
  double peak_flop_per_s = 0;
  double memory_capacity_bytes = 0;
  Time optimizer_time = 0;
};

struct StageSetup {
  StageLayout layout;
  // A mixed stage's groups; then cost is the slowest group's (its gradient and parameter bytes those of
  // the finest TP shard), optimizer_time the slowest group's step, peak_flop_per_s the mean over the
  // stage's GPUs and gpu_type_name the groups' names joined by " + ".
  std::vector<ReplicaGroupSetup> replica_groups;
  workload::StageCost cost;  // the whole stage (memory, gradient bytes)
  std::string gpu_type_name;
  double peak_flop_per_s = 0;  // for the compute dtype
  double memory_capacity_bytes = 0;
  Time optimizer_time = 0;  // Adam step, memory-bound
  // Plan.nccl_sm_contention: the share of the stage's GPUs' SMs an NCCL collective holds (the largest of a
  // mixed stage's GPU types; 0 when off): its compute runs at 1 - share of its speed while one of its
  // own gradient buckets or parameter gathers is in flight (the executor), and its passes pay the
  // collectives they hide (VirtualStageCost's contention times). What the paired MoE all-to-alls of
  // Plan.moe_a2a_overlap add to the stage's passes (PairMoeDispatch), over the iteration.
  double nccl_sm_share = 0;
  Time moe_pair_contention_time = 0;
  // Plan.tied_embedding_grad_sync, first and last stage only: the tied embedding's gradient all-reduce
  // between them, alone on the network, which both wait for after their last backward.
  Time tied_grad_sync_time = 0;
  // Gradient buckets in launch order (reduce-scatter or all-reduce), then the parameter all-gather
  // that ZeRO >= 1 runs after the optimizer step (empty when none or DP == 1). Under interleaving each
  // model chunk has its own buckets, chunks in the order their last backwards end.
  std::vector<GradSyncStep> grad_buckets;
  std::vector<BucketReady> bucket_ready;  // per bucket: when an overlapped reduction may launch it
  std::optional<GradSyncStep> param_gather;
  // Plan.overlap_param_gather: the parameter all-gather per model chunk in forward order, run at the
  // iteration's start instead of param_gather after the step; chunk c's first forward waits for it.
  std::vector<GradSyncStep> early_param_gathers;
};

// ZeRO-3 in a plan of pipelines (Plan.pipelines; layer_range_sync.h): a layer range's parameters shard
// over every GPU that holds it in any pipeline, so each of its layers gathers before every forward and
// backward over the range's shard groups, not over the stage's own replicas. One per layer range.
// The pipelines' microbatch counts may differ: every holder's k-th gather of a layer is one collective
// (collectives match per call), and a holder whose pipeline runs fewer microbatches joins the others'
// remaining gathers of its layers after its own last pass, computing nothing (layer_range_sync.h).
// With Plan.tied_embedding_grad_sync (`tied`): the tied matrix, its own range over every copy; a stage
// holding a copy gathers it with the embedding (or, without the embedding, with the head), and the
// ranges holding either gather their parameters without it (`without_tied`).
struct RangeGather : spec::LayerRange {
  std::vector<std::vector<GpuId>> groups;  // the range's shard groups (LayerRangeGroup::groups)
  int64_t bytes = 0;                       // what each shard group gathers of the range's parameters
  bool tied = false;
  bool without_tied = false;
};

struct ExecutionSetup {
  spec::SimulationSpec spec;  // what was simulated: plan, model, cluster
  // ZeRO-3 in a plan of pipelines: the ranges its stages' layers gather over (empty: each stage's own
  // data-parallel groups, as for a plan of one pipeline).
  std::vector<RangeGather> range_gathers;
  network::NetworkMode network_mode = network::NetworkMode::kMaxMinFair;
  // The cluster's topology and its routes: the setups of one plan's pipelines share them (one cluster,
  // one network; built once, not once per pipeline).
  std::shared_ptr<const topology::Topology> topology;
  std::shared_ptr<topology::Router> router;
  std::unique_ptr<workload::ModelCost> model;
  std::vector<StageSetup> stages;                // physical stages
  std::vector<VirtualStageCost> virtual_stages;  // k = chunk * S + stage
  std::vector<BoundaryTransfer> boundaries;      // K - 1, between virtual stages k and k+1
  pipeline::H1F1BInputs h1f1b;                   // c_i per physical boundary and t_max
  std::unique_ptr<pipeline::PipelineDag> dag;
  std::vector<Time> durations;  // per DAG node, uncontended
  // Plan.tied_embedding_grad_sync: the all-reduce's groups (GPU i of the first stage with GPU i of the
  // last) and each member's bytes (AddTiedEmbeddingSync; empty without it), for exporters.
  std::vector<std::vector<GpuId>> tied_grad_sync_groups;
  int64_t tied_grad_sync_bytes = 0;
  // Per DAG node: the index in its stage's bucket_ready of the first gradient bucket its compute fills,
  // or -1 (the node ends no model chunk's backward, or the stage reduces nothing).
  std::vector<int32_t> first_bucket;
  int64_t microbatches = 0;
  // Replica collectives timed by mapping an isomorphic group's result, and by simulating them.
  int64_t mapped_collective_groups = 0;
  int64_t simulated_collective_groups = 0;

  int num_stages() const { return static_cast<int>(stages.size()); }
  int num_gpus() const;
};

// Builds every piece on `topology` (the cluster's, island i being spec.cluster.islands[i]); errors (a
// stage the cost model rejects, a missing route) name the plan file and the field. `reuse` kNone
// times every replica's collectives itself instead of mapping isomorphic ones (the same setup, slower).
// `router`: routes on `topology` already made (another pipeline's setup on the same cluster), shared;
// null builds the setup's own. `range_gathers`: ZeRO-3's gathers of a pipeline of a plan of pipelines
// (ExecutionSetup::range_gathers).
absl::StatusOr<std::unique_ptr<ExecutionSetup>> BuildExecutionSetup(spec::SimulationSpec spec,
                                                                    std::shared_ptr<const topology::Topology> topology,
                                                                    network::NetworkMode mode,
                                                                    ReplicaReuse reuse = ReplicaReuse::kMapped,
                                                                    std::shared_ptr<topology::Router> router = nullptr,
                                                                    std::span<const RangeGather> range_gathers = {});

// The resharding flows of one boundary, without routes: source replica r holds samples
// [r b/DP_s, (r+1) b/DP_s) of the microbatch (in a mixed stage, its group's share after the replicas
// before it); each overlap with a destination replica moves `bytes_per_sample` per sample, split into
// max(TP_r, TP_q) pieces of the two replicas' TP degrees, piece j from source TP rank j mod TP_r to
// destination TP rank j mod TP_q (Megatron's scatter/gather over the TP ranks). `whole_pieces`: every
// piece carries the whole overlap instead (Plan.boundary_grads_whole, the backward's flows).
std::vector<BoundaryFlow> ReshardFlows(const StageLayout& from, const StageLayout& to, uint64_t micro_batch_size,
                                       double bytes_per_sample, bool whole_pieces = false);

// Plan.pipeline_sends_attention_mask: DeepSpeed's pipeline engine (the AMP artifact's 0.3.13) sends
// GPT-2's causal mask, one [1, 1, s, s] tensor cast to FP16 whatever the micro-batch, beside the
// activations from every TP rank to its peer (pipe/engine.py, _exec_send_activations). Its layouts
// give one forward flow per TP-rank pair (every stage the same TP and DP): each flow gains s^2 x 2 bytes.
void AddAttentionMaskBytes(uint64_t seq_length, std::vector<BoundaryFlow>& forward_flows);

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_SETUP_H_
