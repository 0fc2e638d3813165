#include "service/interop/deepspeed_export.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/type_resolver.h"
#include "google/protobuf/util/type_resolver_util.h"
#include "proto/output_files.h"
#include "proto/pipeline_plans.h"
#include "proto/validate_plan.h"
#include "proto/validate_problems.h"
#include "service/interop/fused_softmax_internal.h"
#include "service/interop/megatron_export.h"

namespace hetsim::interop {
namespace {

namespace v1 = hetsim::v1;
using google::protobuf::Struct;
using google::protobuf::Value;

// What DeepSpeed's engine (and Megatron-DeepSpeed's flags) cannot run, one problem per field.
void CheckDeepSpeed(proto::Problems& p, const proto::PlanInputs& in) {
  const v1::Plan& plan = in.plan;
  const bool interleaved = plan.schedule() == v1::INTERLEAVED_1F1B && proto::VirtualStages(plan) > 1;
  if (interleaved || (plan.schedule() != v1::ONE_F_ONE_B && plan.schedule() != v1::INTERLEAVED_1F1B)) {
    p.Add("schedule",
          "%s%s: DeepSpeed's pipeline engine runs its own 1F1B (TrainSchedule, deepspeed/runtime/pipe/"
          "schedule.py)%s",
          v1::Schedule_Name(plan.schedule()),
          interleaved ? absl::StrFormat(" of %d virtual stages", proto::VirtualStages(plan)) : "",
          interleaved ? ", which does not interleave" : "");
  }
  for (int i = 0; i < plan.stages_size(); ++i) {
    if (plan.stages_size() > 1 && plan.stages(i).zero_stage() > 1) {
      p.Add(absl::StrFormat("stages[%d].zero_stage", i),
            "%d with %d pipeline stages: DeepSpeed's pipeline engine runs ZeRO stages 0 and 1 only",
            plan.stages(i).zero_stage(), plan.stages_size());
      break;
    }
  }
  // Megatron-DeepSpeed's layers softmax in megatron/model/fused_softmax.py.
  CheckFusedSoftmax(p, in, SoftmaxKernelCheck::kMegatron, "Megatron-DeepSpeed's model");
  if (in.model.dtype() == v1::FP8) {
    p.Add("model.dtype", "FP8: a DeepSpeed config sets fp16 or bf16 (Transformer Engine's FP8 is not its setting)");
  }
  if (plan.context_parallel() > 1) {
    p.Add("context_parallel",
          "%d: Megatron-DeepSpeed splits sequences with DeepSpeed-Ulysses "
          "(--ds-sequence-parallel-size), not Megatron's context parallelism",
          plan.context_parallel());
  }
  if (!in.model.has_transformer()) return;
  const v1::Transformer& t = in.model.transformer();
  if (t.num_experts() > 1) {
    p.Add("model.transformer.num_experts",
          "%d: Megatron-DeepSpeed's MoE (--num-experts with --ep-world-size, "
          "DeepSpeed's MoE layer) is not exported",
          t.num_experts());
  }
  if (t.has_mla()) p.Add("model.transformer.mla", "Megatron-DeepSpeed has no multi-latent attention");
  if (t.mtp_num_layers() > 0)
    p.Add("model.transformer.mtp_num_layers",
          "Megatron-DeepSpeed has no multi-token "
          "prediction");
}

// The plan as export megatron writes the line's flags: ZeRO left to --zero-stage and the JSON, and the
// behaviours Megatron-DeepSpeed's engine decides (no flag of its line) set to the flags' silence, each
// noted where the plan said otherwise.
proto::PlanInputs AsDeepSpeedRuns(const proto::PlanInputs& in, std::vector<std::string>& notes) {
  proto::PlanInputs out = in;
  v1::Plan& plan = out.plan;
  const bool fp16 = in.model.dtype() == v1::FP16;
  auto off = [&notes](bool differs, absl::string_view field) {
    if (differs) {
      notes.push_back(absl::StrCat(field,
                                   ": not exported (DeepSpeed's engine decides it, framework profile "
                                   "MEGATRON_DEEPSPEED; Megatron-DeepSpeed's line has no flag for it)"));
    }
  };
  off(plan.overlap_grad_reduce(), "overlap_grad_reduce");
  off(plan.grad_bucket_bytes() > 0, "grad_bucket_bytes");
  off(plan.overlap_param_gather(), "overlap_param_gather");
  off(plan.tp_comm_overlap() || plan.tp_comm_overlap_aggregate() || plan.has_tp_comm_overlap_config(),
      "tp_comm_overlap");
  off(plan.stages_size() > 1 && !plan.blocking_p2p(), "blocking_p2p");
  off(plan.grad_reduce_in_fp32() == fp16, "grad_reduce_in_fp32");
  plan.set_overlap_grad_reduce(false);
  plan.set_grad_bucket_bytes(0);
  plan.set_overlap_param_gather(false);
  plan.set_tp_comm_overlap(false);
  plan.set_tp_comm_overlap_aggregate(false);
  plan.clear_tp_comm_overlap_config();
  plan.set_blocking_p2p(true);
  plan.set_grad_reduce_in_fp32(!fp16);
  for (v1::Stage& s : *plan.mutable_stages()) {
    s.set_zero_stage(0);
  }
  if (in.plan.stages(0).zero_stage() == 3 && !in.plan.zero3_prefetch()) {
    notes.push_back(
        "zero3_prefetch false: not exported (DeepSpeed's ZeRO-3 prefetches the next parameters, "
        "stage3_prefetch_bucket_size)");
  }
  if (in.plan.framework() != v1::MEGATRON_DEEPSPEED && in.plan.framework() != v1::FRAMEWORK_UNSPECIFIED) {
    notes.push_back(
        absl::StrFormat("framework %s: the line runs DeepSpeed's engine; imported back, the plan's "
                        "framework is MEGATRON_DEEPSPEED and its profile's behaviours apply",
                        v1::Framework_Name(in.plan.framework())));
  }
  return out;
}

// Megatron-LM's flags in the spelling microsoft/Megatron-DeepSpeed's megatron/arguments.py accepts
// (f4157be; docs/megatron.md lists each flag's line): flash attention is --use-flash-attn (it has no
// --attention-backend; without a switch it runs unfused attention); grouped-query attention is
// --num-key-value-heads (no --group-query-attention or --num-query-groups); SwiGLU's bias is never fused
// (megatron/model/transformer.py sets bias_gelu_fusion False under --swiglu: no --no-bias-swiglu-fusion);
// ZeRO moves to --zero-stage. Its GPTModelPipe partitions the layers with partition_method='type:transformer'
// (megatron/model/gpt_model.py, no flag: --pp-partition-method is BigScience's fork's), Megatron's even
// split of the blocks, and recomputes only uniformly ("deepspeed's pipeline doesn't support the block
// recompute method"); any other split, and block recomputation under pipelines, are problems.
std::vector<std::string> DeepSpeedFlags(proto::Problems& p, std::vector<std::string> flags, int pipeline_stages,
                                        uint32_t zero_stage, absl::string_view config_name,
                                        std::vector<std::string>& notes) {
  std::vector<std::string> out;
  // Query-key layer scaling is on by default in Megatron-DeepSpeed (arguments.py line 1129,
  // --no-query-key-layer-scaling): FP32 scores are masked on their view only without it.
  bool scaled = false;
  for (std::string& f : flags) {
    // Megatron-DeepSpeed's layers are its own (no --transformer-impl): they follow --no-masked-softmax-fusion.
    if (f == "--attention-backend unfused" || f == "--group-query-attention" || f == "--transformer-impl local") {
      continue;
    }
    if (f == "--apply-query-key-layer-scaling") {
      scaled = true;
      continue;
    }
    if (f == "--no-bias-swiglu-fusion") {
      notes.push_back(
          "unfused_kernels.bias_activation: no flag (Megatron-DeepSpeed never fuses SwiGLU's bias: "
          "megatron/model/transformer.py, bias_gelu_fusion False under --swiglu)");
      continue;
    }
    if (absl::StartsWith(f, "--num-query-groups ")) {
      out.push_back(absl::StrCat("--num-key-value-heads ", f.substr(std::string("--num-query-groups ").size())));
      continue;
    }
    if (absl::StrContains(f, "pipeline-split") || absl::StrContains(f, "pipeline-num-layers") ||
        absl::StrContains(f, "--pipeline-model-parallel-layout")) {
      p.Add("stages",
            "the split Megatron-LM writes %s: Megatron-DeepSpeed's GPTModelPipe partitions the blocks evenly "
            "(partition_method 'type:transformer' in megatron/model/gpt_model.py; it has no flag for another)",
            f);
      continue;
    }
    if (pipeline_stages > 1 && absl::StrContains(f, "--recompute-method block")) {
      p.Add("stages[0].recompute_num_layers",
            "%s: Megatron-DeepSpeed's GPTModelPipe recomputes uniformly or not at all (megatron/model/gpt_model.py: "
            "\"deepspeed's pipeline doesn't support the block recompute method\")",
            f);
      continue;
    }
    out.push_back(f == "--attention-backend flash" ? "--use-flash-attn" : std::move(f));
  }
  const bool fp32_masked = std::find(out.begin(), out.end(), "--no-masked-softmax-fusion") != out.end() &&
                           std::find(out.begin(), out.end(), "--fp16") == out.end() &&
                           std::find(out.begin(), out.end(), "--bf16") == out.end();
  if (fp32_masked && !scaled) out.push_back("--no-query-key-layer-scaling");
  // One stage: DeepSpeed's engine without its pipeline engine, as Megatron-DeepSpeed's scripts run
  // ZeRO-2/3 (examples_deepspeed/rebase/ds_pretrain_gpt_1.3B.sh).
  if (pipeline_stages == 1) out.push_back("--no-pipeline-parallel");
  out.push_back(absl::StrFormat("--zero-stage %d", zero_stage));
  out.push_back(absl::StrCat("--deepspeed --deepspeed_config ", config_name));
  return out;
}

// The flags of bigscience-workshop/Megatron-DeepSpeed's megatron/arguments.py (8387ae17) a line of its
// can need, by the line that adds each: the fork BigScience trained BLOOM and its smaller models with. It
// parses with parse_args (line 67: an unknown flag stops the run). Beyond microsoft's, it has DeepSpeed's
// PipelineModule partition as --pp-partition-method (line 578), which its GPTModelPipe passes on
// (megatron/model/gpt_model.py); it predates --recompute-* (full recomputation is --checkpoint-activations,
// line 512, a block at a time of --checkpoint-num-layers, default 1), --vocab-size (--pad-vocab-size-to,
// line 372), flash attention, grouped-query attention, RMSNorm, untied embeddings, sequence parallelism and
// the asynchronous tensor-parallel backward (megatron/mpu/layers.py reduces the input gradients after the
// weight gradients, as Megatron-LM of 2021).
constexpr std::pair<const char*, int> kBigScienceArguments[] = {
    {"--num-layers", 352},
    {"--hidden-size", 354},
    {"--ffn-hidden-size", 356},
    {"--num-attention-heads", 359},
    {"--kv-channels", 361},
    {"--max-position-embeddings", 366},
    {"--pad-vocab-size-to", 372},
    {"--attention-dropout", 460},
    {"--micro-batch-size", 486},
    {"--global-batch-size", 493},
    {"--checkpoint-activations", 512},
    {"--no-masked-softmax-fusion", 541},
    {"--no-bias-gelu-fusion", 546},
    {"--no-bias-dropout-fusion", 549},
    {"--pp-partition-method", 578},
    {"--fp16", 678},
    {"--bf16", 680},
    {"--no-query-key-layer-scaling", 696},
    {"--tensor-model-parallel-size", 716},
    {"--pipeline-model-parallel-size", 718},
    {"--seq-length", 887},
    {"--zero-stage", 1031},
    {"--deepspeed", 0},  // DeepSpeed's own, as on microsoft's line
    {"--deepspeed_config", 0},
};

// A plan whose split counts both embeddings as layers runs on BigScience's fork only: its line, in that
// fork's spelling, or one problem per flag it has no counterpart for. microsoft/Megatron-DeepSpeed's
// GPTModelPipe partitions with 'type:transformer', fixed, and its parser refuses --pp-partition-method.
std::vector<std::string> BigScienceFlags(proto::Problems& p, const proto::PlanInputs& in,
                                         const std::vector<std::string>& flags, std::vector<std::string>& notes) {
  std::vector<std::string> out;
  for (const std::string& f : flags) {
    if (f == "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split") {
      out.push_back("--pp-partition-method 'type:transformer|embedding'");
    } else if (f == "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1") {
      out.push_back("--checkpoint-activations");
    } else if (absl::StartsWith(f, "--vocab-size ")) {
      out.push_back(absl::StrCat("--pad-vocab-size-to ", f.substr(std::string("--vocab-size ").size())));
    } else if (f != "--no-async-tensor-model-parallel-allreduce") {
      out.push_back(f);
    }
  }
  for (const std::string& f : out) {
    const std::string name = f.substr(0, f.find(' '));
    // Dropped by DeepSpeedFlags below: the unfused attention it runs anyway (in its own layers), the scaling
    // it does by default.
    if (f == "--attention-backend unfused" || f == "--apply-query-key-layer-scaling" ||
        f == "--transformer-impl local") {
      continue;
    }
    const bool known = std::any_of(std::begin(kBigScienceArguments), std::end(kBigScienceArguments),
                                   [&](const auto& a) { return name == a.first; });
    if (!known) {
      p.Add("plan",
            "%s: not a flag of bigscience-workshop/Megatron-DeepSpeed (megatron/arguments.py), the fork whose "
            "--pp-partition-method 'type:transformer|embedding' gives this split",
            f);
    }
  }
  if (in.plan.tp_backward_overlap() && proto::TensorParallel(in.plan.stages(0)) > 1) {
    p.Add("tp_backward_overlap",
          "true: BigScience's fork (the one whose --pp-partition-method gives this split) reduces the tensor-parallel "
          "input gradients after the weight gradients (megatron/mpu/layers.py, as Megatron-LM of 2021)");
  }
  notes.push_back(
      "written for bigscience-workshop/Megatron-DeepSpeed: the split counts both embeddings (--pp-partition-method "
      "'type:transformer|embedding'), which microsoft/Megatron-DeepSpeed's parser refuses; the tokenizer is yours "
      "(--pad-vocab-size-to pads its vocabulary to the plan's)");
  return out;
}

Value Number(int64_t n) {
  Value v;
  v.set_number_value(static_cast<double>(n));
  return v;
}

Value Section(absl::string_view key, Value value) {
  Value v;
  (*v.mutable_struct_value()->mutable_fields())[std::string(key)] = std::move(value);
  return v;
}

// The JSON config: the batch (DeepSpeed asserts train_batch_size = micro x steps x data-parallel size),
// the ZeRO stage and the precision.
absl::StatusOr<std::string> ConfigJson(const proto::PlanInputs& in) {
  const v1::Plan& plan = in.plan;
  const v1::Stage& s0 = plan.stages(0);
  const int64_t dp = proto::DataParallel(s0);
  Struct root;
  auto& fields = *root.mutable_fields();
  fields["train_batch_size"] = Number(static_cast<int64_t>(plan.global_batch_size()));
  fields["train_micro_batch_size_per_gpu"] = Number(static_cast<int64_t>(plan.micro_batch_size()) / dp);
  fields["gradient_accumulation_steps"] =
      Number(static_cast<int64_t>(plan.global_batch_size() / plan.micro_batch_size()));
  fields["zero_optimization"] = Section("stage", Number(s0.zero_stage()));
  Value on;
  on.set_bool_value(true);
  if (in.model.dtype() == v1::FP16) fields["fp16"] = Section("enabled", on);
  if (in.model.dtype() == v1::BF16 || in.model.dtype() == v1::DTYPE_UNSPECIFIED)
    fields["bf16"] = Section("enabled", on);
  // A Struct is a map, which protobuf iterates in a per-process order: printed from its deterministic
  // wire form (keys sorted) so that the same plan gives the same bytes.
  std::string binary;
  {
    google::protobuf::io::StringOutputStream stream(&binary);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    root.SerializeToCodedStream(&coded);
  }
  const std::unique_ptr<google::protobuf::util::TypeResolver> resolver(
      google::protobuf::util::NewTypeResolverForDescriptorPool("type.googleapis.com",
                                                               google::protobuf::DescriptorPool::generated_pool()));
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  if (auto s = google::protobuf::util::BinaryToJsonString(
          resolver.get(), absl::StrCat("type.googleapis.com/", Struct::descriptor()->full_name()), binary, &json,
          options);
      !s.ok()) {
    return absl::InternalError(absl::StrCat("DeepSpeed config: ", std::string(s.message())));
  }
  return json + "\n";
}

}  // namespace

absl::StatusOr<DeepSpeedExport> ExportDeepSpeed(const proto::PlanInputs& in, absl::string_view config_name) {
  const std::string file = in.plan_path.empty() ? in.plan.name() : in.plan_path;
  HETSIM_RETURN_IF_ERROR(proto::RequireOnePipeline(
      in.plan, file, "export deepspeed",
      "Megatron-DeepSpeed runs one pipeline shape, every data-parallel replica with the same stage split and "
      "micro-batch size (train_micro_batch_size_per_gpu), so pipelines of different shapes have no config"));
  proto::Problems p(file);
  CheckDeepSpeed(p, in);
  if (!p.empty()) return p.ToStatus();
  DeepSpeedExport out;
  HETSIM_ASSIGN_OR_RETURN(const MegatronExport line, ExportMegatron(AsDeepSpeedRuns(in, out.notes)));
  HETSIM_ASSIGN_OR_RETURN(out.config_json, ConfigJson(in));
  const bool bigscience =
      std::find(line.flags.begin(), line.flags.end(),
                "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split") != line.flags.end();
  const std::vector<std::string> flags =
      DeepSpeedFlags(p, bigscience ? BigScienceFlags(p, in, line.flags, out.notes) : line.flags, in.plan.stages_size(),
                     in.plan.stages(0).zero_stage(), config_name, out.notes);
  if (!p.empty()) return p.ToStatus();
  // DeepSpeed's runner: --num_nodes of --num_gpus each (deepspeed/launcher/runner.py).
  out.launch_line = absl::StrFormat("deepspeed --num_nodes %d --num_gpus %d pretrain_gpt.py \\\n    %s\n", line.nodes,
                                    line.gpus_per_node, absl::StrJoin(flags, " \\\n    "));
  for (const std::string& n : line.notes) out.notes.push_back(n);
  return out;
}

absl::StatusOr<std::string> WriteDeepSpeedExport(const DeepSpeedExport& exported, absl::string_view config_name,
                                                 const std::string& json_path, const std::string& line_path,
                                                 std::vector<std::string> inputs) {
  if (json_path.empty()) return absl::StrCat(config_name, ":\n", exported.config_json, exported.launch_line);
  proto::OutputFiles files(std::move(inputs));
  HETSIM_RETURN_IF_ERROR(files.Add(json_path, exported.config_json));
  HETSIM_RETURN_IF_ERROR(files.Add(line_path, exported.launch_line));
  HETSIM_RETURN_IF_ERROR(files.Commit());
  return absl::StrFormat("wrote %s and %s\n%s", json_path, line_path, exported.launch_line);
}

}  // namespace hetsim::interop
