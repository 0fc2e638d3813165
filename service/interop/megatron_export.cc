#include "service/interop/megatron_export.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "proto/layer_count.h"
#include "proto/pipeline_plans.h"
#include "proto/validate_plan.h"
#include "proto/validate_problems.h"
#include "service/interop/fused_softmax_internal.h"
#include "service/interop/megatron_layout.h"
#include "service/interop/megatron_moe_layout.h"
#include "service/interop/megatron_split.h"

namespace hetsim::interop {
namespace {

namespace v1 = hetsim::v1;

std::string GpuTypeOf(const v1::Cluster& c, const std::string& island) {
  for (const v1::Island& i : c.islands()) {
    if (i.name() != island) continue;
    for (const v1::NodeType& n : c.node_types()) {
      if (n.name() == i.node_type()) return n.gpu_type();
    }
  }
  return "";
}

// GPUs per node the launch uses: the mesh's when a stage spans nodes, else the node's.
int64_t RanksPerNode(const v1::Cluster& c, const v1::Mesh& m) {
  if (m.node_count() > 1) return m.gpus_per_node();
  for (const v1::Island& i : c.islands()) {
    if (i.name() != m.island()) continue;
    for (const v1::NodeType& n : c.node_types()) {
      if (n.name() == i.node_type()) return n.gpus_per_node();
    }
  }
  return m.gpus_per_node();
}

// A stage with replica groups (different TP degrees and shares): true, with the problem added.
bool RefuseMixedStage(proto::Problems& p, const v1::Plan& plan) {
  for (int i = 0; i < plan.stages_size(); ++i) {
    if (plan.stages(i).replica_groups().empty()) continue;
    p.Add(absl::StrFormat("stages[%d].replica_groups", i),
          "Megatron-LM runs every replica of a stage with one TP degree and an equal share of the batch");
    return true;
  }
  return false;
}

// Every stage as stage 0 is, and placed where Megatron's rank order puts it.
void CheckStages(proto::Problems& p, const proto::PlanInputs& in) {
  const v1::Plan& plan = in.plan;
  const v1::Stage& s0 = plan.stages(0);
  const int64_t g = proto::MeshGpuCount(s0.mesh());
  const int64_t per_node = RanksPerNode(in.cluster, s0.mesh());
  const int64_t base = s0.mesh().first_node() * per_node + s0.mesh().first_gpu();
  const std::string gpu0 = GpuTypeOf(in.cluster, s0.mesh().island());
  const std::string why = "Megatron's flags give every pipeline stage the same value";
  for (int i = 0; i < plan.stages_size(); ++i) {
    const v1::Stage& s = plan.stages(i);
    const std::string at = absl::StrFormat("stages[%d].", i);
    if (const std::string gpu = GpuTypeOf(in.cluster, s.mesh().island()); gpu != gpu0) {
      p.Add(at + "mesh.island",
            "GPU type %s, stage 0 runs on %s: a Megatron launch line cannot say which GPU type a "
            "rank runs on (one --nproc_per_node and one set of flags for every node)",
            gpu, gpu0);
    }
    if (proto::TensorParallel(s) != proto::TensorParallel(s0)) {
      p.Add(at + "tensor_parallel", "%d, stage 0 has %d: %s (--tensor-model-parallel-size)", proto::TensorParallel(s),
            proto::TensorParallel(s0), why);
    }
    if (proto::DataParallel(s) != proto::DataParallel(s0)) {
      p.Add(at + "data_parallel", "%d, stage 0 has %d: %s (data parallel = world / (TP x CP x PP))",
            proto::DataParallel(s), proto::DataParallel(s0), why);
    }
    if (proto::ExpertParallel(s) != proto::ExpertParallel(s0)) {
      p.Add(at + "expert_parallel", "%d, stage 0 has %d: %s (--expert-model-parallel-size)", proto::ExpertParallel(s),
            proto::ExpertParallel(s0), why);
    }
    if (proto::ExpertTensorParallel(s) != proto::ExpertTensorParallel(s0)) {
      p.Add(at + "expert_tensor_parallel", "%d, stage 0 has %d: %s (--expert-tensor-parallel-size)",
            proto::ExpertTensorParallel(s), proto::ExpertTensorParallel(s0), why);
    }
    if (s.recompute() != s0.recompute()) p.Add(at + "recompute", "differs from stage 0: %s", why);
    if (s.recompute_num_layers() != s0.recompute_num_layers()) {
      p.Add(at + "recompute_num_layers", "differs from stage 0: %s", why);
    }
    if (s.sequence_parallel() != s0.sequence_parallel())
      p.Add(at + "sequence_parallel", "differs from stage 0: %s", why);
    if (s.zero_stage() != s0.zero_stage()) p.Add(at + "zero_stage", "differs from stage 0: %s", why);
    if (s.zero_stage() == 3 && !plan.zero3_prefetch()) {
      p.Add(at + "zero_stage", "3 without zero3_prefetch: Megatron-FSDP always prefetches the next layer's parameters");
    }
    if (s.warmup_forwards() != 0) {
      p.Add(at + "warmup_forwards", "%d: Megatron derives warm-up counts from the schedule; there is no flag",
            s.warmup_forwards());
    }
    const int64_t rank = base + i * g;  // Megatron: pipeline stage i holds ranks [i G, (i + 1) G)
    const v1::Mesh& m = s.mesh();
    const bool placed = m.island() == s0.mesh().island() && m.node_count() == s0.mesh().node_count() &&
                        m.gpus_per_node() == s0.mesh().gpus_per_node() && m.first_node() == rank / per_node &&
                        m.first_gpu() == rank % per_node;
    if (i > 0 && !placed) {
      p.Add(at + "mesh",
            "is not where Megatron's rank order (TP, CP, DP, then PP) puts pipeline stage %d: node %d, "
            "GPUs %d.. of each",
            i, rank / per_node, rank % per_node);
    }
  }
}

// The pipeline split and the interleaving's flags, or problems when Megatron cannot say the plan's.
struct PipelineFlags {
  std::string flags;
  MegatronSplit split;
  int64_t chunks = 1;
};

// The plan's virtual stages as Megatron's letters: the explicit layout (Plan.virtual_stage_layers), or
// one virtual stage a pipeline stage. nullopt for a model without an embedding and a head (a layer list)
// and for equal chunks of an interleaved plan (the split flags say those, or nothing does).
std::optional<std::string> LayoutOf(const proto::PlanInputs& in) {
  const proto::EdgeLayers edges = proto::ModelEdgeLayers(in.model);
  const int layer_count = proto::LayerCount(in.model);
  if (edges.embedding != 1 || edges.head != 1) return std::nullopt;
  std::vector<int64_t> sizes(in.plan.virtual_stage_layers().begin(), in.plan.virtual_stage_layers().end());
  if (sizes.empty()) {  // one virtual stage a pipeline stage: a plan that does not interleave
    if (in.plan.schedule() == v1::INTERLEAVED_1F1B && proto::VirtualStages(in.plan) > 1) return std::nullopt;
    for (const v1::Stage& s : in.plan.stages()) sizes.push_back(s.num_layers());
  }
  std::vector<LayoutStage> stages;
  int64_t first = 0;
  for (int64_t size : sizes) {
    LayoutStage s;
    s.embedding = first == 0 ? 1 : 0;
    s.loss = first + size == layer_count ? 1 : 0;
    s.blocks = size - s.embedding - s.loss;
    s.mtp = s.loss * in.model.transformer().mtp_num_layers();
    stages.push_back(s);
    first += size;
  }
  return FormatPipelineLayout(stages);
}

PipelineFlags Pipeline(proto::Problems& p, const proto::PlanInputs& in) {
  const v1::Plan& plan = in.plan;
  const int64_t num_layers = in.model.transformer().num_layers(), pp = plan.stages_size();
  int64_t v = 1;
  if (plan.schedule() == v1::INTERLEAVED_1F1B) {
    v = plan.virtual_stages() > 0 ? plan.virtual_stages() : 1;
  } else if (plan.schedule() != v1::ONE_F_ONE_B) {
    p.Add("schedule", "%s: Megatron runs 1F1B or interleaved 1F1B", v1::Schedule_Name(plan.schedule()));
  }
  const proto::EdgeLayers edges = proto::ModelEdgeLayers(in.model);
  const int layer_count = proto::LayerCount(in.model);
  std::vector<int64_t> blocks;
  for (const v1::Stage& s : plan.stages()) {
    blocks.push_back(proto::StageBlockLayers(edges, layer_count, s.first_layer(), s.num_layers()));
  }
  // A plan's own layout, or a split no pair of flags gives: Megatron's layout of letters says it.
  const std::optional<MegatronSplit> split =
      plan.virtual_stage_layers_size() > 0 ? std::nullopt : SplitOf(blocks, num_layers, v);
  if (!split) {
    if (const std::optional<std::string> layout = LayoutOf(in)) {
      MegatronSplit from_layout;  // a layout is a later release's flag (PipelineFlags::split)
      from_layout.layout_layers.push_back(1);
      return {absl::StrFormat("--pipeline-model-parallel-layout '%s'", *layout), from_layout, v};
    }
    p.Add("stages",
          "blocks per stage %s%s: no Megatron split gives them (even, --account-for-embedding/loss-in-pipeline-split, "
          "--decoder-first/last-pipeline-num-layers)",
          absl::StrJoin(blocks, ", "), v > 1 ? absl::StrFormat(" in %d chunks", v) : "");
    return {};
  }
  std::string flags = SplitFlags(*split);
  if (v > 1) {
    absl::StrAppend(&flags, flags.empty() ? "" : " ",
                    split->uneven() ? absl::StrFormat("--num-virtual-stages-per-pipeline-rank %d", v)
                                    : absl::StrFormat("--num-layers-per-virtual-pipeline-stage %d",
                                                      split->LayersPerStage(num_layers, pp) / v));
  }
  return {flags, *split, v};
}

// A ZeRO stage's flags: the distributed optimizer, or Megatron-FSDP's strategy beside the distributed
// optimizer and the checkpoint format it requires.
std::string ShardingFlags(uint32_t zero_stage) {
  if (zero_stage == 1) return "--use-distributed-optimizer";
  return absl::StrFormat(
      "--use-megatron-fsdp --data-parallel-sharding-strategy %s --use-distributed-optimizer --ckpt-format fsdp_dtensor",
      zero_stage == 2 ? "optim_grads" : "optim_grads_params");
}

}  // namespace

// The flags that describe the model: its shape, MoE layout, attention kernel and dtype.
void ModelFlags(const v1::Model& model, std::vector<std::string>& flags) {
  const v1::Transformer& t = model.transformer();
  auto add = [&flags](std::string f) { flags.push_back(std::move(f)); };
  add(absl::StrFormat("--num-layers %d", t.num_layers()));
  add(absl::StrFormat("--hidden-size %d", t.hidden_size()));
  add(absl::StrFormat("--ffn-hidden-size %d", proto::FfnHiddenSize(t)));
  add(absl::StrFormat("--num-attention-heads %d", t.num_attention_heads()));
  if (t.head_dim() > 0) add(absl::StrFormat("--kv-channels %d", t.head_dim()));
  if (t.num_kv_heads() > 0 && t.num_kv_heads() != t.num_attention_heads()) {
    add("--group-query-attention");
    add(absl::StrFormat("--num-query-groups %d", t.num_kv_heads()));
  }
  add(absl::StrFormat("--seq-length %d", t.seq_length()));
  add(absl::StrFormat("--max-position-embeddings %d", t.seq_length()));
  add(absl::StrFormat("--vocab-size %d", t.vocab_size()));
  if (t.gated_mlp()) add("--swiglu");
  if (t.qk_layernorm()) add("--qk-layernorm");
  if (!t.tied_embeddings()) add("--untie-embeddings-and-output-weights");
  if (t.mtp_num_layers() > 0) add(absl::StrFormat("--mtp-num-layers %d", t.mtp_num_layers()));
  if (t.num_experts() > 1) {
    add(absl::StrFormat("--num-experts %d", t.num_experts()));
    add(absl::StrFormat("--moe-router-topk %d", t.moe_top_k() > 0 ? t.moe_top_k() : 2));
    if (t.expert_ffn_hidden_size() > 0) add(absl::StrFormat("--moe-ffn-hidden-size %d", t.expert_ffn_hidden_size()));
    if (t.moe_shared_expert_ffn_hidden_size() > 0) {
      add(absl::StrFormat("--moe-shared-expert-intermediate-size %d", t.moe_shared_expert_ffn_hidden_size()));
    }
    if (t.moe_grouped_gemm()) add("--moe-grouped-gemm");
    add(absl::StrCat("--moe-token-dispatcher-type ",
                     t.moe_token_dispatcher() == v1::MOE_DISPATCHER_ALL_GATHER ? "allgather" : "alltoall"));
    if (t.moe_first_dense_layers() > 0 || t.moe_layer_freq() > 1) {
      const MoeLayout layout{t.moe_first_dense_layers(), std::max<uint32_t>(1, t.moe_layer_freq())};
      add(absl::StrFormat("--moe-layer-freq '%s'", MoeLayerFreqValue(layout, t.num_layers())));
    }
  }
  if (t.has_mla()) {
    const v1::MultiLatentAttention& mla = t.mla();
    add("--multi-latent-attention");
    if (mla.q_lora_rank() > 0) add(absl::StrFormat("--q-lora-rank %d", mla.q_lora_rank()));
    add(absl::StrFormat("--kv-lora-rank %d --qk-head-dim %d --qk-pos-emb-head-dim %d --v-head-dim %d",
                        mla.kv_lora_rank(), mla.qk_head_dim(), mla.qk_pos_emb_head_dim(), mla.v_head_dim()));
  }
  // Always written: a line without it runs today's default (auto: flash or fused), not the unfused path.
  // A Triton FlashAttention plan (ATTENTION_FLASH_TRITON) runs Megatron's flash backend there.
  add(t.attention() != v1::ATTENTION_UNFUSED ? "--attention-backend flash" : "--attention-backend unfused");
  switch (model.dtype()) {
    case v1::FP16: add("--fp16"); break;
    case v1::FP8:
      add("--bf16");
      add("--fp8-format hybrid");
      break;
    case v1::FP32:
    case v1::TF32: break;
    case v1::DTYPE_UNSPECIFIED:  // the schema's default dtype
    case v1::BF16: add("--bf16"); break;
    case v1::DType_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case v1::DType_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
}

namespace {

// The flags of the layout inside a stage (every stage has the first one's: CheckStages).
// `code_2021`: the plan is 2021's code or runs v2.x's own passes (its FP16 step), so the line takes v2's
// spelling of full recomputation, the flag by which a line is read as 2021's code (docs/frameworks.md).
void StageFlags(const v1::Stage& s0, bool code_2021, std::vector<std::string>& flags) {
  auto add = [&flags](std::string f) { flags.push_back(std::move(f)); };
  if (proto::ExpertParallel(s0) > 1) add(absl::StrFormat("--expert-model-parallel-size %d", proto::ExpertParallel(s0)));
  if (proto::ExpertTensorParallel(s0) != proto::TensorParallel(s0)) {
    add(absl::StrFormat("--expert-tensor-parallel-size %d", proto::ExpertTensorParallel(s0)));
  }
  if (s0.sequence_parallel()) add("--sequence-parallel");
  if (s0.recompute() == v1::RECOMPUTE_FULL && s0.recompute_num_layers() > 0) {
    add(absl::StrFormat("--recompute-granularity full --recompute-method block --recompute-num-layers %d",
                        s0.recompute_num_layers()));
  } else if (s0.recompute() == v1::RECOMPUTE_FULL && code_2021) {
    add("--checkpoint-activations");
  } else if (s0.recompute() == v1::RECOMPUTE_FULL) {
    add("--recompute-granularity full --recompute-method uniform --recompute-num-layers 1");
  }
  if (s0.recompute() == v1::RECOMPUTE_SELECTIVE) add("--recompute-granularity selective");
  if (s0.zero_stage() > 0) add(ShardingFlags(s0.zero_stage()));
}

// What the line cannot say, or says only for some Megatron-LM releases.
std::vector<std::string> ExportNotes(const proto::PlanInputs& in, bool bf16_gradients, bool sync_backward) {
  const v1::Plan& plan = in.plan;
  const v1::Stage& s0 = plan.stages(0);
  std::vector<std::string> notes;
  if (plan.grad_bucket_bytes() > 0 && !plan.overlap_grad_reduce()) {
    notes.push_back("grad_bucket_bytes: not exported (Megatron buckets only with --overlap-grad-reduce)");
  }
  if (bf16_gradients) {
    notes.push_back(
        "--grad-reduce-in-bf16 (grad_reduce_in_fp32 false): Megatron-LM's flag since 2024; earlier releases always "
        "reduce BF16 gradients in FP32 (drop it there, and set grad_reduce_in_fp32 to price them)");
  }
  if (plan.overlap_param_gather() && !plan.overlap_grad_reduce()) {
    notes.push_back("overlap_param_gather: not exported (Megatron needs --overlap-grad-reduce with it)");
  }
  if (sync_backward && s0.sequence_parallel()) {
    notes.push_back(
        "tp_backward_overlap false: not exported (not expressible with --sequence-parallel: Megatron-LM always "
        "reduce-scatters input gradients under the weight gradients)");
  } else if (sync_backward) {
    notes.push_back(
        "--no-async-tensor-model-parallel-allreduce (tp_backward_overlap false): Megatron-LM 2022-23's switch; "
        "later releases always reduce input gradients under the weight gradients (drop it there)");
  }
  if (plan.tp_comm_overlap_aggregate()) {
    notes.push_back(
        "tp_comm_overlap_aggregate: a userbuffers setting (aggregate: 1 on qkv_fprop, fc1_fprop, proj_dgrad and "
        "fc2_dgrad in the YAML of --tp-comm-overlap-cfg), not a flag");
  }
  if (plan.has_tp_comm_overlap_config()) {
    notes.push_back(
        "tp_comm_overlap_config: userbuffers settings (method, num_sm and set_sm_margin per GEMM in the YAML of "
        "--tp-comm-overlap-cfg), not flags; without that file Transformer Engine runs its defaults");
  }
  if (s0.measured_forward_ms() > 0) notes.push_back("stages[].measured_*_ms: measurements, not flags");
  if (plan.has_reference_policy()) {
    notes.push_back(absl::StrFormat(
        "reference_policy: not exported (%s): a Megatron-LM training line steps one model; DPO's frozen reference "
        "model runs in NeMo-Aligner's or TRL's trainer, so the line prices the policy's step alone",
        plan.reference_policy().cpu_weight_swap() ? "the reference's forward, its weights swapped from host memory"
                                                  : "the reference's forward, its weights on the GPU"));
  }
  // Only --checkpoint-activations (full recomputation of every layer) marks a line as 2021's code, which the
  // import needs to set v2.5's own passes: any other line reads back as a later release's, without them.
  const bool line_2021 = s0.recompute() == v1::RECOMPUTE_FULL && s0.recompute_num_layers() == 0;
  std::vector<std::string> v2_fields;
  if (plan.megatron_v2_fp16_optimizer()) v2_fields.push_back("megatron_v2_fp16_optimizer");
  if (plan.megatron_local_ddp_copies()) v2_fields.push_back("megatron_local_ddp_copies");
  if (!line_2021 && !v2_fields.empty()) {
    notes.push_back(absl::StrFormat(
        "%s: Megatron-LM v2.5's own passes, not expressible on this line: without full recomputation of every layer "
        "(--checkpoint-activations) nothing on a line says it runs 2021's code; run it with Megatron-LM v2.5 "
        "(`hetsim import megatron` reads it back as a later release's, without %s)",
        absl::StrJoin(v2_fields, ", "), v2_fields.size() > 1 ? "them" : "it"));
  }
  if (in.model.dtype() == v1::TF32) {
    notes.push_back("dtype TF32: Megatron's FP32 run (TF32 GEMMs are PyTorch's setting)");
  }
  return notes;
}

// Today's Megatron-LM (the line is one: --attention-backend) has one switch for pipeline sends,
// --no-overlap-p2p-communication (arguments.py; May-October 2023's --overlap-p2p-communication is gone):
// the interleaved schedule overlaps them unless told not to, and blocks them only at PP > 2 (it asserts
// so: two ranks would exchange several sends and receives per batch); every other schedule blocks them
// (it resets overlap_p2p_comm to False).
bool BlockingInterleavedAccepted(int64_t pp) { return pp > 2; }

// What the line cannot say of the plan's pipeline sends, or nothing.
std::optional<std::string> PipelineSendsNote(const v1::Plan& plan, int64_t pp, int64_t chunks) {
  if (pp < 2) return std::nullopt;
  if (chunks == 1 && !plan.blocking_p2p()) {
    return "blocking_p2p false: not exported (today's Megatron-LM blocks the sends of non-interleaved schedules and "
           "has no flag to overlap them; Megatron-LM of May-October 2023 overlapped them with "
           "--overlap-p2p-communication); the line runs them blocking";
  }
  if (chunks > 1 && plan.blocking_p2p() && !BlockingInterleavedAccepted(pp)) {
    return "blocking_p2p true: not exported (Megatron-LM blocks interleaved sends only at "
           "--pipeline-model-parallel-size > 2); the line overlaps them";
  }
  return std::nullopt;
}

// Plan.unfused_kernels (unfused_elementwise: all three) as today's --no-...-fusion flags; the bias
// before the activation is --no-bias-swiglu-fusion on the --swiglu lines a gated MLP exports as.
void UnfusedKernelFlags(const v1::Plan& plan, const v1::Model& model, std::vector<std::string>& flags) {
  const bool all = plan.unfused_elementwise();
  const v1::UnfusedKernels& u = plan.unfused_kernels();
  if (all || u.bias_activation()) {
    flags.push_back(model.transformer().gated_mlp() ? "--no-bias-swiglu-fusion" : "--no-bias-gelu-fusion");
  }
  if (all || u.bias_dropout_add()) flags.push_back("--no-bias-dropout-fusion");
  if (all || u.masked_softmax()) {
    // Transformer Engine's unfused attention, the default layers' (megatron_import.cc, SetUnfusedKernels),
    // ignores the flag and fuses 16-bit scores: Megatron's local layers follow it.
    const v1::DType dtype = model.dtype();
    if (model.transformer().attention() == v1::ATTENTION_UNFUSED && dtype != v1::FP32 && dtype != v1::TF32) {
      flags.push_back("--transformer-impl local");
    }
    flags.push_back("--no-masked-softmax-fusion");
  }
  // The unfused core's dropout and where its mask runs (megatron_import.cc, SetAttentionCore): Megatron's
  // default dropout is 0.1; today's Megatron leaves FP32 scores unscaled, so the mask runs on their view
  // unless --apply-query-key-layer-scaling scales them first.
  const v1::Transformer& t = model.transformer();
  if (t.attention() != v1::ATTENTION_UNFUSED) return;
  if (t.no_attention_dropout()) flags.push_back("--attention-dropout 0");
  const bool fp32 = model.dtype() == v1::FP32 || model.dtype() == v1::TF32;
  if (fp32 && (all || u.masked_softmax()) && !u.masked_fill_on_view()) {
    flags.push_back("--apply-query-key-layer-scaling");
  }
}

}  // namespace

std::optional<int64_t> VocabDivisor(int64_t vocab, int64_t tp) {
  for (int64_t d = 128; d >= 1; --d) {
    if (vocab % (d * tp) == 0) return d;
  }
  return std::nullopt;
}

absl::StatusOr<MegatronExport> ExportMegatron(const proto::PlanInputs& in) {
  proto::Problems p(in.plan_path.empty() ? in.plan.name() : in.plan_path);
  const v1::Plan& plan = in.plan;
  HETSIM_RETURN_IF_ERROR(proto::RequireOnePipeline(
      plan, in.plan_path.empty() ? in.plan.name() : in.plan_path, "export megatron",
      "Megatron-LM runs one pipeline shape, every data-parallel replica with the same stage split "
      "(--pipeline-model-parallel-size) and micro-batch size (--micro-batch-size), so pipelines of different "
      "shapes have no launch line"));
  if (!in.model.has_transformer()) {
    p.Add("model", "a layer list: Megatron builds a transformer from its flags (--num-layers, --hidden-size, ...)");
    return p.ToStatus();
  }
  if (RefuseMixedStage(p, plan)) return p.ToStatus();
  const int64_t pp = plan.stages_size();
  CheckStages(p, in);
  // --attention-backend unfused runs Transformer Engine's unfused attention.
  CheckFusedSoftmax(p, in, SoftmaxKernelCheck::kTransformerEngine, "--attention-backend unfused");
  const PipelineFlags pipeline = Pipeline(p, in);
  if (!p.empty()) return p.ToStatus();

  const v1::Stage& s0 = plan.stages(0);
  const int64_t tp = proto::TensorParallel(s0), dp = proto::DataParallel(s0);
  const int64_t world = pp * proto::MeshGpuCount(s0.mesh());
  const int64_t gpn = std::min(RanksPerNode(in.cluster, s0.mesh()), world);
  std::vector<std::string> flags;
  auto add = [&flags](std::string f) { flags.push_back(std::move(f)); };
  ModelFlags(in.model, flags);
  add(absl::StrFormat("--micro-batch-size %d", plan.micro_batch_size() / dp));
  add(absl::StrFormat("--global-batch-size %d", plan.global_batch_size()));
  add(absl::StrFormat("--tensor-model-parallel-size %d", tp));
  const std::optional<int64_t> divisible = VocabDivisor(in.model.transformer().vocab_size(), tp);
  if (divisible && *divisible != 128) add(absl::StrFormat("--make-vocab-size-divisible-by %d", *divisible));
  add(absl::StrFormat("--pipeline-model-parallel-size %d", pp));
  if (plan.context_parallel() > 1) {
    add(absl::StrFormat("--context-parallel-size %d", plan.context_parallel()));
    if (plan.cp_comm_type() == v1::CP_COMM_ALL_GATHER) add("--cp-comm-type all_gather");
    if (plan.cp_comm_type() == v1::CP_COMM_ALL_TO_ALL) add("--cp-comm-type a2a");
  }
  if (!pipeline.flags.empty()) add(pipeline.flags);
  StageFlags(s0, plan.framework() == v1::MEGATRON_LM_2021 || plan.megatron_v2_fp16_optimizer(), flags);
  // v2.5's default is its local DDP, whose copies the plan prices; PyTorch's DDP has none.
  if (plan.megatron_v2_fp16_optimizer() && !plan.megatron_local_ddp_copies()) add("--DDP-impl torch");
  // Megatron's apex norms (2022's legacy model, Megatron-Core's local spec) run apex's FusedLayerNormAffineFunction,
  // with its weight-gradient pass, under this flag; 2021's code and Megatron-DeepSpeed's run it whatever the flags say.
  const bool apex_norm_by_flag = plan.framework() == v1::MEGATRON_LM_2022 || plan.framework() == v1::MEGATRON_CORE;
  if (apex_norm_by_flag && plan.layer_norm_weight_grad_pass()) add("--no-persist-layer-norm");
  // Megatron reduces --bf16 runs' gradients in FP32 unless told otherwise, and FP16 runs' in FP16.
  const v1::DType dtype = in.model.dtype();
  const bool bf16_run = dtype != v1::FP16 && dtype != v1::FP32 && dtype != v1::TF32;
  const bool bf16_gradients = bf16_run && !plan.grad_reduce_in_fp32();
  if (bf16_gradients) add("--grad-reduce-in-bf16");
  if (dtype == v1::FP16 && plan.grad_reduce_in_fp32()) add("--accumulate-allreduce-grads-in-fp32");
  if (plan.overlap_grad_reduce()) add("--overlap-grad-reduce");
  if (plan.overlap_grad_reduce() && plan.grad_bucket_bytes() > 0) {
    // In parameters: the bytes of the reduced gradients, 4 each in FP32, else 2.
    const uint64_t element_bytes = plan.grad_reduce_in_fp32() || dtype == v1::FP32 ? 4 : 2;
    add(absl::StrFormat("--ddp-bucket-size %d", (plan.grad_bucket_bytes() + element_bytes - 1) / element_bytes));
  }
  if (plan.moe_a2a_overlap()) add("--overlap-moe-expert-parallel-comm");
  if (plan.overlap_param_gather() && plan.overlap_grad_reduce()) add("--overlap-param-gather");
  if (plan.tp_comm_overlap()) add("--tp-comm-overlap");
  if (plan.fp8_current_scaling() && in.model.dtype() == v1::FP8) add("--fp8-recipe tensorwise");
  // Megatron-LM overlaps input-gradient reductions unless told not to, and always under SP.
  const bool sync_backward = proto::TensorParallel(s0) > 1 && !plan.tp_backward_overlap();
  if (sync_backward && !s0.sequence_parallel()) add("--no-async-tensor-model-parallel-allreduce");
  if (pipeline.chunks > 1 && plan.blocking_p2p() && BlockingInterleavedAccepted(pp)) {
    add("--no-overlap-p2p-communication");
  }
  UnfusedKernelFlags(plan, in.model, flags);

  MegatronExport out;
  out.gpus_per_node = gpn;
  out.nodes = (world + gpn - 1) / gpn;
  out.launch_line = absl::StrFormat("torchrun --nproc_per_node %d --nnodes %d pretrain_gpt.py \\\n    %s\n", gpn,
                                    out.nodes, absl::StrJoin(flags, " \\\n    "));
  out.flags = std::move(flags);
  out.notes = ExportNotes(in, bf16_gradients, sync_backward);
  if (std::optional<std::string> note = PipelineSendsNote(plan, pp, pipeline.chunks)) out.notes.push_back(*note);
  if (!divisible) {
    out.notes.push_back(absl::StrFormat(
        "vocab_size %d: not exported as it is (Megatron pads the vocabulary to a multiple of the tensor-parallel size "
        "%d)",
        in.model.transformer().vocab_size(), tp));
  }
  return out;
}

}  // namespace hetsim::interop
