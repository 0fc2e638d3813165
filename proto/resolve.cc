#include "proto/resolve.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/check.h"
#include "base/spec/defaults.h"
#include "base/status_macros.h"
#include "base/units.h"
#include "proto/framework_profile.h"
#include "proto/gpu_presets.h"
#include "proto/pipeline_plans.h"
#include "proto/validate_model.h"
#include "proto/validate_plan.h"

namespace hetsim::proto {
namespace {

spec::Granularity GranularityOf(hetsim::v1::LayerGranularity g) {
  switch (g) {
    case hetsim::v1::LAYER_GRANULARITY_UNSPECIFIED:
    case hetsim::v1::BLOCK: return spec::Granularity::kBlock;
    case hetsim::v1::SUBLAYER: return spec::Granularity::kSublayer;
    case hetsim::v1::LayerGranularity_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case hetsim::v1::LayerGranularity_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  HETSIM_CHECK(false, "a LayerGranularity number outside the schema (proto::Load refuses them)");
  return spec::Granularity::kBlock;
}

spec::AttentionKernel AttentionKernelOf(hetsim::v1::AttentionKernel a) {
  switch (a) {
    case hetsim::v1::ATTENTION_UNFUSED: return spec::AttentionKernel::kStandard;
    case hetsim::v1::ATTENTION_FLASH: return spec::AttentionKernel::kFlash;
    case hetsim::v1::ATTENTION_FLASH_TRITON: return spec::AttentionKernel::kFlashTriton;
    case hetsim::v1::AttentionKernel_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case hetsim::v1::AttentionKernel_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  HETSIM_CHECK(false, "an AttentionKernel number outside the schema (proto::Load refuses them)");
  return spec::AttentionKernel::kStandard;
}

// Whether the MoE layer gathers every rank's tokens (Megatron's "allgather") rather than sending each
// token to its experts' ranks ("alltoall").
bool IsAllGatherDispatcher(hetsim::v1::MoeTokenDispatcher d) {
  switch (d) {
    case hetsim::v1::MOE_DISPATCHER_ALL_TO_ALL: return false;
    case hetsim::v1::MOE_DISPATCHER_ALL_GATHER: return true;
    case hetsim::v1::MoeTokenDispatcher_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case hetsim::v1::MoeTokenDispatcher_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  HETSIM_CHECK(false, "a MoeTokenDispatcher number outside the schema (proto::Load refuses them)");
  return false;
}

spec::TpOverlapMethod TpOverlapMethodOf(hetsim::v1::TpOverlapMethod m) {
  switch (m) {
    case hetsim::v1::TP_OVERLAP_PIPELINE: return spec::TpOverlapMethod::kPipeline;
    case hetsim::v1::TP_OVERLAP_RING_EXCHANGE: return spec::TpOverlapMethod::kRingExchange;
    case hetsim::v1::TpOverlapMethod_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case hetsim::v1::TpOverlapMethod_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  HETSIM_CHECK(false, "a TpOverlapMethod number outside the schema (proto::Load refuses them)");
  return spec::TpOverlapMethod::kPipeline;
}

spec::TransformerSpec ResolveTransformer(const hetsim::v1::Transformer& t) {
  spec::TransformerSpec s;
  s.num_layers = t.num_layers();
  s.hidden_size = t.hidden_size();
  s.ffn_hidden_size = FfnHiddenSize(t);
  s.num_attention_heads = t.num_attention_heads();
  s.num_kv_heads = KvHeads(t);
  s.seq_length = t.seq_length();
  s.vocab_size = t.vocab_size();
  s.gated_mlp = t.gated_mlp();
  s.tied_embeddings = t.tied_embeddings();
  s.num_experts = t.num_experts() <= 1 ? 1 : t.num_experts();
  s.moe_top_k = t.moe_top_k();
  s.expert_ffn_hidden_size = ExpertFfnHiddenSize(t);
  s.granularity = GranularityOf(t.granularity());
  s.attention = AttentionKernelOf(t.attention());
  s.head_dim = HeadDim(t);
  s.attention_dropout = !t.no_attention_dropout();
  s.qk_layernorm = t.qk_layernorm();
  s.moe_shared_expert_ffn_hidden_size = t.moe_shared_expert_ffn_hidden_size();
  s.moe_first_dense_layers = t.moe_first_dense_layers();
  s.moe_layer_freq = std::max<uint32_t>(1, t.moe_layer_freq());
  s.moe_grouped_gemm = t.moe_grouped_gemm();
  s.moe_allgather_dispatcher = IsAllGatherDispatcher(t.moe_token_dispatcher());
  s.mtp_num_layers = t.mtp_num_layers();
  if (t.has_mla()) {
    const hetsim::v1::MultiLatentAttention& m = t.mla();
    s.mla = spec::MlaSpec{m.q_lora_rank(), m.kv_lora_rank(), m.qk_head_dim(), m.qk_pos_emb_head_dim(), m.v_head_dim()};
  }
  return s;
}

std::vector<spec::LayerSpec> ResolveLayers(const hetsim::v1::LayerList& list) {
  std::vector<spec::LayerSpec> layers;
  layers.reserve(list.layers_size());
  for (int i = 0; i < list.layers_size(); ++i) {
    const hetsim::v1::Layer& in = list.layers(i);
    spec::LayerSpec l;
    l.name = in.name().empty() ? absl::StrCat("layer", i) : in.name();
    l.forward_flop_per_sample = GflopToFlop(in.forward_gflop_per_sample());
    l.backward_flop_per_sample = in.backward_gflop_per_sample() > 0 ? GflopToFlop(in.backward_gflop_per_sample())
                                                                    : 2 * l.forward_flop_per_sample;
    l.param_count = in.param_count();
    l.activation_bytes_per_sample = Bytes(static_cast<double>(in.activation_bytes_per_sample()));
    l.output_bytes_per_sample = Bytes(static_cast<double>(in.output_bytes_per_sample()));
    layers.push_back(std::move(l));
  }
  return layers;
}

}  // namespace

spec::DType DTypeOf(hetsim::v1::DType dtype) {
  switch (dtype) {
    case hetsim::v1::FP32: return spec::DType::kFp32;
    case hetsim::v1::TF32: return spec::DType::kTf32;
    case hetsim::v1::FP16: return spec::DType::kFp16;
    case hetsim::v1::FP8: return spec::DType::kFp8;
    case hetsim::v1::DTYPE_UNSPECIFIED:  // the schema's default dtype (EffectiveDType)
    case hetsim::v1::BF16: return spec::DType::kBf16;
    case hetsim::v1::DType_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case hetsim::v1::DType_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  HETSIM_CHECK(false, "a DType number outside the schema (proto::Load refuses them)");
  return spec::DType::kBf16;
}

spec::Recompute RecomputeOf(hetsim::v1::Recompute recompute) {
  switch (recompute) {
    case hetsim::v1::RECOMPUTE_FULL: return spec::Recompute::kFull;
    case hetsim::v1::RECOMPUTE_SELECTIVE: return spec::Recompute::kSelective;
    case hetsim::v1::RECOMPUTE_NONE: return spec::Recompute::kNone;
    case hetsim::v1::Recompute_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case hetsim::v1::Recompute_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  HETSIM_CHECK(false, "a Recompute number outside the schema (proto::Load refuses them)");
  return spec::Recompute::kNone;
}

spec::ScheduleKind ScheduleKindOf(hetsim::v1::Schedule schedule) {
  switch (schedule) {
    case hetsim::v1::GPIPE: return spec::ScheduleKind::kGpipe;
    case hetsim::v1::EAGER_1F1B: return spec::ScheduleKind::kEager1F1B;
    case hetsim::v1::H_1F1B: return spec::ScheduleKind::kH1F1B;
    case hetsim::v1::INTERLEAVED_1F1B: return spec::ScheduleKind::kInterleaved1F1B;
    case hetsim::v1::SCHEDULE_UNSPECIFIED:  // refused by ValidatePlan; 1F1B, as resolve.h says
    case hetsim::v1::ONE_F_ONE_B: return spec::ScheduleKind::kOneFOneB;
    case hetsim::v1::Schedule_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case hetsim::v1::Schedule_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  HETSIM_CHECK(false, "a Schedule number outside the schema (proto::Load refuses them)");
  return spec::ScheduleKind::kOneFOneB;
}

spec::ModelSpec ResolveModel(const hetsim::v1::Model& model, absl::string_view source) {
  spec::ModelSpec m;
  m.name = model.name();
  m.dtype = DTypeOf(model.dtype());
  m.where = std::string(source);
  if (model.has_transformer()) {
    m.transformer = ResolveTransformer(model.transformer());
  } else {
    m.layers = ResolveLayers(model.layer_list());
    m.layer_list_seq_length = model.layer_list().seq_length();
  }
  return m;
}

spec::GpuSpec ResolveGpu(const hetsim::v1::GpuType& gpu) {
  const hetsim::v1::ComputeEfficiency& e = gpu.efficiency();
  spec::GpuSpec g;
  g.name = gpu.name();
  g.preset = gpu.preset();
  for (hetsim::v1::DType d :
       {hetsim::v1::FP32, hetsim::v1::TF32, hetsim::v1::BF16, hetsim::v1::FP16, hetsim::v1::FP8}) {
    g.peak_flop_per_s[static_cast<int>(DTypeOf(d))] = TflopsToFlopPerSecond(PeakTflops(gpu, d));
  }
  g.hbm_bandwidth = GBpsBandwidth(gpu.hbm_bandwidth_gbytes_per_s());
  g.hbm_capacity = GibBytes(gpu.hbm_gib());
  g.max_efficiency = spec::EfficiencyOrOne(e.max_efficiency());
  g.hbm_efficiency = spec::EfficiencyOrOne(e.hbm_efficiency());
  g.half_efficiency_gflop = e.half_efficiency_gflop();
  g.sm_count = static_cast<int>(e.sm_count());
  g.tile_overhead_k = e.tile_overhead_k();
  g.kernel_launch_s = MicrosecondsToSeconds(e.kernel_launch_us());
  g.host_op_s = MicrosecondsToSeconds(e.host_op_us());
  g.sync_round_trip_s = MicrosecondsToSeconds(e.sync_round_trip_us());
  g.pass_overhead_s = MicrosecondsToSeconds(e.pass_overhead_us());
  g.iteration_overhead_s = MillisecondsToSeconds(e.iteration_overhead_ms());
  g.mma_sync_speed = spec::EfficiencyOrOne(e.mma_sync_speed());
  g.unfused_softmax_speed = spec::EfficiencyOrOne(e.unfused_softmax_speed());
  g.host_fill_bytes_per_s = GBpsToBytesPerSecond(e.host_fill_gbytes_per_s());
  g.pageable_h2d_bytes_per_s = GBpsToBytesPerSecond(e.pageable_h2d_gbytes_per_s());
  g.pinned_copy_bytes_per_s = GBpsToBytesPerSecond(e.pinned_copy_gbytes_per_s());
  if (const GpuPreset* preset = FindGpuPreset(gpu.preset())) g.compute_capability = preset->compute_capability;
  return g;
}

namespace {

spec::MeshSpec ResolveMesh(const hetsim::v1::Mesh& m) {
  return {m.island(), m.first_node(), m.node_count(), m.first_gpu(), m.gpus_per_node()};
}

// A mixed stage's groups; its own mesh, TP and DP become the first group's mesh, the largest TP and
// all groups' replicas (spec::StageSpec::replica_groups).
void ResolveReplicaGroups(const hetsim::v1::Stage& stage, spec::StageSpec& s) {
  if (stage.replica_groups().empty()) return;
  s.tensor_parallel = 1;
  s.data_parallel = 0;
  for (const hetsim::v1::ReplicaGroup& g : stage.replica_groups()) {
    spec::ReplicaGroupSpec& out = s.replica_groups.emplace_back();
    out.mesh = ResolveMesh(g.mesh());
    out.tensor_parallel = static_cast<int>(spec::DegreeOrOne(g.tensor_parallel()));
    out.data_parallel = static_cast<int>(spec::DegreeOrOne(g.data_parallel()));
    out.micro_batch_share = g.micro_batch_share();
    s.tensor_parallel = std::max(s.tensor_parallel, out.tensor_parallel);
    s.data_parallel += out.data_parallel;
  }
  s.mesh = s.replica_groups.front().mesh;
  // Each group lays the stage's experts out over its own GPUs (ETP x EP of them hold one copy), ETP the
  // stage's or, as Megatron-LM defaults it to TP, the largest TP (proto/validate_replica_groups.cc checks
  // that ETP x EP divides each group's GPUs).
  if (stage.expert_tensor_parallel() == 0) s.expert_tensor_parallel = s.tensor_parallel;
  // A group may lay them out its own way (ReplicaGroup.expert_parallel, expert_tensor_parallel); the stage's
  // become the finest group's (the largest ETP x EP, whose EP and ETP every group's divide: checked), the
  // split its expert shards reduce by, as the largest TP is the dense shards'.
  int finest_ep = 1, finest_etp = 1;
  for (size_t i = 0; i < s.replica_groups.size(); ++i) {
    spec::ReplicaGroupSpec& g = s.replica_groups[i];
    const hetsim::v1::ReplicaGroup& own = stage.replica_groups(static_cast<int>(i));
    g.expert_parallel = own.expert_parallel() > 0 ? static_cast<int>(own.expert_parallel()) : s.expert_parallel;
    g.expert_tensor_parallel =
        own.expert_tensor_parallel() > 0 ? static_cast<int>(own.expert_tensor_parallel()) : s.expert_tensor_parallel;
    if (g.expert_parallel * g.expert_tensor_parallel > finest_ep * finest_etp) {
      finest_ep = g.expert_parallel;
      finest_etp = g.expert_tensor_parallel;
    }
  }
  s.expert_parallel = finest_ep;
  s.expert_tensor_parallel = finest_etp;
}

}  // namespace

spec::StageSpec ResolveStage(const hetsim::v1::Stage& stage, std::string where) {
  spec::StageSpec s;
  s.first_layer = static_cast<int>(stage.first_layer());
  s.num_layers = static_cast<int>(stage.num_layers());
  s.mesh = ResolveMesh(stage.mesh());
  s.tensor_parallel = static_cast<int>(TensorParallel(stage));
  s.data_parallel = static_cast<int>(DataParallel(stage));
  s.expert_parallel = static_cast<int>(ExpertParallel(stage));
  s.expert_tensor_parallel = static_cast<int>(ExpertTensorParallel(stage));
  s.zero_stage = static_cast<int>(stage.zero_stage());
  s.recompute = RecomputeOf(stage.recompute());
  s.recompute_num_layers = static_cast<int>(stage.recompute_num_layers());
  s.sequence_parallel = stage.sequence_parallel();
  s.measured_forward_ms = stage.measured_forward_ms();
  s.measured_backward_ms = stage.measured_backward_ms();
  s.warmup_forwards = static_cast<int>(stage.warmup_forwards());
  s.where = std::move(where);
  ResolveReplicaGroups(stage, s);
  return s;
}

spec::TpCommOverlapSpec ResolveTpCommOverlapConfig(const hetsim::v1::Plan& plan) {
  if (!plan.has_tp_comm_overlap_config()) return {};
  return ResolveTpCommOverlapConfig(plan.tp_comm_overlap_config());
}

spec::TpCommOverlapSpec ResolveTpCommOverlapConfig(const hetsim::v1::TpCommOverlapConfig& c) {
  spec::TpCommOverlapSpec s;
  // Transformer Engine starts every GEMM's settings from those of its default method (a pipeline for the
  // projection and FC2, a bulk overlap for the QKV and FC1 backward: 16 SMs held) and overlays what the
  // configuration gives, so a method changed alone keeps the 16 SMs.
  auto margin = [](bool has, uint32_t sms) { return has ? static_cast<int>(sms) : spec::kTeDefaultOverlapSms; };
  s.proj_fprop = TpOverlapMethodOf(c.proj_fprop_method());
  s.fc2_fprop = TpOverlapMethodOf(c.fc2_fprop_method());
  s.proj_fprop_sm_margin = margin(c.has_proj_fprop_sm_margin(), c.proj_fprop_sm_margin());
  s.fc2_fprop_sm_margin = margin(c.has_fc2_fprop_sm_margin(), c.fc2_fprop_sm_margin());
  s.qkv_dgrad_sm_margin = margin(c.has_qkv_dgrad_sm_margin(), c.qkv_dgrad_sm_margin());
  s.qkv_wgrad_sm_margin = margin(c.has_qkv_wgrad_sm_margin(), c.qkv_wgrad_sm_margin());
  s.fc1_dgrad_sm_margin = margin(c.has_fc1_dgrad_sm_margin(), c.fc1_dgrad_sm_margin());
  s.fc1_wgrad_sm_margin = margin(c.has_fc1_wgrad_sm_margin(), c.fc1_wgrad_sm_margin());
  return s;
}

namespace {

// Plan.host_bound_blocks and Plan.cuda_launch_blocking: the ops the host issues per block pass, the framework
// profile's count with the plan's unfused kernels (spec::BlockHostOps); the plan check refused either field
// without a count.
void SetBlockHostOps(spec::PlanSpec& p) {
  if (!p.host_bound_blocks && !p.cuda_launch_blocking) return;
  const spec::BlockHostOps& ops = spec::ProfileOf(p.framework).block_host_ops;
  const double unfused = (p.unfused.bias_activation ? ops.unfused_bias_activation : 0) +
                         (p.unfused.bias_dropout_add ? ops.unfused_bias_dropout_add : 0) +
                         (p.unfused.masked_softmax ? ops.unfused_masked_softmax : 0);
  p.block_host_ops_forward = ops.forward + unfused;
  p.block_host_ops_backward = ops.backward + unfused;
}

}  // namespace

spec::PlanSpec ResolvePlan(const hetsim::v1::Plan& plan, absl::string_view plan_file) {
  spec::PlanSpec p;
  p.name = plan.name();
  p.global_batch_size = plan.global_batch_size();
  p.micro_batch_size = plan.micro_batch_size();
  p.microbatches = MicrobatchCount(plan);
  p.schedule = ScheduleKindOf(plan.schedule());
  p.h1f1b_epsilon = H1f1bEpsilon(plan);
  p.virtual_stages = static_cast<int>(VirtualStages(plan));
  p.context_parallel = static_cast<int>(ContextParallel(plan));
  p.cp_comm = ContextParallelCommOf(plan);
  p.virtual_stage_layers.assign(plan.virtual_stage_layers().begin(), plan.virtual_stage_layers().end());
  for (int i = 0; i < plan.stages_size(); ++i) {
    p.stages.push_back(ResolveStage(plan.stages(i), absl::StrFormat("%s: stages[%d]", plan_file, i)));
  }
  p.grad_bucket_bytes = plan.grad_bucket_bytes();
  p.tp_comm_overlap = plan.tp_comm_overlap();
  p.tp_comm_overlap_aggregate = plan.tp_comm_overlap_aggregate();
  p.tp_comm_overlap_config = ResolveTpCommOverlapConfig(plan);
  p.moe_a2a_overlap = plan.moe_a2a_overlap();
  p.block_forward_passes = static_cast<int>(std::max<uint32_t>(1, plan.block_forward_passes()));
  p.boundary_grads_whole = plan.boundary_grads_whole();
  const bool all_unfused = plan.unfused_elementwise();
  p.unfused = {.bias_activation = all_unfused || plan.unfused_kernels().bias_activation(),
               .bias_dropout_add = all_unfused || plan.unfused_kernels().bias_dropout_add(),
               .masked_softmax = all_unfused || plan.unfused_kernels().masked_softmax(),
               .masked_fill_on_view = plan.unfused_kernels().masked_fill_on_view()};
  p.pipeline_sends_attention_mask = plan.pipeline_sends_attention_mask();
  p.p2p_rendezvous = plan.p2p_rendezvous();
  p.fp8_current_scaling = plan.fp8_current_scaling();
  p.deepspeed_fp16_optimizer = plan.deepspeed_fp16_optimizer();
  p.megatron_v2_fp16_optimizer = plan.megatron_v2_fp16_optimizer();
  p.megatron_local_ddp_copies = plan.megatron_local_ddp_copies();
  p.fp32_logits_cross_entropy = plan.fp32_logits_cross_entropy();
  p.synchronized_tp_collectives = plan.synchronized_tp_collectives();
  p.cuda_launch_blocking = plan.cuda_launch_blocking();
  p.boundary_host_rebuild = plan.boundary_host_rebuild();
  p.reference_forward = plan.has_reference_policy();
  p.reference_weight_swap = plan.reference_policy().cpu_weight_swap();
  const hetsim::v1::DeepSpeedTimerSyncs& syncs = plan.deepspeed_timer_syncs();
  p.timer_syncs = {.load_micro_batch = static_cast<int>(syncs.load_micro_batch()),
                   .forward_pass = static_cast<int>(syncs.forward_pass()),
                   .backward_pass = static_cast<int>(syncs.backward_pass()),
                   .last_backward_pass = static_cast<int>(syncs.last_backward_pass()),
                   .pipe_transfer = static_cast<int>(syncs.pipe_transfer())};
  // The framework behaviours, by name: one list (spec::kBehaviourFields) for every one of them.
  const google::protobuf::Reflection& reflection = *plan.GetReflection();
  for (const auto& [name, member] : spec::kBehaviourFields) {
    p.*member = reflection.GetBool(plan, hetsim::v1::Plan::descriptor()->FindFieldByName(name));
  }
  p.framework = FrameworkOf(plan.framework());
  p.framework_off.assign(plan.framework_off().begin(), plan.framework_off().end());
  SetBlockHostOps(p);
  p.where = std::string(plan_file);
  // Plan.pipelines: each pipeline resolved as the plan of its own the simulator runs (PipelinePlan).
  for (int i = 0; i < plan.pipelines_size(); ++i) {
    spec::PlanSpec one = ResolvePlan(PipelinePlan(plan, i), plan_file);
    p.pipelines.push_back({.name = plan.pipelines(i).name(),
                           .batch_share = one.global_batch_size,
                           .micro_batch_size = one.micro_batch_size,
                           .stages = std::move(one.stages),
                           .context_parallel = one.context_parallel});
  }
  return p;
}

}  // namespace hetsim::proto
