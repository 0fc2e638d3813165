#include "planner/planner.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "base/counted.h"
#include "base/spec/defaults.h"
#include "base/spec/dtype.h"
#include "base/status_macros.h"
#include "base/threads.h"
#include "base/units.h"
#include "base/wall_limit.h"
#include "planner/candidates_internal.h"
#include "planner/expert_layouts_internal.h"
#include "planner/mixed_replicas.h"
#include "planner/pipelines.h"
#include "planner/plan_writer.h"
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

constexpr absl::string_view kSearching = "searching plans";

std::optional<PipelineCandidate> PlanWithDp(const PlannerContext& ctx, bool alpa) {
  Profiler& prof = *ctx.profiler;
  const int target = ctx.layers > 0 ? ctx.layers : (alpa ? 8 : 0);
  std::vector<LayerGroup> groups =
      BuildPlannerLayers(prof.model(), target, alpa ? LayerConstruction::kBalanced : LayerConstruction::kStructural);
  SearchOptions so;
  so.schedule = alpa ? spec::ScheduleKind::kEager1F1B : spec::ScheduleKind::kH1F1B;
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
absl::Status Infeasible(const workload::ModelCost& model, const ClusterModel& cluster, PlannerKind kind,
                        bool fp32_gradients) {
  const double params = static_cast<double>(model.TotalParamCount());
  const double state_bytes = params * workload::ModelStateBytesPerParam(model.dtype(), fp32_gradients);
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
  const uint64_t seq = request.model.transformer ? request.model.transformer->seq_length : 0;
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

// The stages' warm-up counts when the planner chose them, else none (the schedule's own).
std::vector<int> ExplicitWarmups(const std::vector<SearchedStage>& stages, bool explicit_warmups) {
  std::vector<int> warmups;
  if (explicit_warmups) {
    for (const SearchedStage& s : stages) warmups.push_back(s.warmup);
  }
  return warmups;
}

// Whether two plans of one search have the same stages (their other fields are the search's).
bool SameStages(const spec::PlanSpec& a, const spec::PlanSpec& b) {
  const auto fields = [](const spec::StageSpec& s) {
    return std::tie(s.first_layer, s.num_layers, s.mesh.island, s.mesh.first_node, s.mesh.node_count, s.mesh.first_gpu,
                    s.mesh.gpus_per_node, s.tensor_parallel, s.data_parallel, s.expert_parallel,
                    s.expert_tensor_parallel, s.zero_stage, s.recompute, s.recompute_num_layers, s.sequence_parallel,
                    s.warmup_forwards);
  };
  return std::equal(a.stages.begin(), a.stages.end(), b.stages.begin(), b.stages.end(),
                    [&](const spec::StageSpec& x, const spec::StageSpec& y) { return fields(x) == fields(y); });
}

// Distinct alternatives with their predictions (the top-k of `hetsim validate`), at most 64.
void AddAlternatives(const ClusterModel& cluster, const PipelineCandidate& best, const spec::PlanSpec& shape,
                     const pipeline::IterationWork& work, PlanOutcome& out) {
  for (const std::vector<SearchedStage>& alt : best.alternatives) {
    if (out.alternatives.size() >= 64) break;
    absl::StatusOr<spec::PlanSpec> p = WritePlan(cluster, alt, shape, best.explicit_warmups);
    if (!p.ok()) continue;
    const auto same = [&](const spec::PlanSpec& seen) { return SameStages(seen, *p); };
    if (std::any_of(out.alternatives.begin(), out.alternatives.end(), same)) continue;
    absl::StatusOr<Prediction> pred = Predict(cluster, alt, shape.microbatches, best.schedule, shape.h1f1b_epsilon,
                                              ExplicitWarmups(alt, best.explicit_warmups), work);
    if (!pred.ok()) continue;
    out.alternatives.push_back(*std::move(p));
    out.alternative_predictions.push_back(*std::move(pred));
  }
}

// The settings of every plan the request prices and writes that no search changes: the batch, the
// framework's switches (spec::CostSwitches), H-1F1B's epsilon.
spec::PlanSpec FrameworkSettings(const PlanRequest& request) {
  spec::PlanSpec plan;
  plan.global_batch_size = request.global_batch_size;
  static_cast<spec::CostSwitches&>(plan) = request;
  plan.h1f1b_epsilon = request.epsilon;
  return plan;
}

// The plan's note on context parallelism: the degree, those searched, and the exchange it pays.
std::string ContextParallelNote(spec::ContextParallelComm comm, int cp, const std::vector<int>& searched) {
  return absl::StrFormat(
      "context parallelism %d (of %s searched): every stage splits each sequence over %d GPUs "
      "and pays its %s",
      cp, absl::StrJoin(searched, ", "), cp, spec::ContextParallelExchangeName(comm));
}

// The note on context parallelism of a plan of pipelines: each pipeline's degree, and those searched.
std::string ContextParallelPipelinesNote(const spec::PlanSpec& plan, const std::vector<int>& searched) {
  std::vector<std::string> degrees;
  for (const spec::PipelineSpec& p : plan.pipelines) degrees.push_back(absl::StrCat(p.name, " ", p.context_parallel));
  return absl::StrFormat("context parallelism per pipeline (of %s searched): %s", absl::StrJoin(searched, ", "),
                         absl::StrJoin(degrees, ", "));
}

// The best candidate over every (CP degree, micro-batch size) pair, by predicted iteration time, with
// the point it was found at.
struct BestCandidate : spec::MicroBatchPoint {
  std::optional<PipelineCandidate> candidate;
  std::optional<Prediction> prediction;
};

// `zero_free`: where the profiles keep their ZeRO-free options for the pipelines family (nullptr: nowhere).
absl::StatusOr<BestCandidate> SearchPairs(const PlanRequest& request, const workload::ModelCost& cost,
                                          const ClusterModel& cluster, const std::vector<int>& cp_degrees,
                                          const std::vector<uint64_t>& sizes, ProfileCache* zero_free,
                                          PlanOutcome& out) {
  const int threads =
      request.threads > 0 ? request.threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  ProfilerOptions profiler_options = FrameworkOptionsOf(FrameworkSettings(request));
  profiler_options.zero_free_cache = zero_free;
  if (request.profile_cache != nullptr) {
    HETSIM_CHECK(!request.profile_scope.empty(), "a profile cache needs the model's scope (PlanRequest.profile_scope)");
    profiler_options.cache = request.profile_cache;
    // The island keys carry the profiler options; the scope is the model the profiles are of.
    request.profile_cache->Bind(absl::StrCat(request.profile_scope, out.refined ? "\nSUBLAYER" : ""));
  }
  BestCandidate best;
  for (const auto& [cp, mbs] : Pairs(cp_degrees, sizes)) {
    HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check(kSearching));
    Profiler profiler(cost, cluster, mbs, profiler_options, cp);
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
    out.profile += profiler.stats();
    if (!c) continue;
    out.search += c->search;
    HETSIM_ASSIGN_OR_RETURN(Prediction p, Predict(cluster, c->stages, ctx.microbatches, c->schedule, request.epsilon,
                                                  ExplicitWarmups(c->stages, c->explicit_warmups),
                                                  WorkOf(cost, request.global_batch_size)));
    if (!best.prediction || p.iteration < best.prediction->iteration) {
      best = {{mbs, cp}, std::move(c), p};
    }
  }
  return best;
}

// The settings of the plan the planner writes (its stages come from the search).
spec::PlanSpec PlanShapeOf(const PlanRequest& request, const PlanOutcome& out, const BestCandidate& best) {
  spec::PlanSpec shape = FrameworkSettings(request);
  shape.name =
      request.name.empty() ? absl::StrFormat("%s-%s", PlannerName(request.planner), out.model.name) : request.name;
  shape.micro_batch_size = best.micro_batch_size;
  shape.microbatches = best.prediction->microbatches;
  shape.context_parallel = best.context_parallel;
  shape.schedule = best.candidate->schedule;
  shape.virtual_stages = best.candidate->virtual_stages;
  shape.zero3_prefetch = best.candidate->zero3_prefetch;
  return shape;
}

// On a cluster of more than one GPU type (issue 39), why the plan looks as it does: each island's
// share of the peak FLOP/s beside its share of the layers and its GPUs in the plan, and what the search
// does not consider. Empty on a cluster of one GPU type.
std::vector<std::string> MixedClusterNotes(const spec::ClusterSpec& cluster, const spec::PlanSpec& plan,
                                           int layer_count, spec::DType dtype) {
  std::vector<std::string> types;
  double peak = 0;
  for (const spec::IslandSpec& is : cluster.islands) {
    if (std::find(types.begin(), types.end(), is.gpu.name) == types.end()) types.push_back(is.gpu.name);
    peak += static_cast<double>(is.gpus()) * is.gpu.peak(dtype);
  }
  if (types.size() < 2 || peak <= 0) return {};
  std::vector<std::string> notes;
  for (const spec::IslandSpec& is : cluster.islands) {
    int layers = 0, stages = 0, first = -1, last = -1;
    int64_t gpus = 0;
    for (const spec::StageSpec& st : plan.stages) {
      bool here = false;
      for (const spec::ReplicaGroupSpec& g : st.ReplicaGroups(plan.micro_batch_size)) {
        if (g.mesh.island != is.name) continue;
        here = true;
        gpus += int64_t{g.mesh.node_count} * g.mesh.gpus_per_node;
      }
      if (!here) continue;
      ++stages;
      layers += st.num_layers;
      if (first < 0) first = st.first_layer;
      last = st.first_layer + st.num_layers - 1;
    }
    const std::string island = absl::StrFormat(
        "island %s (%d x %s, %.0f%% of the cluster's peak %s FLOP/s)", is.name, is.gpus(), is.gpu.short_name(),
        100 * static_cast<double>(is.gpus()) * is.gpu.peak(dtype) / peak, spec::DTypeName(dtype));
    if (stages == 0) {
      notes.push_back(absl::StrCat(island, ": unused (no stage on it lowered the predicted iteration)"));
      continue;
    }
    notes.push_back(absl::StrFormat("%s: %s on %d GPUs, layers %d-%d (%.0f%% of the layers)", island,
                                    Counted(stages, "stage"), gpus, first, last,
                                    100.0 * layers / std::max(1, layer_count)));
  }
  return notes;
}

// Whether the cluster mixes GPU types (where the mixed-replicas family is searched).
bool MixesGpuTypes(const spec::ClusterSpec& cluster) {
  for (const spec::IslandSpec& is : cluster.islands) {
    if (is.gpu.name != cluster.islands.front().gpu.name) return true;
  }
  return false;
}

// HAPT's mixed-replicas family (planner/mixed_replicas.h) over the micro-batch sizes, at CP 1, on a
// cluster of more than one GPU type (an MoE model's groups each with their own expert layout): the best
// by predicted iteration.
BestCandidate SearchMixed(const PlanRequest& request, const workload::ModelCost& cost, const ClusterModel& cluster,
                          const std::vector<int>& cp_degrees, const std::vector<uint64_t>& sizes) {
  BestCandidate best;
  const bool searched = request.search_mixed_replicas && request.planner == PlannerKind::kHapt &&
                        MixesGpuTypes(request.cluster) &&
                        std::find(cp_degrees.begin(), cp_degrees.end(), 1) != cp_degrees.end();
  if (!searched) return best;
  for (uint64_t mbs : sizes) {
    if (WallLimitPassedNow()) break;  // MakePlan reports it
    Profiler profiler(cost, cluster, mbs, FrameworkOptionsOf(FrameworkSettings(request)), 1);
    const PlannerContext ctx{
        &profiler, spec::MicrobatchCount(request.global_batch_size, mbs), request.layers, 1, request.epsilon, 0, true,
        true};
    std::optional<PipelineCandidate> c = PlanMixedReplicas(ctx);
    if (!c) continue;
    absl::StatusOr<Prediction> p = Predict(cluster, c->stages, ctx.microbatches, c->schedule, request.epsilon, {},
                                           WorkOf(cost, request.global_batch_size), c->virtual_stages);
    if (p.ok() && (!best.prediction || p->iteration < best.prediction->iteration)) best = {{mbs, 1}, std::move(c), *p};
  }
  return best;
}

// The samples each replica of every island computes in a mixed stage, "a100 8, l40s 4".
std::string SharesOf(const spec::StageSpec& st) {
  std::vector<std::string> parts;
  for (const spec::ReplicaGroupSpec& g : st.replica_groups) {
    parts.push_back(absl::StrFormat("%s TP %d x %s of %s", g.mesh.island, g.tensor_parallel,
                                    Counted(g.data_parallel, "replica"), Counted(g.micro_batch_share, "sample")));
    // MoE: the group's own expert layout (the planner writes it only for an MoE model).
    if (g.expert_parallel > 0) {
      parts.back() += absl::StrFormat(" at EP %d x ETP %d", g.expert_parallel, std::max(1, g.expert_tensor_parallel));
    }
  }
  return absl::StrJoin(parts, " + ");
}

// ", interleaved 1F1B x 2 chunks", ", ZeRO-3 with prefetch" where the family's plan takes them.
std::string MixedScheduleOf(const spec::PlanSpec& plan) {
  std::string out;
  if (plan.virtual_stages > 1) absl::StrAppendFormat(&out, ", interleaved 1F1B x %d chunks", plan.virtual_stages);
  const bool zero3 =
      std::any_of(plan.stages.begin(), plan.stages.end(), [](const spec::StageSpec& st) { return st.zero_stage >= 3; });
  if (zero3) absl::StrAppend(&out, plan.zero3_prefetch ? ", ZeRO-3 with prefetch" : ", ZeRO-3");
  return out;
}

// Why the plan is or is not made of mixed replica groups: the two families' predictions side by side.
std::string MixedChoiceNote(PlannerKind kind, bool searched, const BestCandidate& one_island,
                            const BestCandidate& mixed, const spec::PlanSpec& mixed_plan, bool mixed_chosen) {
  if (kind != PlannerKind::kHapt || !searched) {
    return absl::StrFormat(
        "mixed cluster: every stage of the %s plan stays inside one island; `--planner hapt` without "
        "--no-mixed-replicas also searches mixed replica groups (Stage.replica_groups), and without --no-pipelines "
        "pipelines of different shapes (Plan.pipelines)",
        PlannerName(kind));
  }
  if (!mixed.prediction) {
    return "mixed replica groups searched (every island cut into 1-8 equal slices, stage i on slice i of each, "
           "shares of the micro-batch by measured speed, ZeRO-3 where memory needs it, interleaved chunks): none fits "
           "or the model or CP rules them out; every stage stays inside one island";
  }
  std::string what = absl::StrFormat("%s of mixed replica groups (stage 0: %s; micro-batch %d%s)",
                                     Counted(mixed_plan.stages.size(), "stage"), SharesOf(mixed_plan.stages.front()),
                                     mixed.micro_batch_size, MixedScheduleOf(mixed_plan));
  // What the family's search took beyond ETP 1, ZeRO 0-2 and 1F1B, and against what (mixed_search.h).
  if (!mixed.candidate->why.empty()) absl::StrAppend(&what, " [", absl::StrJoin(mixed.candidate->why, "; "), "]");
  const double mixed_ms = TimeToMilliseconds(mixed.prediction->iteration);
  if (!one_island.prediction) {
    return absl::StrFormat("chosen: %s, predicted %.3f ms; no plan keeping every stage inside one island fits", what,
                           mixed_ms);
  }
  const double island_ms = TimeToMilliseconds(one_island.prediction->iteration);
  if (mixed_chosen) {
    return absl::StrFormat(
        "chosen: %s, predicted %.3f ms against %.3f ms for the best plan keeping every stage inside one island "
        "(HAPT's DP, %d stages; %.1f%% faster)",
        what, mixed_ms, island_ms, one_island.candidate->stages.size(), 100 * (island_ms - mixed_ms) / island_ms);
  }
  return absl::StrFormat(
      "mixed replica groups searched: the best, %s, predicted %.3f ms, is %.1f%% slower than this plan's %.3f ms "
      "(every stage inside one island)",
      what, mixed_ms, 100 * (mixed_ms - island_ms) / island_ms, island_ms);
}

// The pipelines-of-different-shapes family (planner/pipelines.h) over the micro-batch sizes, each GPU
// type's pipelines at the CP degrees HAPT's rule allows (ContextParallelDegrees), on a cluster of more
// than one GPU type: the best by predicted iteration.
bool PipelinesSearched(const PlanRequest& request) {
  return request.search_pipelines && request.planner == PlannerKind::kHapt && MixesGpuTypes(request.cluster);
}

// The family with each GPU type's stages at its expert layout (`layouts`; none for a dense model).
// `profiles`: the main search's ZeRO-free profiles (SearchPairs' `zero_free`); `to_beat`: the other
// families' best predicted iteration (0: none); `type_plans`: each type's plans of the request so far.
std::optional<PipelinesCandidate> SearchPipelinesAt(const PlanRequest& request, const workload::ModelCost& cost,
                                                    const ClusterModel& cluster, const std::vector<int>& cp_degrees,
                                                    const std::vector<uint64_t>& sizes, ProfileCache& profiles,
                                                    Time to_beat, const TypeExpertLayouts& layouts,
                                                    TypePlans& type_plans, PlanOutcome& out) {
  const ProfilerOptions options = FrameworkOptionsOf(FrameworkSettings(request));
  const int threads =
      request.threads > 0 ? request.threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::optional<PipelinesCandidate> best;
  std::vector<PipelinesCandidate> by_size;
  std::optional<PipelinesContext> any;
  for (uint64_t mbs : sizes) {
    if (WallLimitPassedNow()) return std::nullopt;  // MakePlan reports it
    const PipelinesContext ctx{.model = &cost,
                               .cluster = &request.cluster,
                               .cluster_model = &cluster,
                               .options = options,
                               .global_batch_size = request.global_batch_size,
                               .point = {.micro_batch_size = mbs},
                               .epsilon = request.epsilon,
                               .threads = threads,
                               .profiles = &profiles,
                               .to_beat = to_beat,
                               .context_parallel_degrees = cp_degrees,
                               .expert_layouts = layouts,
                               .type_plans = &type_plans};
    std::optional<PipelinesCandidate> c = PlanPipelinesOfTypes(ctx);
    if (!c) continue;
    out.search += c->search;
    any = ctx;
    if (!best || c->iteration < best->iteration) best = *c;
    by_size.push_back(*std::move(c));
  }
  // Each GPU type at the micro-batch size it runs fastest at, when the sizes' bests differ.
  if (any && by_size.size() > 1) {
    std::optional<PipelinesCandidate> mixed = MixMicroBatchSizes(*any, by_size);
    if (mixed && mixed->iteration < best->iteration) best = std::move(mixed);
  }
  // The distributed optimizer per layer range, kept when it prices faster (its step over each range's
  // shard; the request's ZeRO search off: not tried).
  if (best && any && any->options.search_zero) {
    std::optional<PipelinesCandidate> zero = WithZeroOne(*any, *best);
    if (zero && zero->iteration < best->iteration) {
      zero->zero_free = best->iteration;
      best = std::move(zero);
    }
  }
  return best;
}

// The family (SearchPipelinesAt); for an MoE model each GPU type's expert layout searched
// (SearchExpertLayouts, planner/expert_layouts_internal.h), every type's DP run once per layout of its own.
std::optional<PipelinesCandidate> SearchPipelines(const PlanRequest& request, const workload::ModelCost& cost,
                                                  const ClusterModel& cluster, const std::vector<int>& cp_degrees,
                                                  const std::vector<uint64_t>& sizes, ProfileCache& profiles,
                                                  Time to_beat, PlanOutcome& out) {
  if (!PipelinesSearched(request)) return std::nullopt;
  std::vector<TypeNodes> types;
  for (const spec::IslandSpec& is : request.cluster.islands) {
    auto at = std::find_if(types.begin(), types.end(), [&](const TypeNodes& t) { return t.gpu_type == is.gpu.name; });
    if (at == types.end()) at = types.insert(types.end(), TypeNodes{.gpu_type = is.gpu.name});
    at->gpus_per_node = std::max(at->gpus_per_node, static_cast<int>(is.node.gpus_per_node));
  }
  TypePlans type_plans;
  return SearchExpertLayouts(cost, types, [&](const TypeExpertLayouts& layouts) -> std::optional<PipelinesCandidate> {
    if (WallLimitPassedNow()) return std::nullopt;  // MakePlan reports it
    return SearchPipelinesAt(request, cost, cluster, cp_degrees, sizes, profiles, to_beat, layouts, type_plans, out);
  });
}

// The plan's settings for a plan of pipelines (its pipelines come from the search).
spec::PlanSpec PipelinesShape(const PlanRequest& request, const PlanOutcome& out) {
  spec::PlanSpec shape = FrameworkSettings(request);
  shape.name =
      request.name.empty() ? absl::StrFormat("%s-%s", PlannerName(request.planner), out.model.name) : request.name;
  shape.schedule = spec::ScheduleKind::kH1F1B;
  return shape;
}

// "rtx4090 4 stages, 88 samples (ideal 87.6)", GPU type after GPU type; a type of k identical pipelines
// "rtx4090 4 x 4 stages, 96 samples (ideal 95.3)", its copies' samples added; ", micro-batch b" after
// each type when the types' micro-batch sizes differ.
std::string PipelinesOf(const PipelinesCandidate& c) {
  std::vector<std::string> parts;
  const bool mixed_sizes = std::any_of(c.pipelines.begin(), c.pipelines.end(), [&](const PipelineOfType& p) {
    return p.micro_batch_size != c.pipelines.front().micro_batch_size;
  });
  for (size_t p = 0; p < c.pipelines.size();) {
    const PipelineOfType& first = c.pipelines[p];
    size_t copies = 0;
    uint64_t samples = 0;
    double ideal = 0;
    for (; p < c.pipelines.size() && c.pipelines[p].gpu_type == first.gpu_type; ++p, ++copies) {
      samples += c.pipelines[p].batch_share;
      ideal += c.pipelines[p].ideal_share;
    }
    const size_t stages = first.candidate.stages.size();
    parts.push_back(absl::StrFormat(
        "%s %s%s%s, %d samples (ideal %.1f)%s", first.gpu_type, copies > 1 ? absl::StrCat(copies, " x ") : "",
        Counted(stages, "stage"), first.context_parallel > 1 ? absl::StrCat(" at CP ", first.context_parallel) : "",
        samples, ideal, mixed_sizes ? absl::StrCat(", micro-batch ", first.micro_batch_size) : ""));
  }
  std::string out = absl::StrJoin(parts, "; ");
  if (c.zero_stage > 0 && c.zero_free) {
    absl::StrAppendFormat(&out, "; ZeRO-%d per layer range, %.3f ms without", c.zero_stage,
                          TimeToMilliseconds(*c.zero_free));
  }
  // Why a type was planned with ZeRO (ZeRO-2 moves the bytes and steps the shards of ZeRO-1 with less
  // memory, so HAPT's DP keeps it over ZeRO-1).
  std::vector<std::string> why;
  for (const PipelineOfType& p : c.pipelines) {
    if (!p.zero_why.empty() && std::find(why.begin(), why.end(), p.zero_why) == why.end()) why.push_back(p.zero_why);
  }
  if (c.zero_stage > 0 && !why.empty()) {
    absl::StrAppendFormat(&out, "; ZeRO-%d per layer range: %s", c.zero_stage, absl::StrJoin(why, ", "));
  }
  if (c.below_zero_three) {
    absl::StrAppendFormat(&out, ", %.3f ms at ZeRO-2 at most", TimeToMilliseconds(*c.below_zero_three));
  }
  std::vector<std::string> cp_why;
  for (const PipelineOfType& p : c.pipelines) {
    if (!p.cp_why.empty() && std::find(cp_why.begin(), cp_why.end(), p.cp_why) == cp_why.end())
      cp_why.push_back(p.cp_why);
  }
  if (!cp_why.empty()) absl::StrAppendFormat(&out, "; CP per pipeline: %s", absl::StrJoin(cp_why, ", "));
  if (!c.expert_why.empty()) absl::StrAppendFormat(&out, "; %s", c.expert_why);
  if (c.one_size) {
    absl::StrAppendFormat(&out, "; micro-batch sizes per GPU type, %.3f ms at one size (micro-batch %d)%s",
                          TimeToMilliseconds(*c.one_size), c.one_size_micro_batch,
                          c.mix_why.empty() ? "" : absl::StrCat(": ", c.mix_why));
  }
  if (c.before_replan) {
    absl::StrAppendFormat(&out, "; planned again at the plan's own range groups, %.3f ms before",
                          TimeToMilliseconds(*c.before_replan));
  }
  return out;
}

// Which candidate families were compared on a mixed cluster, their predicted iterations, and by how much
// the chosen one beats the next best.
std::string FamiliesNote(const BestCandidate& one_island, const BestCandidate& mixed,
                         const std::optional<PipelinesCandidate>& pipes) {
  struct Family {
    std::string what;
    Time iteration;
  };
  std::vector<Family> families;
  if (one_island.prediction) {
    families.push_back(
        {absl::StrFormat("one pipeline (HAPT's DP, %s)", Counted(one_island.candidate->stages.size(), "stage")),
         one_island.prediction->iteration});
  }
  if (mixed.prediction) {
    families.push_back({absl::StrFormat("mixed replica groups (%s)", Counted(mixed.candidate->stages.size(), "stage")),
                        mixed.prediction->iteration});
  }
  if (pipes) {
    families.push_back({absl::StrCat("pipelines per GPU type (", PipelinesOf(*pipes), ")"), pipes->iteration});
    if (pipes->one_per_type && *pipes->one_per_type > 0) {
      families.push_back({"one pipeline per GPU type", *pipes->one_per_type});
    }
  }
  std::stable_sort(families.begin(), families.end(),
                   [](const Family& a, const Family& b) { return a.iteration < b.iteration; });
  std::vector<std::string> compared;
  for (const Family& f : families) {
    compared.push_back(absl::StrFormat("%s %.3f ms", f.what, TimeToMilliseconds(f.iteration)));
  }
  std::string note =
      absl::StrCat("candidate families compared by predicted iteration: ", absl::StrJoin(compared, ", "));
  if (families.size() > 1) {
    const double chosen = TimeToMilliseconds(families[0].iteration), next = TimeToMilliseconds(families[1].iteration);
    absl::StrAppendFormat(&note, "; the first wins by %.1f%%", 100 * (next - chosen) / next);
  }
  return note;
}

// The plan's stages, every pipeline's in turn (what the per-island notes read).
spec::PlanSpec StagesOfPipelines(const spec::PlanSpec& plan) {
  spec::PlanSpec flat = plan;
  for (const spec::PipelineSpec& p : plan.pipelines)
    flat.stages.insert(flat.stages.end(), p.stages.begin(), p.stages.end());
  return flat;
}

}  // namespace

absl::StatusOr<PlanOutcome> MakePlan(const PlanRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  HETSIM_RETURN_IF_ERROR(ValidateMaxWallSeconds(request.max_wall_seconds, "--max-wall-seconds"));
  const WallLimit own_limit(request.max_wall_seconds, start);
  std::optional<WallLimitScope> wall_scope;  // none: the caller's limit holds (run's re-plan)
  if (own_limit.limited()) wall_scope.emplace(own_limit);
  if (request.global_batch_size == 0) return absl::InvalidArgumentError("--global-batch: must be > 0");
  if (request.threads < 0 || request.threads > kMaxWorkerThreads) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--threads: %d is outside [0, %d] (0 = all cores)", request.threads, kMaxWorkerThreads));
  }
  PlanOutcome out;
  out.planner = request.planner;
  out.model = request.planner == PlannerKind::kHapt ? RefineGranularity(request.model, request.layers) : request.model;
  out.refined = out.model.transformer && out.model.transformer->granularity != request.model.transformer->granularity;
  const workload::ModelCost cost = workload::ModelCost::Create(out.model);
  HETSIM_ASSIGN_OR_RETURN(std::unique_ptr<ClusterModel> cluster, ClusterModel::Create(request.cluster, cost.dtype()));

  HETSIM_ASSIGN_OR_RETURN(const std::vector<uint64_t> sizes, MicroBatchSizes(request));
  HETSIM_ASSIGN_OR_RETURN(const std::vector<int> cp_degrees, ContextParallelDegrees(request));
  // The pipelines family plans each GPU type's islands without ZeRO: the main search leaves it those
  // profiles rather than it pricing them again (planner/pipelines.h).
  ProfileCache zero_free;
  ProfileCache* zero_free_out = PipelinesSearched(request) ? &zero_free : nullptr;
  HETSIM_ASSIGN_OR_RETURN(const BestCandidate one_island,
                          SearchPairs(request, cost, *cluster, cp_degrees, sizes, zero_free_out, out));
  const BestCandidate mixed = SearchMixed(request, cost, *cluster, cp_degrees, sizes);
  HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check(kSearching));
  const bool mixed_chosen =
      mixed.candidate && (!one_island.prediction || mixed.prediction->iteration < one_island.prediction->iteration);
  const BestCandidate& best = mixed_chosen ? mixed : one_island;
  const std::optional<PipelinesCandidate> pipes =
      SearchPipelines(request, cost, *cluster, cp_degrees, sizes, zero_free,
                      best.prediction ? best.prediction->iteration : Time(), out);
  HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check(kSearching));
  const bool pipelines_chosen = pipes && (!best.prediction || pipes->iteration < best.prediction->iteration);
  if (!best.candidate && !pipelines_chosen) {
    return Infeasible(cost, *cluster, request.planner, request.grad_reduce_in_fp32);
  }

  if (pipelines_chosen) {
    HETSIM_ASSIGN_OR_RETURN(out.plan, WritePipelinesPlan(*pipes, PipelinesShape(request, out)));
  } else {
    HETSIM_ASSIGN_OR_RETURN(out.plan, WritePlan(*cluster, best.candidate->stages, PlanShapeOf(request, out, best),
                                                best.candidate->explicit_warmups));
  }
  spec::PlanSpec mixed_plan;
  if (mixed.candidate) {
    HETSIM_ASSIGN_OR_RETURN(mixed_plan, WritePlan(*cluster, mixed.candidate->stages, PlanShapeOf(request, out, mixed),
                                                  /*explicit_warmups=*/false));
  }
  if (mixed_chosen && !pipelines_chosen) {
    out.alternatives.push_back(out.plan);
    out.alternative_predictions.push_back(*mixed.prediction);
  }
  if (one_island.candidate) {
    AddAlternatives(*cluster, *one_island.candidate, PlanShapeOf(request, out, one_island),
                    WorkOf(cost, request.global_batch_size), out);
  }
  if (pipelines_chosen) {
    out.planner_layers = pipes->pipelines.front().candidate.planner_layers;
    out.prediction = PipelinesPrediction(*pipes, WorkOf(cost, request.global_batch_size));
  } else {
    out.planner_layers = best.candidate->planner_layers;
    out.prediction = *best.prediction;
    out.notes = best.candidate->notes;
  }
  if (pipelines_chosen && (cp_degrees.size() > 1 || cp_degrees.front() > 1)) {
    out.notes.push_back(ContextParallelPipelinesNote(out.plan, cp_degrees));
  } else if (!pipelines_chosen && (cp_degrees.size() > 1 || best.context_parallel > 1)) {
    out.notes.push_back(ContextParallelNote(request.cp_comm, best.context_parallel, cp_degrees));
  }
  for (std::string& n :
       MixedClusterNotes(request.cluster, StagesOfPipelines(out.plan), cost.num_layers(), cost.dtype())) {
    out.notes.push_back(std::move(n));
  }
  if (MixesGpuTypes(request.cluster)) {
    if (!pipelines_chosen) {
      out.notes.push_back(
          MixedChoiceNote(request.planner, request.search_mixed_replicas, one_island, mixed, mixed_plan, mixed_chosen));
    }
    if (request.planner == PlannerKind::kHapt) out.notes.push_back(FamiliesNote(one_island, mixed, pipes));
  }
  if (out.refined) {
    out.notes.push_back(
        absl::StrFormat("layer sequence refined to SUBLAYER granularity (%d layers) for %d planner layers",
                        cost.num_layers(), request.layers));
  }
  out.planning_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace hetsim::planner
