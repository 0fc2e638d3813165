#include "proto/plan_message.h"

#include <algorithm>

#include "proto/validate_plan.h"

namespace hetsim::proto {
namespace {

hetsim::v1::Schedule ScheduleProto(spec::ScheduleKind kind) {
  switch (kind) {
    case spec::ScheduleKind::kGpipe: return hetsim::v1::GPIPE;
    case spec::ScheduleKind::kEager1F1B: return hetsim::v1::EAGER_1F1B;
    case spec::ScheduleKind::kH1F1B: return hetsim::v1::H_1F1B;
    case spec::ScheduleKind::kInterleaved1F1B: return hetsim::v1::INTERLEAVED_1F1B;
    case spec::ScheduleKind::kOneFOneB: break;
  }
  return hetsim::v1::ONE_F_ONE_B;
}

hetsim::v1::Recompute RecomputeProto(spec::Recompute recompute) {
  switch (recompute) {
    case spec::Recompute::kSelective: return hetsim::v1::RECOMPUTE_SELECTIVE;
    case spec::Recompute::kFull: return hetsim::v1::RECOMPUTE_FULL;
    case spec::Recompute::kNone: break;
  }
  return hetsim::v1::RECOMPUTE_NONE;
}

void WriteMesh(const spec::MeshSpec& mesh, hetsim::v1::Mesh& m) {
  m.set_island(mesh.island);
  m.set_first_node(mesh.first_node);
  m.set_node_count(mesh.node_count);
  m.set_first_gpu(mesh.first_gpu);
  m.set_gpus_per_node(mesh.gpus_per_node);
}

// A mixed stage's groups; the stage's own mesh, TP and DP stay unset (validate_replica_groups.h).
void WriteReplicaGroups(const spec::StageSpec& st, hetsim::v1::Stage& out) {
  for (const spec::ReplicaGroupSpec& g : st.replica_groups) {
    hetsim::v1::ReplicaGroup& rg = *out.add_replica_groups();
    WriteMesh(g.mesh, *rg.mutable_mesh());
    rg.set_tensor_parallel(g.tensor_parallel);
    if (g.data_parallel > 1) rg.set_data_parallel(g.data_parallel);
    rg.set_micro_batch_share(g.micro_batch_share);
    // MoE: a group's own expert layout where it is not the stage's (the finest group's).
    if (g.expert_parallel > 0 && g.expert_parallel != st.expert_parallel) rg.set_expert_parallel(g.expert_parallel);
    if (g.expert_tensor_parallel > 0 && g.expert_tensor_parallel != st.ExpertTensorParallel()) {
      rg.set_expert_tensor_parallel(g.expert_tensor_parallel);
    }
  }
}

void WriteStage(const spec::StageSpec& st, hetsim::v1::Stage& out) {
  out.set_first_layer(st.first_layer);
  out.set_num_layers(st.num_layers);
  if (st.mixed()) {
    WriteReplicaGroups(st, out);
  } else {
    WriteMesh(st.mesh, *out.mutable_mesh());
    out.set_tensor_parallel(st.tensor_parallel);
    out.set_data_parallel(st.data_parallel);
  }
  out.set_zero_stage(st.zero_stage);
  out.set_recompute(RecomputeProto(st.recompute));
  out.set_recompute_num_layers(st.recompute_num_layers);
  out.set_sequence_parallel(st.sequence_parallel);
  if (st.expert_parallel > 1) out.set_expert_parallel(st.expert_parallel);
  // 0 (TP) stays unwritten; a mixed stage's only when not its largest TP (the resolver's default).
  if (!st.mixed() || (st.expert_tensor_parallel != 0 && st.expert_tensor_parallel != st.tensor_parallel)) {
    out.set_expert_tensor_parallel(st.expert_tensor_parallel);
  }
  out.set_measured_forward_ms(st.measured_forward_ms);
  out.set_measured_backward_ms(st.measured_backward_ms);
  out.set_warmup_forwards(st.warmup_forwards);
}

}  // namespace

hetsim::v1::Plan PlanMessage(const spec::PlanSpec& spec) {
  hetsim::v1::Plan plan;
  plan.set_name(spec.name);
  plan.set_global_batch_size(spec.global_batch_size);
  plan.set_micro_batch_size(spec.micro_batch_size);
  plan.set_schedule(ScheduleProto(spec.schedule));
  if (spec.schedule == spec::ScheduleKind::kH1F1B && spec.h1f1b_epsilon != spec::kDefaultH1f1bEpsilon) {
    plan.set_h1f1b_epsilon(spec.h1f1b_epsilon);
  }
  if (spec.virtual_stages > 1) plan.set_virtual_stages(spec.virtual_stages);
  for (int layers : spec.virtual_stage_layers) plan.add_virtual_stage_layers(layers);
  const bool pipelines_cp = std::any_of(spec.pipelines.begin(), spec.pipelines.end(),
                                        [](const spec::PipelineSpec& p) { return p.context_parallel > 1; });
  if (spec.context_parallel > 1) plan.set_context_parallel(spec.context_parallel);
  if (spec.context_parallel > 1 || pipelines_cp) plan.set_cp_comm_type(ContextParallelCommProto(spec.cp_comm));
  for (const spec::StageSpec& st : spec.stages) WriteStage(st, *plan.add_stages());
  for (const spec::PipelineSpec& p : spec.pipelines) {
    hetsim::v1::Pipeline& out = *plan.add_pipelines();
    out.set_name(p.name);
    out.set_batch_share(p.batch_share);
    if (p.micro_batch_size != spec.micro_batch_size) out.set_micro_batch_size(p.micro_batch_size);
    if (p.context_parallel != std::max(1, spec.context_parallel)) out.set_context_parallel(p.context_parallel);
    for (const spec::StageSpec& st : p.stages) WriteStage(st, *out.add_stages());
  }
  plan.set_overlap_grad_reduce(spec.overlap_grad_reduce);
  plan.set_overlap_param_gather(spec.overlap_param_gather);
  plan.set_grad_reduce_in_fp32(spec.grad_reduce_in_fp32);
  plan.set_grad_bucket_bytes(spec.grad_bucket_bytes);
  plan.set_tp_comm_overlap(spec.tp_comm_overlap);
  plan.set_tp_comm_overlap_aggregate(spec.tp_comm_overlap_aggregate);
  plan.set_tp_backward_overlap(spec.tp_backward_overlap);
  plan.set_blocking_p2p(spec.blocking_p2p);
  plan.set_zero3_prefetch(spec.zero3_prefetch);
  plan.set_zero3_lock_step(spec.zero3_lock_step);
  plan.set_moe_a2a_overlap(spec.moe_a2a_overlap);
  plan.set_tied_embedding_grad_sync(spec.tied_embedding_grad_sync);
  plan.set_eager_kernels(spec.eager_kernels);
  plan.set_op_selective_recompute(spec.op_selective_recompute);
  plan.set_fp8_dynamic_casts(spec.fp8_dynamic_casts);
  plan.set_pytorch_async_tp(spec.pytorch_async_tp);
  plan.set_attention_repeats_kv(spec.attention_repeats_kv);
  plan.set_pytorch_context_parallel(spec.pytorch_context_parallel);
  plan.set_flash_attention_2(spec.flash_attention_2);
  plan.set_host_bound_blocks(spec.host_bound_blocks);
  plan.set_dtensor_sequence_copies(spec.dtensor_sequence_copies);
  plan.set_nccl_sm_contention(spec.nccl_sm_contention);
  if (spec.block_forward_passes > 1) plan.set_block_forward_passes(static_cast<uint32_t>(spec.block_forward_passes));
  plan.set_boundary_grads_whole(spec.boundary_grads_whole);
  const auto& u = spec.unfused;
  if (u.bias_activation && u.bias_dropout_add && u.masked_softmax) {
    plan.set_unfused_elementwise(true);
    if (u.masked_fill_on_view) plan.mutable_unfused_kernels()->set_masked_fill_on_view(true);
  } else if (u.bias_activation || u.bias_dropout_add || u.masked_softmax) {
    plan.mutable_unfused_kernels()->set_bias_activation(u.bias_activation);
    plan.mutable_unfused_kernels()->set_bias_dropout_add(u.bias_dropout_add);
    plan.mutable_unfused_kernels()->set_masked_softmax(u.masked_softmax);
    plan.mutable_unfused_kernels()->set_masked_fill_on_view(u.masked_fill_on_view);
  }
  plan.set_pipeline_sends_attention_mask(spec.pipeline_sends_attention_mask);
  plan.set_p2p_rendezvous(spec.p2p_rendezvous);
  plan.set_fp8_current_scaling(spec.fp8_current_scaling);
  plan.set_deepspeed_fp16_optimizer(spec.deepspeed_fp16_optimizer);
  plan.set_megatron_v2_fp16_optimizer(spec.megatron_v2_fp16_optimizer);
  plan.set_megatron_local_ddp_copies(spec.megatron_local_ddp_copies);
  plan.set_fp32_logits_cross_entropy(spec.fp32_logits_cross_entropy);
  plan.set_synchronized_tp_collectives(spec.synchronized_tp_collectives);
  plan.set_cuda_launch_blocking(spec.cuda_launch_blocking);
  plan.set_autograd_grad_accumulation(spec.autograd_grad_accumulation);
  plan.set_boundary_host_rebuild(spec.boundary_host_rebuild);
  plan.set_zero_reduce_per_rank(spec.zero_reduce_per_rank);
  plan.set_layer_norm_weight_grad_pass(spec.layer_norm_weight_grad_pass);
  if (spec.reference_forward) plan.mutable_reference_policy()->set_cpu_weight_swap(spec.reference_weight_swap);
  const spec::DeepSpeedTimerSyncs& t = spec.timer_syncs;
  if (t.load_micro_batch || t.forward_pass || t.backward_pass || t.last_backward_pass || t.pipe_transfer) {
    hetsim::v1::DeepSpeedTimerSyncs& syncs = *plan.mutable_deepspeed_timer_syncs();
    syncs.set_load_micro_batch(static_cast<uint32_t>(t.load_micro_batch));
    syncs.set_forward_pass(static_cast<uint32_t>(t.forward_pass));
    syncs.set_backward_pass(static_cast<uint32_t>(t.backward_pass));
    syncs.set_last_backward_pass(static_cast<uint32_t>(t.last_backward_pass));
    syncs.set_pipe_transfer(static_cast<uint32_t>(t.pipe_transfer));
  }
  return plan;
}

}  // namespace hetsim::proto
