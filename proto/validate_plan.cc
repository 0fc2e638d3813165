#include "proto/validate_plan.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/spec/stage_rules.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "proto/framework_profile.h"
#include "proto/gpu_presets.h"
#include "proto/layer_count.h"
#include "proto/limits.h"
#include "proto/pipeline_plans.h"
#include "proto/plan_meshes_internal.h"
#include "proto/validate_model.h"
#include "proto/validate_pipelines.h"
#include "proto/validate_prediction.h"
#include "proto/validate_problems.h"
#include "proto/validate_replica_groups.h"

namespace hetsim::proto {
namespace {

using namespace hetsim::v1;  // NOLINT: the schema's message names read best unqualified here

void CheckBatch(Problems& p, const Plan& plan) {
  if (plan.global_batch_size() == 0) {
    p.Add("global_batch_size", "required (samples per iteration, >= 1)");
  } else if (plan.global_batch_size() > limits::kMaxGlobalBatch) {
    p.Add("global_batch_size", "%d is more than %d", plan.global_batch_size(), limits::kMaxGlobalBatch);
  }
  if (plan.micro_batch_size() == 0) {
    p.Add("micro_batch_size", "required (samples per microbatch, >= 1)");
  } else if (plan.global_batch_size() == 0 || plan.global_batch_size() > limits::kMaxGlobalBatch) {
    // reported above; the microbatch count of an out-of-range batch would only repeat it
  } else if (plan.global_batch_size() % plan.micro_batch_size() != 0) {
    p.Add("micro_batch_size", "%d does not divide global_batch_size %d", plan.micro_batch_size(),
          plan.global_batch_size());
  } else if (static_cast<uint64_t>(MicrobatchCount(plan)) > limits::kMaxMicrobatches) {
    p.Add("micro_batch_size", "%d microbatches per iteration, more than %d", MicrobatchCount(plan),
          limits::kMaxMicrobatches);
  }
}

// Transformer Engine's userbuffers settings: a setting of tp_comm_overlap, known methods, SM counts no
// GPU reaches (each GPU's own count is checked with the cost model).
void CheckTpCommOverlapConfig(Problems& p, const Plan& plan) {
  if (!plan.has_tp_comm_overlap_config()) return;
  if (!plan.tp_comm_overlap()) {
    p.Add("tp_comm_overlap_config", "needs tp_comm_overlap (it is a setting of that overlap)");
  }
  const TpCommOverlapConfig& c = plan.tp_comm_overlap_config();
  for (const auto& [name, method] : {std::pair<const char*, int>{"proj_fprop_method", c.proj_fprop_method()},
                                     std::pair<const char*, int>{"fc2_fprop_method", c.fc2_fprop_method()}}) {
    if (!TpOverlapMethod_IsValid(method)) {
      p.Add(absl::StrCat("tp_comm_overlap_config.", name), "unknown value %d", method);
    }
  }
  // Every SM count of the message (its uint32 fields), by reflection: a margin added later is checked too.
  const google::protobuf::Descriptor* d = c.GetDescriptor();
  const google::protobuf::Reflection* r = c.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_UINT32) continue;
    const uint32_t sms = r->GetUInt32(c, f);
    if (sms > limits::kMaxSmCount) {
      p.Add(absl::StrCat("tp_comm_overlap_config.", f->name()), "%d SMs is more than any GPU has (%d)", sms,
            limits::kMaxSmCount);
    }
  }
}

// Plan.p2p_rendezvous follows DeepSpeed's TrainSchedule, whose step order is ONE_F_ONE_B's with its
// own warm-up counts and one model chunk a stage.
void CheckP2pRendezvous(Problems& p, const Plan& plan) {
  if (!plan.p2p_rendezvous()) return;
  if (plan.schedule() != ONE_F_ONE_B) {
    p.Add("p2p_rendezvous", "needs schedule ONE_F_ONE_B (it follows DeepSpeed's TrainSchedule, a 1F1B)");
  }
  bool explicit_warmups = false;
  for (const Stage& s : plan.stages()) explicit_warmups = explicit_warmups || s.warmup_forwards() != 0;
  for (const Pipeline& q : plan.pipelines()) {
    for (const Stage& s : q.stages()) explicit_warmups = explicit_warmups || s.warmup_forwards() != 0;
  }
  if (explicit_warmups) {
    p.Add("p2p_rendezvous", "set with explicit warmup_forwards: DeepSpeed's TrainSchedule fixes its own");
  }
}

// Plan.megatron_v2_fp16_optimizer and megatron_local_ddp_copies price Megatron-LM v2's FP16 gradients; with FP32
// gradients it keeps them in contiguous main_grad buffers, another path.
void CheckMegatronV2Step(Problems& p, const Plan& plan) {
  for (const auto& [on, field] : {std::pair{plan.megatron_v2_fp16_optimizer(), "megatron_v2_fp16_optimizer"},
                                  std::pair{plan.megatron_local_ddp_copies(), "megatron_local_ddp_copies"}}) {
    if (on && plan.grad_reduce_in_fp32()) {
      p.Add(field,
            "needs FP16 gradients (grad_reduce_in_fp32 off): with FP32 gradients Megatron-LM v2 keeps "
            "contiguous main_grad buffers, a path hetsim does not price");
    }
  }
}

void CheckSchedule(Problems& p, const Plan& plan) {
  if (plan.schedule() == SCHEDULE_UNSPECIFIED) {
    p.Add("schedule", "required (GPIPE, ONE_F_ONE_B, EAGER_1F1B, H_1F1B or INTERLEAVED_1F1B)");
  }
  const double eps = plan.h1f1b_epsilon();
  if (eps != 0 && !(eps > 0 && eps <= 0.5)) p.Add("h1f1b_epsilon", "%g is outside (0, 0.5]", eps);
  if (plan.virtual_stages() > 1 && plan.schedule() != INTERLEAVED_1F1B) {
    p.Add("virtual_stages", "%d needs schedule INTERLEAVED_1F1B", plan.virtual_stages());
  }
  if (plan.virtual_stages() > limits::kMaxVirtualStages) {
    p.Add("virtual_stages", "%d is more than %d", plan.virtual_stages(), limits::kMaxVirtualStages);
  }
  if (plan.tp_comm_overlap_aggregate() && !plan.tp_comm_overlap()) {
    p.Add("tp_comm_overlap_aggregate", "needs tp_comm_overlap (it is a setting of that overlap)");
  }
  CheckTpCommOverlapConfig(p, plan);
  if (static_cast<double>(plan.grad_bucket_bytes()) > limits::kMaxBytes) {
    p.Add("grad_bucket_bytes", "%d is more than %g", plan.grad_bucket_bytes(), limits::kMaxBytes);
  }
  if (plan.overlap_param_gather() && !ShardsOptimizer(plan)) {
    p.Add("overlap_param_gather", "needs a stage with zero_stage 1 or 2 (only a sharded optimizer gathers parameters)");
  }
  if (plan.zero_reduce_per_rank() && !ShardsOptimizer(plan)) {
    p.Add("zero_reduce_per_rank", "needs a stage with zero_stage 1 or 2 (only ZeRO-1/2 reduce a bucket per rank)");
  }
  CheckP2pRendezvous(p, plan);
  CheckMegatronV2Step(p, plan);
}

// Interleaved 1F1B cuts a stage's blocks into virtual_stages equal chunks, the embedding riding with
// the first chunk and the head with the last (Megatron-LM's rule: its layers per pipeline stage,
// which count blocks only, must divide by the virtual stages), or, when the blocks alone do not
// divide, the stage's layers with the embedding and the head counted as layers (Megatron-LM's
// --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split: Llama 3.1 405B's
// 126 blocks on 8 stages of 8 chunks, 16 layers a stage).
void CheckChunks(Problems& p, const Plan& plan, const Stage& s, const std::string& at, const EdgeLayers& edges,
                 int layer_count) {
  const uint32_t v = VirtualStages(plan);
  if (v <= 1 || s.num_layers() == 0 || plan.virtual_stage_layers_size() > 0) return;
  const int blocks = StageBlockLayers(edges, layer_count, s.first_layer(), s.num_layers());
  if (blocks == static_cast<int>(s.num_layers())) {
    if (blocks % v != 0) p.Add(at + "num_layers", "%d is not divisible by virtual_stages %d", blocks, v);
  } else if (blocks == 0 || (blocks % v != 0 && s.num_layers() % v != 0)) {
    p.Add(at + "num_layers",
          "%d layers hold %d blocks (besides the embedding and head): neither they nor the layers are a "
          "positive multiple of virtual_stages %d",
          s.num_layers(), blocks, v);
  }
}

// Plan.virtual_stage_layers: one entry per virtual stage, none empty, each stage's adding up to its layers.
void CheckVirtualStageLayers(Problems& p, const Plan& plan) {
  const int n = plan.virtual_stage_layers_size();
  if (n == 0) return;
  const int64_t S = plan.stages_size(), v = VirtualStages(plan);
  if (plan.schedule() != INTERLEAVED_1F1B) {
    p.Add("virtual_stage_layers", "set, but the schedule is not INTERLEAVED_1F1B (it lays out virtual stages)");
    return;
  }
  if (n != S * v) {
    p.Add("virtual_stage_layers", "%d entries, but %d stages x %d virtual_stages = %d virtual stages", n, S, v, S * v);
    return;
  }
  std::vector<int64_t> per_stage(S, 0);
  for (int k = 0; k < n; ++k) {
    const uint32_t layers = plan.virtual_stage_layers(k);
    if (layers == 0 || layers > static_cast<uint32_t>(limits::kMaxListLayers)) {
      p.Add(absl::StrFormat("virtual_stage_layers[%d]", k),
            "%d is outside [1, %d] (virtual stage %d: stage %d, chunk %d)", layers, limits::kMaxListLayers, k, k % S,
            k / S);
      return;
    }
    per_stage[k % S] += layers;
  }
  for (int s = 0; s < S; ++s) {
    if (per_stage[s] != plan.stages(s).num_layers()) {
      p.Add(absl::StrFormat("stages[%d].num_layers", s),
            "%d, but its virtual stages' virtual_stage_layers add up to %d", plan.stages(s).num_layers(), per_stage[s]);
    }
  }
}

// Layers covered once and in order.
void CheckLayers(Problems& p, const Plan& plan, int layer_count, const EdgeLayers& edges) {
  int64_t next = 0;
  for (int i = 0; i < plan.stages_size(); ++i) {
    const Stage& s = plan.stages(i);
    const std::string at = absl::StrFormat("stages[%d].", i);
    if (s.first_layer() != next) {
      if (i == 0) {
        p.Add(at + "first_layer", "%d, but the first stage must start at layer 0", s.first_layer());
      } else {
        p.Add(at + "first_layer", "%d, but stages[%d] ends at layer %d (stages must cover the layers once, in order)",
              s.first_layer(), i - 1, next);
      }
    }
    if (s.num_layers() == 0) p.Add(at + "num_layers", "required (must be >= 1)");
    next = int64_t{s.first_layer()} + s.num_layers();
    if (next > layer_count) {
      p.Add(at + "num_layers", "%d layers from layer %d end at %d, past the model's %d layers", s.num_layers(),
            s.first_layer(), next, layer_count);
    }
    CheckChunks(p, plan, s, at, edges, layer_count);
  }
  if (!plan.stages().empty() && next < layer_count) {
    p.Add(absl::StrFormat("stages[%d].num_layers", plan.stages_size() - 1),
          "the last stage ends at layer %d, but the model has %d layers (layers %d..%d are not covered)", next,
          layer_count, next, layer_count - 1);
  }
}

// No GPU of stages[i] (its mesh, or its replica groups' meshes) is in an earlier stage or another of its
// groups; `claims` holds the GPUs of the earlier stages whose meshes are inside their islands.
void CheckSharedGpus(Problems& p, const Plan& plan, int i, GpuClaims& claims) {
  const auto mine = StageMeshes(plan.stages(i), i);
  for (size_t m = 0; m < mine.size(); ++m) {
    const auto& [b, path] = mine[m];
    const std::optional<GpuClaims::Owner> other =
        claims.Claim(*b, {.stage = i, .group = plan.stages(i).replica_groups().empty() ? -1 : static_cast<int>(m)});
    if (!other.has_value()) continue;
    if (other->stage == i) {
      p.Add(path, "shares GPUs of island \"%s\" with %s (no GPU may be in two replica groups)", b->island(),
            mine[other->group].second);
    } else {
      p.Add(path, "shares GPUs of island \"%s\" with stages[%d] (no GPU may be in two stages)", b->island(),
            other->stage);
    }
  }
}

void CheckParallelism(Problems& p, const Plan& plan, const Stage& s, const std::string& at, const Model& model) {
  const uint32_t tp = TensorParallel(s), dp = DataParallel(s), ep = ExpertParallel(s), cp = ContextParallel(plan);
  CheckMeshDegrees(p, s.mesh(), tp, cp, dp, at);
  if (!CheckDegreeRanges(p, at,
                         {{"tensor_parallel", tp, limits::kMaxDegree},
                          {"data_parallel", dp, limits::kMaxDegree},
                          {"expert_parallel", ep, limits::kMaxDegree},
                          {"expert_tensor_parallel", s.expert_tensor_parallel(), limits::kMaxDegree},
                          {"zero_stage", s.zero_stage(), 3}}) ||
      cp > limits::kMaxDegree) {
    return;  // CheckContextParallel reports the plan's context_parallel
  }
  const spec::StageParallelism stage{.tensor_parallel = static_cast<int>(tp),
                                     .data_parallel = static_cast<int>(dp),
                                     .zero_stage = static_cast<int>(s.zero_stage()),
                                     .sequence_parallel = s.sequence_parallel(),
                                     .expert_parallel = static_cast<int>(ep),
                                     .expert_tensor_parallel = static_cast<int>(s.expert_tensor_parallel())};
  spec::StageRuleModel rules;
  if (model.has_transformer()) {
    const Transformer& t = model.transformer();
    rules.num_attention_heads = t.num_attention_heads();
    rules.num_kv_heads = t.num_kv_heads();
    rules.ffn_hidden_size = FfnHiddenSize(t);
    rules.num_experts = t.num_experts();
    rules.expert_ffn_hidden_size = ExpertFfnHiddenSize(t);
  }
  for (const spec::StageRuleProblem& r :
       spec::StageRuleProblems(stage, static_cast<int>(cp), plan.micro_batch_size(), rules)) {
    p.Add(at + r.field, r.problem);
  }
  if (cp > 1 && plan.cp_comm_type() == hetsim::v1::CP_COMM_ALL_TO_ALL && model.has_transformer()) {
    // The all-to-all hands each CP rank 1/CP of the TP rank's heads, queries and keys/values alike.
    const Transformer& t = model.transformer();
    const uint32_t heads = t.num_attention_heads(), kv_heads = KvHeads(t);
    if (heads % tp == 0 && kv_heads % tp == 0 && ((heads / tp) % cp != 0 || (kv_heads / tp) % cp != 0)) {
      p.Add(at + "tensor_parallel",
            "%d leaves %d query and %d key/value heads per TP rank, which context_parallel %d with cp_comm_type "
            "CP_COMM_ALL_TO_ALL must divide (each CP rank takes 1/CP of them)",
            tp, heads / tp, kv_heads / tp, cp);
    }
  }
  CheckRange(p, at + "measured_forward_ms", s.measured_forward_ms(), 0, limits::kMaxMeasuredMs);
  CheckRange(p, at + "measured_backward_ms", s.measured_backward_ms(), 0, limits::kMaxMeasuredMs);
}

// Megatron-LM's block method: recompute the first N blocks of each chunk, so N needs full recompute.
// N at or above a chunk's blocks recomputes all of them (Megatron accepts it, and one N serves every
// stage of an uneven split).
void CheckRecomputeLayers(Problems& p, const Stage& s, const std::string& at) {
  const uint32_t n = s.recompute_num_layers();
  if (n > 0 && s.recompute() != hetsim::v1::RECOMPUTE_FULL) {
    p.Add(at + "recompute_num_layers",
          "%d is set, but recompute is not RECOMPUTE_FULL (only full recompute counts layers)", n);
  } else if (n > static_cast<uint32_t>(limits::kMaxListLayers)) {
    p.Add(at + "recompute_num_layers", "%d is more than %d", n, limits::kMaxListLayers);
  }
}

// Megatron-LM cuts each sample's sequence into 2 x CP chunks (rank r takes chunks r and 2 CP - 1 - r,
// which balances the causal mask) and rings the key/value blocks of attention: a transformer's.
void CheckContextParallel(Problems& p, const Plan& plan, const Model& model) {
  if (!ContextParallelComm_IsValid(plan.cp_comm_type())) {
    p.Add("cp_comm_type", "unknown value %d", static_cast<int>(plan.cp_comm_type()));
  }
  const uint32_t cp = plan.context_parallel();
  if (cp <= 1) return;
  if (cp > limits::kMaxDegree) {
    p.Add("context_parallel", "%d is more than %d", cp, limits::kMaxDegree);
  } else if (!model.has_transformer()) {
    p.Add("context_parallel", "%d needs a transformer model (its attention layers are what it splits)", cp);
  } else if (model.transformer().seq_length() % (2 * uint64_t{cp}) != 0) {
    p.Add("context_parallel", "%d: seq_length %d is not a multiple of 2 x context_parallel = %d", cp,
          model.transformer().seq_length(), 2 * uint64_t{cp});
  }
}

// Megatron-LM's combined 1F1B pairs passes of an interleaved pipeline (or of a single stage) and hides
// the all-to-all dispatch; it refuses the all-gather dispatcher and plain pipelines.
void CheckMoeOverlap(Problems& p, const Plan& plan, const Model& model) {
  if (!plan.moe_a2a_overlap()) return;
  const bool expert_parallel =
      std::any_of(plan.stages().begin(), plan.stages().end(), [](const Stage& s) { return ExpertParallel(s) > 1; });
  if (!expert_parallel) {
    p.Add("moe_a2a_overlap", "needs a stage with expert_parallel > 1 (it hides the experts' token dispatch)");
  } else if (model.has_transformer() &&
             model.transformer().moe_token_dispatcher() == hetsim::v1::MOE_DISPATCHER_ALL_GATHER) {
    p.Add("moe_a2a_overlap", "needs the all-to-all dispatcher (the model's moe_token_dispatcher is all-gather)");
  } else if (plan.stages_size() > 1 && (plan.schedule() != INTERLEAVED_1F1B || VirtualStages(plan) <= 1)) {
    p.Add("moe_a2a_overlap",
          "needs schedule INTERLEAVED_1F1B with virtual_stages > 1 when there are several stages (%d)",
          plan.stages_size());
  } else if (plan.stages_size() == 1 && plan.schedule() != ONE_F_ONE_B && plan.schedule() != INTERLEAVED_1F1B) {
    p.Add("moe_a2a_overlap",
          "needs schedule ONE_F_ONE_B or INTERLEAVED_1F1B (Megatron pairs a backward with the next forward)");
  } else if (model.dtype() == hetsim::v1::FP32) {
    p.Add("moe_a2a_overlap", "needs a 16-bit model (Megatron refuses it in FP32)");
  } else if (std::any_of(plan.stages().begin(), plan.stages().end(),
                         [](const Stage& s) { return s.recompute() == RECOMPUTE_FULL; })) {
    p.Add("moe_a2a_overlap", "cannot run with full recomputation (Megatron refuses the pair)");
  }
}

void CheckWarmups(Problems& p, const Plan& plan) {
  int set = 0;
  for (const Stage& s : plan.stages()) set += s.warmup_forwards() != 0;
  if (set == 0) return;
  if (plan.schedule() == GPIPE) {
    p.Add("stages", "warmup_forwards are set, but GPIPE runs every forward first (leave them 0)");
    return;
  }
  if (set != plan.stages_size()) {
    for (int i = 0; i < plan.stages_size(); ++i) {
      if (plan.stages(i).warmup_forwards() == 0) {
        p.Add(absl::StrFormat("stages[%d].warmup_forwards", i),
              "0, but other stages set theirs (set all of them or none)");
        return;
      }
    }
  }
  const int64_t m = MicrobatchCount(plan);
  for (int i = 0; i < plan.stages_size(); ++i) {
    const uint32_t w = plan.stages(i).warmup_forwards();
    const std::string at = absl::StrFormat("stages[%d].warmup_forwards", i);
    if (m > 0 && w > m) p.Add(at, "%d is more than the %d microbatches", w, m);
    if (i > 0 && w > plan.stages(i - 1).warmup_forwards()) {
      p.Add(at,
            "%d is more than stages[%d]'s %d (the pipeline would deadlock: warm-up counts must not grow "
            "along the pipeline)",
            w, i - 1, plan.stages(i - 1).warmup_forwards());
    }
  }
}

// Width of Q (and of the attention output, but for MLA's, heads x v_head_dim): heads x head_dim
// (hidden_size unless head_dim says); MLA's heads x (qk_head_dim + qk_pos_emb_head_dim).
double QueryWidth(const Transformer& t) {
  if (t.has_mla())
    return static_cast<double>(t.mla().qk_head_dim() + t.mla().qk_pos_emb_head_dim()) * t.num_attention_heads();
  return t.head_dim() > 0 ? static_cast<double>(t.head_dim()) * t.num_attention_heads()
                          : static_cast<double>(t.hidden_size());
}

// Forward GFLOP of one sample through the whole model (a rough 2 * params * tokens for transformers):
// only used to keep simulated time inside int64 picoseconds.
double ModelForwardGflopPerSample(const Model& model) {
  if (model.has_layer_list()) {
    double total = 0;
    for (const Layer& l : model.layer_list().layers()) total += l.forward_gflop_per_sample();
    return total;
  }
  const Transformer& t = model.transformer();
  const double attention = 2.0 * t.num_layers() * static_cast<double>(t.seq_length()) * t.seq_length() * QueryWidth(t);
  return (2 * ModelParamCount(model) * static_cast<double>(t.seq_length()) + attention) / 1e9;
}

// A microbatch's boundary activations crossing the cluster's slowest link, forward and backward, once
// per microbatch and stage: beyond int64 picoseconds the simulation could not represent the iteration.
void CheckTransferTimes(Problems& p, const Plan& plan, const Model& model, const Cluster& cluster) {
  double slowest_gbps = 0;
  std::string slowest_path;
  auto consider = [&](double gbps, std::string path) {
    if (gbps > 0 && (slowest_path.empty() || gbps < slowest_gbps)) {
      slowest_gbps = gbps;
      slowest_path = std::move(path);
    }
  };
  for (int i = 0; i < cluster.node_types_size(); ++i) {
    consider(cluster.node_types(i).intra_node_bandwidth_gbps(),
             absl::StrFormat("node_types[%d].intra_node_bandwidth_gbps", i));
  }
  for (int i = 0; i < cluster.islands_size(); ++i) {
    consider(cluster.islands(i).nic_bandwidth_gbps(), absl::StrFormat("islands[%d].nic_bandwidth_gbps", i));
  }
  for (int i = 0; i < cluster.inter_island_links_size(); ++i) {
    consider(cluster.inter_island_links(i).bandwidth_gbps(),
             absl::StrFormat("inter_island_links[%d].bandwidth_gbps", i));
  }
  if (slowest_path.empty()) return;
  double sample_bytes = 0;
  if (model.has_transformer()) {
    sample_bytes = 4.0 * static_cast<double>(model.transformer().seq_length()) * model.transformer().hidden_size();
  } else {
    for (const Layer& l : model.layer_list().layers()) {
      sample_bytes = std::max(sample_bytes, static_cast<double>(l.output_bytes_per_sample()));
    }
  }
  const double transfer_ps = sample_bytes * static_cast<double>(plan.micro_batch_size()) * 8e3 / slowest_gbps;
  const double steps = 2.0 * (static_cast<double>(MicrobatchCount(plan)) + plan.stages_size());
  if (steps * transfer_ps > limits::kMaxSimulatedPs) {
    p.Add("micro_batch_size",
          "one microbatch's activations take %g s over the cluster's slowest link (%s = %g Gb/s): "
          "an iteration could last beyond what int64 picoseconds hold",
          transfer_ps / 1e12, slowest_path, slowest_gbps);
  }
}

void CheckSizes(Problems& p, const Plan& plan, const Model& model, const IslandIndex& islands) {
  const double mb = static_cast<double>(plan.micro_batch_size());
  if (model.has_transformer()) {
    const Transformer& t = model.transformer();
    const double seq = static_cast<double>(t.seq_length());
    // Korthikanti's 34 s h, with Q and the projection input (4 of the 34) a x head_dim wide.
    const double h = static_cast<double>(t.hidden_size());
    const double bytes = mb * seq * (30.0 * h + 4.0 * QueryWidth(t) + 5.0 * t.num_attention_heads() * seq);
    if (bytes > limits::kMaxBytes) {
      p.Add("micro_batch_size",
            "the activations of one block for one microbatch would be %g bytes, more than %g (%g samples of "
            "seq_length %g: the s^2 attention scores of a long sequence grow fastest)",
            bytes, limits::kMaxBytes, mb, seq);
    }
  } else {
    for (int i = 0; i < model.layer_list().layers_size(); ++i) {
      const Layer& l = model.layer_list().layers(i);
      if (mb * static_cast<double>(std::max(l.activation_bytes_per_sample(), l.output_bytes_per_sample())) >
          limits::kMaxBytes) {
        p.Add("micro_batch_size", "layer_list.layers[%d]: one microbatch would need more than %g bytes", i,
              limits::kMaxBytes);
        break;
      }
    }
  }
  // An iteration lasts at most (microbatches + stages) x the slowest stage's forward + backward time.
  const double steps = static_cast<double>(MicrobatchCount(plan)) + plan.stages_size();
  const double gflop = 3 * ModelForwardGflopPerSample(model) * mb;  // forward + backward
  const DType dtype = EffectiveDType(model);
  for (int i = 0; i < plan.stages_size(); ++i) {
    const Stage& s = plan.stages(i);
    double stage_ms = s.measured_forward_ms() + s.measured_backward_ms();
    // A mixed stage's groups each compute their replicas' shares: the slowest bounds the stage.
    double compute_ms = 0;
    for (const auto& [mesh, unused] : StageMeshes(s, i)) {
      auto it = islands.find(mesh->island());
      if (it == islands.end() || s.measured_forward_ms() != 0 || MeshGpuCount(*mesh) <= 0) continue;
      const double tflops = PeakTflops(*it->second.gpu, dtype) * it->second.gpu->efficiency().max_efficiency();
      if (tflops > 0) {
        compute_ms = std::max(compute_ms, gflop / (tflops * 1e3 * static_cast<double>(MeshGpuCount(*mesh))) * 1e3);
      }
    }
    stage_ms += compute_ms;
    if (steps * stage_ms * 1e9 > limits::kMaxSimulatedPs) {
      p.Add(absl::StrFormat("stages[%d]", i), "one iteration could last %g s, beyond what int64 picoseconds hold",
            steps * stage_ms / 1e3);
      break;
    }
  }
}

}  // namespace

absl::Status ValidatePlan(const Plan& plan, const Cluster& cluster, const Model& model, absl::string_view plan_file,
                          int pipeline, bool own_context_parallel) {
  if (!plan.pipelines().empty()) return ValidatePipelines(plan, cluster, model, plan_file);
  Problems p = pipeline < 0 ? Problems(plan_file)
                            : Problems(plan_file, [pipeline, own_context_parallel](absl::string_view path) {
                                return PipelineFieldPath(pipeline, path, own_context_parallel);
                              });
  if (plan.model_source_case() == Plan::MODEL_SOURCE_NOT_SET) p.Add("model", "required: a model or a model_path");
  CheckBatch(p, plan);
  CheckSchedule(p, plan);
  CheckFrameworkOff(p, plan);
  if (plan.tied_embedding_grad_sync() &&
      !(model.has_transformer() && model.transformer().tied_embeddings() && plan.stages_size() > 1)) {
    p.Add("tied_embedding_grad_sync",
          "needs a model with tied_embeddings on more than one stage (no tied copy to sync)");
  }
  if (plan.block_forward_passes() > 4) {
    p.Add("block_forward_passes", "%u, more than 4 forward passes of a block", plan.block_forward_passes());
  }
  // DeepSpeed's engines sync at most a dozen times around one instruction (docs/frameworks.md counts them).
  const google::protobuf::Descriptor& syncs = *plan.deepspeed_timer_syncs().GetDescriptor();
  for (int i = 0; i < syncs.field_count(); ++i) {
    const uint32_t n =
        plan.deepspeed_timer_syncs().GetReflection()->GetUInt32(plan.deepspeed_timer_syncs(), syncs.field(i));
    if (n > 100) {
      p.Add(absl::StrCat("deepspeed_timer_syncs.", syncs.field(i)->name()),
            "%u, more than 100 timer syncs around one pipeline instruction", n);
    }
  }
  if (plan.unfused_kernels().masked_fill_on_view() && !plan.unfused_kernels().masked_softmax() &&
      !plan.unfused_elementwise()) {
    p.Add("unfused_kernels.masked_fill_on_view", "set without masked_softmax (no masked_fill_ to run on a view)");
  }
  if (plan.stages().empty()) p.Add("stages", "required: at least one stage");
  if (plan.stages_size() > limits::kMaxStages) {
    p.Add("stages", "%d stages, more than %d", plan.stages_size(), limits::kMaxStages);
    return p.ToStatus();
  }
  // The pipeline DAG holds 4 nodes per (microbatch, virtual stage), about 430 bytes with the
  // executor's per-node state: bound it before anything is allocated.
  const uint64_t batch = plan.global_batch_size(), micro = plan.micro_batch_size();
  if (micro > 0 && batch > 0 && batch <= limits::kMaxGlobalBatch && batch % micro == 0 &&
      plan.virtual_stages() <= limits::kMaxVirtualStages &&
      batch / micro * plan.stages_size() * VirtualStages(plan) > limits::kMaxPipelineTasks) {
    p.Add("global_batch_size", "%d microbatches x %d stages x %d virtual stages = %d pipeline tasks, more than %d",
          batch / micro, plan.stages_size(), VirtualStages(plan),
          batch / micro * plan.stages_size() * VirtualStages(plan), limits::kMaxPipelineTasks);
  }
  CheckLayers(p, plan, LayerCount(model), ModelEdgeLayers(model));
  CheckContextParallel(p, plan, model);
  CheckMoeOverlap(p, plan, model);
  CheckVirtualStageLayers(p, plan);
  const auto islands = IndexIslands(cluster);
  const DType dtype = EffectiveDType(model);
  std::vector<bool> mesh_ok(plan.stages_size());
  GpuClaims claims;
  for (int i = 0; i < plan.stages_size(); ++i) {
    const Stage& s = plan.stages(i);
    const std::string at = absl::StrFormat("stages[%d].", i);
    if (!s.replica_groups().empty()) {
      mesh_ok[i] = CheckReplicaGroups(p, plan, model, i, islands);
      CheckRecomputeLayers(p, s, at);
    } else {
      mesh_ok[i] = CheckMesh(p, s.mesh(), at + "mesh.", islands);
      if (!mesh_ok[i]) continue;
      CheckParallelism(p, plan, s, at, model);
      CheckRecomputeLayers(p, s, at);
      const bool measured = s.measured_forward_ms() > 0 && s.measured_backward_ms() > 0;
      CheckIslandGpu(p, islands.at(s.mesh().island()), at + "mesh.island", dtype, measured);
    }
    if (mesh_ok[i]) CheckSharedGpus(p, plan, i, claims);
  }
  CheckWarmups(p, plan);
  CheckPrediction(p, plan);
  if (p.empty()) CheckSizes(p, plan, model, islands);
  if (p.empty()) CheckTransferTimes(p, plan, model, cluster);
  return p.ToStatus();
}

}  // namespace hetsim::proto
