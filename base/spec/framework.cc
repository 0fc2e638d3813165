#include "base/spec/framework.h"

namespace hetsim::spec {
namespace {

// Sources: the framework's own code at a tagged release (or the commit that changed a default), so a
// reader can check each value. docs/frameworks.md explains each behaviour and its validation rows.
constexpr const char* kMcoreArgs =
    "https://github.com/NVIDIA/Megatron-LM/blob/core_v0.13.0/megatron/training/arguments.py";
constexpr const char* kMcoreLayers =
    "https://github.com/NVIDIA/Megatron-LM/blob/core_v0.13.0/megatron/core/tensor_parallel/layers.py";
constexpr const char* kMcoreFsdp =
    "https://github.com/NVIDIA/Megatron-LM/blob/core_v0.13.0/megatron/core/distributed/custom_fsdp/"
    "fully_sharded_data_parallel.py";
constexpr const char* kMlm22P2p =
    "https://github.com/NVIDIA/Megatron-LM/blob/3f652469118b658515feed36cd914323eba13163/megatron/p2p_communication.py";
constexpr const char* kMlm22Args =
    "https://github.com/NVIDIA/Megatron-LM/blob/3f652469118b658515feed36cd914323eba13163/megatron/arguments.py";
constexpr const char* kMlm25Layers = "https://github.com/NVIDIA/Megatron-LM/blob/v2.5/megatron/mpu/layers.py";
constexpr const char* kMlm25P2p = "https://github.com/NVIDIA/Megatron-LM/blob/v2.5/megatron/p2p_communication.py";
constexpr const char* kMlm25Args = "https://github.com/NVIDIA/Megatron-LM/blob/v2.5/megatron/arguments.py";
constexpr const char* kMlm25Ddp = "https://github.com/NVIDIA/Megatron-LM/blob/v2.5/megatron/model/distributed.py";
constexpr const char* kMlmAsyncTp =
    "https://github.com/NVIDIA/Megatron-LM/commit/3f652469118b658515feed36cd914323eba13163";
constexpr const char* kMlmOverlapGrad =
    "https://github.com/NVIDIA/Megatron-LM/commit/2d5220a424f7c52d597e06e47934d6467294a559";
constexpr const char* kMdsArgs = "https://github.com/microsoft/Megatron-DeepSpeed/blob/main/megatron/arguments.py";
// tp_backward_overlap (session 37, issue 40): under --deepspeed, validate_args switches the asynchronous TP
// all-reduce off whatever the flags say ("currently DeepSpeed seems to be incompatible with
// async_tensor_model_parallel_allreduce thus temporarily disabling it", since commit f90b887, July 2023; the
// Sailor fork's copy has the same lines), so a column-parallel linear's input gradient is all-reduced by
// copy_to_tensor_model_parallel_region's backward, after the weight-gradient GEMM, not under it.
constexpr const char* kMdsAsyncTpOff =
    "https://github.com/microsoft/Megatron-DeepSpeed/blob/f4157bea69f3df8c6cb66f2ebcda66ba03d1288e/megatron/"
    "arguments.py#L394-L399";
constexpr const char* kDsP2p = "https://github.com/microsoft/DeepSpeed/blob/master/deepspeed/runtime/pipe/p2p.py";
constexpr const char* kDsSchedule =
    "https://github.com/microsoft/DeepSpeed/blob/master/deepspeed/runtime/pipe/schedule.py";
constexpr const char* kDsBf16 =
    "https://github.com/microsoft/DeepSpeed/blob/master/deepspeed/runtime/bf16_optimizer.py";
constexpr const char* kDsZero = "https://github.com/microsoft/DeepSpeed/blob/master/deepspeed/runtime/zero/config.py";
constexpr const char* kTorchPipelining =
    "https://github.com/pytorch/pytorch/blob/main/torch/distributed/pipelining/schedules.py";
constexpr const char* kTitanTp =
    "https://github.com/pytorch/torchtitan/blob/main/torchtitan/models/llama3/infra/parallelize.py";
constexpr const char* kTitanConfig = "https://github.com/pytorch/torchtitan/blob/main/torchtitan/config/job_config.py";
constexpr const char* kFsdp2 = "https://docs.pytorch.org/docs/stable/distributed.fsdp.fully_shard.html";
// zero3_lock_step (session 41): each FSDP parameter group's all-gather issued in its pre-forward /
// pre-backward hook (the next one's with implicit prefetch) on the root's one all-gather stream; DeepSpeed's
// coordinator fetches each submodule's parameters, and prefetches the next ones, in its traced module order.
constexpr const char* kFsdp2Gathers =
    "https://github.com/pytorch/pytorch/blob/main/torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py";
constexpr const char* kDsZeroFetch =
    "https://github.com/microsoft/DeepSpeed/blob/master/deepspeed/runtime/zero/partitioned_param_coordinator.py";
// tied_embedding_grad_sync (issue 40): DeepSpeed's TrainSchedule ends with ReduceTiedGrads before ReduceGrads.
constexpr const char* kDsTied = "https://github.com/microsoft/DeepSpeed/blob/master/deepspeed/runtime/pipe/engine.py";
// Megatron runs the same all-reduce (_allreduce_embedding_grads); its profiles leave it off until the
// Megatron validation sets are checked with it (docs/frameworks.md).
// autograd_grad_accumulation (session 42): Megatron-DeepSpeed's linears hand their weight gradient to autograd
// (the gradient-accumulation fusion into main_grad is commented out, "TODO: temporary commented", in
// LinearWithGradAccumulationAndAsyncCommunication.backward), so AccumulateGrad adds each microbatch's into
// `.grad`; DeepSpeed's ZeRO-1 registers no gradient hooks (stage_1_and_2.py: only with partition_gradients or
// overlap_comm, which defaults on for ZeRO-3 alone), nor do its engine and FP16 optimizers without ZeRO.
// A BF16 model without ZeRO runs DeepSpeed's BF16_Optimizer, which clears `.grad` before each backward and
// adds it into FP32 copies after it, a pass of its own that is not autograd's.
constexpr const char* kMdsWeightGrad =
    "https://github.com/microsoft/Megatron-DeepSpeed/blob/f4157bea69f3df8c6cb66f2ebcda66ba03d1288e/megatron/core/"
    "tensor_parallel/layers.py";
// layer_norm_weight_grad_pass (session 43): apex's FusedLayerNormAffineFunction backward
// (HostLayerNormGradient) runs cuComputePartGradGammaBeta over the output gradient and the input, then
// cuComputeGradInput over both again; Megatron-LM before its persistent kernel (2022) builds the same
// code as fused_mix_prec_layer_norm_cuda, Megatron-DeepSpeed's MixedFusedLayerNorm calls apex's (its
// FastLayerNormFN only for the listed widths with apex.contrib built, which the validated runs lack:
// BigScience's 14336, AMP's Megatron v1.1.5 and the Sailor fork's profiled kernels). Megatron-LM 2022
// and later run FastLayerNormFN (persist_layer_norm, its widths) or Transformer Engine's LayerNorm, one
// backward kernel for both gradients; torchtitan's RMSNorm is eager ops (eager_kernels).
constexpr const char* kApexLnBackward = "https://github.com/NVIDIA/apex/blob/master/csrc/layer_norm_cuda_kernel.cu";
constexpr const char* kMlm25LnKernel =
    "https://github.com/NVIDIA/Megatron-LM/blob/v2.5/megatron/fused_kernels/layer_norm_cuda_kernel.cu";
constexpr const char* kMlmPersistLn =
    "https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/legacy/model/fused_layer_norm.py";
constexpr const char* kMcoreTeNorm =
    "https://github.com/NVIDIA/Megatron-LM/blob/core_v0.13.0/megatron/core/extensions/transformer_engine.py";
// Megatron's own DDP takes each gradient into its main_grad buffer (a hook, or the fused weight-gradient GEMM).
constexpr const char* kMcoreGradAccum =
    "https://github.com/NVIDIA/Megatron-LM/blob/core_v0.13.0/megatron/core/distributed/param_and_grad_buffer.py";
constexpr const char* kMcoreTied =
    "https://github.com/NVIDIA/Megatron-LM/blob/core_v0.13.0/megatron/core/distributed/finalize_model_grads.py";
// torchtitan at the commit of its H100 benchmarks (9dec370, December 2024): compile off by default and
// per block, the per-op selective checkpointing policy, torchao's Float8Linear with dynamic scaling.
constexpr const char* kTitanCompile =
    "https://github.com/pytorch/torchtitan/blob/9dec370ad26b5f8e9a7333a0e36165018262644b/torchtitan/config_manager.py";
constexpr const char* kTitanSac =
    "https://github.com/pytorch/torchtitan/blob/9dec370ad26b5f8e9a7333a0e36165018262644b/torchtitan/parallelisms/"
    "parallelize_llama.py";
constexpr const char* kTitanModel =
    "https://github.com/pytorch/torchtitan/blob/9dec370ad26b5f8e9a7333a0e36165018262644b/torchtitan/models/llama/"
    "model.py";
constexpr const char* kTitanFloat8 =
    "https://github.com/pytorch/torchtitan/blob/9dec370ad26b5f8e9a7333a0e36165018262644b/docs/float8.md";
// Megatron's and Transformer Engine's kernels, for every row but torchtitan's: fused elementwise
// kernels and selective recompute of the attention core (transformer_config.py), FP8 casts fused into
// TE's kernels, TE's userbuffers for the TP overlap (initialize_ub).
constexpr const char* kMcoreKernels =
    "https://github.com/NVIDIA/Megatron-LM/blob/core_v0.13.0/megatron/core/transformer/transformer_config.py";
constexpr const char* kTeFp8 =
    "https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/examples/fp8_primer.html";
constexpr const char* kTeUserbuffers =
    "https://github.com/NVIDIA/TransformerEngine/blob/main/transformer_engine/pytorch/module/base.py";
constexpr const char* kTeCp =
    "https://github.com/NVIDIA/TransformerEngine/blob/main/transformer_engine/pytorch/attention/dot_product_attention/"
    "context_parallel.py";
constexpr const char* kTorchCp =
    "https://github.com/pytorch/pytorch/blob/1963fc83a1c32e162162e2414f78b043f0674bae/torch/distributed/tensor/"
    "experimental/_attention.py";
// SDPA's flash backend: FlashAttention-2's kernels as PyTorch vendors them (the _sm80 kernels run on
// Hopper too); Transformer Engine runs its own fused attention (cuDNN's on Hopper).
constexpr const char* kTorchFlash2 =
    "https://github.com/pytorch/pytorch/tree/1963fc83a1c32e162162e2414f78b043f0674bae/aten/src/ATen/native/"
    "transformers/cuda/flash_attn/kernels";
// dtensor_sequence_copies (session 33): DTensor's Shard(1) collectives go through the functional
// collectives, which gather and scatter on dim 0 and rearrange with torch.cat(torch.chunk(...)) (since
// pytorch/pytorch#113324, November 2023; pytorch/pytorch#169404, December 2025, skips it for one sample);
// Megatron's [sequence, batch, hidden] layout gathers and scatters on its first dim, in place.
constexpr const char* kTorchFuncol =
    "https://github.com/pytorch/pytorch/blob/1963fc83a1c32e162162e2414f78b043f0674bae/torch/distributed/"
    "_functional_collectives.py";
constexpr const char* kMcoreMappings =
    "https://github.com/NVIDIA/Megatron-LM/blob/core_v0.13.0/megatron/core/tensor_parallel/mappings.py";
// nccl_sm_contention (session 34): every row runs its data-parallel, ZeRO and context-parallel collectives
// (and Megatron's asynchronous TP backward) through NCCL on a side stream, beside the computation, and an
// NCCL kernel holds one CTA (thread block) per channel for as long as it runs (NCCL_MIN_CTAS /
// NCCL_MAX_CTAS, NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS in NCCL's environment variables); the count
// the model takes is sim/workload/nccl_contention.h's, with its sources.
constexpr const char* kNcclCtas = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html";
// host_bound_blocks (session 32): a block's ops counted in Megatron-LM v1.1.5's ParallelTransformerLayer
// as the AMP artifact runs it on DeepSpeed's pipeline engine (DeepSpeedExamples' copy; docs/frameworks.md
// lists them). Forward, with the fusions: input LayerNorm 1; QKV linear 2 (copy_to_model_parallel_region,
// F.linear); view, split, two views, empty, three transposes, baddbmm, view (10); fused scaled masked
// softmax 1; the CUDA RNG tracker's fork 3 (get, set, restore) and dropout 1; two views, a transpose,
// bmm, view, permute, contiguous, view (8); the output linear 2 (F.linear, reduce_from_model_parallel_region);
// expand_as and the fused bias-dropout-add 2; LayerNorm 1; MLP 5 (copy_to, F.linear, fused bias-GeLU,
// F.linear, reduce_from); expand_as and bias-dropout-add 2: 38. Backward: the 34 differentiable ones'
// autograd nodes (all but empty and the RNG calls) and 12 parameter accumulations: 46. Unfused: + 1
// (bias, then GeLU), + 4 (bias add, dropout, residual add apart, twice), + 1 (masked_fill_, softmax).
constexpr const char* kAmpTransformer =
    "https://github.com/DachengLi1/AMP/blob/708e87f25ca88b7179358a201c82b41aa27858ca/DeepSpeed/DeepSpeedExamples/"
    "Megatron-LM-v1.1.5-3D_parallelism/megatron/model/transformer.py";
constexpr BlockHostOps kMegatronV1BlockOps{38, 46, 1, 4, 1, kAmpTransformer};
constexpr BlockHostOps kNotCounted{};
// Rows that leave it off, with the block code not counted yet: Transformer Engine's modules under
// Megatron-Core's TransformerLayer, Megatron-LM 2021/2022's ParallelTransformerLayer at their tags,
// torchtitan's eager and compiled Llama blocks (kTitanModel).
constexpr const char* kMcoreBlock =
    "https://github.com/NVIDIA/Megatron-LM/blob/core_v0.13.0/megatron/core/transformer/transformer_layer.py";
constexpr const char* kMlm22Block =
    "https://github.com/NVIDIA/Megatron-LM/blob/3f652469118b658515feed36cd914323eba13163/megatron/model/transformer.py";
constexpr const char* kMlm25Block = "https://github.com/NVIDIA/Megatron-LM/blob/v2.5/megatron/model/transformer.py";
constexpr const char* kTeAttention =
    "https://github.com/NVIDIA/TransformerEngine/blob/main/transformer_engine/pytorch/attention/dot_product_attention/"
    "dot_product_attention.py";
constexpr const char* kTorchAsyncTp =
    "https://discuss.pytorch.org/t/distributed-w-torchtitan-introducing-async-tensor-parallelism-in-pytorch/209487";

// zero_reduce_per_rank (session 44): DeepSpeed's ZeRO-1/2 optimizer (stage_1_and_2.py, average_tensor) reduces a
// gradient bucket, with reduce_scatter on (its default), as one dist.reduce per partition owner of the bucket's
// slices, from the 2022 code BigScience ran (2151c78) to PR #4695 (late 2023). Later versions all-reduce the
// bucket instead while use_multi_rank_bucket_allreduce (default true) is on (docs/frameworks.md).
constexpr const char* kDsZeroReduce =
    "https://github.com/microsoft/DeepSpeed/blob/v0.9.0/deepspeed/runtime/zero/stage_1_and_2.py";
// Megatron's distributed optimizer reduce-scatters a bucket in one call; FSDP2 reduce-scatters per parameter group.

constexpr ProfileValue Off(const char* source) { return {When::kNever, source}; }
constexpr ProfileValue On(const char* source) { return {When::kAlways, source}; }
constexpr ProfileValue Bf16(const char* source) { return {When::kBf16Models, source}; }
constexpr ProfileValue UnlessInterleaved(const char* source) { return {When::kUnlessInterleaved, source}; }
constexpr ProfileValue Fp8(const char* source) { return {When::kFp8Models, source}; }
constexpr ProfileValue UnlessBf16(const char* source) { return {When::kUnlessBf16Models, source}; }

// Each value named by its field: a behaviour appended to FrameworkProfile cannot shift the others, and a
// profile that omits one gets its default (off, no source).
constexpr FrameworkProfile kProfiles[] = {
    {.framework = Framework::kMegatronCore,
     .name = "Megatron-Core",
     .enum_name = "MEGATRON_CORE",
     .blocking_p2p = UnlessInterleaved(kMcoreArgs),
     .tp_backward_overlap = On(kMcoreLayers),
     .grad_reduce_in_fp32 = Bf16(kMcoreArgs),
     .overlap_grad_reduce = Off(kMcoreArgs),
     .overlap_param_gather = Off(kMcoreArgs),
     .zero3_prefetch = On(kMcoreFsdp),
     .tied_embedding_grad_sync = Off(kMcoreTied),
     .eager_kernels = Off(kMcoreKernels),
     .op_selective_recompute = Off(kMcoreKernels),
     .fp8_dynamic_casts = Off(kTeFp8),
     .pytorch_async_tp = Off(kTeUserbuffers),
     .attention_repeats_kv = Off(kMcoreKernels),
     .pytorch_context_parallel = Off(kTeCp),
     .flash_attention_2 = Off(kTeAttention),
     .host_bound_blocks = Off(kMcoreBlock),
     .block_host_ops = kNotCounted,
     .dtensor_sequence_copies = Off(kMcoreMappings),
     .nccl_sm_contention = On(kNcclCtas),
     .p2p_rendezvous = Off(kMcoreArgs),
     .zero3_lock_step = On(kMcoreFsdp),
     .autograd_grad_accumulation = Off(kMcoreGradAccum),
     .layer_norm_weight_grad_pass = Off(kMcoreTeNorm),
     .zero_reduce_per_rank = Off(kMcoreArgs)},
    {.framework = Framework::kMegatronLm2022,
     .name = "Megatron-LM 2022",
     .enum_name = "MEGATRON_LM_2022",
     .blocking_p2p = On(kMlm22P2p),
     .tp_backward_overlap = On(kMlmAsyncTp),
     .grad_reduce_in_fp32 = Bf16(kMlm22Args),
     .overlap_grad_reduce = Off(kMlmOverlapGrad),
     .overlap_param_gather = Off(kMlmOverlapGrad),
     .zero3_prefetch = Off(kMlm22Args),
     .tied_embedding_grad_sync = Off(kMcoreTied),
     .eager_kernels = Off(kMcoreKernels),
     .op_selective_recompute = Off(kMcoreKernels),
     .fp8_dynamic_casts = Off(kTeFp8),
     .pytorch_async_tp = Off(kTeUserbuffers),
     .attention_repeats_kv = Off(kMcoreKernels),
     .pytorch_context_parallel = Off(kTeCp),
     .flash_attention_2 = Off(kTeAttention),
     .host_bound_blocks = Off(kMlm22Block),
     .block_host_ops = kNotCounted,
     .dtensor_sequence_copies = Off(kMcoreMappings),
     .nccl_sm_contention = On(kNcclCtas),
     .p2p_rendezvous = Off(kMlm22P2p),
     .zero3_lock_step = Off(kMlm22Args),
     .autograd_grad_accumulation = Off(kMcoreGradAccum),
     .layer_norm_weight_grad_pass = Off(kMlmPersistLn),
     .zero_reduce_per_rank = Off(kMlm22Args)},
    {.framework = Framework::kMegatronLm2021,
     .name = "Megatron-LM 2021 (SC'21)",
     .enum_name = "MEGATRON_LM_2021",
     .blocking_p2p = On(kMlm25P2p),
     .tp_backward_overlap = Off(kMlm25Layers),
     .grad_reduce_in_fp32 = Bf16(kMlm25Args),
     .overlap_grad_reduce = Off(kMlm25Ddp),
     .overlap_param_gather = Off(kMlm25Args),
     .zero3_prefetch = Off(kMlm25Args),
     .tied_embedding_grad_sync = Off(kMcoreTied),
     .eager_kernels = Off(kMcoreKernels),
     .op_selective_recompute = Off(kMcoreKernels),
     .fp8_dynamic_casts = Off(kTeFp8),
     .pytorch_async_tp = Off(kTeUserbuffers),
     .attention_repeats_kv = Off(kMcoreKernels),
     .pytorch_context_parallel = Off(kTeCp),
     .flash_attention_2 = Off(kTeAttention),
     .host_bound_blocks = Off(kMlm25Block),
     .block_host_ops = kNotCounted,
     .dtensor_sequence_copies = Off(kMcoreMappings),
     .nccl_sm_contention = On(kNcclCtas),
     .p2p_rendezvous = Off(kMlm25P2p),
     .zero3_lock_step = Off(kMlm25Args),
     .autograd_grad_accumulation = Off(kMlm25Ddp),
     .layer_norm_weight_grad_pass = On(kMlm25LnKernel),
     .zero_reduce_per_rank = Off(kMlm25Ddp)},
    {.framework = Framework::kMegatronDeepSpeed,
     .name = "Megatron-DeepSpeed (DeepSpeed pipeline engine)",
     .enum_name = "MEGATRON_DEEPSPEED",
     .blocking_p2p = On(kDsP2p),
     .tp_backward_overlap = Off(kMdsAsyncTpOff),
     .grad_reduce_in_fp32 = Bf16(kDsBf16),
     .overlap_grad_reduce = Off(kDsSchedule),
     .overlap_param_gather = Off(kDsSchedule),
     .zero3_prefetch = On(kDsZero),
     .tied_embedding_grad_sync = On(kDsTied),
     .eager_kernels = Off(kMcoreKernels),
     .op_selective_recompute = Off(kMcoreKernels),
     .fp8_dynamic_casts = Off(kTeFp8),
     .pytorch_async_tp = Off(kTeUserbuffers),
     .attention_repeats_kv = Off(kMcoreKernels),
     .pytorch_context_parallel = Off(kTeCp),
     .flash_attention_2 = Off(kMdsArgs),
     .host_bound_blocks = On(kAmpTransformer),
     .block_host_ops = kMegatronV1BlockOps,
     .dtensor_sequence_copies = Off(kMcoreMappings),
     .nccl_sm_contention = On(kNcclCtas),
     .p2p_rendezvous = On(kDsSchedule),
     .zero3_lock_step = On(kDsZeroFetch),
     .autograd_grad_accumulation = UnlessBf16(kMdsWeightGrad),
     .layer_norm_weight_grad_pass = On(kApexLnBackward),
     .zero_reduce_per_rank = On(kDsZeroReduce)},
    {.framework = Framework::kFsdp2Torchtitan,
     .name = "PyTorch FSDP2 (torchtitan)",
     .enum_name = "FSDP2_TORCHTITAN",
     .blocking_p2p = Off(kTorchPipelining),
     .tp_backward_overlap = Off(kTitanTp),
     .grad_reduce_in_fp32 = On(kTitanConfig),
     .overlap_grad_reduce = On(kFsdp2),
     .overlap_param_gather = Off(kFsdp2),
     .zero3_prefetch = On(kFsdp2),
     .tied_embedding_grad_sync = Off(kTorchPipelining),
     .eager_kernels = On(kTitanCompile),
     .op_selective_recompute = On(kTitanSac),
     .fp8_dynamic_casts = Fp8(kTitanFloat8),
     .pytorch_async_tp = On(kTorchAsyncTp),
     .attention_repeats_kv = On(kTitanModel),
     .pytorch_context_parallel = On(kTorchCp),
     .flash_attention_2 = On(kTorchFlash2),
     .host_bound_blocks = Off(kTitanModel),
     .block_host_ops = kNotCounted,
     .dtensor_sequence_copies = On(kTorchFuncol),
     .nccl_sm_contention = On(kNcclCtas),
     .p2p_rendezvous = Off(kTorchPipelining),
     .zero3_lock_step = On(kFsdp2Gathers),
     .autograd_grad_accumulation = Off(kFsdp2),
     .layer_norm_weight_grad_pass = Off(kTitanModel),
     .zero_reduce_per_rank = Off(kFsdp2)},
};

constexpr FrameworkProfile kNone{};

}  // namespace

std::span<const FrameworkProfile> FrameworkProfiles() { return kProfiles; }

const FrameworkProfile& ProfileOf(Framework framework) {
  for (const FrameworkProfile& p : kProfiles) {
    if (p.framework == framework) return p;
  }
  return kNone;
}

bool Applies(When when, const ProfileContext& context) {
  switch (when) {
    case When::kNever: return false;
    case When::kAlways: return true;
    case When::kBf16Models: return context.bf16_model;
    case When::kUnlessInterleaved: return !context.interleaved;
    case When::kFp8Models: return context.fp8_model;
    case When::kUnlessBf16Models: return !context.bf16_model;
  }
  return false;
}

ProfileContext ProfileContextFor(DType model_dtype, bool interleaved) {
  ProfileContext c;
  c.bf16_model = model_dtype == DType::kBf16 || model_dtype == DType::kFp8;
  c.fp8_model = model_dtype == DType::kFp8;
  c.interleaved = interleaved;
  return c;
}

void AddStage(ProfileContext& context, int zero_stage) {
  context.shards_optimizer = context.shards_optimizer || zero_stage == 1 || zero_stage == 2;
  context.shards_parameters = context.shards_parameters || zero_stage == 3;
  context.shards_gradients = context.shards_gradients || zero_stage >= 2;
}

void SetTies(ProfileContext& context, bool tied_embeddings, bool cut, bool pipelines) {
  // A plan of pipelines runs the tied sync with ZeRO-1/2 (the matrix sharded over its copies) but not
  // ZeRO-3, which the simulator refuses with pipelines.
  context.ties_across_stages = tied_embeddings && cut && !(pipelines && context.shards_parameters);
}

bool ProfileTurnsOn(std::string_view field, const ProfileValue& value, const ProfileContext& context) {
  if (field == "overlap_param_gather" && !context.shards_optimizer) return false;
  if (field == "zero3_prefetch" && !context.shards_parameters) return false;
  if (field == "zero3_lock_step" && (!context.shards_parameters || context.pipelines)) return false;
  if (field == "tied_embedding_grad_sync" && !context.ties_across_stages) return false;
  if (field == "p2p_rendezvous" && !context.train_schedule) return false;
  if (field == "autograd_grad_accumulation" && context.shards_gradients) return false;
  if (field == "zero_reduce_per_rank" && (!context.shards_optimizer || context.pipelines)) return false;
  return Applies(value.when, context);
}

std::string_view WhenName(When when) {
  switch (when) {
    case When::kNever: return "off";
    case When::kAlways: return "on";
    case When::kBf16Models: return "on for BF16 and FP8 models";
    case When::kUnlessInterleaved: return "on unless interleaved";
    case When::kFp8Models: return "on for FP8 models";
    case When::kUnlessBf16Models: return "on for FP16 and FP32 models";
  }
  return "off";
}

}  // namespace hetsim::spec
