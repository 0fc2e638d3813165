// A resolved plan: the schedule an enum of hetsim's own (UNSPECIFIED is 1F1B here), every "0 means"
// default applied (TP, DP, EP, ETP, CP, virtual stages, H-1F1B's epsilon: base/spec/defaults.h), the
// microbatch count derived, and a label per stage for messages. Built by proto::ResolvePlan from a
// validated Plan; the schedule (sim/pipeline) and the cost model (sim/workload) read only this.
#ifndef HETSIM_BASE_SPEC_PLAN_H_
#define HETSIM_BASE_SPEC_PLAN_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/spec/defaults.h"
#include "base/spec/framework.h"

namespace hetsim::spec {

enum class ScheduleKind : uint8_t { kGpipe, kOneFOneB, kEager1F1B, kH1F1B, kInterleaved1F1B };
enum class Recompute : uint8_t { kNone, kSelective, kFull };

// Nodes [first_node, first_node + node_count) of an island and GPUs [first_gpu, first_gpu +
// gpus_per_node) on each.
struct MeshSpec {
  std::string island;
  uint32_t first_node = 0;
  uint32_t node_count = 0;
  uint32_t first_gpu = 0;
  uint32_t gpus_per_node = 0;
};

// Transformer Engine's userbuffers settings that change what the overlapped GEMMs cost
// (Plan.tp_comm_overlap_config); the initial values are Transformer Engine's defaults (initialize_ub).
enum class TpOverlapMethod : uint8_t {
  kPipeline,      // the GEMM in kReduceScatterSplits chunks of its output columns, each reduce-scattered
  kRingExchange,  // one chunk per TP rank's tokens, the partial sums passed around the ring
};
inline constexpr int kTeDefaultOverlapSms = 16;  // num_sm of TE's "pipeline" and "bulk" overlaps
struct TpCommOverlapSpec {
  TpOverlapMethod proj_fprop = TpOverlapMethod::kPipeline;
  TpOverlapMethod fc2_fprop = TpOverlapMethod::kPipeline;
  // SMs each overlap's communication kernel holds while its GEMM runs on the others.
  int proj_fprop_sm_margin = kTeDefaultOverlapSms;
  int fc2_fprop_sm_margin = kTeDefaultOverlapSms;
  int qkv_dgrad_sm_margin = kTeDefaultOverlapSms;
  int qkv_wgrad_sm_margin = kTeDefaultOverlapSms;
  int fc1_dgrad_sm_margin = kTeDefaultOverlapSms;
  int fc1_wgrad_sm_margin = kTeDefaultOverlapSms;

  // The six margins by their Plan.tp_comm_overlap_config field names, for checks and keys.
  std::array<std::pair<const char*, int>, 6> Margins() const {
    return {{{"proj_fprop_sm_margin", proj_fprop_sm_margin},
             {"fc2_fprop_sm_margin", fc2_fprop_sm_margin},
             {"qkv_dgrad_sm_margin", qkv_dgrad_sm_margin},
             {"qkv_wgrad_sm_margin", qkv_wgrad_sm_margin},
             {"fc1_dgrad_sm_margin", fc1_dgrad_sm_margin},
             {"fc1_wgrad_sm_margin", fc1_wgrad_sm_margin}}};
  }
};

// Data-parallel replicas of a stage on one mesh (Stage.replica_groups): data_parallel replicas of
// tensor_parallel GPUs, each computing micro_batch_share samples of every microbatch.
struct ReplicaGroupSpec {
  MeshSpec mesh;
  int tensor_parallel = 1;
  int data_parallel = 1;
  uint64_t micro_batch_share = 0;
  // MoE: the group's own expert layout over its GPUs (ETP x EP of them one copy); 0 = the stage's. The
  // resolver writes every group's; the stage's are then the finest group's (StageSpec::FinestExperts).
  int expert_parallel = 0;
  int expert_tensor_parallel = 0;
};

// How a stage runs on its GPUs, whatever its layers and mesh: its parallel degrees, ZeRO, recomputation
// and measured times. A plan's stage (StageSpec), a configuration the cost model prices
// (workload::StageConfig) and a planner's candidate (planner::StageOption) are each this and their
// own fields, so a stage is copied from one to another whole (with its LayerRange where it has one).
struct StageParallelism {
  int tensor_parallel = 1;
  int data_parallel = 1;
  int zero_stage = 0;
  Recompute recompute = Recompute::kNone;
  int recompute_num_layers = 0;  // kFull: the first N blocks of each chunk; 0 = every block
  bool sequence_parallel = false;
  // MoE parallel folding: the stage's TP x CP x DP GPUs laid out again for the experts, ETP consecutive
  // GPUs sharing an expert's weights, EP such groups holding distinct experts (EP divides the experts).
  int expert_parallel = 1;
  // TP inside the experts; the resolver writes the value, a hand-built one may leave 0 = tensor_parallel.
  int expert_tensor_parallel = 0;
  // The GPUs that hold each expert shard (Megatron-LM's expert-data-parallel size, what ZeRO shards the
  // experts' states over); 0 = TP x CP x DP / (ETP x EP). Set where a replica group of a mixed stage is
  // priced: every group's GPUs over ETP x EP (StageSpec::MixedExpertDataParallel).
  int expert_data_parallel = 0;
  double measured_forward_ms = 0;   // > 0 replaces the modelled forward compute time
  double measured_backward_ms = 0;  // > 0 replaces the modelled backward compute time

  int ExpertTensorParallel() const { return ExpertTensorParallelOr(expert_tensor_parallel, tensor_parallel); }
};

// The layers a stage holds: [first_layer, first_layer + num_layers) of the model's layer sequence. A
// plan's stage (StageSpec), what the cost model prices (workload::StageConfig), a virtual stage's chunk
// (pipeline::LayerRange), the executor's virtual stage and gradient-sync range (VirtualStageCost,
// LayerRangeGroup) and a searched stage (planner::SearchedStage) are each a range; none declares its own.
struct LayerRange {
  int first_layer = 0;
  int num_layers = 0;
};

// The point of the batch a stage is priced at: the samples of one pipeline micro-batch and the CP degree
// that splits each sample's tokens. Not a plan's description (PlanSpec and PipelineSpec hold theirs, and
// planner::PlanRequest its 0 = searched) but a value a stage is costed at: the cost model's
// (workload::StageConfig, filled from the plan) and each point of the planner's search (its best
// candidate, and the pipelines family's candidates and context). Declared here once.
struct MicroBatchPoint {
  uint64_t micro_batch_size = 1;  // each data-parallel replica takes micro_batch_size / DP
  int context_parallel = 1;       // each sample's tokens split over CP ranks; ZeRO shards over DP x CP
};

struct StageSpec : StageParallelism, LayerRange {
  MeshSpec mesh;
  int warmup_forwards = 0;  // 0: derived from the schedule
  std::string where;        // "plan.pbtxt: stages[3]"
  // A mixed stage's groups (Stage.replica_groups, in file order); empty for a plain stage, which is the
  // one group of mesh, tensor_parallel, data_parallel (ReplicaGroups). For a mixed stage the resolver
  // sets mesh to the first group's, tensor_parallel to the largest TP (the finest shard the gradients
  // reduce by) and data_parallel to the replicas of all groups (what ZeRO shards over).
  std::vector<ReplicaGroupSpec> replica_groups;

  bool mixed() const { return !replica_groups.empty(); }
  // Group g's expert layout: its own, or the stage's.
  int GroupExpertParallel(const ReplicaGroupSpec& g) const {
    return g.expert_parallel > 0 ? g.expert_parallel : std::max(1, expert_parallel);
  }
  int GroupExpertTensorParallel(const ReplicaGroupSpec& g) const {
    return g.expert_tensor_parallel > 0 ? g.expert_tensor_parallel : ExpertTensorParallel();
  }
  // A mixed stage's expert-data-parallel size: each group lays the experts out over its own GPUs, its ETP
  // x EP of them holding one copy, so each finest expert shard is held once in every copy of every group.
  int MixedExpertDataParallel() const {
    int copies = 0;
    for (const ReplicaGroupSpec& g : replica_groups) {
      copies += g.tensor_parallel * g.data_parallel / (GroupExpertTensorParallel(g) * GroupExpertParallel(g));
    }
    return std::max(1, copies);
  }
  // Every replica group of the stage: its own, or the plain stage's one group of equal shares.
  std::vector<ReplicaGroupSpec> ReplicaGroups(uint64_t micro_batch_size) const {
    if (mixed()) return replica_groups;
    return {{mesh, tensor_parallel, data_parallel, micro_batch_size / std::max(1, data_parallel)}};
  }
};

// Plan.cp_comm_type: how context parallelism moves K and V.
enum class ContextParallelComm : uint8_t {
  kRing,       // p2p: a ring of K/V blocks, each step hidden behind the attention of the block in hand
  kAllGather,  // allgather: K/V gathered before the attention and their gradients reduce-scattered, exposed
  kAllToAll,   // a2a: Q/K/V and the attention output exchanged by all-to-alls (a head split), exposed
};
// The exchange as reports, traces, `check` and the planner's notes name it.
inline const char* ContextParallelExchangeName(ContextParallelComm c) {
  switch (c) {
    case ContextParallelComm::kAllGather: return "K/V all-gather";
    case ContextParallelComm::kAllToAll: return "Q/K/V/O all-to-all";
    case ContextParallelComm::kRing: break;
  }
  return "K/V ring";
}

// One of Plan.pipelines (a plan of data-parallel pipelines of different shapes): its own stages, covering
// every layer, and its share of the global batch in micro-batches of its own size.
struct PipelineSpec {
  std::string name;
  uint64_t batch_share = 0;       // samples per iteration
  uint64_t micro_batch_size = 0;  // divides batch_share
  std::vector<StageSpec> stages;
  // Its stages' context parallelism: Pipeline.context_parallel, or the plan's when unset (>= 1).
  int context_parallel = 1;
};

// Megatron's fused elementwise kernels that run as eager passes of their own, kernel by kernel
// (Plan.unfused_kernels, from the launch line's --no-...-fusion flags; Plan.unfused_elementwise, all
// three: Megatron-LM v1 without its fusion flags). docs/cost-model.md, "GPU time".
struct UnfusedKernels {
  bool bias_activation = false;      // the bias added before GeLU / SwiGLU by a kernel of its own
  bool bias_dropout_add = false;     // the bias add and the residual add apart from dropout
  bool masked_softmax = false;       // the causal mask applied to the scores before the softmax
  bool masked_fill_on_view = false;  // with masked_softmax: in place on a view of the scores (CopySlices)
};

// Plan.deepspeed_timer_syncs: the device synchronisations of DeepSpeed's wall_clock_breakdown timers a
// microbatch, around each pipeline instruction (0: none).
struct DeepSpeedTimerSyncs {
  int load_micro_batch = 0;    // LoadMicroBatch, on the first and the last stage
  int forward_pass = 0;        // ForwardPass
  int backward_pass = 0;       // BackwardPass on a stage that is not the last
  int last_backward_pass = 0;  // the last stage's BackwardPass (DeepSpeedEngine.backward)
  int pipe_transfer = 0;       // each send or receive of activations or gradients
};

// The plan-wide switches the cost model reads when it prices a stage, each the Plan field of the same
// name: declared once and inherited by the plan, the stage's cost configuration
// (workload::StageConfig), the planner's request and its profiler's options, so that handing them
// on is one assignment and a new switch cannot be forgotten on the way.
struct CostSwitches {
  bool grad_reduce_in_fp32 = false;  // gradient buffers and their reduction in FP32
  bool tp_comm_overlap = false;
  bool tp_comm_overlap_aggregate = false;
  TpCommOverlapSpec tp_comm_overlap_config;
  bool tp_backward_overlap = false;
  ContextParallelComm cp_comm = ContextParallelComm::kRing;
  // PyTorch's kernels and recipes (Plan.eager_kernels ... pytorch_async_tp; docs/cost-model.md,
  // "PyTorch-native kernels"): all off is Transformer Engine's fused kernels.
  bool eager_kernels = false;
  bool op_selective_recompute = false;
  bool fp8_dynamic_casts = false;
  bool pytorch_async_tp = false;
  bool attention_repeats_kv = false;
  int block_forward_passes = 1;    // Plan.block_forward_passes (0 read as 1)
  bool flash_attention_2 = false;  // Plan.flash_attention_2: SDPA's FlashAttention-2 backward (2.87x its forward)
  // Plan.pytorch_context_parallel: PyTorch's ring attention, whose merges run in FP32 with eager ops
  // (workload's RingAttentionMergeBytes; not with the all-to-all exchange, which is no ring).
  bool pytorch_context_parallel = false;
  // Plan.dtensor_sequence_copies: DTensor's TP collectives on the sequence dim rearrange their buffer
  // with a copy on the compute stream (not where async TP fuses them; workload's DTensorSequenceCopies).
  bool dtensor_sequence_copies = false;
  UnfusedKernels unfused;  // Plan.unfused_elementwise (all three) and Plan.unfused_kernels
  // Plan.fp8_current_scaling: Transformer Engine's current scaling, whose gathered FP8 inputs and output
  // gradients all-reduce their amax over the TP group before the cast (FP8 models under SP only).
  bool fp8_current_scaling = false;
  // Plan.deepspeed_fp16_optimizer: DeepSpeed 0.3.x's FP16 step and all-reduce copies (FP16 models).
  bool deepspeed_fp16_optimizer = false;
  // Plan.megatron_v2_fp16_optimizer: Megatron-LM v2.x's Float16Optimizer without main_grad buffers, the
  // FP16 gradients cast to FP32 copies and the masters copied back (FP16 models, FP16 gradients).
  bool megatron_v2_fp16_optimizer = false;
  // Plan.megatron_local_ddp_copies: Megatron-LM v2.x's local DDP without contiguous buffers flattens,
  // divides and copies back the gradients around their all-reduce (FP16 gradients).
  bool megatron_local_ddp_copies = false;
  // Plan.fp32_logits_cross_entropy: the head's logits cast to FP32 in a pass of their own, then
  // Megatron's vocabulary-parallel cross-entropy op by op (LayerCost::fp32_loss_*).
  bool fp32_logits_cross_entropy = false;
  // Plan.host_bound_blocks: a block's pass lasts at least its ops x the GPU type's host_op_us; the ops
  // per block forward and backward (the framework profile's BlockHostOps with the plan's unfused
  // kernels; ProfileBlockHostOps), 0 when off.
  bool host_bound_blocks = false;
  double block_host_ops_forward = 0;
  double block_host_ops_backward = 0;
  // Plan.synchronized_tp_collectives: each TP collective through Megatron's mpu mappings between two
  // device synchronizations, 2 x the GPU type's sync round trip (GpuSpec::sync_round_trip_s) of idle GPU each.
  bool synchronized_tp_collectives = false;
  // Plan.cuda_launch_blocking: every kernel launch waits for the kernel, so a block's pass lasts its GPU
  // time plus its ops (block_host_ops_*) x the GPU type's host_op_us, in series.
  bool cuda_launch_blocking = false;
  // Plan.autograd_grad_accumulation: each microbatch's backward adds its weight gradients into the
  // parameters' gradients in a pass of its own (autograd's AccumulateGrad), 3 x the gradient bytes.
  bool autograd_grad_accumulation = false;
  // Plan.boundary_host_rebuild: the Sailor fork's reconstruct_tensor builds every received boundary tensor
  // on the host (zero-filled, copied to the GPU, 3 device synchronizations) while the GPU idles; 1
  // synchronization per sent one (workload's BoundaryRebuildSeconds).
  bool boundary_host_rebuild = false;
  // Plan.zero_reduce_per_rank: each ZeRO-1/2 gradient bucket is reduced as one NCCL Reduce chain per
  // data-parallel rank (DeepSpeed's average_tensor); the executor adds the chains' fill after each bucket.
  bool zero_reduce_per_rank = false;
  // Plan.layer_norm_weight_grad_pass: the norm's backward reads the gradient and the input again for the
  // scale and bias gradients (apex's and PyTorch's kernels): one more pass of each norm's input.
  bool layer_norm_weight_grad_pass = false;

  // Plan.deepspeed_timer_syncs: DeepSpeed's wall_clock_breakdown timers, device syncs a microbatch by
  // pipeline instruction, each a host round trip of idle GPU (GpuSpec::sync_round_trip_s).
  DeepSpeedTimerSyncs timer_syncs;
  // Plan.reference_policy: DPO's frozen reference model runs every layer's forward once more a microbatch
  // (reference_forward); with reference_weight_swap its weights are swapped in from the host each step,
  // else they stay on the GPU beside the policy's.
  bool reference_forward = false;
  bool reference_weight_swap = false;
};

struct PlanSpec : CostSwitches {
  std::string name;
  uint64_t global_batch_size = 0;
  uint64_t micro_batch_size = 0;
  int64_t microbatches = 0;  // global_batch_size / micro_batch_size
  ScheduleKind schedule = ScheduleKind::kOneFOneB;
  double h1f1b_epsilon = kDefaultH1f1bEpsilon;
  int virtual_stages = 1;
  int context_parallel = 1;
  std::vector<int> virtual_stage_layers;  // Plan.virtual_stage_layers; empty: equal chunks
  std::vector<StageSpec> stages;
  // Plan.pipelines: when not empty, `stages` is empty and each pipeline runs its share of the batch.
  std::vector<PipelineSpec> pipelines;
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;  // ZeRO-1/2 gathers at the start, before each chunk's first forward
  uint64_t grad_bucket_bytes = 0;     // 0: one bucket per stage
  bool blocking_p2p = false;
  bool zero3_prefetch = false;
  bool zero3_lock_step = false;           // Plan.zero3_lock_step: each layer's gather when every replica reaches it
  bool moe_a2a_overlap = false;           // combined 1F1B: paired forwards and backwards hide each other's MoE dispatch
  bool tied_embedding_grad_sync = false;  // first and last stage all-reduce the tied embedding's gradients
  // Plan.nccl_sm_contention: compute beside an NCCL collective of its GPUs runs on the SMs the
  // collective's channels leave it (sim/workload/nccl_contention.h).
  bool nccl_sm_contention = false;
  // The software that runs the plan, whose profile is already applied to the behaviours above
  // (base/spec/framework.h), and the profile's behaviours the plan switched off: for reports.
  Framework framework = Framework::kUnspecified;
  std::vector<std::string> framework_off;
  bool boundary_grads_whole = false;           // Plan.boundary_grads_whole: every TP rank sends the whole gradient
  bool pipeline_sends_attention_mask = false;  // Plan.pipeline_sends_attention_mask: s^2 FP16 per forward send
  bool p2p_rendezvous = false;                 // Plan.p2p_rendezvous: DeepSpeed's TrainSchedule step order
  std::string where;                           // the plan file, for messages
};

// The framework profile's behaviours as PlanSpec members, by the Plan field each mirrors, in the order
// of FrameworkProfile::Behaviours(): the one list the resolver copies and the reports read.
inline constexpr std::pair<const char*, bool PlanSpec::*> kBehaviourFields[] = {
    {"blocking_p2p", &PlanSpec::blocking_p2p},
    {"tp_backward_overlap", &PlanSpec::tp_backward_overlap},
    {"grad_reduce_in_fp32", &PlanSpec::grad_reduce_in_fp32},
    {"overlap_grad_reduce", &PlanSpec::overlap_grad_reduce},
    {"overlap_param_gather", &PlanSpec::overlap_param_gather},
    {"zero3_prefetch", &PlanSpec::zero3_prefetch},
    {"tied_embedding_grad_sync", &PlanSpec::tied_embedding_grad_sync},
    {"eager_kernels", &PlanSpec::eager_kernels},
    {"op_selective_recompute", &PlanSpec::op_selective_recompute},
    {"fp8_dynamic_casts", &PlanSpec::fp8_dynamic_casts},
    {"pytorch_async_tp", &PlanSpec::pytorch_async_tp},
    {"attention_repeats_kv", &PlanSpec::attention_repeats_kv},
    {"pytorch_context_parallel", &PlanSpec::pytorch_context_parallel},
    {"flash_attention_2", &PlanSpec::flash_attention_2},
    {"host_bound_blocks", &PlanSpec::host_bound_blocks},
    {"dtensor_sequence_copies", &PlanSpec::dtensor_sequence_copies},
    {"nccl_sm_contention", &PlanSpec::nccl_sm_contention},
    {"p2p_rendezvous", &PlanSpec::p2p_rendezvous},
    {"zero3_lock_step", &PlanSpec::zero3_lock_step},
    {"autograd_grad_accumulation", &PlanSpec::autograd_grad_accumulation},
    {"layer_norm_weight_grad_pass", &PlanSpec::layer_norm_weight_grad_pass},
    {"zero_reduce_per_rank", &PlanSpec::zero_reduce_per_rank},
};

}  // namespace hetsim::spec

#endif  // HETSIM_BASE_SPEC_PLAN_H_
