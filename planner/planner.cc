#include "planner/planner.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/spec/defaults.h"
#include "base/status_macros.h"
#include "base/threads.h"
#include "base/units.h"
#include "planner/candidates.h"
#include "planner/plan_writer.h"
#include "proto/layer_count.h"
#include "proto/resolve.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"

namespace hetsim::planner {

absl::StatusOr<PlannerKind> ParsePlannerKind(absl::string_view name) {
  if (name == "hapt") return PlannerKind::kHapt;
  if (name == "tangram") return PlannerKind::kTangram;
  if (name == "megatron") return PlannerKind::kMegatron;
  if (name == "alpa") return PlannerKind::kAlpa;
  return absl::InvalidArgumentError(
      absl::StrFormat("--planner: \"%s\" is not one of hapt, tangram, megatron, alpa", std::string(name)));
}

absl::StatusOr<spec::ContextParallelComm> ParseCpCommType(absl::string_view name) {
  if (name == "p2p") return spec::ContextParallelComm::kRing;
  if (name == "all_gather" || name == "allgather") return spec::ContextParallelComm::kAllGather;
  if (name == "a2a") return spec::ContextParallelComm::kAllToAll;
  return absl::InvalidArgumentError(
      absl::StrFormat("--cp-comm-type: \"%s\" is not p2p, all_gather or a2a", std::string(name)));
}

absl::string_view PlannerName(PlannerKind kind) {
  switch (kind) {
    case PlannerKind::kHapt: return "hapt";
    case PlannerKind::kTangram: return "tangram";
    case PlannerKind::kMegatron: return "megatron";
    case PlannerKind::kAlpa: return "alpa";
  }
  return "?";
}

namespace {

std::optional<PipelineCandidate> PlanWithDp(const PlannerContext& ctx, bool alpa) {
  Profiler& prof = *ctx.profiler;
  const int target = ctx.layers > 0 ? ctx.layers : (alpa ? 8 : 0);
  std::vector<LayerGroup> groups =
      BuildPlannerLayers(prof.model(), target, alpa ? LayerConstruction::kBalanced : LayerConstruction::kStructural);
  SearchOptions so;
  so.schedule = alpa ? hetsim::v1::EAGER_1F1B : hetsim::v1::H_1F1B;
  so.epsilon = ctx.epsilon;
  so.communication_aware = !alpa;
  so.threads = ctx.threads;
  so.t_max_relative_gap = ctx.t_max_relative_gap;
  so.bidirectional_pruning = ctx.bidirectional_pruning;
  const int planner_layers = static_cast<int>(groups.size());
  HaptSearch search(prof, std::move(groups), ctx.microbatches, so);
  SearchResult r = search.Run();
  if (!r.feasible) return std::nullopt;
  PipelineCandidate c;
  c.stages = r.stages;
  c.schedule = so.schedule;
  c.planner_layers = planner_layers;
  c.search = r.stats;
  for (const CandidatePlan& alt : search.evaluated()) c.alternatives.push_back(alt.stages);
  return c;
}

// Why nothing fits: the model's states against the cluster's memory.
absl::Status Infeasible(const sim::workload::ModelCost& model, const ClusterModel& cluster, PlannerKind kind,
                        bool fp32_gradients) {
  const double params = static_cast<double>(model.TotalParamCount());
  const double state_bytes = params * sim::workload::ModelStateBytesPerParam(model.dtype(), fp32_gradients);
  double hbm = 0;
  for (const IslandModel& im : cluster.islands()) hbm += static_cast<double>(im.hbm_bytes) * im.gpus();
  if (state_bytes > hbm) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: no plan fits: the model's %.3g parameters need %.1f GiB of weights, gradients and Adam states "
        "but the cluster has %.1f GiB of HBM in all (%.1f GiB missing before any activation)",
        PlannerName(kind), params, BytesToGib(state_bytes), BytesToGib(hbm), BytesToGib(state_bytes - hbm)));
  }
  return absl::FailedPreconditionError(
      absl::StrFormat("%s: no plan fits: the model's states need %.1f GiB of the cluster's %.1f GiB of HBM, but no "
                      "partition into stages (ZeRO <= 2, recompute, micro-batch sizes up to the limit) fits every GPU "
                      "with the activations of its in-flight microbatches; add GPUs, use a smaller model, a smaller "
                      "micro-batch, or another planner",
                      PlannerName(kind), BytesToGib(state_bytes), BytesToGib(hbm)));
}

// The micro-batch sizes to plan with: the one asked for, or every power of two that divides the
// global batch up to the limit.
absl::StatusOr<std::vector<uint64_t>> MicroBatchSizes(const PlanRequest& request) {
  std::vector<uint64_t> sizes;
  if (request.micro_batch_size > 0) {
    if (request.global_batch_size % request.micro_batch_size != 0) {
      return absl::InvalidArgumentError(absl::StrFormat("--micro-batch: %d does not divide --global-batch %d",
                                                        request.micro_batch_size, request.global_batch_size));
    }
    sizes.push_back(request.micro_batch_size);
    return sizes;
  }
  for (uint64_t b = 1; b <= std::min(request.global_batch_size, request.max_micro_batch_size); b *= 2) {
    if (request.global_batch_size % b == 0) sizes.push_back(b);
  }
  // Tangram as published keeps the microbatch count fixed: the smallest micro-batch only.
  if (request.planner == PlannerKind::kTangram && !request.tangram_joint_microbatch) sizes.resize(1);
  return sizes;
}

// Every (CP degree, micro-batch size) pair, CP-major.
std::vector<std::pair<int, uint64_t>> Pairs(const std::vector<int>& cp_degrees, const std::vector<uint64_t>& sizes) {
  std::vector<std::pair<int, uint64_t>> pairs;
  for (int cp : cp_degrees) {
    for (uint64_t mbs : sizes) pairs.emplace_back(cp, mbs);
  }
  return pairs;
}

// The CP degrees to plan with: the one asked for, or every power of two the sequence splits into.
absl::StatusOr<std::vector<int>> ContextParallelDegrees(const PlanRequest& request) {
  const uint64_t seq = request.model.has_transformer() ? request.model.transformer().seq_length() : 0;
  const auto splits = [&](int cp) { return cp == 1 || (seq > 0 && seq % (2 * static_cast<uint64_t>(cp)) == 0); };
  if (request.context_parallel > 0) {
    if (!splits(request.context_parallel)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--context-parallel: %d needs a transformer model whose seq_length (%d) is a multiple of 2 x %d",
          request.context_parallel, seq, request.context_parallel));
    }
    return std::vector<int>{request.context_parallel};
  }
  std::vector<int> degrees;
  for (int cp = 1; cp <= std::max(1, request.max_context_parallel); cp *= 2) {
    if (splits(cp)) degrees.push_back(cp);
  }
  return degrees;
}

void AddProfilerStats(const ProfilerStats& ps, PlanOutcome& out) {
  out.profile.signatures += ps.signatures;
  out.profile.stage_mesh_pairs += ps.stage_mesh_pairs;
  out.profile.stage_mesh_lookups += ps.stage_mesh_lookups;
  out.profile.infeasible_pairs += ps.infeasible_pairs;
  out.profile.cost_model_calls += ps.cost_model_calls;
  out.profile.cache_hits += ps.cache_hits;
}

template <typename Stats>
void AddSearchStats(const Stats& search, PlanOutcome& out) {
  out.search.candidates += search.candidates;
  out.search.candidates_evaluated += search.candidates_evaluated;
  out.search.dp_runs += search.dp_runs;
  out.search.transitions += search.transitions;
  out.search.index_entries += search.index_entries;
  out.search.pareto_overflow += search.pareto_overflow;
}

// The stages' warm-up counts when the planner chose them, else none (the schedule's own).
std::vector<int> ExplicitWarmups(const std::vector<SearchedStage>& stages, bool explicit_warmups) {
  std::vector<int> warmups;
  if (explicit_warmups) {
    for (const SearchedStage& s : stages) warmups.push_back(s.warmup);
  }
  return warmups;
}

// Distinct alternatives with their predictions (the top-k of `hetsim validate`), at most 64.
void AddAlternatives(const ClusterModel& cluster, const PipelineCandidate& best, int64_t microbatches,
                     const PlanShape& shape, double epsilon, const sim::pipeline::IterationWork& work,
                     PlanOutcome& out) {
  std::vector<std::string> seen;
  for (const std::vector<SearchedStage>& alt : best.alternatives) {
    if (out.alternatives.size() >= 64) break;
    absl::StatusOr<hetsim::v1::Plan> p = WritePlan(cluster, alt, shape);
    if (!p.ok()) continue;
    const std::string bytes = p->SerializeAsString();
    if (std::find(seen.begin(), seen.end(), bytes) != seen.end()) continue;
    absl::StatusOr<Prediction> pred =
        Predict(cluster, alt, microbatches, best.schedule, epsilon, ExplicitWarmups(alt, best.explicit_warmups), work);
    if (!pred.ok()) continue;
    seen.push_back(bytes);
    out.alternatives.push_back(*std::move(p));
    out.alternative_predictions.push_back(*std::move(pred));
  }
}

// The framework settings a plan is priced with (not searched): the TP overlap and its settings.
ProfilerOptions FrameworkProfilerOptions(const PlanRequest& request) {
  ProfilerOptions o;
  o.tp_comm_overlap = request.tp_comm_overlap;
  o.tp_backward_overlap = request.tp_backward_overlap;
  o.tp_comm_overlap_aggregate = request.tp_comm_overlap_aggregate;
  o.grad_reduce_in_fp32 = request.grad_reduce_in_fp32;
  o.cp_comm = request.cp_comm;
  if (request.tp_comm_overlap_config) {
    o.tp_comm_overlap_config = proto::ResolveTpCommOverlapConfig(*request.tp_comm_overlap_config);
  }
  return o;
}

// The plan's note on context parallelism: the degree, those searched, and the exchange it pays.
std::string ContextParallelNote(spec::ContextParallelComm comm, int cp, const std::vector<int>& searched) {
  return absl::StrFormat(
      "context parallelism %d (of %s searched): every stage splits each sequence over %d GPUs "
      "and pays its %s",
      cp, absl::StrJoin(searched, ", "), cp, spec::ContextParallelExchangeName(comm));
}

}  // namespace

absl::StatusOr<PlanOutcome> MakePlan(const PlanRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  if (request.global_batch_size == 0) return absl::InvalidArgumentError("--global-batch: must be > 0");
  if (request.threads < 0 || request.threads > kMaxWorkerThreads) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--threads: %d is outside [0, %d] (0 = all cores)", request.threads, kMaxWorkerThreads));
  }
  PlanOutcome out;
  out.planner = request.planner;
  out.model = request.planner == PlannerKind::kHapt ? RefineGranularity(request.model, request.layers) : request.model;
  const sim::workload::ModelCost cost = sim::workload::ModelCost::Create(proto::ResolveModel(out.model, "model"));
  HETSIM_ASSIGN_OR_RETURN(std::unique_ptr<ClusterModel> cluster, ClusterModel::Create(request.cluster, cost.dtype()));
  const int threads =
      request.threads > 0 ? request.threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));

  HETSIM_ASSIGN_OR_RETURN(const std::vector<uint64_t> sizes, MicroBatchSizes(request));
  HETSIM_ASSIGN_OR_RETURN(const std::vector<int> cp_degrees, ContextParallelDegrees(request));

  ProfilerOptions profiler_options = FrameworkProfilerOptions(request);
  if (request.profile_cache != nullptr) {
    profiler_options.cache = request.profile_cache;
    // The island keys carry the profiler options; the scope is the model the profiles are of.
    request.profile_cache->Bind(out.model.SerializeAsString());
  }

  std::optional<PipelineCandidate> best;
  std::optional<Prediction> best_prediction;
  uint64_t best_mbs = 0;
  int best_cp = 1;
  for (const auto& [cp, mbs] : Pairs(cp_degrees, sizes)) {
    Profiler profiler(cost, *cluster, mbs, profiler_options, cp);
    PlannerContext ctx{&profiler,
                       spec::MicrobatchCount(request.global_batch_size, mbs),
                       request.layers,
                       threads,
                       request.epsilon,
                       request.t_max_relative_gap,
                       request.bidirectional_pruning,
                       request.tangram_overlap_aware};
    std::optional<PipelineCandidate> c;
    switch (request.planner) {
      case PlannerKind::kHapt: c = PlanWithDp(ctx, false); break;
      case PlannerKind::kAlpa: c = PlanWithDp(ctx, true); break;
      case PlannerKind::kMegatron: c = PlanMegatron(ctx); break;
      case PlannerKind::kTangram: c = PlanTangram(ctx); break;
    }
    AddProfilerStats(profiler.stats(), out);
    if (!c) continue;
    AddSearchStats(c->search, out);
    HETSIM_ASSIGN_OR_RETURN(Prediction p, Predict(*cluster, c->stages, ctx.microbatches, c->schedule, request.epsilon,
                                                  ExplicitWarmups(c->stages, c->explicit_warmups),
                                                  WorkOf(cost, request.global_batch_size)));
    if (!best_prediction || p.iteration < best_prediction->iteration) {
      best = std::move(c);
      best_prediction = p;
      best_mbs = mbs;
      best_cp = cp;
    }
  }
  if (!best) return Infeasible(cost, *cluster, request.planner, request.grad_reduce_in_fp32);

  PlanShape shape;
  shape.name =
      request.name.empty() ? absl::StrFormat("%s-%s", PlannerName(request.planner), out.model.name()) : request.name;
  shape.model = out.model;
  // A refined granularity is not what the model file says: the plan carries the model inline.
  const bool refined = out.model.SerializeAsString() != request.model.SerializeAsString();
  shape.model_path = refined ? "" : request.model_path;
  shape.global_batch_size = request.global_batch_size;
  shape.micro_batch_size = best_mbs;
  shape.context_parallel = best_cp;
  shape.tp_comm_overlap = request.tp_comm_overlap;
  shape.tp_backward_overlap = request.tp_backward_overlap;
  shape.tp_comm_overlap_aggregate = request.tp_comm_overlap_aggregate;
  shape.tp_comm_overlap_config = request.tp_comm_overlap_config;
  shape.grad_reduce_in_fp32 = request.grad_reduce_in_fp32;
  shape.cp_comm = request.cp_comm;
  shape.schedule = best->schedule;
  shape.epsilon = request.epsilon;
  shape.explicit_warmups = best->explicit_warmups;
  absl::StatusOr<hetsim::v1::Plan> plan = WritePlan(*cluster, best->stages, shape);
  if (!plan.ok()) return plan.status();
  out.plan = *std::move(plan);
  AddAlternatives(*cluster, *best, best_prediction->microbatches, shape, request.epsilon,
                  WorkOf(cost, request.global_batch_size), out);
  out.planner_layers = best->planner_layers;
  out.prediction = *best_prediction;
  out.notes = best->notes;
  if (cp_degrees.size() > 1 || best_cp > 1) {
    out.notes.push_back(ContextParallelNote(request.cp_comm, best_cp, cp_degrees));
  }
  if (refined) {
    out.notes.push_back(
        absl::StrFormat("layer sequence refined to SUBLAYER granularity (%d layers) for %d planner layers",
                        proto::LayerCount(out.model), request.layers));
  }
  out.planning_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace hetsim::planner
