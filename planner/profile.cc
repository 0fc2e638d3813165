#include "planner/profile.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "planner/context_parallel_cost_internal.h"
#include "sim/workload/optimizer_step.h"
#include "sim/workload/stage_cost.h"

namespace hetsim::planner {

using workload::LayerKind;

namespace {

// Plan.tp_comm_overlap_config's methods and SM margins, in a pricing key.
std::string TpCommOverlapKey(const spec::TpCommOverlapSpec& te) {
  std::string key = absl::StrFormat(" te %d %d", static_cast<int>(te.proj_fprop), static_cast<int>(te.fc2_fprop));
  for (const auto& [name, sms] : te.Margins()) absl::StrAppendFormat(&key, " %d", sms);
  return key;
}

// Plan.deepspeed_timer_syncs' counts, in a pricing key ("" without timers).
std::string TimerSyncsKey(const spec::DeepSpeedTimerSyncs& t) {
  if (!(t.load_micro_batch || t.forward_pass || t.backward_pass || t.last_backward_pass || t.pipe_transfer)) return "";
  return absl::StrFormat(" ds-timers=%d/%d/%d/%d/%d", t.load_micro_batch, t.forward_pass, t.backward_pass,
                         t.last_backward_pass, t.pipe_transfer);
}

// Every figure of a resolved GPU (doubles in hex): equal keys mean equal GPUs.
std::string GpuKey(const spec::GpuSpec& g) {
  std::string key = absl::StrCat(g.name, "|", g.preset, "|");
  for (double peak : g.peak_flop_per_s) absl::StrAppendFormat(&key, "%a ", peak);
  absl::StrAppendFormat(&key, "%a %a %a %a %a %d %a %a %a %a %a %a %a %a %a %a %a", g.hbm_bandwidth.bytes_per_second(),
                        g.hbm_capacity.value(), g.max_efficiency, g.hbm_efficiency, g.half_efficiency_gflop, g.sm_count,
                        g.tile_overhead_k, g.kernel_launch_s, g.host_op_s, g.pass_overhead_s, g.iteration_overhead_s,
                        g.sync_round_trip_s, g.mma_sync_speed, g.unfused_softmax_speed, g.host_fill_bytes_per_s,
                        g.pageable_h2d_bytes_per_s, g.pinned_copy_bytes_per_s);
  return key;
}

// Everything a stage's price on an island depends on besides the model: the GPU, the node, the link
// figures and the profiler's search options (doubles in hex, so equal keys mean equal values).
std::string IslandPricingKey(const ClusterModel& cluster, const IslandModel& im, const ProfilerOptions& o) {
  return absl::StrCat(
      GpuKey(cluster.topology().island(im.index).gpu), "|",
      absl::StrFormat("%d %d %a %d %a %d %d %a %d %d %d %d %d", im.gpus_per_node, im.hbm_bytes,
                      im.intra_node.bytes_per_s, TimeToPicoseconds(im.intra_node.latency), im.inter_node.bytes_per_s,
                      TimeToPicoseconds(im.inter_node.latency), im.nics_per_node, im.node_nic_bytes_per_s,
                      static_cast<int>(o.search_zero), static_cast<int>(o.search_recompute),
                      static_cast<int>(o.extrapolate), o.max_tensor_parallel, static_cast<int>(o.tp_comm_overlap)),
      o.range_copies > 0 ? absl::StrFormat(" ranges=%dx+%d", o.range_copies, o.range_other_pipelines) : "",
      o.search_zero_three ? " zero3" : "",
      o.expert_layout.first > 0 ? absl::StrFormat(" ep=%d/%d", o.expert_layout.first, o.expert_layout.second) : "",
      o.tp_backward_overlap ? " tp-backward-overlap" : "", o.tp_comm_overlap_aggregate ? " aggregate" : "",
      o.grad_reduce_in_fp32 ? " fp32-gradients" : "",
      o.cp_comm == spec::ContextParallelComm::kAllGather  ? " cp-all-gather"
      : o.cp_comm == spec::ContextParallelComm::kAllToAll ? " cp-all-to-all"
                                                          : "",
      TpCommOverlapKey(o.tp_comm_overlap_config), o.eager_kernels ? " eager" : "",
      o.op_selective_recompute ? " op-sac" : "", o.fp8_dynamic_casts ? " fp8-casts" : "",
      o.pytorch_async_tp ? " async-tp" : "", o.flash_attention_2 ? " flash2" : "",
      o.fp8_current_scaling ? " fp8-current-scaling" : "", o.pytorch_context_parallel ? " pytorch-cp" : "",
      o.attention_repeats_kv ? " repeats-kv" : "", o.unfused.bias_activation ? " unfused-bias-act" : "",
      o.unfused.bias_dropout_add ? " unfused-bda" : "", o.unfused.masked_softmax ? " unfused-softmax" : "",
      o.unfused.masked_fill_on_view ? " mask-on-view" : "", absl::StrFormat(" passes=%d", o.block_forward_passes),
      o.deepspeed_fp16_optimizer ? " ds-fp16-step" : "", o.megatron_v2_fp16_optimizer ? " megatron-v2-fp16-step" : "",
      o.megatron_local_ddp_copies ? " local-ddp-copies" : "", o.fp32_logits_cross_entropy ? " fp32-loss" : "",
      o.synchronized_tp_collectives ? " sync-tp" : "", o.cuda_launch_blocking ? " launch-blocking" : "",
      o.autograd_grad_accumulation ? " autograd-accumulation" : "", o.boundary_host_rebuild ? " host-rebuild" : "",
      o.host_bound_blocks || o.cuda_launch_blocking
          ? absl::StrFormat(" host-ops=%a/%a", o.block_host_ops_forward, o.block_host_ops_backward)
          : "",
      o.dtensor_sequence_copies ? " dtensor-copies" : "", TimerSyncsKey(o.timer_syncs),
      o.layer_norm_weight_grad_pass ? " ln-weight-grad-pass" : "",
      o.reference_forward ? (o.reference_weight_swap ? " reference-swapped" : " reference-resident") : "");
}

// The pipelines family's ZeRO (ProfilerOptions::range_copies): `cost`'s model states and optimizer
// shard re-priced over the fewest GPUs a layer range of the stage's can shard over, as the simulator
// prices them per range (sim/executor/layer_range_shards.cc, ShardStage).
void ShardOverRanges(const workload::ModelCost& model, const ProfilerOptions& o, const workload::StageConfig& sc,
                     workload::StageCost& cost) {
  const int n = sc.data_parallel * o.range_copies + o.range_other_pipelines;
  const double params = workload::DenseParamsOfLayers(model, sc.first_layer, sc.num_layers, sc.tensor_parallel);
  const workload::StageMemory held =
      workload::ZeroShardedModelStates(params, model.dtype(), sc.zero_stage, n, sc.grad_reduce_in_fp32);
  cost.memory.param_bytes = held.param_bytes;
  cost.memory.grad_bytes = held.grad_bytes;
  cost.memory.optimizer_bytes = held.optimizer_bytes;
  cost.optimizer_shard = workload::ZeroShardedModelStates(params, model.dtype(), 3, n, sc.grad_reduce_in_fp32);
}

// The pipelines family's ZeRO-3 (ProfilerOptions::search_zero_three): what one pass of the stage waits
// for its layers' all-gathers before the plan's other pipelines are known. Each layer gathers its
// parameters (the stage's dense parameters per GPU of its TP split, in the model's dtype) over the
// fewest GPUs its range can have, n = DP x range_copies + range_other_pipelines (ShardOverRanges' n), as
// a ring across nodes at the stage's NIC share per GPU: (n - 1) / n of the bytes at that rate plus
// n - 1 steps of the island's inter-node latency per layer (collectives::RingAllGatherSeconds' terms).
// The holders are mostly other pipelines on other nodes; where they are not (a no-P2P node's host
// memory, another island's link) the family prices the plan again with the ranges' own gathers
// (RangeGathersOfZeroThree), which decide.
Time ZeroThreeGatherEstimate(const workload::ModelCost& model, const ClusterModel& cluster, const IslandModel& im,
                             MeshShape shape, const ProfilerOptions& o, const workload::StageConfig& sc) {
  const int n = sc.data_parallel * o.range_copies + o.range_other_pipelines;
  if (n < 2) return 0;
  const double bytes = workload::DenseParamsOfLayers(model, sc.first_layer, sc.num_layers, sc.tensor_parallel) *
                       static_cast<double>(model.element_bytes());
  const double rate = cluster.NicShare(im, shape.gpus_per_node);
  if (!(rate > 0)) return 0;
  const Time latency = im.inter_node.latency > 0 ? im.inter_node.latency : im.intra_node.latency;
  return SecondsToTime(static_cast<double>(n - 1) / n * bytes / rate) + (n - 1) * sc.num_layers * latency;
}

}  // namespace

Profiler::Profiler(const workload::ModelCost& model, const ClusterModel& cluster, uint64_t micro_batch_size,
                   ProfilerOptions options, int context_parallel)
    : model_(model),
      cluster_(cluster),
      micro_batch_size_(micro_batch_size),
      context_parallel_(std::max(1, context_parallel)),
      options_(options) {
  int rows = 0;
  for (const IslandModel& im : cluster.islands()) {
    std::vector<MeshShape> shapes = SubmeshShapes(im.nodes, im.gpus_per_node);
    if (im.nodes > options_.partial_node_shapes_max_nodes) {
      std::erase_if(shapes, [&](const MeshShape& s) { return s.gpus_per_node < im.gpus_per_node; });
    }
    shapes_.push_back(std::move(shapes));
    table_row_.push_back(rows);
    rows += static_cast<int>(shapes_.back().size());
  }
  table_.resize(rows);
  if (options_.cache != nullptr) {
    for (const IslandModel& im : cluster.islands()) island_keys_.push_back(IslandPricingKey(cluster, im, options_));
  }
  if (options_.zero_free_cache != nullptr && options_.search_zero) {
    ProfilerOptions zero_free = options_;
    zero_free.search_zero = false;
    for (const IslandModel& im : cluster.islands())
      zero_free_island_keys_.push_back(IslandPricingKey(cluster, im, zero_free));
  }
  const int n = model.num_layers();
  // Repeated-layer pricing needs every block alike: not so with dense blocks among MoE ones.
  if (model.is_transformer() && model.uniform_blocks() && n >= 3 && model.layer(0).kind == LayerKind::kEmbedding &&
      model.layer(n - 1).kind == LayerKind::kHead) {
    structured_ = true;
    body_first_ = 1;
    body_end_ = n - 1;
    period_ = model.layer(1).kind == LayerKind::kAttention ? 2 : 1;
  }
}

Profiler::Signature Profiler::MakeSignature(int first, int count) const {
  Signature s;
  if (!structured_) {
    s.first = first;
    s.count = count;
    return s;
  }
  const int last = first + count - 1;
  s.embedding = first < body_first_;
  s.head = last >= body_end_;
  const int body_start = std::max(first, body_first_);
  s.body = std::min(last + 1, body_end_) - body_start;
  if (s.body < 0) s.body = 0;
  s.phase = s.body > 0 ? (body_start - body_first_) % period_ : 0;
  return s;
}

int Profiler::SignatureOf(int first, int count) {
  const Signature s = MakeSignature(first, count);
  auto [it, inserted] = signature_ids_.try_emplace(s, static_cast<int>(signature_ids_.size()));
  if (inserted) ++stats_.signatures;
  return it->second;
}

std::pair<int, int> Profiler::Representative(const Signature& s, int body) const {
  if (s.first >= 0) return {s.first, s.count};
  if (s.embedding && s.head) return {0, model_.num_layers()};
  if (s.embedding) return {0, 1 + body};
  if (s.head) return {body_end_ - body, body + 1};
  return {body_first_ + s.phase, body};
}

ProfilerOptions FrameworkOptionsOf(const spec::PlanSpec& plan) {
  ProfilerOptions o;
  static_cast<spec::CostSwitches&>(o) = plan;
  return o;
}

Time SyncTimeOf(const ClusterModel& cluster, int island, MeshShape shape, const StageOption& o) {
  return cluster.GradSyncTime(island, shape, o.config.tensor_parallel, static_cast<double>(o.grad_sync_bytes)) +
         cluster.GradSyncTime(island, shape, o.config.ExpertTensorParallel() * o.config.expert_parallel,
                              static_cast<double>(o.expert_grad_sync_bytes)) +
         o.optimizer_passes + SecondsToTime(cluster.island(island).gpu->iteration_overhead_s());
}

std::vector<std::pair<int, int>> Profiler::ExpertLayouts(int stage_gpus, int gpus_per_node) const {
  const int experts = static_cast<int>(model_.num_experts());
  const int gpn = std::max(1, gpus_per_node);
  if (const auto [ep, etp] = options_.expert_layout; ep > 0 && experts > 1) {  // one layout for every stage
    const int block = ep * std::max(1, etp);
    const bool aligned = gpn % block == 0 || block % gpn == 0;
    const bool splits_ffn = etp <= 1 || model_.expert_ffn_hidden_size() % static_cast<uint64_t>(etp) == 0;
    if (experts % ep == 0 && stage_gpus % block == 0 && aligned && splits_ffn) return {{ep, etp}};
    return {};
  }
  std::vector<std::pair<int, int>> layouts = {{1, 0}};
  for (int ep = 2; experts > 1 && ep <= std::min(experts, stage_gpus); ep *= 2) {
    const bool aligned = gpn % ep == 0 || ep % gpn == 0;
    if (experts % ep == 0 && stage_gpus % ep == 0 && aligned) layouts.emplace_back(ep, 1);
  }
  return layouts;
}

std::vector<IntraStageConfig> Profiler::Configs(const IslandModel& island, MeshShape shape) const {
  std::vector<IntraStageConfig> configs;
  const int max_tp = options_.max_tensor_parallel > 0 ? options_.max_tensor_parallel : shape.gpus_per_node;
  std::vector<spec::Recompute> recomputes = {spec::Recompute::kNone};
  if (options_.search_recompute) {
    if (model_.is_transformer()) recomputes.push_back(spec::Recompute::kSelective);
    recomputes.push_back(spec::Recompute::kFull);
  }
  for (int tp = 1; tp <= std::min(max_tp, shape.gpus_per_node); ++tp) {
    if (shape.gpus_per_node % tp != 0) continue;
    if (model_.is_transformer()) {
      if (model_.num_attention_heads() % tp != 0 || model_.num_kv_heads() % tp != 0 ||
          model_.ffn_hidden_size() % static_cast<uint64_t>(tp) != 0) {
        continue;
      }
    } else if (tp > 1) {
      continue;  // explicit layer lists carry no tensor-parallel collectives: TP 1 only
    }
    const int dp = DataParallelOf(shape.gpus(), tp);
    if (dp == 0 || micro_batch_size_ % static_cast<uint64_t>(dp) != 0) continue;
    const bool ranged = options_.range_copies > 0;
    const int max_zero =
        (options_.search_zero && (dp > 1 || ranged)) ? (ranged && options_.search_zero_three ? 3 : 2) : 0;
    const bool sequence_parallel = SequenceParallelFor(tp);
    for (const auto& [ep, etp] : ExpertLayouts(shape.gpus(), shape.gpus_per_node)) {
      // An expert split over ETP > 1 GPUs (a forced layout's) splits them as the stage's dense layers at most:
      // ETP divides the stage's TP (Megatron-Core's MoE configurations, ETP 1 or up to TP).
      if (etp > 1 && tp % etp != 0) continue;
      for (int zero = 0; zero <= max_zero; ++zero) {
        for (spec::Recompute rc : recomputes) {
          configs.push_back({.tensor_parallel = tp,
                             .data_parallel = dp,
                             .zero_stage = zero,
                             .recompute = rc,
                             .sequence_parallel = sequence_parallel,
                             .expert_parallel = ep,
                             .expert_tensor_parallel = etp});
        }
      }
    }
  }
  (void)island;
  return configs;
}

double Profiler::BoundaryBytes(int last) const {
  return std::ceil(model_.layer(last).output_bytes_per_sample * static_cast<double>(micro_batch_size_));
}

std::optional<StageOption> Profiler::PriceRaw(int island, MeshShape shape, const IntraStageConfig& config, int first,
                                              int count) {
  const IslandModel& im = cluster_.island(island);
  workload::StageConfig sc;
  static_cast<spec::StageParallelism&>(sc) = config;
  sc.first_layer = first;
  sc.num_layers = count;
  static_cast<spec::CostSwitches&>(sc) = options_;
  sc.context_parallel = context_parallel_;
  sc.micro_batch_size = micro_batch_size_;
  ++stats_.cost_model_calls;
  absl::StatusOr<workload::StageCost> cost = workload::ComputeStageCost(model_, sc, *im.gpu, "planner");
  if (!cost.ok()) return std::nullopt;
  if (options_.range_copies > 0 && config.zero_stage >= 1) ShardOverRanges(model_, options_, sc, *cost);
  StageOption o;
  o.config = config;
  if (options_.range_copies > 0 && config.zero_stage >= 3) {
    o.gather_forward = ZeroThreeGatherEstimate(model_, cluster_, im, shape, options_, sc);
    o.gather_backward = o.gather_forward;
  }
  const ContextParallelTime cp =
      ContextParallelCost(im, shape, config.tensor_parallel, context_parallel_, options_.cp_comm, cost->cp_attention);
  StageGroups groups(shape, config);
  groups.context_parallel = context_parallel_;
  Time forward_comm = cluster_.CollectivesTime(island, groups, cost->forward_collectives);
  Time backward_comm = cluster_.CollectivesTime(island, groups, cost->backward_collectives);
  // What Transformer Engine's overlap, PyTorch's async TP or Megatron-LM's asynchronous backward hides
  // of the pass's collectives (the simulator's setup's accounting); the others stay exposed.
  auto hidden = [&](const std::vector<workload::StageCollective>& list, bool forward) -> Time {
    workload::TpOverlapTimes times;
    if (!options_.tp_comm_overlap && !options_.tp_backward_overlap) return 0;  // time nothing
    for (const workload::StageCollective& c : list) {
      if (c.userbuffers || c.async_backward) times.Add(c, cluster_.CollectiveTime(island, groups, c));
    }
    return workload::PassHiddenByTpOverlap(options_, config.tensor_parallel, forward, *cost, sc.first_layer, times);
  };
  forward_comm -= std::min(forward_comm, hidden(cost->forward_collectives, true));
  backward_comm -= std::min(backward_comm, hidden(cost->backward_collectives, false));
  o.forward = cost->forward_time + cp.forward_exposed + forward_comm + o.gather_forward;
  o.backward = cost->backward_time + cp.backward_exposed + backward_comm + o.gather_backward;
  o.state_bytes = cost->memory.ModelStateBytes();
  o.activation_bytes = cost->memory.activation_bytes_per_microbatch;
  o.working_bytes = cost->memory.recompute_working_bytes;
  // ZeRO reduce-scatters the gradients and all-gathers the weights: on a ring the bandwidth of an
  // all-reduce of their mean (each half of an all-reduce moves its buffer once), which is the gradient
  // bytes unless Plan.grad_reduce_in_fp32 makes them twice the weights.
  auto all_reduce_bytes = [&](int64_t gradients, int64_t weights) {
    return config.zero_stage >= 1 ? (gradients + weights) / 2 : gradients;
  };
  o.grad_sync_bytes = all_reduce_bytes(cost->grad_sync_bytes, cost->param_sync_bytes);
  o.expert_grad_sync_bytes = all_reduce_bytes(cost->expert_grad_sync_bytes, cost->expert_param_sync_bytes);
  // The host work of the step is the iteration's, added once per stage (SyncTimeOf).
  o.optimizer_passes =
      SecondsToTime(workload::OptimizerStepSeconds(cost->optimizer_shard, model_.dtype(), *im.gpu, sc) -
                    im.gpu->iteration_overhead_s()) +
      cost->reference_swap_time;
  return o;
}

namespace {

// Fills the fields derived from the others: synchronisation time and the in-flight limit.
void Finish(const ClusterModel& cluster, int island, MeshShape shape, StageOption& o) {
  o.grad_sync = SyncTimeOf(cluster, island, shape, o);
  const int64_t free_bytes = cluster.island(island).hbm_bytes - o.state_bytes - o.working_bytes;
  if (free_bytes < o.activation_bytes) {
    o.max_in_flight = 0;
  } else if (o.activation_bytes <= 0) {
    o.max_in_flight = std::numeric_limits<int>::max();
  } else {
    o.max_in_flight = static_cast<int>(std::min<int64_t>(free_bytes / o.activation_bytes, 1 << 30));
  }
}

int64_t Extrapolate(int64_t a, int64_t b, int64_t steps) { return a + steps * (b - a); }
Time Extrapolate(Time a, Time b, int64_t steps) { return a + steps * (b - a); }

}  // namespace

std::optional<StageOption> Profiler::Price(int island, MeshShape shape, const IntraStageConfig& config,
                                           const Signature& s) {
  std::optional<StageOption> result;
  if (!structured_ || !options_.extrapolate || s.body < 2 * period_ || (s.embedding && s.head)) {
    const auto [first, count] = Representative(s, s.body);
    result = PriceRaw(island, shape, config, first, count);
  } else {
    // The cost model sums over layers, so n repeated layers cost f(n0) + (n - n0)/P (f(n0+P) - f(n0)).
    const int n0 = period_ + s.body % period_;
    const int64_t steps = (s.body - n0) / period_;
    const auto [f0, c0] = Representative(s, n0);
    const auto [f1, c1] = Representative(s, n0 + period_);
    std::optional<StageOption> a = PriceRaw(island, shape, config, f0, c0);
    std::optional<StageOption> b = PriceRaw(island, shape, config, f1, c1);
    if (!a || !b) return std::nullopt;
    result = *a;
    result->forward = Extrapolate(a->forward, b->forward, steps);
    result->backward = Extrapolate(a->backward, b->backward, steps);
    result->state_bytes = Extrapolate(a->state_bytes, b->state_bytes, steps);
    result->activation_bytes = Extrapolate(a->activation_bytes, b->activation_bytes, steps);
    result->working_bytes = Extrapolate(a->working_bytes, b->working_bytes, steps);
    result->grad_sync_bytes = Extrapolate(a->grad_sync_bytes, b->grad_sync_bytes, steps);
    result->expert_grad_sync_bytes = Extrapolate(a->expert_grad_sync_bytes, b->expert_grad_sync_bytes, steps);
    result->optimizer_passes = Extrapolate(a->optimizer_passes, b->optimizer_passes, steps);
    result->gather_forward = Extrapolate(a->gather_forward, b->gather_forward, steps);
    result->gather_backward = Extrapolate(a->gather_backward, b->gather_backward, steps);
  }
  if (result) Finish(cluster_, island, shape, *result);
  return result;
}

std::optional<StageOption> Profiler::PriceDirect(int island, MeshShape shape, const IntraStageConfig& config, int first,
                                                 int count) {
  std::optional<StageOption> o = PriceRaw(island, shape, config, first, count);
  if (o) Finish(cluster_, island, shape, *o);
  return o;
}

namespace {

// The options of `sorted` (fastest first) that no faster (or equally fast) one beats on every memory term.
std::vector<StageOption> ParetoKept(const std::vector<StageOption>& sorted) {
  std::vector<StageOption> kept;
  for (const StageOption& o : sorted) {
    bool dominated = false;
    for (const StageOption& k : kept) {
      if (k.state_bytes <= o.state_bytes && k.activation_bytes <= o.activation_bytes &&
          k.working_bytes <= o.working_bytes) {
        dominated = true;
        break;
      }
    }
    if (!dominated) kept.push_back(o);
  }
  return kept;
}

}  // namespace

std::vector<StageOption> Profiler::PriceAll(int island, MeshShape shape, const Signature& s) {
  std::vector<StageOption> all;
  for (const IntraStageConfig& c : Configs(cluster_.island(island), shape)) {
    std::optional<StageOption> o = Price(island, shape, c, s);
    if (o && o->max_in_flight >= 1) all.push_back(*o);
  }
  std::sort(all.begin(), all.end(), [](const StageOption& x, const StageOption& y) {
    return std::make_tuple(x.total(), x.grad_sync, x.PeakBytes(1), x.config.tensor_parallel, x.config.zero_stage,
                           static_cast<int>(x.config.recompute)) <
           std::make_tuple(y.total(), y.grad_sync, y.PeakBytes(1), y.config.tensor_parallel, y.config.zero_stage,
                           static_cast<int>(y.config.recompute));
  });
  if (!zero_free_island_keys_.empty()) {
    std::vector<StageOption> zero_free;
    for (const StageOption& o : all) {
      if (o.config.zero_stage == 0) zero_free.push_back(o);
    }
    options_.zero_free_cache->Store(PairKey(zero_free_island_keys_, island, shape, s),
                                    std::make_shared<const std::vector<StageOption>>(ParetoKept(zero_free)));
  }
  return ParetoKept(all);
}

std::string Profiler::PairKey(const std::vector<std::string>& island_keys, int island, MeshShape shape,
                              const Signature& s) const {
  return absl::StrCat(island_keys[island], "|", shape.nodes, "x", shape.gpus_per_node, "|", micro_batch_size_, "|cp",
                      context_parallel_, "|", static_cast<int>(s.embedding), static_cast<int>(s.head), " ", s.phase,
                      " ", s.body, " ", s.first, " ", s.count);
}

const std::vector<StageOption>& Profiler::Options(int island, int shape_index, int first, int count) {
  ++stats_.stage_mesh_lookups;
  const Signature s = MakeSignature(first, count);
  const int id = SignatureOf(first, count);
  std::vector<std::unique_ptr<std::vector<StageOption>>>& row = table_[table_row_[island] + shape_index];
  if (static_cast<int>(row.size()) <= id) row.resize(id + 1);
  if (!row[id]) {
    const MeshShape shape = shapes_[island][shape_index];
    std::string key;
    if (options_.cache != nullptr) {
      key = PairKey(island_keys_, island, shape, s);
      if (ProfileCache::Options cached = options_.cache->Find(key)) {
        ++stats_.cache_hits;
        row[id] = std::make_unique<std::vector<StageOption>>(*cached);
        if (row[id]->empty()) ++stats_.infeasible_pairs;
        return *row[id];
      }
    }
    ++stats_.stage_mesh_pairs;
    row[id] = std::make_unique<std::vector<StageOption>>(PriceAll(island, shape, s));
    if (row[id]->empty()) ++stats_.infeasible_pairs;
    if (options_.cache != nullptr)
      options_.cache->Store(key, std::make_shared<const std::vector<StageOption>>(*row[id]));
  }
  return *row[id];
}

}  // namespace hetsim::planner
