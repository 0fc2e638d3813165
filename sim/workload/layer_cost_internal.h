// What one layer of the model's layer sequence costs, per sample (one sequence of seq_length tokens)
// and before any parallelism: FLOPs split into GEMMs (so that the GPU model can apply a size-dependent
// efficiency), memory-bound traffic, parameters, activations kept for the backward pass (split the way
// Korthikanti et al. 2022 split them, so tensor/sequence parallelism and recompute can be applied
// later) and the tensor-parallel collectives the layer issues.
//
// Everything here scales linearly with the number of samples, except the GEMM size that decides the
// efficiency; StageCost (stage_cost.h) applies micro-batch size, TP, SP, EP, DP and recompute.
#ifndef HETSIM_SIM_WORKLOAD_LAYER_COST_INTERNAL_H_
#define HETSIM_SIM_WORKLOAD_LAYER_COST_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/collective_op.h"
#include "base/spec/plan.h"

namespace hetsim::workload {

enum class LayerKind : uint8_t {
  kEmbedding,  // token embedding lookup (vocabulary-parallel under TP)
  kBlock,      // one whole transformer block (BLOCK granularity)
  kAttention,  // the attention half of a block, with its LayerNorm and residual (SUBLAYER)
  kMlp,        // the MLP (or MoE) half of a block, with its LayerNorm and residual (SUBLAYER)
  kHead,       // final norm, LM head (vocabulary-parallel) and cross-entropy
  kCustom,     // a layer of an explicit LayerList
};
absl::string_view LayerKindName(LayerKind kind);

// Which dimension of a GEMM tensor parallelism splits (Megatron's column- and row-parallel linears,
// attention heads, the vocabulary-parallel head).
enum class TpSplit : uint8_t { kNone, kColumns, kRows, kBatch };

// Which of a block's Transformer Engine linears a GEMM is, for the userbuffers overlap
// (Plan.tp_comm_overlap): QKV and FC1 take an all-gather of their input, the projection and FC2 feed a
// reduce-scatter (shared experts' too). kNone: everything else (attention core, routed experts, router,
// MLA's projections but the output one, which TE's userbuffers do not serve, the head).
enum class TeLinear : uint8_t { kNone, kQkv, kProj, kFc1, kFc2 };

// One matrix multiply (or a batch of identical ones launched as one kernel) of the forward pass.
struct Gemm {
  const char* name;                    // "qkv", "scores", "attn_v", "proj", "fc1", "fc2", "router", "lm_head"...
  double forward_flop_per_sample = 0;  // whole layer, all heads/experts, no tensor parallelism
  // Experts' GEMMs: the work is spread over num_experts kernels (tokens routed to each expert).
  bool per_expert = false;
  // per_expert only: a GPU's experts run as one grouped kernel (Transformer.moe_grouped_gemm).
  bool grouped = false;
  // The attention core (scores and attention over values): recomputed under selective recompute.
  // Its matrices are per sample and per head (batch), not stacked along m.
  bool attention_core = false;
  // The attention core as one fused kernel (FlashAttention's Q K^T and P V with the scores in SRAM):
  // what Plan.flash_attention_2 re-times (StageConfig::flash_attention_2).
  bool fused_attention = false;
  // Built from Ampere's mma.sync on every GPU (ATTENTION_FLASH_TRITON: triton-pre-mlir's code): runs at
  // the GPU's mma_sync_speed of the GEMM model's speed.
  bool mma_sync = false;
  // Runs in FP8 when the model trains in FP8: Transformer Engine's linear layers of a block (QKV,
  // projection, MLP). The attention core (FlashAttention in BF16 unless FP8 attention is asked for),
  // the LM head and the MoE router (Megatron's own layers) stay in 16 bits.
  bool fp8 = true;
  // Shape per sample before tensor parallelism: (m x k) @ (k x n), `batch` times; m counts the rows
  // one sample contributes (tokens; for experts, token visits over all experts). m = 0: no shape
  // known (timed from the FLOPs alone).
  double m = 0, n = 0, k = 0, batch = 1;
  TpSplit split = TpSplit::kNone;
  TeLinear te_linear = TeLinear::kNone;
  // PyTorch's separate nn.Linear modules this GEMM stands for (torchtitan's wq, wk, wv for "qkv"; w1,
  // w3 for a gated "fc1"): each casts its own input to FP8 (Plan.fp8_dynamic_casts).
  double linears = 1;
  // The share of this GEMM's forward that torchtitan's per-op checkpointing recomputes
  // (Plan.op_selective_recompute): every second matmul of a block, in torchtitan's order wq, wk, wv,
  // wo, w1, w3, w2, so wk of "qkv", "proj" (wo), w3 of a gated "fc1"; 0 elsewhere.
  double op_sac_recomputed = 0;
};

// Bytes of activations kept for the backward pass, per sample, per layer, no parallelism.
// Terms follow Korthikanti et al. 2022, Sec. 4 (34sh + 5as^2 per block for 2-byte activations).
struct ActivationBytes {
  // LayerNorm inputs, the inputs of QKV and fc1 (the LayerNorm outputs), dropout masks: replicated on
  // every TP rank unless sequence parallelism shards them along the sequence.
  double tp_replicated = 0;
  // Q, K, V, projection inputs, MLP hidden activations: always split over the TP ranks.
  double tp_sharded = 0;
  // The routed experts' dispatched tokens (k hidden states a token): a GPU keeps what its expert-TP
  // group gathered, ETP / TP of the replica's.
  double expert_tokens = 0;
  // Softmax output, its dropout mask and dropout output (5as^2 per block for 2-byte activations):
  // split over TP ranks, not kept (recomputed) under selective recompute.
  double attention_core = 0;
  // The layer's input (2sh for 2-byte activations): all that full recompute keeps. Divided by TP only
  // with sequence parallelism.
  double layer_input = 0;

  double total() const { return tp_replicated + tp_sharded + expert_tokens + attention_core; }
};

enum class CollectiveGroup : uint8_t {
  kTensor,           // the stage's tensor-parallel group (GPUs of one model replica's shard set)
  kExpert,           // the stage's expert-parallel group
  kExpertTensor,     // the stage's expert-tensor-parallel group (the GPUs sharing one expert's weights)
  kExpertAndTensor,  // expert TP x EP: the GPUs that hold one copy of all the experts
  // Every GPU of the stage, its TP x CP x DP ranks: Megatron's FP8 amax reduction group
  // (get_amax_reduction_group(with_context_parallel=True): _TENSOR_AND_DATA_PARALLEL_GROUP_WITH_CP).
  kStage,
};

struct LayerCollective {
  CollectiveOp op;
  CollectiveGroup group;
  // Size of the whole (unsharded) buffer per sample, in bytes: the all-reduce buffer, the all-gather
  // output, the reduce-scatter input, the all-to-all send buffer of one rank.
  double bytes_per_sample = 0;
  int32_t forward_count = 0;   // calls in the forward pass
  int32_t backward_count = 0;  // calls in the backward pass
  // The backward calls reduce a column-parallel linear's input gradient (QKV, FC1, the LM head),
  // which Megatron-LM overlaps with that linear's weight gradient (Plan.tp_backward_overlap). Not
  // the MoE sublayer's: expert linears communicate explicitly, around the token dispatcher.
  bool async_backward = false;
  // Runs around a Transformer Engine block linear (a dense attention or MLP sublayer, shared experts):
  // what the userbuffers overlap of Plan.tp_comm_overlap pipelines with the GEMMs in chunks. Not the
  // embedding's, the head's or the routed experts'.
  bool userbuffers = false;
  // Of forward_count, the calls around an MLP's FC2 (the others, the attention projection's): whose
  // reduce-scatter method decides what of it stays exposed (UserbufferExposed).
  int32_t fc2_forward_count = 0;
  // The buffer is the group's: bytes_per_sample x the group's size (an all-gather of every rank's
  // tokens, the reduce-scatter of their outputs).
  bool times_group_size = false;
  // Under sequence parallelism the buffer is this GPU's own tokens, 1/TP of the replica's (the MoE
  // dispatch of Megatron-LM's token dispatchers, which run before any gather over TP).
  bool sequence_split = false;
  // Issued by torch.distributed directly (the vocabulary-parallel cross-entropy's reductions,
  // mpu/cross_entropy.py), not through Megatron's mpu/mappings.py region functions, so not one of
  // Plan.synchronized_tp_collectives'.
  bool direct_call = false;
};

// Memory-bound traffic one unfused kernel adds, split like LayerCost's traffic: forward passes (the
// backward moves twice as much) and what the backward alone moves beyond that.
struct UnfusedTraffic {
  double bytes_replicated_per_sample = 0;
  double bytes_sharded_per_sample = 0;
  double kernels = 0;
  double backward_bytes_sharded_per_sample = 0;  // backward only, beyond twice the forward's
  double backward_kernels = 0;
  UnfusedTraffic& operator+=(const UnfusedTraffic& o) {
    bytes_replicated_per_sample += o.bytes_replicated_per_sample;
    bytes_sharded_per_sample += o.bytes_sharded_per_sample;
    kernels += o.kernels;
    backward_bytes_sharded_per_sample += o.backward_bytes_sharded_per_sample;
    backward_kernels += o.backward_kernels;
    return *this;
  }
};

// A layer's unfused passes by the fusion each replaces: the bias add before GeLU (MLP), each
// sublayer's bias add and residual add apart from dropout, the causal mask's masked_fill_ on the
// scores (unfused attention), and what that masked_fill_'s backward adds when it ran in place on a
// view of the scores (spec::UnfusedKernels::masked_fill_on_view).
struct UnfusedLayerTraffic {
  UnfusedTraffic bias_activation, bias_dropout_add, masked_softmax, masked_fill_on_view;
  // The sum of the passes `kernels` leaves unfused.
  UnfusedTraffic Of(const spec::UnfusedKernels& kernels) const {
    UnfusedTraffic sum;
    if (kernels.bias_activation) sum += bias_activation;
    if (kernels.bias_dropout_add) sum += bias_dropout_add;
    if (kernels.masked_softmax) sum += masked_softmax;
    if (kernels.masked_softmax && kernels.masked_fill_on_view) sum += masked_fill_on_view;
    return sum;
  }
  UnfusedLayerTraffic& operator+=(const UnfusedLayerTraffic& o) {
    bias_activation += o.bias_activation;
    bias_dropout_add += o.bias_dropout_add;
    masked_softmax += o.masked_softmax;
    masked_fill_on_view += o.masked_fill_on_view;
    return *this;
  }
};

struct LayerCost {
  std::string name;  // "embedding", "block3", "attention3", "mlp3", "head", or the LayerList name
  LayerKind kind = LayerKind::kCustom;

  std::vector<Gemm> gemms;  // forward GEMMs; each runs twice more in the backward (dgrad and wgrad)
  // Forward FLOPs per sample. For transformers the sum of gemms; a LayerList gives it directly.
  double forward_flop_per_sample = 0;
  // Backward FLOPs per sample without recompute (twice the forward unless a LayerList says otherwise).
  double backward_flop_per_sample = 0;

  // Memory-bound work (norms, softmax, residual adds, activation functions, dropout), bytes of HBM
  // traffic per sample in the forward pass; the backward moves twice as much. Split like activations:
  double memory_bytes_replicated_per_sample = 0;  // split over TP only with sequence parallelism
  double memory_bytes_sharded_per_sample = 0;     // always split over TP
  // The part of the sharded traffic that belongs to the attention core (softmax, attention dropout):
  // run again under selective recompute.
  double memory_bytes_attention_core_per_sample = 0;
  // Megatron's all-to-all dispatcher sorts the tokens it received by local expert before the expert
  // GEMMs and back after them (sort_chunks_by_idxs, run when a GPU holds more than one expert): bytes
  // per sample over the dispatched token copies, of which a GPU holds ETP / TP of the replica's share.
  double memory_bytes_dispatched_per_sample = 0;
  // Memory-bound kernels the forward pass launches (norms, fused bias/activation/dropout, softmax,
  // copies); the backward launches twice as many. Each pays the GPU's per-kernel costs.
  double memory_kernels = 0;
  // One pass over the inputs of the layer's LayerNorms (B s h a norm), per sample, split like the
  // replicated traffic: what the backward reads again where the norm's kernel computes its scale and bias
  // gradients apart from the input gradient (Plan.layer_norm_weight_grad_pass).
  double norm_input_bytes_per_sample = 0;
  // What eager PyTorch adds to that traffic when the block's elementwise ops are not fused
  // (Plan.eager_kernels; torchtitan's model code): the RMSNorms through FP32 in seven kernels, RoPE on
  // Q and K through complex FP32, SwiGLU's SiLU and product apart. Split like the traffic above.
  double eager_bytes_replicated_per_sample = 0;
  double eager_bytes_sharded_per_sample = 0;
  double eager_kernels = 0;
  // What Megatron's eager paths add to that traffic, kernel by kernel, when its fusions are off
  // (Plan.unfused_elementwise, Plan.unfused_kernels).
  UnfusedLayerTraffic unfused;
  // What the head's loss moves on the vocabulary shard per sample under Plan.fp32_logits_cross_entropy,
  // in place of memory_bytes_sharded_per_sample (and twice that in the backward): the FP32 cast's pass
  // and _VocabParallelCrossEntropy's passes, forward and backward apart; the cast's kernel in each.
  double fp32_loss_forward_bytes_per_sample = 0;
  double fp32_loss_backward_bytes_per_sample = 0;
  double fp32_loss_kernels = 0;

  uint64_t param_count = 0;         // all parameters of the layer, every expert included
  uint64_t expert_param_count = 0;  // the part of param_count held by experts (split over EP)
  // The part of param_count every TP rank holds whole (not split over TP): MLA's down projections and
  // latent norms, the MoE router.
  uint64_t tp_replicated_param_count = 0;
  // A tied LM head: its vocabulary matrix is the embedding table and is not in param_count. A stage
  // that holds the head without the embedding keeps its own copy (tied_param_count parameters).
  bool tied_with_embedding = false;
  uint64_t tied_param_count = 0;
  // Whether full/selective recompute applies (transformer blocks and LayerList layers; not the
  // embedding or the head, as in Megatron).
  bool recomputable = true;
  // Selective recompute applies to the layer's attention core although the layer is not recomputable
  // (the head with multi-token prediction modules, whose blocks Megatron recomputes selectively).
  bool attention_core_recomputable = false;

  ActivationBytes activation;
  // Activation bytes per sample handed to the next layer (b*s*h*bytes for a transformer); sent to
  // the next pipeline stage when a stage ends at this layer.
  double output_bytes_per_sample = 0;

  // Keys and values of one sample (s (k + v) elements: 2 s kv_h with GQA, s heads (d_qk + d_v) with
  // MLA): what context parallelism passes around its ring, a 1/CP block per step. 0 without attention.
  double kv_bytes_per_sample = 0;
  // K and V copied to every query head (s 2 heads d elements; MLA: kv_bytes_per_sample): what a model
  // that repeats them before attention (torchtitan's repeat_kv, Plan.attention_repeats_kv) writes and
  // what its context parallelism exchanges.
  double repeated_kv_bytes_per_sample = 0;
  // Queries and the attention's output (the projection's input) of one sample: what a Ulysses-style
  // context parallelism (Plan.cp_comm_type a2a) exchanges besides K and V. 0 without attention.
  double query_bytes_per_sample = 0;
  double context_bytes_per_sample = 0;
  std::vector<LayerCollective> collectives;          // without sequence parallelism
  std::vector<LayerCollective> collectives_seq_par;  // with sequence parallelism
};

}  // namespace hetsim::workload

#endif  // HETSIM_SIM_WORKLOAD_LAYER_COST_INTERNAL_H_
