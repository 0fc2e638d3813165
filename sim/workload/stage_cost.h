// What one pipeline stage costs per microbatch on one of its GPUs: forward and backward compute
// time, the tensor-/expert-parallel collectives to run on the real fabric, the bytes it hands to the
// next stage, and its memory (model states sharded by ZeRO, activations per in-flight microbatch).
//
//   StageConfig cfg = StageConfigOf(plan.stages[s], plan.micro_batch_size, plan.context_parallel);
//   auto gpu = GpuCompute::Create(gpu_spec, model.dtype(), "cluster.pbtxt: gpu_types[0]");
//   auto cost = ComputeStageCost(model, cfg, *gpu, plan.stages[s].where);
//   cost->forward_time, cost->forward_collectives, cost->memory.PeakBytes(in_flight)
//
// The compute times exclude the collectives: the executor (or the planner's analytical model) times
// every LayerCollective on the stage's fabric and adds them on the critical path of the pass, in the
// order they are listed (Megatron's TP collectives cannot overlap the computation that needs them).
#ifndef HETSIM_SIM_WORKLOAD_STAGE_COST_H_
#define HETSIM_SIM_WORKLOAD_STAGE_COST_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/spec/defaults.h"
#include "base/spec/dtype.h"
#include "base/spec/plan.h"
#include "base/time.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/layer_cost_internal.h"
#include "sim/workload/model_cost.h"

namespace hetsim::workload {

// A stage's parallelism (spec::StageParallelism: TP, DP, EP, ETP, ZeRO 0..3, recomputation, whose
// recompute_num_layers counts from the config's first layer, measured times) over its layers, with
// the plan-wide switches the cost model reads (spec::CostSwitches: FP32 gradients; Transformer Engine's
// userbuffers overlap, which with sequence parallelism runs the block linears' GEMMs in chunks as their
// TP collectives stream (UserbufferChunks); PyTorch's eager elementwise ops (LayerCost::eager_*),
// torchtitan's per-op selective recompute (Gemm::op_sac_recomputed), torchao's dynamic FP8 casts,
// PyTorch's async TP (forward-only micro-pipelining, no SMs held), repeated K/V
// (LayerCost::repeated_kv_bytes_per_sample), Megatron's unfused kernels (LayerCost::unfused),
// each block's forward run block_forward_passes times, and every layer's once more for a DPO reference model),
// priced at a micro-batch point
// (spec::MicroBatchPoint: the plan's micro-batch size and CP degree, or a point of the planner's search).
// Every field is the spec's: the stage's parallelism and layer range, the point, the switches.
struct StageConfig : spec::StageParallelism, spec::LayerRange, spec::MicroBatchPoint, spec::CostSwitches {};

// FlashAttention-2's backward over its forward: five matmuls to the forward's two (Dao 2023, Algorithm
// 2: S and P recomputed, then dV, dP, dQ, dK), 2.5 times the FLOPs, at its H100 rate of 322 TFLOP/s
// against the forward's 370 (head dimension 128, 16K tokens: Shah et al. 2024, FlashAttention-3,
// Figs. 5 and 6, which benchmark FlashAttention-2 on H100 SXM5).
inline constexpr double kFlashAttention2BackwardRatio = 2.5 * 370.0 / 322.0;

// A Triton FlashAttention's backward over its forward (ATTENTION_FLASH_TRITON): Triton's own A100 reference for
// its fused attention when it first pinned one (python/test/regression/test_performance.py, commit 174f121c1,
// "[TESTS] Added attention regression tests (#1227)", 2023-02-21: causal, batch 4, 48 heads, 4,096 tokens, head
// dimension 64, FP16), forward at 0.37 and backward at 0.25 of the tensor peak, the backward's FLOPs counted as
// 2.5 times the forward's. The kernel's level (the sum) stays what it is priced from.
inline constexpr double kTritonFlashAttentionBackwardRatio = 2.5 * 0.37 / 0.25;

// The head dimension at which the GEMM model's price of a fused attention kernel (Gemm::fused_attention,
// one GEMM of k = 2 d) is its level; below it the kernel runs at FusedAttentionHeadDimSpeed of that rate.
inline constexpr double kFusedAttentionReferenceHeadDim = 128;

// Whose code a fused attention kernel is: FlashAttention-2's CUDA kernels (ATTENTION_FLASH) or a Triton
// FlashAttention (ATTENTION_FLASH_TRITON: MPT's flash_attn_triton.py, launched as triton.ops's kernel is).
enum class FusedAttentionCode : uint8_t { kFlashAttention2, kTriton };

// A fused attention kernel's rate at head dimension `head_dim` over its rate at 128 (1 from 128 up), on a
// GPU of `compute_capability`. The kernel's per-block work that does not grow with d (the online softmax on
// the scores: Dao 2023, Sec. 3.1) makes its rate d / (d + c) of a rate, with c from its published forward +
// backward rates at head dimension 64 over 128 (causal, 16K tokens; Dao 2023, arXiv 2307.08691, Figs.
// 4(c),(d) on the A100 80GB, Fig. 7(c),(d) on the H100 SXM5; the flash-attn repository's
// assets/flash2_a100_fwd_bwd_benchmark.png and flash2_h100_fwd_bwd_benchmark.png). FlashAttention-2: 171 /
// 189 on the A100, 284 / 328 on the H100, the H100 figure on Hopper (9.x), the A100 figure on every other
// GPU (the kernels are Ampere code): 0.905 and 0.866 where the tile model's k + tile_overhead_k gives
// 0.83. Triton: the A100 figure's "FlashAttention Triton" bars, 80 / 80 (c = 0: its rate per FLOP does not
// fall with d), on every GPU (the only Triton figure; the code is Ampere's mma.sync everywhere).
// docs/cost-model.md, "Fused attention by head dimension".
double FusedAttentionHeadDimSpeed(double head_dim, int compute_capability,
                                  FusedAttentionCode code = FusedAttentionCode::kFlashAttention2);

// What the cost model prices of a plan's stage (with the plan's micro-batch size and CP degree).
StageConfig StageConfigOf(const spec::StageSpec& stage, uint64_t micro_batch_size, int context_parallel = 1);
// The same with every plan-wide setting the cost model reads (micro-batch size, CP, the TP overlap).
StageConfig StageConfigOf(const spec::StageSpec& stage, const spec::PlanSpec& plan);

// Transformer Engine's userbuffers overlap of a block's linear layers (docs/cost-model.md): the GEMM
// that consumes an all-gather runs one chunk per arriving shard (a ring exchange; pairs of shards with
// `aggregate`); the GEMM that feeds a reduce-scatter runs in kReduceScatterSplits chunks of its output
// columns (TE's "pipeline") or one chunk per TP rank's tokens (its "ring_exchange"). `forward` chunks
// the forward GEMM, `input_grad` the backward's input-gradient GEMM (a row-parallel layer's, which
// consumes the gathered output gradient); 1 is the whole GEMM. The SM margins are the SMs the
// overlap's communication kernel holds while each GEMM runs (TpCommOverlapSpec).
inline constexpr int kReduceScatterSplits = 4;  // TE's "pipeline" method, num_splits
struct UserbufferOverlap {
  double forward = 1, input_grad = 1;
  bool forward_cuts_columns = false;  // the pipeline into a reduce-scatter: chunks of output columns
  int forward_sm_margin = 0, input_grad_sm_margin = 0, weight_grad_sm_margin = 0;
};
UserbufferOverlap UserbufferOverlapOf(const Gemm& gemm, const StageConfig& config);

// Context parallelism in one attention layer of the stage, on one GPU per microbatch: the ring
// passes `step_bytes` (the K and V of this GPU's tokens: b/DP samples, s/CP tokens, kv heads/TP) to
// the next CP rank in each of CP - 1 steps of the forward, and twice that (K, V and their gradients)
// in each of the backward's; every step hides behind 1/CP of the attention core's compute.
struct ContextParallelAttention {
  int32_t layer = 0;
  int64_t step_bytes = 0;     // this GPU's K and V: one ring step
  int64_t query_bytes = 0;    // this GPU's queries (an a2a exchanges them with K and V)
  int64_t context_bytes = 0;  // this GPU's attention output (an a2a returns it to the sequence split)
  double core_forward_s = 0;
  double core_backward_s = 0;
  // Full or selective recompute runs the attention core, and so its forward ring, again in the backward.
  bool recomputed = false;
};

// torchao's Float8Linear with dynamic tensorwise scales (Plan.fp8_dynamic_casts), the HBM traffic one
// FP8 GEMM's casts move on a GPU, for `linears` PyTorch linears that each cast their own input of
// `inputs` elements, `weights` weight elements and `outputs` output elements (docs/cost-model.md,
// "PyTorch-native kernels"). Forward: each input and the weight reduced to its amax (read 2 bytes an
// element) and cast (read 2, write 1). Backward: input and weight cast again for the transposed
// layouts _scaled_mm takes (3 each), the output gradient's amax and two casts (2 + 3 + 3).
struct Fp8Casts {
  double forward_amax_bytes = 0, forward_cast_bytes = 0, forward_kernels = 0;
  double forward_amax_kernels = 0;  // of forward_kernels, the amax passes (the rest cast)
  double backward_bytes = 0, backward_kernels = 0;
};
Fp8Casts DynamicFp8Casts(double linears, double inputs, double weights, double outputs);

// Transformer Engine's GroupedLinear in FP8 (Megatron-Core's TEGroupedMLP, `--moe-grouped-gemm`), the
// HBM traffic one grouped linear of the routed experts moves besides its GEMMs on a GPU, for `inputs`
// input and `outputs` output elements over its local experts (docs/cost-model.md, "What FP8 covers"). Its
// input comes from the token permutation (FC1) or Megatron's SwiGLU (FC2) in BF16, not from a
// LayerNorm that could write FP8, so TE casts it explicitly: forward, one multi-tensor cast-transpose
// of the input (read 2 bytes an element, write the FP8 copy and its FP8 transpose for the weight
// gradient: 4; the delayed-scaling amax is taken in the same kernel); backward, the same of the output
// gradient (4). Megatron pads each expert's tokens to a multiple of 16 for the FP8 GEMMs
// (Fp8Padding before FC1, Fp8Unpadding after FC2, `pads` for either: a copy of the padded tensor,
// read 2 and write 2) and the backward copies the gradients back (4). The weights' casts are cached
// across the microbatches of a step (is_first_microbatch) and not counted.
Fp8Casts TeGroupedFp8Casts(double inputs, double outputs, bool pads_input, bool unpads_output);

// A collective of the stage, per microbatch, with absolute bytes on each GPU of the group.
struct StageCollective {
  CollectiveOp op;
  CollectiveGroup group;
  int64_t bytes = 0;  // whole buffer per rank (see LayerCollective::bytes_per_sample)
  int32_t count = 0;  // consecutive calls of this size
  int32_t layer = 0;  // model layer index that issues them
  // Backward only: reduces a column-parallel linear's input gradient (LayerCollective::async_backward).
  bool async_backward = false;
  bool userbuffers = false;  // LayerCollective::userbuffers
  int32_t fc2_count = 0;     // of count, LayerCollective::fc2_forward_count (forward)
  // Backward only: a forward collective run again by a full recomputation of its layer (every framework's
  // activation checkpointing reruns the block's forward, its collectives included).
  bool recomputed = false;
  // A userbuffers collective's calls, the time of the GEMM each runs beside (Transformer Engine's
  // split_overlap_* and bulk overlaps, PyTorch's fused all-gather -> mm and mm -> reduce-scatter each
  // pair one collective with one linear's GEMM): forward, the gather with its column-parallel linear's
  // GEMM and the reduce-scatter with its row-parallel linear's; backward, the output gradient's gather
  // with the row-parallel linear's input-gradient GEMM and the input gradient's reduce-scatter with
  // the column-parallel linear's weight-gradient GEMM. The calls are in the order of the list, the FC2
  // ones last (fc2_count); a call without an entry has no GEMM of its own to wait for.
  std::vector<double> beside_gemm_s = {};
  bool direct_call = false;  // LayerCollective::direct_call
};

// Memory per GPU of the stage, in bytes.
struct StageMemory {
  int64_t param_bytes = 0;      // weights, after TP/EP split and ZeRO-3 sharding
  int64_t grad_bytes = 0;       // gradients, after TP/EP split and ZeRO-2/3 sharding
  int64_t optimizer_bytes = 0;  // Adam states (+ master weights), after ZeRO-1/2/3 sharding
  // Activations kept for the backward pass by one in-flight microbatch (the local share of it).
  int64_t activation_bytes_per_microbatch = 0;
  // Extra working memory of a backward under full recompute: one layer's full activations.
  int64_t recompute_working_bytes = 0;
  // A frozen reference model's weights kept on the GPU (Plan.reference_policy without its weight swap).
  int64_t reference_param_bytes = 0;

  int64_t ModelStateBytes() const { return param_bytes + grad_bytes + optimizer_bytes + reference_param_bytes; }
  // Adds `other`'s weights, gradients and optimizer states (one more range or expert block held).
  StageMemory& AddModelStates(const StageMemory& other) {
    param_bytes += other.param_bytes;
    grad_bytes += other.grad_bytes;
    optimizer_bytes += other.optimizer_bytes;
    reference_param_bytes += other.reference_param_bytes;
    return *this;
  }
  // Peak with `in_flight` microbatches' activations alive (from the schedule).
  int64_t PeakBytes(int in_flight) const {
    return ModelStateBytes() + in_flight * activation_bytes_per_microbatch +
           (in_flight > 0 ? recompute_working_bytes : 0);
  }
};

struct StageCost {
  // Compute time of one microbatch (local share) on one GPU of the stage, collectives excluded.
  // The backward includes recomputation. Measured times, when configured, replace these.
  Time forward_time = 0;
  Time backward_time = 0;
  bool forward_measured = false;
  bool backward_measured = false;

  // Hardware FLOPs per microbatch on one GPU (recompute included) and model FLOPs (no recompute).
  double forward_flop_per_gpu = 0;
  double backward_flop_per_gpu = 0;
  double model_flop_per_gpu = 0;  // forward + backward, no recompute

  // Collectives per microbatch in issue order, forward then backward. Empty when TP == 1 and EP == 1.
  std::vector<StageCollective> forward_collectives;
  std::vector<StageCollective> backward_collectives;

  // Activations (forward) or their gradients (backward) crossing the boundary to the next stage per
  // microbatch: per data-parallel replica (b/DP samples) and for the whole microbatch.
  int64_t boundary_bytes_per_replica = 0;
  int64_t boundary_bytes_per_microbatch = 0;

  // Gradient bytes one GPU contributes to the data-parallel synchronisation each iteration
  // (all-reduce for ZeRO 0-1, reduce-scatter for ZeRO 2-3; ZeRO-3 also all-gathers parameters).
  int64_t grad_sync_bytes = 0;
  int64_t expert_grad_sync_bytes = 0;  // expert parameters: synchronised over DP / EP replicas only
  // Parameter bytes the ZeRO all-gathers move (ZeRO-1/2 after the step, ZeRO-3 per layer): the model's
  // element type, whatever precision the gradients are reduced in.
  int64_t param_sync_bytes = 0;
  int64_t expert_param_sync_bytes = 0;
  // The states this GPU's optimizer step passes over: under ZeRO (Megatron's distributed optimizer)
  // its shard of the reduced gradients, weights and Adam states, whose weights the parameter all-gather
  // then spreads; without ZeRO all of them (OptimizerStepSeconds).
  StageMemory optimizer_shard;

  // Context parallelism (context_parallel > 1): one entry per attention layer, in layer order.
  std::vector<ContextParallelAttention> cp_attention;
  // Compute time of each layer of the stage (forward, backward with recompute), in layer order:
  // what ZeRO-3's prefetched parameter gathers hide behind.
  std::vector<double> layer_forward_s;
  std::vector<double> layer_backward_s;
  // Per layer, in layer order: the backward's weight-gradient GEMMs of the column-parallel linears
  // (QKV, FC1, the head; not experts), what the layer's input-gradient reductions run under with
  // Plan.tp_backward_overlap (HiddenByAsyncBackward); scaled with a measured backward time.
  std::vector<double> layer_column_weight_grad_s;

  StageMemory memory;
  // Plan.reference_policy's weight swap, once an iteration on each GPU of the stage (ReferenceSwapSeconds).
  Time reference_swap_time = 0;
};

// NeMo-Aligner's cpu_weight_swap around the reference model's forward (Plan.reference_policy.cpu_weight_swap),
// once a step: swap_dict copies the GPU's `weight_bytes` of policy weights to the host, loads the reference's
// in, and after the forward pass loads the policy's back: one device-to-host and two host-to-device copies,
// one after another with the GPU idle, at the GPU type's pinned copy rate; 0 when that rate is not set.
double ReferenceSwapSeconds(double weight_bytes, const GpuCompute& gpu);

// Plan.tp_backward_overlap: each layer's asynchronous input-gradient reductions (`reductions`: the
// model layer and the time of each async_backward collective of the backward) run under that layer's
// own column-parallel weight gradients: sum over layers of min(reductions, weight gradients). Layer by
// layer, not pooled: the head's large weight gradient runs first in the backward and cannot hide the
// blocks' reductions that come after it.
Time HiddenByAsyncBackward(const StageCost& cost, int first_layer, std::span<const std::pair<int, Time>> reductions);

// Plan.tp_comm_overlap: what of a pass's userbuffers collectives (LayerCollective::userbuffers; their
// reduce-scatter time, of which `fc2_reduce_scatter` the MLPs', the rest the attention projections',
// and their all-gather time) Transformer Engine cannot hide: in the forward the last chunk of each
// reduce-scatter, which starts when the GEMM's last chunk ends (1 / kReduceScatterSplits of it
// pipelined; as a ring exchange, 1/TP, one send's share: an estimate, Transformer Engine sends each
// chunk to its owner and reduces the received partial sums after the last GEMM chunk); with
// `aggregate`, in both passes, the first exchange of each ring all-gather, which the first GEMM (on two
// shards) waits for (one shard of TP - 1).
Time UserbufferExposed(Time reduce_scatter, Time fc2_reduce_scatter, Time all_gather, int tensor_parallel,
                       bool aggregate, bool forward, const spec::TpCommOverlapSpec& config);
// Of a pass's tensor-parallel collectives (`all`), what hides behind its compute: all but `exposed`,
// up to the compute time.
Time HiddenByUserbuffers(Time all, Time exposed, Time compute);

// One pass's userbuffers collectives as they are timed (the simulator's setup and the planner each time
// them their own way), and what the overlap hides of them: one accounting for both, so they agree.
struct UserbufferTimes {
  Time all = 0, reduce_scatter = 0, fc2_reduce_scatter = 0, all_gather = 0;
  // Each call that has a GEMM beside it (StageCollective::beside_gemm_s): its time and the GEMM's.
  struct PairedCall {
    Time collective = 0, gemm = 0;
    CollectiveOp op = CollectiveOp::kAllGather;
    bool fc2 = false;
  };
  std::vector<PairedCall> paired;
  // Counts collective `c`, which took `time`, when it is a userbuffers collective.
  void Add(const StageCollective& c, Time time);
  // UserbufferExposed and HiddenByUserbuffers of these times, less what outlasts its own GEMM
  // (UserbufferOutlasting).
  Time Hidden(int tensor_parallel, bool aggregate, bool forward, Time compute,
              const spec::TpCommOverlapSpec& config) const;
};

// What a pass's TP overlap (Plan.tp_comm_overlap) hides of its userbuffers collectives, `all` of them
// and, of those, a full recomputation's reruns (`recomputed`), beside `compute`: Transformer Engine's
// userbuffers with the plan's settings; or, with Plan.pytorch_async_tp, PyTorch's async TP, which
// micro-pipelines the forward's collectives and the backward's reruns of them as ring exchanges and
// runs the backward's own in order. 0 without the overlap. The simulator's setup and the planner both
// call it: one accounting, so that they agree.
Time HiddenByTpOverlap(const spec::CostSwitches& plan, int tensor_parallel, bool forward, Time compute,
                       const UserbufferTimes& all, const UserbufferTimes& recomputed);

// The times of one pass's collectives that the plan's TP overlaps may hide, however they were timed.
struct TpOverlapTimes {
  UserbufferTimes userbuffers;                       // around TE's linears (what Plan.tp_comm_overlap hides)
  UserbufferTimes recomputed;                        // of those, a full recomputation's reruns (backward)
  std::vector<std::pair<int, Time>> async_backward;  // (layer, time) of each (Plan.tp_backward_overlap)
  // Counts collective `c`, which took `time`, in each share it belongs to.
  void Add(const StageCollective& c, Time time);
};

// What the plan's TP overlap hides of a pass's collectives (`times`) of a stage costing `cost` whose
// first layer is `first_layer`: Plan.tp_comm_overlap's (HiddenByTpOverlap beside the pass's compute),
// else in the backward Plan.tp_backward_overlap's (HiddenByAsyncBackward); 0 without either. The
// simulator's setup and the planner both call it: one accounting, so that they agree.
Time PassHiddenByTpOverlap(const spec::CostSwitches& plan, int tensor_parallel, bool forward, const StageCost& cost,
                           int first_layer, const TpOverlapTimes& times);

// What of the paired calls the overlap cannot hide beyond UserbufferExposed: a call hides behind its
// own GEMM only (each split_overlap_* call, and each fused PyTorch op, returns when both its GEMM
// chunks and its exchange are done), so of a call of time t, of which e stays exposed anyway
// (UserbufferExposed's share of it), max(0, t - e - gemm) more: sum over the calls.
Time UserbufferOutlasting(std::span<const UserbufferTimes::PairedCall> calls, int tensor_parallel, bool aggregate,
                          bool forward, const spec::TpCommOverlapSpec& config);

// Validates the configuration against the model (layer range, positive degrees, and the stage rules of
// base/spec/stage_rules.h, the ones plan files are validated with) and prices the stage.
// `where` prefixes error messages: "plan.pbtxt: stages[2]".
absl::StatusOr<StageCost> ComputeStageCost(const ModelCost& model, const StageConfig& config, const GpuCompute& gpu,
                                           absl::string_view where);

// The dense parameters one GPU of a `tp`-way tensor-parallel group holds of `layer`: split over TP but
// for the duplicated ones (MLA's down projections, the router).
double DenseParamsPerGpu(const LayerCost& layer, double tp);
// The dense parameters one GPU of a `tp`-way stage holding layers [first, first + num) holds (a tied
// head without the embedding keeps its copy), without the experts'.
double DenseParamsOfLayers(const ModelCost& model, int first, int num, int tp);
// The gradient bytes one GPU of a `tp`-way stage holding layers [first, first + num) reduces over its
// data-parallel group: ComputeStageCost's grad_sync_bytes (a tied head without the embedding keeps its
// copy), without the experts'. Pipelines of different shapes reduce per layer range with it.
int64_t DenseGradSyncBytes(const ModelCost& model, int first, int num, int tp, bool fp32_gradients);
// Plan.tied_embedding_grad_sync in a plan of pipelines: the tied embedding's gradient (the V x h matrix
// the embedding and a tied head share) reduces in a group of its own over every stage holding a copy,
// so a layer range holding the embedding or the head reduces without it (once: a range holding both
// holds one copy). TiedGradSyncBytes: that group's bytes per GPU of a `tp`-way shard (V h / tp
// gradients); 0 for a model without a tied head.
int64_t RangeGradSyncBytesWithoutTied(const ModelCost& model, int first, int num, int tp, bool fp32_gradients);
int64_t TiedGradSyncBytes(const ModelCost& model, int tp, bool fp32_gradients);
// Whether the tied matrix's gradients reduce in FP32: with grad_reduce_in_fp32 in a BF16 (or FP32) run,
// whose Megatron main gradients are FP32; an FP16 run's tied sync reduces the weight's own FP16 gradient
// (DeepSpeed's pipeline engine all-reduces `weight.grad` of the tied module, runtime/pipe/module.py).
bool TiedGradientsInFp32(spec::DType dtype, bool grad_reduce_in_fp32);
// The experts' parameters one GPU of a stage holding layers [first, first + num) holds, its experts laid
// out over `expert_shards` = ETP x EP GPUs (ComputeStageCost's expert part), and the gradient bytes it
// reduces over its expert-data-parallel group: ComputeStageCost's expert_grad_sync_bytes. Pipelines of
// different shapes reduce a layer range's experts with it.
double ExpertParamsOfLayers(const ModelCost& model, int first, int num, int expert_shards);
int64_t ExpertGradSyncBytes(const ModelCost& model, int first, int num, int expert_shards, bool fp32_gradients);

// Model-state memory per GPU for `param_count` parameters (already split by TP/EP) under a ZeRO
// stage over `data_parallel` replicas: mixed-precision Adam as in Rajbhandari et al. 2020
// (2 + 2 + 12 bytes per parameter for BF16/FP16; with `fp32_gradients` the gradients take 4, as in
// Megatron-LM's BF16 runs: 2 + 4 + 12).
StageMemory ZeroShardedModelStates(double param_count, spec::DType dtype, int zero_stage, int data_parallel,
                                   bool fp32_gradients = false);
// Bytes of one gradient: the model's element type, or 4 under Plan.grad_reduce_in_fp32.
int GradientBytes(spec::DType dtype, bool fp32_gradients);
// Weights, gradients and Adam states of one parameter, unsharded (16 for BF16, 18 with FP32 gradients).
int ModelStateBytesPerParam(spec::DType dtype, bool fp32_gradients);

}  // namespace hetsim::workload

#endif  // HETSIM_SIM_WORKLOAD_STAGE_COST_H_
