// HAPT's mixed-replicas family (planner/mixed_replicas.h, "Search"; planner/mixed_search.h): every island
// cut into S equal slices, stage i on slice i of each, each stage's groups searched by PriceMixedStage.
#include "planner/mixed_search.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/units.h"
#include "planner/mixed_replicas.h"
#include "planner/plan_reader.h"
#include "planner/plan_writer.h"
#include "planner/prediction.h"
#include "sim/workload/gather_lock_step.h"

namespace hetsim::planner {
namespace {

// Stage i's slice of every island when each is cut into `stages` equal slices: whole nodes, or equal
// parts of every node; empty when some island cannot be cut so.
std::vector<std::vector<SearchedGroup>> IslandSlices(const ClusterModel& cluster, int stages) {
  std::vector<std::vector<SearchedGroup>> slices(stages);
  for (const IslandModel& im : cluster.islands()) {
    const int per_node = stages % std::max(1, im.nodes) == 0 ? stages / im.nodes : 0;
    const bool whole = im.nodes % stages == 0;
    if (!whole && (per_node == 0 || im.gpus_per_node % per_node != 0)) return {};
    for (int i = 0; i < stages; ++i) {
      SearchedGroup& g = slices[i].emplace_back();
      g.island = im.index;
      if (whole) {
        g.shape = {im.nodes / stages, im.gpus_per_node};
        g.first_node = i * g.shape.nodes;
      } else {
        g.shape = {1, im.gpus_per_node / per_node};
        g.first_node = i / per_node;
        g.first_gpu = (i % per_node) * g.shape.gpus_per_node;
      }
    }
  }
  return slices;
}

// The TP degrees a group on `shape` may take: inside a node, dividing the model's heads and FFN.
std::vector<int> GroupTensorParallels(const Profiler& prof, MeshShape shape) {
  const workload::ModelCost& m = prof.model();
  std::vector<int> tps;
  for (int tp = 1; tp <= shape.gpus_per_node; ++tp) {
    if (shape.gpus_per_node % tp != 0) continue;
    if (tp > 1 && (!m.is_transformer() || m.num_attention_heads() % tp != 0 || m.num_kv_heads() % tp != 0 ||
                   m.ffn_hidden_size() % static_cast<uint64_t>(tp) != 0)) {
      continue;
    }
    tps.push_back(tp);
  }
  return tps;
}

// The model's layers in `stages` contiguous ranges whose times on one GPU of the first island balance
// (the smallest largest range, by dynamic programming over the split points).
std::vector<std::pair<int, int>> BalancedLayerRanges(Profiler& prof, int stages) {
  const int n = prof.model().num_layers();
  if (n < stages) return {};
  std::vector<double> prefix(n + 1, 0);
  for (int l = 0; l < n; ++l) {
    const std::optional<StageOption> o = prof.PriceDirect(0, {1, 1}, IntraStageConfig{}, l, 1);
    prefix[l + 1] = prefix[l] + (o ? TimeToSeconds(o->total()) : 1.0);
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // best[s][k]: the smallest largest range of the first k layers in s ranges; cut[s][k] its last start.
  std::vector<std::vector<double>> best(stages + 1, std::vector<double>(n + 1, kInf));
  std::vector<std::vector<int>> cut(stages + 1, std::vector<int>(n + 1, 0));
  best[0][0] = 0;
  for (int s = 1; s <= stages; ++s) {
    for (int k = s; k <= n; ++k) {
      for (int j = s - 1; j < k; ++j) {
        const double v = std::max(best[s - 1][j], prefix[k] - prefix[j]);
        if (v < best[s][k]) {
          best[s][k] = v;
          cut[s][k] = j;
        }
      }
    }
  }
  std::vector<std::pair<int, int>> ranges(stages);
  for (int s = stages, k = n; s >= 1; k = cut[s][k], --s) ranges[s - 1] = {cut[s][k], k - cut[s][k]};
  return ranges;
}

// Every split of `micro_batch` samples into whole shares >= 1 per replica of each group (group g has
// replicas[g] replicas), in lexicographic order.
void ForEachShareSplit(const std::vector<int>& replicas, uint64_t micro_batch, std::vector<uint64_t>& shares,
                       const std::function<void(const std::vector<uint64_t>&)>& visit) {
  const size_t g = shares.size();
  if (g + 1 == replicas.size()) {
    const uint64_t d = static_cast<uint64_t>(replicas[g]);
    if (micro_batch >= d && micro_batch % d == 0) {
      shares.push_back(micro_batch / d);
      visit(shares);
      shares.pop_back();
    }
    return;
  }
  uint64_t rest_min = 0;
  for (size_t h = g + 1; h < replicas.size(); ++h) rest_min += static_cast<uint64_t>(replicas[h]);
  const uint64_t d = static_cast<uint64_t>(replicas[g]);
  for (uint64_t s = 1; s * d + rest_min <= micro_batch; ++s) {
    shares.push_back(s);
    ForEachShareSplit(replicas, micro_batch - s * d, shares, visit);
    shares.pop_back();
  }
}

// Every TP degree per group (the cartesian product), each dividing the largest (the finest shard the
// gradients reduce by).
std::vector<std::vector<int>> TensorParallelChoices(const Profiler& prof, const std::vector<SearchedGroup>& places) {
  std::vector<std::vector<int>> out = {{}};
  for (const SearchedGroup& g : places) {
    std::vector<std::vector<int>> next;
    for (const std::vector<int>& prefix : out) {
      for (int tp : GroupTensorParallels(prof, g.shape)) {
        next.push_back(prefix);
        next.back().push_back(tp);
      }
    }
    out = std::move(next);
  }
  std::erase_if(out, [](const std::vector<int>& tps) {
    const int finest = *std::max_element(tps.begin(), tps.end());
    return std::any_of(tps.begin(), tps.end(), [finest](int tp) { return finest % tp != 0; });
  });
  return out;
}

// MoE: every expert layout per group (the cartesian product), each group's ExpertLayoutsOfGroup: powers
// of two nest, so the finest group's EP and ETP are multiples of every group's once the layouts that do
// not are dropped (proto/validate_replica_groups.cc). One empty choice for a dense model (its groups keep
// no expert layout).
std::vector<std::vector<std::pair<int, int>>> ExpertChoices(const Profiler& prof,
                                                            const std::vector<SearchedGroup>& places) {
  std::vector<std::vector<std::pair<int, int>>> out = {{}};
  if (prof.model().num_experts() <= 1) return out;
  for (const SearchedGroup& g : places) {
    std::vector<std::vector<std::pair<int, int>>> next;
    for (const std::vector<std::pair<int, int>>& prefix : out) {
      for (const std::pair<int, int>& layout : ExpertLayoutsOfGroup(prof, g.shape)) {
        next.push_back(prefix);
        next.back().push_back(layout);
      }
    }
    out = std::move(next);
  }
  std::erase_if(out, [&](const std::vector<std::pair<int, int>>& layouts) {
    int ep = 1, etp = 1;
    for (const auto& [e, t] : layouts) {
      if (e * t > ep * etp) std::tie(ep, etp) = std::make_pair(e, t);
    }
    for (size_t g = 0; g < layouts.size(); ++g) {
      const auto [e, t] = layouts[g];
      if (ep % e != 0 || etp % t != 0 || places[g].shape.gpus() % (e * t) != 0) return true;
    }
    return false;
  });
  return out;
}

// Whether every group's ETP is at most its TP (`tps`): an expert split as the group's dense layers are
// at most, as Megatron-Core's MoE configurations set it (ETP 1 or up to TP); what bounds the search.
bool EtpWithinTp(const std::vector<std::pair<int, int>>& layouts, const std::vector<int>& tps) {
  for (size_t g = 0; g < layouts.size(); ++g) {
    if (layouts[g].second > tps[g]) return false;
  }
  return true;
}

// One stage of the family's search: layers [first, first + count) on `places`, each group's replicas
// holding `in_flight` microbatches of `micro_batch` samples.
struct StageQuery {
  const std::vector<SearchedGroup>* places = nullptr;
  int first = 0, count = 0, in_flight = 1;
  uint64_t micro_batch = 1;
};

// Every mixed stage of `q` at ZeRO stages `zeros` (a ZeRO-3 stage with its prefetched gathers), each TP
// per group, split of the micro-batch, expert layout per group and recompute, priced and handed to
// `visit` when its every group holds its in-flight microbatches.
void ForEachMixedStage(GroupProfilers& profilers, const StageQuery& q, const std::vector<int>& zeros,
                       const std::function<void(SearchedStage&&)>& visit) {
  const Profiler& prof = profilers.base();
  std::vector<spec::Recompute> recomputes = {spec::Recompute::kNone};
  if (prof.options().search_recompute) {
    if (prof.model().is_transformer()) recomputes.push_back(spec::Recompute::kSelective);
    recomputes.push_back(spec::Recompute::kFull);
  }
  // An MoE model's groups of TP > 1 run with sequence parallelism, as Megatron-LM's MoE layer requires.
  const bool moe = prof.model().num_experts() > 1;
  const std::vector<std::vector<std::pair<int, int>>> expert_choices = ExpertChoices(prof, *q.places);
  for (const std::vector<int>& tps : TensorParallelChoices(prof, *q.places)) {
    std::vector<SearchedGroup> groups = *q.places;
    std::vector<int> replicas;
    for (size_t g = 0; g < groups.size(); ++g) {
      groups[g].tensor_parallel = tps[g];
      groups[g].data_parallel = groups[g].shape.gpus() / tps[g];
      replicas.push_back(groups[g].data_parallel);
    }
    // ZeRO-3's gathers depend on the groups' places and TP only: priced once per TP choice.
    std::optional<std::vector<Time>> gathers;
    std::vector<uint64_t> shares;
    ForEachShareSplit(replicas, q.micro_batch, shares, [&](const std::vector<uint64_t>& split) {
      for (size_t g = 0; g < groups.size(); ++g) groups[g].share = split[g];
      for (const std::vector<std::pair<int, int>>& layouts : expert_choices) {
        if (!EtpWithinTp(layouts, tps)) continue;
        for (size_t g = 0; g < layouts.size(); ++g)
          std::tie(groups[g].expert_parallel, groups[g].expert_tensor_parallel) = layouts[g];
        for (int zero : zeros) {
          for (spec::Recompute rc : recomputes) {
            const IntraStageConfig stage{.zero_stage = zero, .recompute = rc, .sequence_parallel = moe};
            std::optional<SearchedStage> s = PriceMixedStage(profilers, stage, groups, q.first, q.count);
            if (!s || s->option.max_in_flight < q.in_flight) continue;
            if (zero >= 3) {
              if (!gathers)
                gathers =
                    MixedLayerGathers(prof.model(), prof.cluster(), s->groups, q.first, q.count, profilers.Nccl());
              AddMixedStageGathers(*gathers, /*prefetch=*/true, /*lock_step=*/false, *s);
            }
            visit(*std::move(s));
          }
        }
      }
    });
  }
}

// Keeps `s` in `best` when faster (then by the smaller gradient synchronisation).
void KeepFaster(std::optional<SearchedStage>& best, const SearchedStage& s) {
  if (best && std::make_tuple(s.option.total(), s.option.grad_sync) >=
                  std::make_tuple(best->option.total(), best->option.grad_sync)) {
    return;
  }
  best = s;
}

bool AnyEtpAboveOne(const SearchedStage& s) {
  return std::any_of(s.groups.begin(), s.groups.end(),
                     [](const SearchedGroup& g) { return g.expert_tensor_parallel > 1; });
}

// The fastest stage of a query, and what it beat that the session-40 search added (mixed_search.h).
struct MixedStageChoice {
  std::optional<SearchedStage> best;
  std::optional<SearchedStage> at_etp_one;   // the fastest with every group at ETP 1
  std::optional<SearchedStage> below_zero3;  // the fastest at ZeRO 0-2 (the best at ZeRO-3: none fits when empty)
};

// The fastest mixed stage of `q`: by time, then gradient synchronisation; ZeRO-3 searched only when the
// best at ZeRO 0-2 does not fit or fits only by recomputing (memory needs it).
MixedStageChoice BestMixedStage(GroupProfilers& profilers, const StageQuery& q) {
  const Profiler& prof = profilers.base();
  MixedStageChoice c;
  const auto visit = [&](SearchedStage&& s) {
    if (!AnyEtpAboveOne(s)) KeepFaster(c.at_etp_one, s);
    KeepFaster(c.best, s);
  };
  std::vector<int> zeros = {0};
  if (prof.options().search_zero) zeros = {0, 1, 2};
  ForEachMixedStage(profilers, q, zeros, visit);
  if (prof.options().search_zero && (!c.best || c.best->option.config.recompute != spec::Recompute::kNone)) {
    c.below_zero3 = c.best;
    ForEachMixedStage(profilers, q, {3}, visit);
  }
  return c;
}

// A pipeline of the family, predicted, with why it took what the session-40 search added.
struct MixedPlanOf {
  std::vector<SearchedStage> stages;
  Prediction prediction;
  int virtual_stages = 1;
  bool zero3 = false;
  std::vector<std::string> why;
};

const char* RecomputeWord(spec::Recompute rc) {
  return rc == spec::Recompute::kFull ? "full" : rc == spec::Recompute::kSelective ? "selective" : "none";
}

// Why stage `i` took ETP > 1 or ZeRO-3 (empty when it took neither).
std::vector<std::string> WhyOfStage(const MixedStageChoice& c, int i) {
  std::vector<std::string> why;
  const double t = TimeToMilliseconds(c.best->option.total());
  if (AnyEtpAboveOne(*c.best)) {
    const double sync = TimeToMilliseconds(c.best->option.grad_sync);
    why.push_back(c.at_etp_one
                      ? absl::StrFormat("stage %d at ETP > 1: t %.3f ms + sync %.3f ms, %.3f + %.3f ms at ETP 1", i, t,
                                        sync, TimeToMilliseconds(c.at_etp_one->option.total()),
                                        TimeToMilliseconds(c.at_etp_one->option.grad_sync))
                      : absl::StrFormat("stage %d at ETP > 1: nothing fits at ETP 1", i));
  }
  if (c.best->option.config.zero_stage >= 3) {
    why.push_back(c.below_zero3 ? absl::StrFormat("stage %d at ZeRO-3 with prefetch: t %.3f ms, %.3f ms at ZeRO-%d "
                                                  "recomputing %s",
                                                  i, t, TimeToMilliseconds(c.below_zero3->option.total()),
                                                  c.below_zero3->option.config.zero_stage,
                                                  RecomputeWord(c.below_zero3->option.config.recompute))
                                : absl::StrFormat("stage %d at ZeRO-3 with prefetch: nothing fits at ZeRO 0-2", i));
  }
  return why;
}

// The mixed plan of `stages` stages (see the header), predicted; nullopt when it cannot be cut or fit.
std::optional<MixedPlanOf> MixedPipeline(const PlannerContext& ctx, GroupProfilers& profilers, int stages) {
  Profiler& prof = *ctx.profiler;
  const std::vector<std::vector<SearchedGroup>> slices = IslandSlices(prof.cluster(), stages);
  const std::vector<std::pair<int, int>> ranges = BalancedLayerRanges(prof, stages);
  if (slices.empty() || ranges.empty()) return std::nullopt;
  MixedPlanOf out;
  for (int i = 0; i < stages; ++i) {
    const int in_flight = static_cast<int>(std::min<int64_t>(stages - i, ctx.microbatches));
    const StageQuery q{.places = &slices[i],
                       .first = ranges[i].first,
                       .count = ranges[i].second,
                       .in_flight = in_flight,
                       .micro_batch = prof.micro_batch_size()};
    MixedStageChoice c = BestMixedStage(profilers, q);
    if (!c.best) return std::nullopt;
    for (std::string& w : WhyOfStage(c, i)) out.why.push_back(std::move(w));
    out.zero3 = out.zero3 || c.best->option.config.zero_stage >= 3;
    out.stages.push_back(*std::move(c.best));
  }
  std::vector<SearchedStage>& pipeline = out.stages;
  for (int i = 0; i + 1 < stages; ++i) {
    pipeline[i].comm_out =
        MixedBoundaryTime(prof.cluster(), prof.BoundaryBytes(pipeline[i].first_layer + pipeline[i].num_layers - 1),
                          prof.micro_batch_size(), pipeline[i], pipeline[i + 1]);
  }
  absl::StatusOr<Prediction> p =
      Predict(prof.cluster(), pipeline, ctx.microbatches, spec::ScheduleKind::kOneFOneB, ctx.epsilon, {},
              WorkOf(prof.model(), prof.micro_batch_size() * static_cast<uint64_t>(ctx.microbatches)));
  if (!p.ok() || !p->fits_memory) return std::nullopt;
  out.prediction = *std::move(p);
  return out;
}

// The blocks of layers [first, first + count) besides the embedding and the head (proto's StageBlockLayers).
int BlockLayers(const spec::EdgeLayers& edges, int layer_count, int first, int count) {
  const int end = first + count;
  const int embedding = std::max(0, std::min(end, edges.embedding) - first);
  const int head = std::max(0, end - std::max(first, layer_count - edges.head));
  return std::max(0, count - embedding - head);
}

// Whether every stage of `stages` cuts into `v` chunks as the validator requires (CheckChunks): its blocks,
// else (when it holds the embedding or the head) its layers, a positive multiple of v.
bool ChunksDivide(const workload::ModelCost& model, const std::vector<SearchedStage>& stages, int v) {
  return std::all_of(stages.begin(), stages.end(), [&](const SearchedStage& s) {
    const int blocks = BlockLayers(model.edge_layers(), model.num_layers(), s.first_layer, s.num_layers);
    if (blocks == s.num_layers) return blocks % v == 0;
    return blocks > 0 && (blocks % v == 0 || s.num_layers % v == 0);
  });
}

// `plan` (a 1F1B pipeline of the family) under INTERLEAVED_1F1B with the fewest chunks that predicts
// fastest, its stages' choices kept, priced as `validate` prices it (StagesOfPlan); nullopt when no v
// fits, predicts faster, or the schedule refuses the pipeline.
std::optional<MixedPlanOf> Interleaved(const PlannerContext& ctx, const MixedPlanOf& plan) {
  Profiler& prof = *ctx.profiler;
  const int S = static_cast<int>(plan.stages.size());
  if (S < 2 || ctx.microbatches % S != 0) return std::nullopt;
  spec::PlanSpec shape;
  static_cast<spec::CostSwitches&>(shape) = prof.options();
  shape.micro_batch_size = prof.micro_batch_size();
  shape.microbatches = ctx.microbatches;
  shape.global_batch_size = prof.micro_batch_size() * static_cast<uint64_t>(ctx.microbatches);
  shape.schedule = spec::ScheduleKind::kInterleaved1F1B;
  shape.h1f1b_epsilon = ctx.epsilon;
  shape.zero3_prefetch = plan.zero3;
  std::optional<MixedPlanOf> best;
  for (int v = 2; v <= kMaxMixedChunks; ++v) {
    if (!ChunksDivide(prof.model(), plan.stages, v)) continue;
    shape.virtual_stages = v;
    absl::StatusOr<spec::PlanSpec> written = WritePlan(prof.cluster(), plan.stages, shape, /*explicit_warmups=*/false);
    if (!written.ok()) continue;
    absl::StatusOr<std::vector<SearchedStage>> stages = StagesOfPlan(prof, *written);
    if (!stages.ok()) continue;
    absl::StatusOr<Prediction> p = Predict(prof.cluster(), *stages, ctx.microbatches, shape.schedule, ctx.epsilon, {},
                                           WorkOf(prof.model(), shape.global_batch_size), v);
    const Time to_beat = best ? best->prediction.iteration : plan.prediction.iteration;
    if (!p.ok() || !p->fits_memory || p->iteration >= to_beat) continue;
    best = MixedPlanOf{*std::move(stages), *std::move(p), v, plan.zero3, plan.why};
  }
  if (best) {
    best->why.push_back(absl::StrFormat("interleaved 1F1B, %d chunks a stage: %.3f ms, %.3f ms at 1F1B",
                                        best->virtual_stages, TimeToMilliseconds(best->prediction.iteration),
                                        TimeToMilliseconds(plan.prediction.iteration)));
  }
  return best;
}

}  // namespace

void AddMixedStageGathers(const std::vector<Time>& gather, bool prefetch, bool lock_step, SearchedStage& s) {
  if (gather.empty()) return;
  std::vector<std::vector<Time>> forward, backward;  // each group's layers without their gathers
  for (const SearchedGroup& g : s.groups) {
    forward.push_back(workload::CutByWeights(g.option.forward, {}, gather.size()));
    backward.push_back(workload::CutByWeights(g.option.backward, {}, gather.size()));
  }
  s.option.forward = s.option.backward = 0;
  for (SearchedGroup& g : s.groups) {
    AddZeroThreeGathers(gather, prefetch, g.option);
    s.option.forward = std::max(s.option.forward, g.option.forward);
    s.option.backward = std::max(s.option.backward, g.option.backward);
  }
  if (!lock_step || s.groups.size() < 2) return;
  // Equal parts: the backward's layers in reverse are the same parts, its gathers reversed.
  const std::vector<Time> reversed(gather.rbegin(), gather.rend());
  s.option.forward = std::max(s.option.forward, workload::LockStepPass(forward, gather, prefetch));
  s.option.backward = std::max(s.option.backward, workload::LockStepPass(backward, reversed, prefetch));
}

std::vector<std::pair<int, int>> ExpertLayoutsOfGroup(const Profiler& prof, MeshShape shape) {
  const workload::ModelCost& m = prof.model();
  if (m.num_experts() <= 1) return {};
  const int gpus = shape.gpus(), gpn = std::max(1, shape.gpus_per_node);
  const bool forced = prof.options().expert_layout.first > 0;  // the request's one layout
  // ETP 1 first: on a tie (an EP x ETP block reached at ETP 1 as well) the search keeps ETP 1, which adds
  // no collectives inside the experts.
  std::vector<std::pair<int, int>> out;
  for (const auto& [ep, etp] : prof.ExpertLayouts(gpus, gpn)) out.emplace_back(ep, std::max(1, etp));
  for (const auto& [ep, etp] : prof.ExpertLayouts(gpus, gpn)) {
    for (int t = 2; !forced && t <= gpn && ep * t <= gpus; t *= 2) {
      const int block = ep * t;
      const bool aligned = gpn % block == 0 || block % gpn == 0;
      if (m.expert_ffn_hidden_size() % static_cast<uint64_t>(t) == 0 && gpus % block == 0 && aligned)
        out.emplace_back(ep, t);
    }
  }
  return out;
}

std::optional<PipelineCandidate> PlanMixedReplicas(const PlannerContext& ctx) {
  if (ctx.profiler->cluster().num_islands() < 2 || ctx.profiler->context_parallel() != 1) return std::nullopt;
  GroupProfilers profilers(*ctx.profiler);
  std::optional<MixedPlanOf> best;
  const auto consider = [&](std::optional<MixedPlanOf>&& p) {
    if (p && (!best || p->prediction.iteration < best->prediction.iteration)) best = std::move(p);
  };
  for (int stages = 1; stages <= kMaxMixedStages; ++stages) {
    std::optional<MixedPlanOf> p = MixedPipeline(ctx, profilers, stages);
    if (!p) continue;
    std::optional<MixedPlanOf> interleaved = Interleaved(ctx, *p);
    consider(std::move(p));
    consider(std::move(interleaved));
  }
  if (!best) return std::nullopt;
  PipelineCandidate c;
  c.stages = std::move(best->stages);
  c.schedule = best->virtual_stages > 1 ? spec::ScheduleKind::kInterleaved1F1B : spec::ScheduleKind::kOneFOneB;
  c.virtual_stages = best->virtual_stages;
  c.zero3_prefetch = best->zero3;
  c.why = std::move(best->why);
  c.explicit_warmups = false;
  c.planner_layers = ctx.profiler->model().num_layers();
  return c;
}

}  // namespace hetsim::planner
