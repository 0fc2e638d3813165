#include "service/interop/torchtitan_export.h"

// As in torchtitan_import.cc: toml++'s release behaviour in every build (its asserts guard parsing).
#define TOML_ASSERT(expr) static_cast<void>(0)
#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "proto/framework_profile.h"
#include "proto/pipeline_plans.h"
#include "proto/validate_plan.h"
#include "proto/validate_problems.h"
#include "service/interop/plan_compare_internal.h"
#include "service/interop/torchtitan_flavors.h"
#include "service/interop/torchtitan_import.h"

namespace hetsim::interop {
namespace {

namespace v1 = hetsim::v1;

struct Flavor {
  const char* model;  // torchtitan's model.name
  LlamaFlavor shape;
};

// The torchtitan flavor whose shape the model has (layers, width, heads, FFN, vocabulary), or nullopt.
std::optional<Flavor> FlavorOf(const v1::Transformer& t) {
  const int64_t kv = t.num_kv_heads() > 0 ? t.num_kv_heads() : t.num_attention_heads();
  for (const auto& [name, flavors] :
       {std::pair{"llama3", std::span(kLlama3Flavors)}, std::pair{"llama2", std::span(kLlama2Flavors)}}) {
    for (const LlamaFlavor& f : flavors) {
      if (f.layers == t.num_layers() && f.dim == static_cast<int64_t>(t.hidden_size()) &&
          f.heads == t.num_attention_heads() && f.kv_heads == kv &&
          f.FfnHidden() == static_cast<int64_t>(proto::FfnHiddenSize(t)) &&
          f.vocab == static_cast<int64_t>(t.vocab_size())) {
        return Flavor{name, f};
      }
    }
  }
  return std::nullopt;
}

std::string KnownFlavors() {
  std::vector<std::string> known;
  for (const LlamaFlavor& f : kLlama3Flavors) known.push_back(absl::StrCat("llama3 ", f.name));
  for (const LlamaFlavor& f : kLlama2Flavors) known.push_back(absl::StrCat("llama2 ", f.name));
  return absl::StrJoin(known, ", ");
}

// What torchtitan's config says of the plan: refusals before the file is written (the model, the
// dtype, the schedule, the sharding); the layout itself is checked by importing the file (ComparePlans).
void CheckExpressible(proto::Problems& p, const proto::PlanInputs& in) {
  const v1::Transformer& t = in.model.transformer();
  if (!FlavorOf(t)) {
    p.Add("model.transformer",
          "%d layers, hidden %d, %d heads (%d KV), FFN %d, vocabulary %d: not one of torchtitan's llama flavors (%s); "
          "torchtitan's config names its model by flavor, it cannot give another shape",
          t.num_layers(), t.hidden_size(), t.num_attention_heads(),
          t.num_kv_heads() > 0 ? t.num_kv_heads() : t.num_attention_heads(), proto::FfnHiddenSize(t), t.vocab_size(),
          KnownFlavors());
  }
  const v1::DType dtype = in.model.dtype();
  if (dtype == v1::FP16 || dtype == v1::TF32) {
    p.Add("model.dtype",
          "%s: torchtitan trains in bfloat16 or float32 (training.mixed_precision_param), FP8 through its float8 "
          "converter",
          v1::DType_Name(dtype));
  }
  const v1::Plan& plan = in.plan;
  const v1::Schedule s = plan.schedule();
  if (plan.stages_size() > 1 && s != v1::ONE_F_ONE_B && s != v1::GPIPE && s != v1::INTERLEAVED_1F1B) {
    p.Add("schedule", "%s: torchtitan's config runs 1F1B, GPipe or Interleaved1F1B here", v1::Schedule_Name(s));
  }
  for (int i = 0; i < plan.stages_size(); ++i) {
    if (plan.stages(i).replica_groups().empty()) continue;
    p.Add(absl::StrFormat("stages[%d].replica_groups", i),
          "torchtitan runs every replica with one TP degree and an equal share of the batch");
    break;
  }
  const int64_t layers = t.num_layers(), chunks = plan.stages_size() * proto::VirtualStages(plan);
  if (plan.schedule() == v1::INTERLEAVED_1F1B && plan.stages_size() > 1 && layers % chunks != 0) {
    p.Add("virtual_stages",
          "%d chunks (%d stages x %d) do not split the %d layers evenly: torchtitan's Interleaved1F1B gives every "
          "chunk pipeline_parallel_layers_per_stage layers",
          chunks, plan.stages_size(), proto::VirtualStages(plan), layers);
  }
  // Stage 0's (the others are compared with the import of the config).
  if (const uint32_t zero = plan.stages(0).zero_stage(); zero == 1 || zero == 2) {
    p.Add("stages[0].zero_stage",
          "%d: torchtitan shards parameters, gradients and optimizer state with FSDP2 (ZeRO-3, "
          "data_parallel_shard_degree) or replicates them with DDP (ZeRO 0, data_parallel_replicate_degree)",
          zero);
  }
}

std::string PrecisionOf(v1::DType dtype) { return dtype == v1::FP32 ? "float32" : "bfloat16"; }

// The config's tables, from stage 0 and the plan (every stage is checked against the import of it).
toml::table ConfigOf(const proto::PlanInputs& in, const Flavor& flavor) {
  const v1::Plan& plan = in.plan;
  const v1::Stage& s0 = plan.stages(0);
  const int64_t tp = proto::TensorParallel(s0), dp = proto::DataParallel(s0), pp = plan.stages_size();
  const int64_t micro = static_cast<int64_t>(plan.micro_batch_size()) / dp;  // per data-parallel replica
  const int64_t global = static_cast<int64_t>(plan.global_batch_size());
  const bool fsdp = s0.zero_stage() == 3;

  toml::table model{{"name", flavor.model}, {"flavor", flavor.shape.name}};
  if (in.model.dtype() == v1::FP8) model.insert("converters", toml::array{"float8"});
  // Without pipelines the local batch is one microbatch (gradient accumulation up to the global batch);
  // with them, the replica's share of the global batch split into pipeline microbatches.
  toml::table training{{"local_batch_size", pp > 1 ? global / dp : micro},
                       {"global_batch_size", global},
                       {"seq_len", static_cast<int64_t>(in.model.transformer().seq_length())},
                       {"mixed_precision_param", PrecisionOf(in.model.dtype())}};
  if (in.model.dtype() != v1::FP32) {
    training.insert("mixed_precision_reduce", plan.grad_reduce_in_fp32() ? "float32" : "bfloat16");
  }
  toml::table parallelism{
      {"data_parallel_replicate_degree", fsdp ? int64_t{1} : dp},
      {"data_parallel_shard_degree", fsdp ? dp : int64_t{1}},
      {"tensor_parallel_degree", tp},
      {"pipeline_parallel_degree", pp},
      {"context_parallel_degree", static_cast<int64_t>(spec::DegreeOrOne(plan.context_parallel()))},
      {"enable_async_tensor_parallel", tp > 1 && plan.tp_comm_overlap() && plan.pytorch_async_tp()}};
  if (pp > 1) {
    const bool interleaved = plan.schedule() == v1::INTERLEAVED_1F1B;
    parallelism.insert("pipeline_parallel_schedule", interleaved                    ? "Interleaved1F1B"
                                                     : plan.schedule() == v1::GPIPE ? "GPipe"
                                                                                    : "1F1B");
    parallelism.insert("pipeline_parallel_microbatch_size", micro);
    if (interleaved) {
      parallelism.insert("pipeline_parallel_layers_per_stage",
                         static_cast<int64_t>(flavor.shape.layers / (pp * proto::VirtualStages(plan))));
    }
  }
  if (plan.context_parallel() > 1 && plan.cp_comm_type() == v1::CP_COMM_P2P) {
    parallelism.insert("context_parallel_rotate_method", "alltoall");
  } else if (plan.context_parallel() > 1) {
    parallelism.insert("context_parallel_rotate_method", "allgather");
  }
  toml::table checkpoint{{"mode", s0.recompute() == v1::RECOMPUTE_FULL        ? "full"
                                  : s0.recompute() == v1::RECOMPUTE_SELECTIVE ? "selective"
                                                                              : "none"}};
  if (s0.recompute() == v1::RECOMPUTE_SELECTIVE && plan.op_selective_recompute()) {
    checkpoint.insert("selective_ac_option", "op");
  }
  return toml::table{{"model", std::move(model)},
                     {"training", std::move(training)},
                     {"parallelism", std::move(parallelism)},
                     {"activation_checkpoint", std::move(checkpoint)},
                     {"compile", toml::table{{"enable", !plan.eager_kernels()}}}};
}

// Why torchtitan's config gives a stage field other than the plan's.
std::string StageWhy(const std::string& field) {
  if (field == "mesh") {
    return "torchtitan lays ranks out from the island's first GPU in its mesh order [pp, dp_replicate, dp_shard, cp, "
           "tp]";
  }
  if (field == "first_layer" || field == "num_layers") return "torchtitan splits the layers evenly over the stages";
  if (field == "sequence_parallel") return "torchtitan's TP plan always shards the norms' sequence (SP with TP > 1)";
  if (field == "zero_stage") return "torchtitan's FSDP2 shards when data_parallel_shard_degree or CP is above 1";
  if (field == "recompute" || field == "recompute_num_layers") {
    return "torchtitan's activation_checkpoint modes are none, selective and full (every block)";
  }
  return "its config has no key for it";
}

}  // namespace

absl::StatusOr<TorchtitanExport> ExportTorchtitan(const proto::PlanInputs& inputs) {
  proto::PlanInputs in = inputs;  // the fields as the plan's framework profile sets them
  proto::ApplyFrameworkProfile(&in.plan, in.model);
  const std::string file = in.plan_path.empty() ? in.plan.name() : in.plan_path;
  proto::Problems p(file);
  HETSIM_RETURN_IF_ERROR(proto::RequireOnePipeline(
      in.plan, file, "export torchtitan",
      "torchtitan runs one pipeline shape over its device mesh, every data-parallel replica with the same "
      "stages and local batch, so pipelines of different shapes have no job config"));
  if (!in.model.has_transformer()) {
    p.Add("model", "a layer list: torchtitan's config names a llama flavor ([model] name and flavor)");
    return p.ToStatus();
  }
  CheckExpressible(p, in);
  if (!p.empty()) return p.ToStatus();

  TorchtitanExport out;
  std::ostringstream text;
  text << ConfigOf(in, *FlavorOf(in.model.transformer())) << "\n";
  out.toml = text.str();
  MegatronImportRequest request;
  request.island = in.plan.stages(0).mesh().island();
  request.name = in.plan.name();
  absl::StatusOr<TorchtitanImport> again = ImportTorchtitan(out.toml, in.cluster, request, file);
  if (!again.ok()) {
    p.Add("plan", "the config torchtitan would run does not import back: %s", again.status().message());
    return p.ToStatus();
  }
  v1::Plan imported = again->plan;
  proto::ApplyFrameworkProfile(&imported, again->model);
  CompareModels(
      p, in.model, again->model,
      absl::StrFormat("differs from torchtitan's %s (the config names a flavor, not a shape)", again->model.name()));
  ComparePlans(p, out.notes, in.plan, imported, "torchtitan", StageWhy);
  if (!p.empty()) return p.ToStatus();
  return out;
}

}  // namespace hetsim::interop
