#include "planner/pipelines.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/check.h"
#include "base/spec/grad_buckets.h"
#include "base/status_macros.h"
#include "base/units.h"
#include "planner/hapt_search_internal.h"
#include "planner/layers_internal.h"
#include "planner/mixed_replicas.h"
#include "planner/plan_writer.h"
#include "planner/shared_links.h"
#include "sim/collectives/algorithms.h"
#include "sim/collectives/layout.h"
#include "sim/collectives/primitives.h"
#include "sim/workload/optimizer_step.h"
#include "sim/workload/stage_cost.h"
#include "sim/workload/tied_params.h"

namespace hetsim::planner {

std::optional<spec::ClusterSpec> ClusterOfGpuType(const spec::ClusterSpec& cluster, const std::string& gpu_type) {
  spec::ClusterSpec out;
  out.name = cluster.name;
  out.ideal = cluster.ideal;
  std::vector<int32_t> index(cluster.islands.size(), -1);
  for (size_t i = 0; i < cluster.islands.size(); ++i) {
    if (cluster.islands[i].gpu.name != gpu_type) continue;
    index[i] = static_cast<int32_t>(out.islands.size());
    out.islands.push_back(cluster.islands[i]);
    out.islands.back().network = -1;
  }
  if (out.islands.empty()) return std::nullopt;
  for (spec::InterIslandLinkSpec link : cluster.inter_island_links) {
    if (index[link.island_a] < 0 || index[link.island_b] < 0) continue;
    link.island_a = index[link.island_a];
    link.island_b = index[link.island_b];
    out.inter_island_links.push_back(link);
  }
  for (const spec::NetworkSpec& net : cluster.networks) {
    spec::NetworkSpec kept{.name = net.name, .islands = {}};
    for (int32_t i : net.islands) {
      if (index[i] >= 0) kept.islands.push_back(index[i]);
    }
    if (kept.islands.empty()) continue;
    for (int32_t i : kept.islands) out.islands[i].network = static_cast<int32_t>(out.networks.size());
    out.networks.push_back(std::move(kept));
  }
  return out;
}

std::vector<uint64_t> ThroughputShares(const std::vector<double>& samples_per_s, uint64_t global_batch_size,
                                       uint64_t micro_batch_size, std::vector<double>* ideal) {
  const size_t n = samples_per_s.size();
  const uint64_t units = global_batch_size / std::max<uint64_t>(1, micro_batch_size);
  if (n == 0 || units < n) return {};
  const double total = std::accumulate(samples_per_s.begin(), samples_per_s.end(), 0.0);
  // Every pipeline gets one micro-batch; the rest are split by throughput, floors first, then the
  // largest remainders (ties to the earlier pipeline), so each share is within one micro-batch of ideal.
  std::vector<uint64_t> shares(n, 1);
  std::vector<double> exact(n), remainder(n);
  uint64_t given = n;
  for (size_t p = 0; p < n; ++p) {
    exact[p] = static_cast<double>(units) * samples_per_s[p] / total;
    const double extra = std::max(0.0, exact[p] - 1);
    shares[p] += static_cast<uint64_t>(std::floor(extra));
    remainder[p] = extra - std::floor(extra);
    given += shares[p] - 1;
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return remainder[a] > remainder[b]; });
  for (size_t k = 0; given < units; k = (k + 1) % n, ++given) ++shares[order[k]];
  while (given > units) {  // the one micro-batch of a pipeline slower than that over-gave: the largest pays
    --*std::max_element(shares.begin(), shares.end());
    --given;
  }
  if (ideal != nullptr) {
    ideal->clear();
    for (double e : exact) ideal->push_back(e * static_cast<double>(micro_batch_size));
  }
  for (uint64_t& s : shares) s *= micro_batch_size;
  return shares;
}

std::vector<uint64_t> ThroughputSharesOfSizes(const std::vector<double>& samples_per_s, uint64_t global_batch_size,
                                              const std::vector<uint64_t>& micro_batch_sizes,
                                              std::vector<double>* ideal) {
  const size_t n = samples_per_s.size();
  if (n == 0 || micro_batch_sizes.size() != n) return {};
  if (std::all_of(micro_batch_sizes.begin(), micro_batch_sizes.end(),
                  [&](uint64_t b) { return b == micro_batch_sizes.front(); })) {
    return ThroughputShares(samples_per_s, global_batch_size, micro_batch_sizes.front(), ideal);
  }
  const double total = std::accumulate(samples_per_s.begin(), samples_per_s.end(), 0.0);
  // Each pipeline gets the whole micro-batches of its own size below its ideal (at least one); what is
  // left goes a micro-batch at a time to the largest remainder whose micro-batch still fits.
  std::vector<uint64_t> shares(n);
  std::vector<double> exact(n);
  uint64_t given = 0;
  for (size_t p = 0; p < n; ++p) {
    exact[p] = static_cast<double>(global_batch_size) * samples_per_s[p] / total;
    const uint64_t b = std::max<uint64_t>(1, micro_batch_sizes[p]);
    shares[p] = b * std::max<uint64_t>(1, static_cast<uint64_t>(std::floor(exact[p] / static_cast<double>(b))));
    given += shares[p];
  }
  if (given > global_batch_size) return {};
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return exact[a] - static_cast<double>(shares[a]) > exact[b] - static_cast<double>(shares[b]);
  });
  for (bool added = true; given < global_batch_size && added;) {
    added = false;
    for (const size_t p : order) {
      if (given + micro_batch_sizes[p] > global_batch_size) continue;
      shares[p] += micro_batch_sizes[p];
      given += micro_batch_sizes[p];
      added = true;
      if (given == global_batch_size) break;
    }
  }
  if (given != global_batch_size) return {};
  if (ideal != nullptr) *ideal = exact;
  return shares;
}

namespace {

constexpr double kPipelinesTmaxGap = 0.01;

// HAPT's DP on one GPU type's islands for `microbatches` micro-batches, and its prediction.
std::optional<std::pair<PipelineCandidate, Prediction>> SearchOnePipeline(Profiler& prof, int64_t microbatches,
                                                                          const PipelinesContext& ctx,
                                                                          SearchStats& stats) {
  SearchOptions so;
  so.epsilon = ctx.epsilon;
  so.threads = ctx.threads;
  // A t_max candidate within 1% of one already kept adds little to a family HAPT's own plan is
  // compared with; skipping them keeps the family's cost small (docs/planner.md).
  so.t_max_relative_gap = kPipelinesTmaxGap;
  std::vector<LayerGroup> layers = BuildPlannerLayers(prof.model(), 0, LayerConstruction::kStructural);
  const int planner_layers = static_cast<int>(layers.size());
  HaptSearch search(prof, std::move(layers), microbatches, so);
  SearchResult r = search.Run();
  stats += r.stats;
  if (!r.feasible) return std::nullopt;
  PipelineCandidate c;
  c.stages = std::move(r.stages);
  c.schedule = so.schedule;
  c.planner_layers = planner_layers;
  c.search = r.stats;
  std::vector<int> warmups;
  for (const SearchedStage& s : c.stages) warmups.push_back(s.warmup);
  absl::StatusOr<Prediction> p =
      Predict(prof.cluster(), c.stages, microbatches, c.schedule, ctx.epsilon, warmups,
              WorkOf(prof.model(), prof.micro_batch_size() * static_cast<uint64_t>(microbatches)));
  if (!p.ok() || !p->fits_memory) return std::nullopt;
  return std::make_pair(std::move(c), *std::move(p));
}

// Pipeline `pipe`'s stages predicted again at its batch share (their warm-up counts at most its
// microbatches); false when they no longer fit (`judged_later`: kept anyway, as ApplyLayerRanges judges
// the memory again on the range-sharded states).
// `node_release` and `passes`: as Predict's (ZeRO-3's per-call gathers across pipelines).
bool PredictAtShare(const workload::ModelCost& model, const PipelinesContext& ctx, PipelineOfType& pipe,
                    bool judged_later = false, const std::vector<Time>& node_release = {},
                    PredictedPasses* passes = nullptr) {
  const int64_t microbatches = static_cast<int64_t>(pipe.batch_share / pipe.micro_batch_size);
  std::vector<int> warmups;
  for (SearchedStage& s : pipe.candidate.stages) {
    s.warmup = static_cast<int>(std::min<int64_t>(s.warmup, microbatches));
    warmups.push_back(s.warmup);
  }
  absl::StatusOr<Prediction> p = Predict(*pipe.cluster, pipe.candidate.stages, microbatches, pipe.candidate.schedule,
                                         ctx.epsilon, warmups, WorkOf(model, pipe.batch_share), /*virtual_stages=*/1,
                                         /*tied_sync=*/0, /*first_forward_release=*/{}, node_release, passes);
  if (!p.ok() || (!p->fits_memory && !judged_later)) return false;
  pipe.prediction = *std::move(p);
  return true;
}

// The candidate's pipelines as PriceLayerRanges and CombinePipelines read them.
std::vector<PricedPipeline> PricedPipelinesOf(const PipelinesCandidate& c) {
  std::vector<PricedPipeline> out;
  for (const PipelineOfType& p : c.pipelines) {
    PricedPipeline& priced = out.emplace_back(
        PricedPipeline{p.cluster.get(), &p.candidate.stages, &p.prediction, {}, {}, p.context_parallel});
    // Where WritePipelinesPlan places the stages: on the copy's group, then at its offset.
    absl::StatusOr<std::vector<spec::MeshSpec>> meshes = PlaceMeshes(*p.cluster, p.candidate.stages);
    if (!meshes.ok()) continue;
    for (const spec::MeshSpec& m : *meshes) {
      const auto at = p.offset.find(m.island);
      priced.first_node.push_back(static_cast<int>(m.first_node + (at == p.offset.end() ? 0 : at->second.first_node)));
      priced.first_gpu.push_back(static_cast<int>(m.first_gpu + (at == p.offset.end() ? 0 : at->second.first_gpu)));
    }
  }
  return out;
}

}  // namespace

std::optional<TypeGroups> CutTypeIntoGroups(const spec::ClusterSpec& type_cluster, int copies) {
  TypeGroups out{.group = type_cluster, .offsets = std::vector<std::map<std::string, MeshOffset>>(copies)};
  const bool whole_nodes = std::all_of(type_cluster.islands.begin(), type_cluster.islands.end(),
                                       [&](const spec::IslandSpec& is) { return is.node_count % copies == 0; });
  for (size_t i = 0; i < type_cluster.islands.size(); ++i) {
    const spec::IslandSpec& is = type_cluster.islands[i];
    spec::IslandSpec& cut = out.group.islands[i];
    if (whole_nodes) {
      cut.node_count = is.node_count / copies;
      for (int j = 0; j < copies; ++j)
        out.offsets[j][is.name] = {.first_node = static_cast<uint32_t>(j * cut.node_count)};
      continue;
    }
    const int parts = copies / is.node_count;  // of each node
    if (copies % is.node_count != 0 || is.node.gpus_per_node % parts != 0) return std::nullopt;
    cut.node_count = 1;
    cut.node.gpus_per_node = is.node.gpus_per_node / parts;
    for (int j = 0; j < copies; ++j) {
      out.offsets[j][is.name] = {.first_node = static_cast<uint32_t>(j / parts),
                                 .first_gpu = static_cast<uint32_t>((j % parts) * cut.node.gpus_per_node)};
    }
  }
  return out;
}

namespace {

// The most copies of one type's pipeline the family tries.
constexpr int kMaxCopiesPerType = 16;
// MixMicroBatchSizes prices at most this many choices of one micro-batch size per GPU type.
constexpr double kMaxSizeMixes = 64;
// Copies are searched only when one pipeline per type prices within this factor of the plan to beat:
// on the lab cluster they gained 2.8% over it (2072.5 -> 2013.5 ms), and each type's throughput at most
// 30% (docs/heterogeneous.md), while their DP runs cost +88% of the planner on the 512-GPU example,
// where the family is 2.5 times slower than HAPT's own plan (docs/performance.md).
constexpr double kCopiesWithin = 1.25;

// `copies` identical pipelines of GPU type `type` (its islands `type_cluster`), planned by HAPT's DP on
// one group at `first_share` samples over `copies` (whole micro-batches); nullopt when the islands do
// not cut into that many groups or a pipeline does not fit one.
std::optional<std::vector<PipelineOfType>> PlanTypeCopies(const PipelinesContext& ctx, const ProfilerOptions& options,
                                                          const std::string& type,
                                                          const spec::ClusterSpec& type_cluster, uint64_t first_share,
                                                          int copies, int cp, SearchStats& stats) {
  const int64_t microbatches = static_cast<int64_t>(first_share / ctx.point.micro_batch_size) / copies;
  std::optional<TypeGroups> groups = CutTypeIntoGroups(type_cluster, copies);
  if (microbatches < 1 || !groups) return std::nullopt;
  absl::StatusOr<std::unique_ptr<ClusterModel>> model = ClusterModel::Create(groups->group, ctx.model->dtype());
  if (!model.ok()) return std::nullopt;
  std::shared_ptr<const ClusterModel> cluster = *std::move(model);
  ProfilerOptions copy_options = options;
  if (copy_options.search_zero) copy_options.range_copies = copies;  // ZeRO per range: over every copy at least
  if (const auto at = ctx.expert_layouts.find(type); at != ctx.expert_layouts.end())
    copy_options.expert_layout = at->second;
  // What the plan depends on besides the request (TypePlans): planned once per request.
  const std::string key = absl::StrFormat(
      "%s|b%d|s%d|k%d|cp%d|z%d%d|o%d|ep%dx%d", type, ctx.point.micro_batch_size, first_share, copies, cp,
      static_cast<int>(copy_options.search_zero), static_cast<int>(copy_options.search_zero_three),
      copy_options.range_other_pipelines, copy_options.expert_layout.first, copy_options.expert_layout.second);
  if (ctx.type_plans != nullptr) {
    if (const auto at = ctx.type_plans->plans.find(key); at != ctx.type_plans->plans.end()) {
      ++ctx.type_plans->hits;
      return at->second;
    }
  }
  Profiler profiler(*ctx.model, *cluster, ctx.point.micro_batch_size, copy_options, cp);
  auto planned = SearchOnePipeline(profiler, microbatches, ctx, stats);
  if (!planned) {
    if (ctx.type_plans != nullptr) ctx.type_plans->plans[key] = std::nullopt;
    return std::nullopt;
  }
  std::vector<PipelineOfType> out(copies);
  for (int j = 0; j < copies; ++j) {
    PipelineOfType& p = out[j];
    p.gpu_type = type;
    p.name = copies == 1 ? type : absl::StrCat(type, "-", j);
    p.cluster = cluster;
    p.offset = groups->offsets[j];
    p.candidate = planned->first;
    p.prediction = planned->second;
    p.micro_batch_size = ctx.point.micro_batch_size;
    p.context_parallel = cp;
    p.batch_share = static_cast<uint64_t>(microbatches) * ctx.point.micro_batch_size;
  }
  if (ctx.type_plans != nullptr) ctx.type_plans->plans[key] = out;
  return out;
}

// Samples per second of every pipeline of `copies` together.
double SamplesPerS(const std::vector<PipelineOfType>& copies) {
  double rate = 0;
  for (const PipelineOfType& p : copies) {
    rate += static_cast<double>(p.batch_share) / std::max(1e-12, TimeToSeconds(p.prediction.pipeline));
  }
  return rate;
}

// Whether memory made a stage of `p` recompute, or holds fewer microbatches in flight than 1F1B's
// warm-up there (S - i): a ZeRO search may then find it faster.
bool MemoryBound(const PipelineOfType& p) {
  const std::vector<SearchedStage>& stages = p.candidate.stages;
  for (size_t i = 0; i < stages.size(); ++i) {
    const StageOption& o = stages[i].option;
    if (o.config.recompute != spec::Recompute::kNone) return true;
    if (o.max_in_flight < static_cast<int>(stages.size() - i)) return true;
  }
  return false;
}

// Whether memory made a stage of `p` recompute.
bool Recomputes(const PipelineOfType& p) {
  return std::any_of(p.candidate.stages.begin(), p.candidate.stages.end(),
                     [](const SearchedStage& s) { return s.option.config.recompute != spec::Recompute::kNone; });
}

// What a GPU type's pipelines are planned at: `copies` identical pipelines at CP `cp`, and the ZeRO the
// type already runs (0: none yet; 1-2: ZeRO per range; 3: ZeRO-3), which its larger k keep.
struct TypeAsk {
  int copies = 1;
  int cp = 1;
  int zero = 0;
};

// Whether a stage of `p` shards its parameters (ZeRO-3).
bool AnyZeroThree(const PipelineOfType& p) {
  return std::any_of(p.candidate.stages.begin(), p.candidate.stages.end(),
                     [](const SearchedStage& s) { return s.option.config.zero_stage >= 3; });
}

// Why memory bound `p`'s plan: "recomputing", "fewer microbatches in flight", or "without ZeRO".
std::string BoundBy(const PipelineOfType& p) {
  if (Recomputes(p)) return "recomputing";
  return MemoryBound(p) ? "fewer microbatches in flight" : "unbounded";
}

// Why `three` (a type's pipelines at ZeRO-3, `what` them) won over `below` (the same type at ZeRO 2 at
// most; nullopt: none fits): the most one of its GPUs would need with its stages at ZeRO-2 (each
// stage's peak with the parameters whole, over the same n = DP x copies + other pipelines GPUs as
// the profiler's ShardOverRanges) against its memory, and the samples per second of both.
std::string ZeroThreeWhy(const workload::ModelCost& model, const std::string& what,
                         const std::vector<PipelineOfType>& three,
                         const std::optional<std::vector<PipelineOfType>>& below, int copies, int other_pipelines,
                         bool grad_fp32) {
  const PipelineOfType& p = three.front();
  int64_t need = 0, capacity = 0;
  for (size_t i = 0; i < p.candidate.stages.size(); ++i) {
    const SearchedStage& s = p.candidate.stages[i];
    const StagePrediction& sp = p.prediction.stages[i];
    int64_t at_two = sp.peak_bytes;
    if (s.option.config.zero_stage >= 3) {
      const int n = s.option.config.data_parallel * copies + other_pipelines;
      const double params =
          workload::DenseParamsOfLayers(model, s.first_layer, s.num_layers, s.option.config.tensor_parallel);
      at_two += workload::ZeroShardedModelStates(params, model.dtype(), 2, n, grad_fp32).ModelStateBytes() -
                workload::ZeroShardedModelStates(params, model.dtype(), 3, n, grad_fp32).ModelStateBytes();
    }
    if (at_two - sp.capacity_bytes > need - capacity || i == 0) {
      need = at_two;
      capacity = sp.capacity_bytes;
    }
  }
  std::string why = need > capacity ? absl::StrFormat("the %s pipeline%s need%s %.1f GiB at ZeRO-2 of %.1f", what,
                                                      copies == 1 ? "" : "s", copies == 1 ? "s" : "",
                                                      BytesToGib(static_cast<double>(need)),
                                                      BytesToGib(static_cast<double>(capacity)))
                                    : absl::StrFormat("%s run%s faster with it", what, copies == 1 ? "s" : "");
  if (!below) return absl::StrCat(why, " (no plan at ZeRO-2 fits)");
  int zero = 0;
  for (const SearchedStage& s : below->front().candidate.stages) zero = std::max(zero, s.option.config.zero_stage);
  absl::StrAppendFormat(&why, ", %.1f samples/s against %.1f at ZeRO-%d (%s)", SamplesPerS(three), SamplesPerS(*below),
                        zero, BoundBy(below->front()));
  return why;
}

// A GPU type's pipelines (PlanTypeCopies), planned ZeRO-free (`options`) and, where memory requires it
// (they do not fit without, or MemoryBound), with ZeRO per layer range (`zero_options`, the request's
// ZeRO search on), and where that still bounds them at ZeRO-3: the ones with the most samples per
// second, each pipeline's `zero_why` saying why ZeRO was kept. `ask.zero`: the type already runs ZeRO
// (its copies shard as it), priced so only. When ZeRO-3 won, `below_three` receives the type's best
// plan at ZeRO 2 at most (nullopt: none fits).
std::optional<std::vector<PipelineOfType>> PlanTypeMaybeZero(
    const PipelinesContext& ctx, const ProfilerOptions& options, const ProfilerOptions& zero_options,
    const std::string& type, const spec::ClusterSpec& type_cluster, uint64_t first_share, TypeAsk ask,
    SearchStats& stats, std::optional<std::vector<PipelineOfType>>* below_three = nullptr) {
  const int copies = ask.copies;
  const std::string what = copies == 1 ? type : absl::StrFormat("%d x %s", copies, type);
  std::optional<std::vector<PipelineOfType>> best;
  if (ask.zero < 3) {
    std::optional<std::vector<PipelineOfType>> plain;
    if (ask.zero == 0) {
      plain = PlanTypeCopies(ctx, options, type, type_cluster, first_share, copies, ask.cp, stats);
      if (!zero_options.search_zero || (plain && !MemoryBound(plain->front()))) return plain;
    }
    auto sharded = PlanTypeCopies(ctx, zero_options, type, type_cluster, first_share, copies, ask.cp, stats);
    best = plain;
    if (sharded && (!plain || SamplesPerS(*sharded) > SamplesPerS(*plain))) {
      const std::string why = ask.zero > 0 ? ""
                              : plain
                                  ? absl::StrFormat("%s run %.1f samples/s with it against %.1f without (%s)", what,
                                                    SamplesPerS(*sharded), SamplesPerS(*plain), BoundBy(plain->front()))
                                  : absl::StrFormat("%s fit%s only with it", what, copies == 1 ? "s" : "");
      for (PipelineOfType& p : *sharded) p.zero_why = why;
      best = std::move(sharded);
    }
    if (!zero_options.search_zero || (best && !MemoryBound(best->front()))) return best;
  }
  // ZeRO-3 where ZeRO-2 still bounds the type's memory: its parameters sharded too, each pass gathering them.
  ProfilerOptions three_options = zero_options;
  three_options.search_zero_three = true;
  auto three = PlanTypeCopies(ctx, three_options, type, type_cluster, first_share, copies, ask.cp, stats);
  if (!three ||
      (ask.zero < 3 && (!AnyZeroThree(three->front()) || (best && SamplesPerS(*three) <= SamplesPerS(*best))))) {
    return best;
  }
  const std::string why = ask.zero == 3 ? ""
                                        : ZeroThreeWhy(*ctx.model, what, *three, best, copies,
                                                       zero_options.range_other_pipelines, options.grad_reduce_in_fp32);
  for (PipelineOfType& p : *three) p.zero_why = why;
  if (below_three != nullptr) *below_three = std::move(best);
  return three;
}

// A GPU type's one pipeline at each CP degree of `ctx` (PlanTypeMaybeZero), ascending while a larger
// degree adds samples per second: the fastest, its `cp_why` saying why when more than one was tried.
// `below_three` as PlanTypeMaybeZero's, for the kept degree.
std::optional<std::vector<PipelineOfType>> PlanTypeAtDegrees(
    const PipelinesContext& ctx, const ProfilerOptions& options, const ProfilerOptions& zero_options,
    const std::string& type, const spec::ClusterSpec& type_cluster, uint64_t first_share, SearchStats& stats,
    std::optional<std::vector<PipelineOfType>>& below_three) {
  std::optional<std::vector<PipelineOfType>> best;
  std::optional<std::pair<int, double>> runner_up;  // the best other degree tried and its samples per second
  int tried = 0;
  for (const int cp : ctx.context_parallel_degrees) {
    std::optional<std::vector<PipelineOfType>> below;
    auto one =
        PlanTypeMaybeZero(ctx, options, zero_options, type, type_cluster, first_share, {.cp = cp}, stats, &below);
    ++tried;
    if (!one) continue;
    if (best && SamplesPerS(*one) <= SamplesPerS(*best)) {
      runner_up = std::make_pair(cp, SamplesPerS(*one));
      break;  // a larger degree that adds nothing ends the type's search
    }
    if (best) runner_up = std::make_pair(best->front().context_parallel, SamplesPerS(*best));
    best = std::move(one);
    below_three = std::move(below);
  }
  if (best && tried > 1) {
    const std::string why =
        runner_up
            ? absl::StrFormat("%s at CP %d: %.1f samples/s against %.1f at CP %d", type, best->front().context_parallel,
                              SamplesPerS(*best), runner_up->second, runner_up->first)
            : absl::StrFormat("%s at CP %d: no other degree fits", type, best->front().context_parallel);
    for (PipelineOfType& p : *best) p.cp_why = why;
  }
  return best;
}

// Every stage of `c` at the highest zero_stage of its stages (a plan of pipelines takes one): ZeRO-1
// and 2 only shard what a ZeRO-free stage priced whole (PriceRanges re-prices every stage's states).
void OneZeroStage(PipelinesCandidate& c) {
  c.zero_stage = 0;
  for (const PipelineOfType& p : c.pipelines) {
    for (const SearchedStage& s : p.candidate.stages) c.zero_stage = std::max(c.zero_stage, s.option.config.zero_stage);
  }
  for (PipelineOfType& p : c.pipelines) {
    for (SearchedStage& s : p.candidate.stages) s.option.config.zero_stage = c.zero_stage;
  }
}

// ZeRO-3 across pipelines: each pipeline predicted again with every pass waiting for its ranges' other
// holders' same call (IterateGatherCalls), as PredictPipelinesPlan prices the written plan (plan_reader.cc)
// and the simulator runs it. Without a fixed point within the guard's rounds each pipeline keeps its last
// prediction.
void WaitForZeroThreeCalls(const PipelinesContext& ctx, const ZeroThreeGathers& gathers, PipelinesCandidate& c) {
  const auto predict = [&](size_t p, const std::vector<Time>& release, PredictedPasses& passes) {
    PredictAtShare(*ctx.model, ctx, c.pipelines[p], /*judged_later=*/true, release, &passes);
    return absl::OkStatus();
  };
  IterateGatherCalls(ZeroThreeCallRanges(*ctx.model, *ctx.cluster_model, PricedPipelinesOf(c), gathers),
                     c.pipelines.size(), predict)
      .IgnoreError();
}

// ZeRO-3: every stage's passes with its layers' gathers over their ranges' GPUs (RangeGathersOfZeroThree,
// exposed, as PredictPipelinesPlan prices the written plan) in place of those they held (the profiler's
// estimate, or an earlier pricing's), each pipeline predicted again at its share.
void PriceZeroThreeGathers(const PipelinesContext& ctx, PipelinesCandidate& c) {
  if (c.zero_stage < 3) return;
  const ZeroThreeGathers gathers = RangeGathersOfZeroThree(*ctx.model, *ctx.cluster_model, false, PricedPipelinesOf(c));
  if (gathers.forward.size() != c.pipelines.size()) return;
  for (size_t p = 0; p < c.pipelines.size(); ++p) {
    std::vector<SearchedStage>& stages = c.pipelines[p].candidate.stages;
    for (size_t i = 0; i < stages.size(); ++i) {
      StageOption& o = stages[i].option;
      o.forward += gathers.forward[p][i] - o.gather_forward;
      o.backward += gathers.backward[p][i] - o.gather_backward;
      o.gather_forward = gathers.forward[p][i];
      o.gather_backward = gathers.backward[p][i];
    }
    PredictAtShare(*ctx.model, ctx, c.pipelines[p], /*judged_later=*/true);
  }
  WaitForZeroThreeCalls(ctx, gathers, c);
}

// `c`'s layer ranges priced over its pipelines (their predictions at their shares): each pipeline's
// stages' grad_sync, memory and end, and the iteration; under ZeRO-3 its passes' gathers first.
void PriceRanges(const PipelinesContext& ctx, PipelinesCandidate& c) {
  PriceZeroThreeGathers(ctx, c);
  const LayerRangesPrice price = PriceLayerRanges(
      *ctx.model, *ctx.cluster_model, {.grad_reduce_in_fp32 = ctx.options.grad_reduce_in_fp32}, PricedPipelinesOf(c));
  for (size_t p = 0; p < c.pipelines.size(); ++p) ApplyLayerRanges(price, p, c.pipelines[p].prediction);
  c.ranges = price.ranges;
  c.slowest_ring = price.slowest_ring;
  c.iteration = price.iteration;
}

// The plan of `pipes` (each planned at its first share): the batch split by their predicted throughputs,
// each predicted again at its final share, the layer ranges priced.
std::optional<PipelinesCandidate> SplitAndPrice(const PipelinesContext& ctx, std::vector<PipelineOfType> pipes) {
  PipelinesCandidate c;
  c.micro_batch_size = pipes.front().micro_batch_size;
  std::vector<double> rates, ideal;
  std::vector<uint64_t> sizes;
  for (const PipelineOfType& p : pipes) {
    rates.push_back(SamplesPerS({p}));
    sizes.push_back(p.micro_batch_size);
    c.micro_batch_size = std::min(c.micro_batch_size, p.micro_batch_size);
  }
  const std::vector<uint64_t> shares = ThroughputSharesOfSizes(rates, ctx.global_batch_size, sizes, &ideal);
  if (shares.empty()) return std::nullopt;
  for (size_t p = 0; p < pipes.size(); ++p) {
    const uint64_t first = pipes[p].batch_share;
    pipes[p].batch_share = shares[p];
    pipes[p].ideal_share = ideal[p];
    if (shares[p] != first && !PredictAtShare(*ctx.model, ctx, pipes[p])) return std::nullopt;
  }
  c.pipelines = std::move(pipes);
  OneZeroStage(c);
  PriceRanges(ctx, c);
  return c;
}

// `c` (a plan at ZeRO) with every GPU type planned again by HAPT's DP with ZeRO per range at the groups
// its ranges have in `c`: a type's k copies beside the plan's other pipelines, each of which holds every
// layer on one GPU at least (range_other_pipelines = their count, where the first DP runs could only
// count one per other type; the real group where those pipelines' stages are DP 1, as the family's
// mostly are), and a type planned without ZeRO and raised to it (OneZeroStage) planned with it. The
// shares split again and the ranges priced; nullopt when a type no longer plans.
std::optional<PipelinesCandidate> ReplanOverPlanGroups(const PipelinesContext& ctx, ProfilerOptions zero_options,
                                                       const std::vector<std::string>& types,
                                                       const std::vector<spec::ClusterSpec>& type_clusters,
                                                       const std::vector<uint64_t>& first, const PipelinesCandidate& c,
                                                       SearchStats& stats) {
  std::vector<PipelineOfType> pipes;
  for (size_t t = 0; t < types.size(); ++t) {
    int k = 0, cp = 1;
    std::string why, cp_why;
    for (const PipelineOfType& p : c.pipelines) {
      if (p.gpu_type != types[t]) continue;
      ++k;
      why = p.zero_why;
      cp = p.context_parallel;
      cp_why = p.cp_why;
    }
    zero_options.range_other_pipelines = static_cast<int>(c.pipelines.size()) - k;
    zero_options.search_zero_three = c.zero_stage >= 3;
    auto again = PlanTypeCopies(ctx, zero_options, types[t], type_clusters[t], first[t], k, cp, stats);
    if (!again) return std::nullopt;
    if (why.empty()) {
      why = absl::StrFormat("%s planned again with it (raised to the plan's ZeRO-%d)",
                            k == 1 ? types[t] : absl::StrFormat("%d x %s", k, types[t]), c.zero_stage);
    }
    for (PipelineOfType& p : *again) {
      p.zero_why = why;
      p.cp_why = cp_why;
      pipes.push_back(std::move(p));
    }
  }
  return SplitAndPrice(ctx, std::move(pipes));
}

// `mixed`'s one_size and mix_why: against the best plan of `by_size` (one size for every type), each
// type's samples per second at its own size and at that one (as the plans at those sizes predict it).
template <typename OfType>
void SayWhyMixed(const std::vector<PipelinesCandidate>& by_size, const OfType& of_type, PipelinesCandidate& mixed) {
  const PipelinesCandidate* one = nullptr;
  for (const PipelinesCandidate& c : by_size) {
    if (one == nullptr || c.iteration < one->iteration) one = &c;
  }
  mixed.one_size = one->iteration;
  mixed.one_size_micro_batch = one->micro_batch_size;
  for (const PipelineOfType& p : mixed.pipelines) {
    if (p.micro_batch_size == one->micro_batch_size || absl::StrContains(mixed.mix_why, p.gpu_type + " at ")) continue;
    const PipelinesCandidate* own = nullptr;
    for (const PipelinesCandidate& c : by_size) {
      if (c.micro_batch_size == p.micro_batch_size) own = &c;
    }
    if (own == nullptr) continue;
    absl::StrAppendFormat(&mixed.mix_why, "%s%s at %d: %.3g samples/s against %.3g at %d",
                          mixed.mix_why.empty() ? "" : ", ", p.gpu_type, p.micro_batch_size,
                          SamplesPerS(of_type(*own, p.gpu_type)), SamplesPerS(of_type(*one, p.gpu_type)),
                          one->micro_batch_size);
  }
}

// `c` (one pipeline per type, some at ZeRO-3) against the same types with those at ZeRO 2 at most
// (`below_three`, PlanTypeMaybeZero's; none when a type fits only at ZeRO-3), both priced with their
// ranges (and c's gathers): the faster is kept, its types' pipelines in `best` (the copies' search
// starts from them), and c's below_zero_three records what ZeRO-3 beat.
void AgainstZeroTwo(const PipelinesContext& ctx,
                    const std::vector<std::optional<std::vector<PipelineOfType>>>& below_three,
                    std::vector<std::vector<PipelineOfType>>& best, std::optional<PipelinesCandidate>& c) {
  std::vector<PipelineOfType> pipes;
  for (size_t t = 0; t < best.size(); ++t) {
    if (!AnyZeroThree(best[t].front())) {
      pipes.push_back(best[t].front());
      continue;
    }
    if (!below_three[t]) return;  // fits only at ZeRO-3
    pipes.push_back(below_three[t]->front());
  }
  std::optional<PipelinesCandidate> two = SplitAndPrice(ctx, std::move(pipes));
  if (!two) return;
  if (two->iteration < c->iteration) {
    for (size_t t = 0; t < best.size(); ++t) {
      if (AnyZeroThree(best[t].front())) best[t] = *below_three[t];
    }
    c = std::move(two);
    return;
  }
  c->below_zero_three = two->iteration;
}

}  // namespace

std::optional<PipelinesCandidate> PlanPipelinesOfTypes(const PipelinesContext& ctx) {
  std::vector<std::string> types;
  for (const spec::IslandSpec& is : ctx.cluster->islands) {
    if (std::find(types.begin(), types.end(), is.gpu.name) == types.end()) types.push_back(is.gpu.name);
  }
  if (types.size() < 2 || ctx.global_batch_size % ctx.point.micro_batch_size != 0) return std::nullopt;
  ProfilerOptions options = ctx.options;
  options.search_zero = false;   // first without ZeRO: the main search's profiles (zero_free_cache)
  options.cache = ctx.profiles;  // keyed by the islands' pricing figures, not their index: a type's islands hit
  // ZeRO per layer range where memory requires it (PlanTypeMaybeZero): every other type runs a pipeline at least.
  ProfilerOptions zero_options = options;
  zero_options.search_zero = ctx.options.search_zero;
  zero_options.range_other_pipelines = static_cast<int>(types.size()) - 1;
  // The first split: each type's peak FLOP/s.
  std::vector<spec::ClusterSpec> type_clusters;
  std::vector<double> peaks;
  for (const std::string& type : types) {
    type_clusters.push_back(*ClusterOfGpuType(*ctx.cluster, type));
    double peak = 0;
    for (const IslandModel& im : ctx.cluster_model->islands()) {
      if (im.gpu_type == type) peak += static_cast<double>(im.gpus()) * im.peak_flop_per_s;
    }
    peaks.push_back(peak);
  }
  const std::vector<uint64_t> first = ThroughputShares(peaks, ctx.global_batch_size, ctx.point.micro_batch_size);
  if (first.empty()) return std::nullopt;
  // One pipeline per type first, each at its CP degree.
  SearchStats stats;
  std::vector<std::vector<PipelineOfType>> best(types.size());
  std::vector<std::optional<std::vector<PipelineOfType>>> below_three(types.size());
  std::vector<PipelineOfType> ones;
  for (size_t t = 0; t < types.size(); ++t) {
    auto one =
        PlanTypeAtDegrees(ctx, options, zero_options, types[t], type_clusters[t], first[t], stats, below_three[t]);
    if (!one) return std::nullopt;
    ones.push_back(one->front());
    best[t] = *std::move(one);
  }
  std::optional<PipelinesCandidate> c = SplitAndPrice(ctx, ones);
  if (c && c->zero_stage >= 3) AgainstZeroTwo(ctx, below_three, best, c);
  if (c && ctx.to_beat > 0 && TimeToSeconds(c->iteration) > kCopiesWithin * TimeToSeconds(ctx.to_beat)) {
    c->search = stats;
    return c;
  }
  // Per type the number of copies with the most samples per second: more, smaller copies pay off while
  // they add throughput, and the first that does not ends the type's search.
  for (size_t t = 0; t < types.size(); ++t) {
    for (int k = 2; k <= kMaxCopiesPerType; k *= 2) {
      const PipelineOfType& one = best[t].front();
      const std::string why = one.zero_why, cp_why = one.cp_why;  // a type planned with ZeRO keeps it in its copies
      const TypeAsk ask{.copies = k, .cp = one.context_parallel, .zero = why.empty() ? 0 : AnyZeroThree(one) ? 3 : 2};
      auto copies = PlanTypeMaybeZero(ctx, options, zero_options, types[t], type_clusters[t], first[t], ask, stats);
      if (!copies || SamplesPerS(*copies) <= SamplesPerS(best[t])) break;
      for (PipelineOfType& p : *copies) {
        if (!why.empty()) p.zero_why = why;
        p.cp_why = cp_why;
      }
      best[t] = *std::move(copies);
    }
  }
  std::vector<PipelineOfType> fastest;
  for (std::vector<PipelineOfType>& b : best) {
    for (PipelineOfType& p : b) fastest.push_back(std::move(p));
  }
  if (fastest.size() > types.size()) {
    std::optional<PipelinesCandidate> copied = SplitAndPrice(ctx, std::move(fastest));
    if (copied && (!c || copied->iteration < c->iteration)) {
      copied->one_per_type = c ? c->iteration : Time();
      c = std::move(copied);
    }
  }
  // At ZeRO the DP runs priced each range's group at a lower bound, and the types planned without it
  // were raised to it: plan every type again at the plan's own groups, kept when it prices faster.
  if (c && c->zero_stage > 0 && zero_options.search_zero) {
    std::optional<PipelinesCandidate> again =
        ReplanOverPlanGroups(ctx, zero_options, types, type_clusters, first, *c, stats);
    if (again && again->iteration < c->iteration) {
      again->one_per_type = c->one_per_type;
      again->below_zero_three = c->below_zero_three;
      again->before_replan = c->iteration;
      c = std::move(again);
    }
  }
  if (c) c->search = stats;
  return c;
}

std::optional<PipelinesCandidate> MixMicroBatchSizes(const PipelinesContext& ctx,
                                                     const std::vector<PipelinesCandidate>& by_size) {
  std::vector<std::string> types;
  for (const PipelinesCandidate& c : by_size) {
    for (const PipelineOfType& p : c.pipelines) {
      if (std::find(types.begin(), types.end(), p.gpu_type) == types.end()) types.push_back(p.gpu_type);
    }
  }
  const auto of_type = [](const PipelinesCandidate& c, const std::string& type) {
    std::vector<PipelineOfType> out;
    for (const PipelineOfType& p : c.pipelines) {
      if (p.gpu_type == type) out.push_back(p);
    }
    return out;
  };
  // Per type, its sizes (indices into by_size) by samples per second, fastest first, cut to the
  // `keep` fastest so that keep^types choices stay within kMaxSizeMixes.
  int keep = static_cast<int>(by_size.size());
  while (keep > 1 && std::pow(keep, static_cast<double>(types.size())) > kMaxSizeMixes) --keep;
  std::vector<std::vector<size_t>> sizes(types.size());
  for (size_t t = 0; t < types.size(); ++t) {
    for (size_t i = 0; i < by_size.size(); ++i) sizes[t].push_back(i);
    std::stable_sort(sizes[t].begin(), sizes[t].end(), [&](size_t a, size_t b) {
      return SamplesPerS(of_type(by_size[a], types[t])) > SamplesPerS(of_type(by_size[b], types[t]));
    });
    sizes[t].resize(keep);
  }
  // Every choice of one size per type (an odometer over `pick`) whose sizes differ, split and priced.
  std::optional<PipelinesCandidate> best;
  std::vector<size_t> pick(types.size(), 0);
  for (bool more = !types.empty(); more;) {
    bool mixed_sizes = false;
    std::vector<PipelineOfType> mixed;
    for (size_t t = 0; t < types.size(); ++t) {
      mixed_sizes = mixed_sizes || sizes[t][pick[t]] != sizes[0][pick[0]];
      for (PipelineOfType& p : of_type(by_size[sizes[t][pick[t]]], types[t])) mixed.push_back(std::move(p));
    }
    if (mixed_sizes) {
      std::optional<PipelinesCandidate> c = SplitAndPrice(ctx, std::move(mixed));  // no DP run of its own
      if (c && (!best || c->iteration < best->iteration)) best = std::move(c);
    }
    more = false;
    for (size_t t = 0; t < types.size() && !more; ++t) {
      more = ++pick[t] < sizes[t].size();
      if (!more) pick[t] = 0;
    }
  }
  if (best) SayWhyMixed(by_size, of_type, *best);
  return best;
}

std::optional<PipelinesCandidate> WithZeroOne(const PipelinesContext& ctx, PipelinesCandidate c) {
  if (c.zero_stage != 0) return std::nullopt;
  for (PipelineOfType& p : c.pipelines) {
    for (SearchedStage& s : p.candidate.stages) {
      if (s.option.config.zero_stage != 0 || !s.groups.empty()) return std::nullopt;
      s.option.config.zero_stage = 1;
    }
  }
  // The predictions' peaks are the stages' own pricing (without ZeRO the ranges change no state): the
  // ranges now shard each stage's states, less memory, so the plan still fits.
  PriceRanges(ctx, c);
  c.zero_stage = 1;
  return c;
}

absl::StatusOr<spec::PlanSpec> WritePipelinesPlan(const PipelinesCandidate& c, const spec::PlanSpec& shape) {
  spec::PlanSpec plan = shape;
  plan.stages.clear();
  plan.micro_batch_size = c.micro_batch_size;
  plan.microbatches = static_cast<int64_t>(plan.global_batch_size / c.micro_batch_size);
  for (const PipelineOfType& p : c.pipelines) {
    HETSIM_ASSIGN_OR_RETURN(spec::PlanSpec one, WritePlan(*p.cluster, p.candidate.stages, shape, true));
    for (spec::StageSpec& st : one.stages) {  // from the group's islands to this copy's place in them
      const MeshOffset& at = p.offset.at(st.mesh.island);
      st.mesh.first_node += at.first_node;
      st.mesh.first_gpu += at.first_gpu;
    }
    plan.pipelines.push_back({.name = p.name,
                              .batch_share = p.batch_share,
                              .micro_batch_size = p.micro_batch_size,
                              .stages = std::move(one.stages),
                              .context_parallel = p.context_parallel});
  }
  return plan;
}

Prediction CombinePipelines(const std::vector<PricedPipeline>& pipelines, Time iteration,
                            const pipeline::IterationWork& work) {
  Prediction out;
  pipeline::IterationFigures figures;
  figures.work = work;
  figures.iteration_time = iteration;
  for (const PricedPipeline& p : pipelines) {
    const Prediction& q = *p.prediction;
    out.stages.insert(out.stages.end(), q.stages.begin(), q.stages.end());
    out.pipelines.push_back({.stages = static_cast<int>(q.stages.size()),
                             .microbatches = q.microbatches,
                             .t_max = q.t_max,
                             .pipeline = q.pipeline,
                             .end = q.iteration});
    out.microbatches += q.microbatches;
    out.t_max = std::max(out.t_max, q.t_max);
    out.cycle = std::max(out.cycle, q.cycle);
    out.eq13 = std::max(out.eq13, q.eq13);
    out.pipeline = std::max(out.pipeline, q.pipeline);
    out.fits_memory = out.fits_memory && q.fits_memory;
    for (const SearchedStage& s : *p.stages) {
      figures.stages.emplace_back(q.microbatches * s.option.total(), s.shape.gpus(),
                                  p.cluster->island(s.island).peak_flop_per_s);
    }
  }
  figures.span = out.pipeline;
  out.iteration = iteration;
  out.metrics = pipeline::ComputeIterationMetrics(figures);
  return out;
}

Prediction PipelinesPrediction(const PipelinesCandidate& c, const pipeline::IterationWork& work) {
  return CombinePipelines(PricedPipelinesOf(c), c.iteration, work);
}

}  // namespace hetsim::planner
