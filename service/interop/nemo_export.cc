#include "service/interop/nemo_export.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/spec/defaults.h"
#include "base/spec/model.h"
#include "base/status_macros.h"
#include "proto/framework_profile.h"
#include "proto/pipeline_plans.h"
#include "proto/validate_plan.h"
#include "proto/validate_problems.h"
#include "service/interop/megatron_export.h"
#include "service/interop/nemo_import.h"
#include "service/interop/plan_compare_internal.h"

namespace hetsim::interop {
namespace {

namespace v1 = hetsim::v1;

// NeMo builds its legacy GPTModel (its copy of Megatron-LM's model before Megatron-Core) unless
// model.mcore_gpt is true; nemo_import.cc reads the former as Megatron-LM 2022's profile.
bool LegacyGpt(const v1::Plan& plan) {
  return plan.framework() == v1::MEGATRON_LM_2022 || plan.framework() == v1::MEGATRON_LM_2021;
}

// What a NeMo config cannot say: found on the Megatron line of the same plan (its split flags) and in
// the plan. The layout as a whole is checked again by importing the config (ExportNemo).
void CheckNemo(proto::Problems& p, const proto::PlanInputs& in, const MegatronExport& line) {
  for (const std::string& f : line.flags) {
    if (absl::StrContains(f, "pipeline-split") || absl::StrContains(f, "pipeline-num-layers") ||
        absl::StrContains(f, "--pipeline-model-parallel-layout") ||
        absl::StrContains(f, "--num-virtual-stages-per-pipeline-rank")) {
      p.Add("stages",
            "the split Megatron-LM writes %s: a NeMo config splits model.num_layers evenly over "
            "pipeline_model_parallel_size stages (and virtual_pipeline_model_parallel_size chunks of each)",
            f);
    }
  }
  const uint32_t zero = in.plan.stages(0).zero_stage();
  if (zero > 1) {
    p.Add("stages[0].zero_stage",
          "%d: a NeMo config shards the optimizer state only (model.optim.name distributed_fused_adam or "
          "mcore_distributed_optim: ZeRO-1); its PyTorch FSDP (model.fsdp) is not Megatron-Core's sharding",
          zero);
  }
  const v1::Transformer& t = in.model.transformer();
  const int64_t tp = proto::TensorParallel(in.plan.stages(0));
  if (!VocabDivisor(static_cast<int64_t>(t.vocab_size()), tp)) {
    p.Add("model.transformer.vocab_size",
          "%d: NeMo pads the vocabulary to a multiple of make_vocab_size_divisible_by x the tensor-parallel size %d, "
          "which does not divide it",
          t.vocab_size(), tp);
  }
  if (t.attention() == v1::ATTENTION_FLASH_TRITON) {
    p.Add("model.transformer.attention",
          "ATTENTION_FLASH_TRITON: NeMo's layers run Transformer Engine's or flash-attn's CUDA attention, not the "
          "Triton FlashAttention");
  }
}

// The experts as Megatron-Core's TransformerConfig fields, which NeMo passes on by name (nemo_import.cc,
// MoeFlags): Megatron-Core's dispatcher default is allgather, so the type is always written.
void MoeKeys(const v1::Transformer& t, YAML::Node& m) {
  m["num_moe_experts"] = t.num_experts();
  m["moe_router_topk"] = t.moe_top_k() > 0 ? t.moe_top_k() : 2;
  if (t.expert_ffn_hidden_size() > 0) m["moe_ffn_hidden_size"] = t.expert_ffn_hidden_size();
  if (t.moe_shared_expert_ffn_hidden_size() > 0) {
    m["moe_shared_expert_intermediate_size"] = t.moe_shared_expert_ffn_hidden_size();
  }
  m["moe_grouped_gemm"] = t.moe_grouped_gemm();
  m["moe_token_dispatcher_type"] = t.moe_token_dispatcher() == v1::MOE_DISPATCHER_ALL_GATHER ? "allgather" : "alltoall";
  // An integer K (every K-th block) or, with dense blocks first, one 0/1 per block.
  if (t.moe_first_dense_layers() == 0 && t.moe_layer_freq() > 1) m["moe_layer_freq"] = t.moe_layer_freq();
  if (t.moe_first_dense_layers() > 0) {
    YAML::Node pattern(YAML::NodeType::Sequence);
    pattern.SetStyle(YAML::EmitterStyle::Flow);
    const uint32_t freq = std::max<uint32_t>(1, t.moe_layer_freq());
    for (uint32_t i = 0; i < t.num_layers(); ++i) {
      pattern.push_back(spec::TransformerSpec::IsMoeBlockOf(i, t.num_experts(), t.moe_first_dense_layers(), freq) ? 1
                                                                                                                  : 0);
    }
    m["moe_layer_freq"] = pattern;
  }
}

// The model's shape and vocabulary (NeMo pads model.override_vocab_size as Megatron pads --vocab-size).
void ShapeKeys(const v1::Model& model, int64_t tp, YAML::Node& m) {
  const v1::Transformer& t = model.transformer();
  m["encoder_seq_length"] = t.seq_length();
  m["max_position_embeddings"] = t.seq_length();
  m["num_layers"] = t.num_layers();
  m["hidden_size"] = t.hidden_size();
  m["ffn_hidden_size"] = proto::FfnHiddenSize(t);
  m["num_attention_heads"] = t.num_attention_heads();
  if (t.head_dim() > 0) m["kv_channels"] = t.head_dim();
  if (t.num_kv_heads() > 0 && t.num_kv_heads() != t.num_attention_heads()) m["num_query_groups"] = t.num_kv_heads();
  m["make_vocab_size_divisible_by"] = VocabDivisor(static_cast<int64_t>(t.vocab_size()), tp).value_or(1);
  m["override_vocab_size"] = t.vocab_size();
  // NeMo's Llama configs spell SwiGLU fast-swiglu (launcher_scripts/conf/training/llama/*.yaml).
  m["activation"] = t.gated_mlp() ? "fast-swiglu" : "gelu";
  m["share_embeddings_and_output_weights"] = t.tied_embeddings();
  if (t.qk_layernorm()) m["qk_layernorm"] = true;
  if (t.no_attention_dropout()) m["attention_dropout"] = 0;  // NeMo's default is 0.1
  if (t.num_experts() > 1) MoeKeys(t, m);
}

// How the plan lays the model out: batch, parallel sizes, recomputation.
void LayoutKeys(const proto::PlanInputs& in, YAML::Node& m) {
  const v1::Plan& plan = in.plan;
  const v1::Stage& s0 = plan.stages(0);
  const int64_t dp = proto::DataParallel(s0);
  m["micro_batch_size"] = static_cast<int64_t>(plan.micro_batch_size()) / dp;
  m["global_batch_size"] = plan.global_batch_size();
  m["tensor_model_parallel_size"] = proto::TensorParallel(s0);
  m["pipeline_model_parallel_size"] = plan.stages_size();
  if (plan.schedule() == v1::INTERLEAVED_1F1B && proto::VirtualStages(plan) > 1) {
    m["virtual_pipeline_model_parallel_size"] = proto::VirtualStages(plan);
  }
  m["context_parallel_size"] = spec::DegreeOrOne(plan.context_parallel());
  if (proto::ExpertParallel(s0) > 1) m["expert_model_parallel_size"] = proto::ExpertParallel(s0);
  m["sequence_parallel"] = s0.sequence_parallel();
  if (s0.recompute() == v1::RECOMPUTE_FULL) {
    m["activations_checkpoint_granularity"] = "full";
    m["activations_checkpoint_method"] = s0.recompute_num_layers() > 0 ? "block" : "uniform";
    m["activations_checkpoint_num_layers"] = s0.recompute_num_layers() > 0 ? s0.recompute_num_layers() : 1;
  } else if (s0.recompute() == v1::RECOMPUTE_SELECTIVE) {
    m["activations_checkpoint_granularity"] = "selective";
  }
}

// What runs the layers and their communication: the model class and layer spec, FP8, the fusions, the
// overlaps and the optimizer.
void RuntimeKeys(const proto::PlanInputs& in, YAML::Node& m) {
  const v1::Plan& plan = in.plan;
  const bool legacy = LegacyGpt(plan), flash = in.model.transformer().attention() != v1::ATTENTION_UNFUSED;
  m["mcore_gpt"] = !legacy;
  // Megatron-Core's GPT attends with Transformer Engine's layers (flash or fused) or, without them, with its
  // local layers (unfused); the legacy GPTModel with flash-attn's kernels when use_flash_attention is set.
  m["transformer_engine"] = !legacy && flash;
  m["use_flash_attention"] = legacy && flash;
  m["fp8"] = in.model.dtype() == v1::FP8;
  if (in.model.dtype() == v1::FP8) m["fp8_hybrid"] = true;
  const v1::UnfusedKernels& u = plan.unfused_kernels();
  m["bias_activation_fusion"] = !(plan.unfused_elementwise() || u.bias_activation());
  m["bias_dropout_add_fusion"] = !(plan.unfused_elementwise() || u.bias_dropout_add());
  m["masked_softmax_fusion"] = !(plan.unfused_elementwise() || u.masked_softmax());
  if (plan.stages_size() > 1) m["overlap_p2p_comm"] = !plan.blocking_p2p();
  m["ub_tp_comm_overlap"] = plan.tp_comm_overlap();
  YAML::Node optim;
  const bool sharded = plan.stages(0).zero_stage() == 1;
  optim["name"] = !sharded ? "fused_adam" : legacy ? "distributed_fused_adam" : "mcore_distributed_optim";
  optim["overlap_grad_sync"] = plan.overlap_grad_reduce();
  optim["overlap_param_sync"] = plan.overlap_param_gather();
  const v1::DType dtype = in.model.dtype();
  if (dtype != v1::FP16 && dtype != v1::FP32 && dtype != v1::TF32) {
    optim["grad_sync_dtype"] = plan.grad_reduce_in_fp32() ? "fp32" : "bf16";
  }
  m["optim"] = optim;
}

std::string NemoPrecision(v1::DType dtype) {
  if (dtype == v1::FP16) return "16";
  if (dtype == v1::FP32 || dtype == v1::TF32) return "32";
  return "bf16";  // BF16, the schema's default, and FP8 (bf16 beside model.fp8)
}

std::string NemoConfigText(const proto::PlanInputs& in, const MegatronExport& line) {
  YAML::Node trainer;
  trainer["devices"] = line.gpus_per_node;
  trainer["num_nodes"] = line.nodes;
  trainer["accelerator"] = "gpu";
  trainer["precision"] = NemoPrecision(in.model.dtype());
  YAML::Node model;
  LayoutKeys(in, model);
  ShapeKeys(in.model, proto::TensorParallel(in.plan.stages(0)), model);
  RuntimeKeys(in, model);
  YAML::Node root;
  root["name"] = "megatron_gpt";
  root["trainer"] = trainer;
  root["model"] = model;
  YAML::Emitter out;
  out << YAML::Comment(absl::StrCat("hetsim export nemo: ", in.plan.name(),
                                    " (NeMo's megatron_gpt_config.yaml keys; data, tokenizer files and optimizer "
                                    "hyperparameters are yours)"))
      << YAML::Newline << root;
  return absl::StrCat(out.c_str(), "\n");
}

// Why NeMo's config gives a stage field other than the plan's.
std::string NemoStageWhy(const std::string& field) {
  if (field == "mesh") {
    return "NeMo lays ranks out as Megatron does (TP, CP, DP, then PP) from the island's first GPU";
  }
  if (field == "first_layer" || field == "num_layers") {
    return "NeMo splits model.num_layers evenly over the pipeline stages";
  }
  if (field == "recompute" || field == "recompute_num_layers") {
    return "NeMo's activations_checkpoint_* keys give the same recomputation to every stage";
  }
  return "a NeMo config gives every stage the same value, or has no key for it";
}

}  // namespace

absl::StatusOr<NemoExport> ExportNemo(const proto::PlanInputs& inputs) {
  proto::PlanInputs in = inputs;  // the fields as the plan's framework profile sets them
  proto::ApplyFrameworkProfile(&in.plan, in.model);
  const std::string file = in.plan_path.empty() ? in.plan.name() : in.plan_path;
  HETSIM_RETURN_IF_ERROR(proto::RequireOnePipeline(
      in.plan, file, "export nemo",
      "NeMo runs one pipeline shape (pipeline_model_parallel_size), every data-parallel replica with the same "
      "stages and micro_batch_size, so pipelines of different shapes have no config"));
  proto::Problems p(file);
  for (int i = 0; i < in.plan.stages_size(); ++i) {
    if (in.plan.stages(i).replica_groups().empty()) continue;
    p.Add(absl::StrFormat("stages[%d].replica_groups", i),
          "NeMo runs every replica of a stage with one tensor_model_parallel_size and an equal share of the batch");
    return p.ToStatus();
  }
  if (!in.model.has_transformer()) {
    p.Add("model", "a layer list: NeMo builds a GPT from model.num_layers, hidden_size, ...");
    return p.ToStatus();
  }
  // The Megatron line of the plan: its refusals (stages that differ, a mesh out of Megatron's rank order, a
  // schedule Megatron-Core does not run) are NeMo's, which runs Megatron-Core's.
  HETSIM_ASSIGN_OR_RETURN(const MegatronExport line, ExportMegatron(in));
  CheckNemo(p, in, line);
  if (!p.empty()) return p.ToStatus();

  NemoExport out;
  out.yaml = NemoConfigText(in, line);
  MegatronImportRequest request;
  request.island = in.plan.stages(0).mesh().island();
  request.name = in.plan.name();
  absl::StatusOr<MegatronImport> again = ImportNemo(out.yaml, in.cluster, request, file);
  if (!again.ok()) {
    p.Add("plan", "the config NeMo would run does not import back: %s", again.status().message());
    return p.ToStatus();
  }
  v1::Plan imported = again->plan;
  proto::ApplyFrameworkProfile(&imported, again->model);
  v1::Model model = again->model;
  // NeMo has no TF32 key (PyTorch Lightning's precision 32 is FP32): whether an FP32 run's GEMMs use TF32
  // is PyTorch's switch, torch.backends.cuda.matmul.allow_tf32 (False by default since PyTorch 1.12), which
  // TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 turns on; NVIDIA's PyTorch images set it (docs/validation.md, the
  // sailor set's precision row), and NeMo's container builds on them (NVIDIA/NeMo 8cfedd7,
  // docker/Dockerfile.ci: FROM nvcr.io/nvidia/pytorch:24.07-py3).
  if (in.model.dtype() == v1::TF32 && model.dtype() == v1::FP32) {
    model.set_dtype(v1::TF32);
    out.notes.push_back(
        "model.dtype TF32: trainer.precision 32, NeMo's FP32 run (its config has no TF32 key); its GEMMs run TF32 "
        "with TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 in the environment, which NVIDIA's PyTorch images and NeMo's "
        "container built on them set (elsewhere: the launcher's env_vars, or torch.backends.cuda.matmul.allow_tf32 "
        "= True); without it they run IEEE FP32");
  }
  CompareModels(p, in.model, model, "the NeMo config gives back another model");
  ComparePlans(p, out.notes, in.plan, imported, "NeMo", NemoStageWhy);
  if (!p.empty()) return p.ToStatus();
  return out;
}

}  // namespace hetsim::interop
