#include "planner/pipelines.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "planner/hapt_search_internal.h"
#include "planner/layers_internal.h"
#include "planner/mixed_replicas.h"
#include "planner/plan_writer.h"
#include "sim/workload/stage_cost.h"

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
// microbatches); false when they no longer fit.
bool PredictAtShare(const workload::ModelCost& model, const PipelinesContext& ctx, PipelineOfType& pipe) {
  const int64_t microbatches = static_cast<int64_t>(pipe.batch_share / ctx.micro_batch_size);
  std::vector<int> warmups;
  for (SearchedStage& s : pipe.candidate.stages) {
    s.warmup = static_cast<int>(std::min<int64_t>(s.warmup, microbatches));
    warmups.push_back(s.warmup);
  }
  absl::StatusOr<Prediction> p = Predict(*pipe.cluster, pipe.candidate.stages, microbatches, pipe.candidate.schedule,
                                         ctx.epsilon, warmups, WorkOf(model, pipe.batch_share));
  if (!p.ok() || !p->fits_memory) return false;
  pipe.prediction = *std::move(p);
  return true;
}

// The island of `cluster` named `name` (a type's cluster keeps the names).
int IslandNamed(const ClusterModel& cluster, const std::string& name) {
  for (const IslandModel& im : cluster.islands()) {
    if (im.name == name) return im.index;
  }
  HETSIM_CHECK(false, "planner: island of a GPU type's cluster missing from the cluster");
  return 0;
}

// The stage of `stages` holding model layer `layer`.
size_t StageHolding(const std::vector<SearchedStage>& stages, int layer) {
  for (size_t i = 0; i < stages.size(); ++i) {
    if (layer < stages[i].first_layer + stages[i].num_layers) return i;
  }
  return stages.size() - 1;
}

// One layer range's all-reduce over the stages that hold it.
struct RangeRing {
  std::vector<size_t> stage_of;  // per pipeline, its stage holding the range
  Time ready = 0;                // its last holder's last backward
  Time ring = 0;                 // alone (MixedRingTime)
};

RangeRing RangeRingOf(const workload::ModelCost& model, const ClusterModel& cluster, bool grad_reduce_in_fp32,
                      const std::vector<PricedPipeline>& pipelines, int first, int end) {
  RangeRing out;
  std::vector<SearchedGroup> holders;
  int finest = 1;
  for (const PricedPipeline& pipe : pipelines) {
    const size_t i = StageHolding(*pipe.stages, first);
    const SearchedStage& s = (*pipe.stages)[i];
    SearchedGroup& g = holders.emplace_back();
    g.island = IslandNamed(cluster, pipe.cluster->island(s.island).name);
    g.shape = s.shape;
    g.tensor_parallel = s.option.config.tensor_parallel;
    g.data_parallel = s.option.config.data_parallel;
    finest = std::max(finest, g.tensor_parallel);
    out.stage_of.push_back(i);
    out.ready = std::max(out.ready, pipe.prediction->stages[i].last_backward_end);
  }
  const int64_t bytes = workload::DenseGradSyncBytes(model, first, end - first, finest, grad_reduce_in_fp32);
  for (SearchedGroup& g : holders) g.option.grad_sync_bytes = bytes;
  out.ring = MixedRingTime(cluster, holders);
  return out;
}

// The candidate's pipelines as PriceLayerRanges and CombinePipelines read them.
std::vector<PricedPipeline> PricedPipelinesOf(const PipelinesCandidate& c) {
  std::vector<PricedPipeline> out;
  for (const PipelineOfType& p : c.pipelines) out.push_back({p.cluster.get(), &p.candidate.stages, &p.prediction});
  return out;
}

}  // namespace

LayerRangesPrice PriceLayerRanges(const workload::ModelCost& model, const ClusterModel& cluster,
                                  bool grad_reduce_in_fp32, const std::vector<PricedPipeline>& pipelines) {
  std::vector<int> cuts = {0, model.num_layers()};
  for (const PricedPipeline& p : pipelines) {
    for (const SearchedStage& s : *p.stages) cuts.push_back(s.first_layer);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  // [pipeline][stage]: when its last range is reduced.
  std::vector<std::vector<Time>> reduced(pipelines.size());
  for (size_t p = 0; p < pipelines.size(); ++p) {
    for (const StagePrediction& sp : pipelines[p].prediction->stages) reduced[p].push_back(sp.last_backward_end);
  }
  LayerRangesPrice out;
  out.ranges = static_cast<int>(cuts.size()) - 1;
  std::vector<RangeRing> rings;
  for (size_t r = 0; r + 1 < cuts.size(); ++r) {
    rings.push_back(RangeRingOf(model, cluster, grad_reduce_in_fp32, pipelines, cuts[r], cuts[r + 1]));
    out.slowest_ring = std::max(out.slowest_ring, rings.back().ring);
  }
  // In the order they become ready (the last layers' first, as the backward runs). A stage's ranges
  // share its GPUs' links: each stage's links carry its ranges one after another from when each is
  // ready (busy), and a range is reduced once every holder has carried it. A holder's backlog does not
  // delay the others' (they share links only where the range's ring crosses them).
  std::vector<size_t> order(rings.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return rings[a].ready != rings[b].ready ? rings[a].ready < rings[b].ready : a > b;
  });
  std::vector<std::vector<Time>> busy = reduced;  // [pipeline][stage]: its links' last range carried
  for (const size_t r : order) {
    Time done = 0;
    for (size_t p = 0; p < pipelines.size(); ++p) {
      Time& b = busy[p][rings[r].stage_of[p]];
      b = std::max(b, rings[r].ready) + rings[r].ring;
      done = std::max(done, b);
    }
    for (size_t p = 0; p < pipelines.size(); ++p) {
      Time& end = reduced[p][rings[r].stage_of[p]];
      end = std::max(end, done);
    }
  }
  out.grad_sync.resize(pipelines.size());
  out.end.resize(pipelines.size());
  for (size_t p = 0; p < pipelines.size(); ++p) {
    const PricedPipeline& pipe = pipelines[p];
    out.end[p] = pipe.prediction->pipeline;
    for (size_t i = 0; i < pipe.stages->size(); ++i) {
      const SearchedStage& s = (*pipe.stages)[i];
      const Time step =
          s.option.optimizer_passes + SecondsToTime(pipe.cluster->island(s.island).gpu->iteration_overhead_s());
      out.grad_sync[p].push_back(reduced[p][i] - pipe.prediction->stages[i].last_backward_end + step);
      out.end[p] = std::max(out.end[p], reduced[p][i] + step);
    }
    out.iteration = std::max(out.iteration, out.end[p]);
  }
  return out;
}

void ApplyLayerRanges(const LayerRangesPrice& price, size_t p, Prediction& prediction) {
  for (size_t i = 0; i < prediction.stages.size(); ++i) prediction.stages[i].grad_sync = price.grad_sync[p][i];
  prediction.iteration = price.end[p];
}

std::optional<PipelinesCandidate> PlanPipelinesOfTypes(const PipelinesContext& ctx) {
  std::vector<std::string> types;
  for (const spec::IslandSpec& is : ctx.cluster->islands) {
    if (std::find(types.begin(), types.end(), is.gpu.name) == types.end()) types.push_back(is.gpu.name);
  }
  if (types.size() < 2 || ctx.global_batch_size % ctx.micro_batch_size != 0) return std::nullopt;
  ProfilerOptions options = ctx.options;
  options.search_zero = false;   // the per-layer-range reduction does not model ZeRO
  options.cache = ctx.profiles;  // keyed by the islands' pricing figures, not their index: a type's islands hit
  PipelinesCandidate c;
  c.micro_batch_size = ctx.micro_batch_size;
  // The first split: each type's peak FLOP/s.
  std::vector<double> peaks;
  for (const std::string& type : types) {
    std::optional<spec::ClusterSpec> sub = ClusterOfGpuType(*ctx.cluster, type);
    absl::StatusOr<std::unique_ptr<ClusterModel>> model = ClusterModel::Create(*sub, ctx.model->dtype());
    if (!model.ok()) return std::nullopt;
    PipelineOfType& p = c.pipelines.emplace_back();
    p.gpu_type = type;
    p.cluster = *std::move(model);
    double peak = 0;
    for (const IslandModel& im : p.cluster->islands()) peak += static_cast<double>(im.gpus()) * im.peak_flop_per_s;
    peaks.push_back(peak);
  }
  const std::vector<uint64_t> first = ThroughputShares(peaks, ctx.global_batch_size, ctx.micro_batch_size);
  if (first.empty()) return std::nullopt;
  // Each pipeline planned by the DP at its first share; its predicted throughput sets the final split.
  std::vector<double> rates;
  for (size_t p = 0; p < c.pipelines.size(); ++p) {
    PipelineOfType& pipe = c.pipelines[p];
    Profiler profiler(*ctx.model, *pipe.cluster, ctx.micro_batch_size, options, 1);
    auto planned = SearchOnePipeline(profiler, static_cast<int64_t>(first[p] / ctx.micro_batch_size), ctx, c.search);
    if (!planned) return std::nullopt;
    pipe.candidate = std::move(planned->first);
    pipe.prediction = std::move(planned->second);
    rates.push_back(static_cast<double>(first[p]) / std::max(1e-12, TimeToSeconds(pipe.prediction.pipeline)));
  }
  std::vector<double> ideal;
  const std::vector<uint64_t> shares = ThroughputShares(rates, ctx.global_batch_size, ctx.micro_batch_size, &ideal);
  for (size_t p = 0; p < c.pipelines.size(); ++p) {
    PipelineOfType& pipe = c.pipelines[p];
    pipe.batch_share = shares[p];
    pipe.ideal_share = ideal[p];
    if (shares[p] != first[p] && !PredictAtShare(*ctx.model, ctx, pipe)) return std::nullopt;
  }
  const LayerRangesPrice price =
      PriceLayerRanges(*ctx.model, *ctx.cluster_model, ctx.options.grad_reduce_in_fp32, PricedPipelinesOf(c));
  for (size_t p = 0; p < c.pipelines.size(); ++p) ApplyLayerRanges(price, p, c.pipelines[p].prediction);
  c.ranges = price.ranges;
  c.slowest_ring = price.slowest_ring;
  c.iteration = price.iteration;
  return c;
}

absl::StatusOr<spec::PlanSpec> WritePipelinesPlan(const PipelinesCandidate& c, const spec::PlanSpec& shape) {
  spec::PlanSpec plan = shape;
  plan.stages.clear();
  plan.micro_batch_size = c.micro_batch_size;
  plan.microbatches = static_cast<int64_t>(plan.global_batch_size / c.micro_batch_size);
  for (const PipelineOfType& p : c.pipelines) {
    HETSIM_ASSIGN_OR_RETURN(spec::PlanSpec one, WritePlan(*p.cluster, p.candidate.stages, shape, true));
    plan.pipelines.push_back({.name = p.gpu_type,
                              .batch_share = p.batch_share,
                              .micro_batch_size = c.micro_batch_size,
                              .stages = std::move(one.stages)});
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
