// The software that runs a plan, as a profile of documented behaviours (Plan.framework;
// docs/frameworks.md). One row per framework, each behaviour with the source that shows it (a URL to
// the framework's code or docs). A profile fills the plan's behaviour fields the plan leaves off
// (proto::ApplyFrameworkProfile, when the inputs are validated): a field the plan sets on wins, and
// Plan.framework_off names the profile's behaviours the plan switches off. kUnspecified is no profile:
// the plan's fields alone, as before frameworks were an input.
#ifndef HETSIM_BASE_SPEC_FRAMEWORK_H_
#define HETSIM_BASE_SPEC_FRAMEWORK_H_

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "base/spec/dtype.h"

namespace hetsim::spec {

enum class Framework : uint8_t {
  kUnspecified,
  kMegatronCore,       // Megatron-LM with Megatron-Core, from its 2023 releases on
  kMegatronLm2022,     // Megatron-LM from September 2021 (asynchronous TP backward) to mid-2023
  kMegatronLm2021,     // Megatron-LM before September 2021: the SC'21 artifact's code
  kMegatronDeepSpeed,  // Megatron-DeepSpeed on DeepSpeed's pipeline engine and ZeRO
  kFsdp2Torchtitan,    // PyTorch FSDP2 as torchtitan runs it
};

// When a profile turns a behaviour on.
enum class When : uint8_t {
  kNever,
  kAlways,
  kBf16Models,         // only for BF16 and FP8 models, whose parameters are BF16 (Megatron's --bf16 rule)
  kUnlessInterleaved,  // every schedule but INTERLEAVED_1F1B
  kFp8Models,          // only for FP8 models (the casts of FP8 linears)
  kUnlessBf16Models,   // FP16 and FP32 models: not BF16 or FP8, whose parameters are BF16
};

struct ProfileValue {
  When when = When::kNever;
  const char* source = "";  // where the framework does it: a URL to its code or docs
};

// The operators the host issues for one transformer block's pass (Plan.host_bound_blocks): the
// forward's ops as the framework's block code calls them (every PyTorch call, kernels or not: each is
// one dispatch from Python) and the backward's autograd nodes (one per differentiable forward op, and
// one gradient accumulation per parameter), with its fused kernels. Each unfused kernel the plan
// names (UnfusedKernels) adds its ops to both: `unfused_bias_activation` (the bias added apart before
// the activation), `unfused_bias_dropout_add` (bias add, dropout and residual add apart, both
// sublayers), `unfused_masked_softmax` (masked_fill_ before the softmax). 0: not counted.
struct BlockHostOps {
  double forward = 0, backward = 0;
  double unfused_bias_activation = 0, unfused_bias_dropout_add = 0, unfused_masked_softmax = 0;
  const char* source = "";  // the block code counted
};

// One framework's behaviours, by the Plan field each one sets. A behaviour that needs a parallelism
// the plan lacks (overlap_param_gather: ZeRO-1/2; zero3_prefetch: ZeRO-3; tied_embedding_grad_sync: a
// tied embedding on a pipeline) is applied only with it.
struct FrameworkProfile {
  Framework framework = Framework::kUnspecified;
  const char* name = "";       // "Megatron-Core", as reports print it
  const char* enum_name = "";  // "MEGATRON_CORE", as plans write it
  ProfileValue blocking_p2p;
  ProfileValue tp_backward_overlap;
  ProfileValue grad_reduce_in_fp32;
  ProfileValue overlap_grad_reduce;
  ProfileValue overlap_param_gather;
  ProfileValue zero3_prefetch;
  ProfileValue tied_embedding_grad_sync;  // appended (issue 40): the tied embedding's all-reduce across stages
  // PyTorch's kernels and recipes (Plan.eager_kernels ...; the torchtitan row sets them). A row that
  // leaves them out runs Megatron's and Transformer Engine's: fused elementwise kernels, selective
  // recompute of the attention core, FP8 casts fused into TE's kernels, TE's userbuffers for TP overlap.
  ProfileValue eager_kernels;
  ProfileValue op_selective_recompute;
  ProfileValue fp8_dynamic_casts;
  ProfileValue pytorch_async_tp;
  ProfileValue attention_repeats_kv;
  ProfileValue pytorch_context_parallel;
  ProfileValue flash_attention_2;  // appended (session 28): SDPA's FlashAttention-2 kernels for the attention core
  ProfileValue host_bound_blocks;  // appended (session 32): a block's pass lasts at least its ops' host issue time
  BlockHostOps block_host_ops;     // what host_bound_blocks counts (0 where the profile leaves it off)
  // appended (session 33): DTensor's sequence-dim TP collectives copy their buffer (chunk + cat)
  ProfileValue dtensor_sequence_copies;
  // appended (session 34): NCCL's collectives beside the computation hold SMs it then lacks
  ProfileValue nccl_sm_contention;
  // appended (session 34): DeepSpeed's TrainSchedule, every pipeline transfer a rendezvous of its two
  // stages in the schedule's step order (Plan.p2p_rendezvous); only where the plan follows that
  // schedule (ProfileContext.train_schedule)
  ProfileValue p2p_rendezvous;
  // appended (session 41): ZeRO-3's gathers issued layer by layer as each rank reaches the layer, in one
  // order on one stream (Plan.zero3_lock_step); only with ZeRO-3 and not in a plan of pipelines
  ProfileValue zero3_lock_step;
  // appended (session 42): each microbatch's weight gradients added into `.grad` by autograd's AccumulateGrad,
  // a pass of its own (Plan.autograd_grad_accumulation); only where no stage's ZeRO-2/3 hooks take them
  ProfileValue autograd_grad_accumulation;
  // appended (session 43): the LayerNorm's backward reads the gradient and the input again for its weight
  // gradients, apex's and PyTorch's kernels (Plan.layer_norm_weight_grad_pass)
  ProfileValue layer_norm_weight_grad_pass;
  // appended (session 44): DeepSpeed ZeRO-1/2 reduces each gradient bucket with one NCCL Reduce per data-parallel
  // rank (Plan.zero_reduce_per_rank); only with ZeRO-1/2 and not in a plan of pipelines
  ProfileValue zero_reduce_per_rank;

  // The behaviours with their Plan field names, in the order reports list them.
  std::array<std::pair<const char*, ProfileValue>, 22> Behaviours() const {
    return {{{"blocking_p2p", blocking_p2p},
             {"tp_backward_overlap", tp_backward_overlap},
             {"grad_reduce_in_fp32", grad_reduce_in_fp32},
             {"overlap_grad_reduce", overlap_grad_reduce},
             {"overlap_param_gather", overlap_param_gather},
             {"zero3_prefetch", zero3_prefetch},
             {"tied_embedding_grad_sync", tied_embedding_grad_sync},
             {"eager_kernels", eager_kernels},
             {"op_selective_recompute", op_selective_recompute},
             {"fp8_dynamic_casts", fp8_dynamic_casts},
             {"pytorch_async_tp", pytorch_async_tp},
             {"attention_repeats_kv", attention_repeats_kv},
             {"pytorch_context_parallel", pytorch_context_parallel},
             {"flash_attention_2", flash_attention_2},
             {"host_bound_blocks", host_bound_blocks},
             {"dtensor_sequence_copies", dtensor_sequence_copies},
             {"nccl_sm_contention", nccl_sm_contention},
             {"p2p_rendezvous", p2p_rendezvous},
             {"zero3_lock_step", zero3_lock_step},
             {"autograd_grad_accumulation", autograd_grad_accumulation},
             {"layer_norm_weight_grad_pass", layer_norm_weight_grad_pass},
             {"zero_reduce_per_rank", zero_reduce_per_rank}}};
  }
};

// Every profile but kUnspecified's, in the order docs/frameworks.md lists them.
std::span<const FrameworkProfile> FrameworkProfiles();

// The profile of `framework`; kUnspecified's turns nothing on.
const FrameworkProfile& ProfileOf(Framework framework);

// What a profile's rules depend on in the plan.
struct ProfileContext {
  bool bf16_model = false;  // BF16 or FP8 (FP8 runs keep BF16 parameters: Megatron's --bf16 --fp8-format)
  bool fp8_model = false;
  bool interleaved = false;
  bool shards_optimizer = false;   // a stage with ZeRO-1/2 (overlap_param_gather, zero_reduce_per_rank need one)
  bool shards_parameters = false;  // a stage with ZeRO-3 (zero3_prefetch acts only there)
  // A stage with ZeRO-2/3, whose gradient hooks move each microbatch's gradients out of `.grad`
  // (autograd_grad_accumulation acts only without one).
  bool shards_gradients = false;
  bool ties_across_stages = false;  // tied embeddings on more than one stage (tied_embedding_grad_sync; SetTies)
  bool pipelines = false;           // Plan.pipelines (zero3_lock_step is not modelled there)
  // The plan runs as DeepSpeed's TrainSchedule can (p2p_rendezvous acts only there): ONE_F_ONE_B, one
  // model chunk a stage, no explicit warm-up counts (the schedule fixes its own).
  bool train_schedule = false;
};
bool Applies(When when, const ProfileContext& context);

// The context of a plan, from its parts: the model's dtype, whether the schedule is interleaved, and
// each stage's ZeRO stage (AddStage once per stage).
ProfileContext ProfileContextFor(DType model_dtype, bool interleaved);
void AddStage(ProfileContext& context, int zero_stage);
// After every stage is added (a plan of pipelines: every pipeline's): whether the tied embedding's
// copies need the tied sync, a model with `tied_embeddings` whose embedding and head sit on different
// stages (`cut`: the plan's pipeline, or one of its `pipelines`, has more than one stage; a plan of
// pipelines then syncs the matrix over every pipeline's first and last stage, as DeepSpeed's pipeline
// engine all-reduces a tied module over the stages that hold it; with ZeRO-1/2 the matrix shards over its
// copies). Not for a plan of pipelines with ZeRO-3, which the simulator refuses (docs/heterogeneous.md).
void SetTies(ProfileContext& context, bool tied_embeddings, bool cut, bool pipelines);

// Whether the profile switches behaviour `field` (a FrameworkProfile::Behaviours() name) on in this
// context: its When applies, and the plan has the parallelism the behaviour acts on.
bool ProfileTurnsOn(std::string_view field, const ProfileValue& value, const ProfileContext& context);

// "on", "off", "on for BF16 models", "on unless interleaved", "on for FP8 models", "on for FP16 and FP32
// models": how docs and reports say a When.
std::string_view WhenName(When when);

}  // namespace hetsim::spec

#endif  // HETSIM_BASE_SPEC_FRAMEWORK_H_
