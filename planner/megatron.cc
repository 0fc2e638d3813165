// The megatron baseline: Megatron-LM's manual 3D parallelism as a user would tune it with a grid search
// that assumes a homogeneous cluster. One (PP, TP, DP, ZeRO, recompute) for every stage, transformer
// blocks split evenly over the stages (embedding on the first, head on the last), stages laid over the
// GPUs in cluster order, 1F1B. The grid is scored as if every GPU were the first island's and every
// boundary the first island's fabric; among the configurations that score best, the first one that
// fits the real GPUs' memory is taken (a user would see the others crash).
#include <algorithm>
#include <tuple>

#include "planner/candidates_internal.h"

namespace hetsim::planner {

namespace {

// (1, g) or (g / M, M) on an N x M island, if that is one of Alpa's shapes.
std::optional<MeshShape> ShapeFor(const IslandModel& im, int g) {
  for (const MeshShape& s : SubmeshShapes(im.nodes, im.gpus_per_node)) {
    if (s.gpus() == g) return s;
  }
  return std::nullopt;
}

// Megatron's layer split: blocks evenly over the stages, embedding first, head last.
std::vector<std::pair<int, int>> EvenSplit(const workload::ModelCost& model, int stages) {
  const int n = model.num_layers();
  const bool structured = model.is_transformer() && n >= 3;
  const int body_first = structured ? 1 : 0;
  const int body_end = structured ? n - 1 : n;
  const int body = body_end - body_first;
  std::vector<std::pair<int, int>> ranges;
  if (body < stages) return ranges;
  int at = body_first;
  for (int s = 0; s < stages; ++s) {
    const int size = body / stages + (s < body % stages ? 1 : 0);
    int first = at, end = at + size;
    if (s == 0) first = 0;
    if (s == stages - 1) end = n;
    ranges.push_back({first, end - first});
    at += size;
  }
  return ranges;
}

// The pipeline of one PP degree: `g` GPUs a stage, laid over the islands in cluster order.
struct GridLayout {
  int pp = 1;
  int gpus = 1;                             // per stage
  std::vector<int> island_of;               // per stage
  std::vector<MeshShape> shape_of;          // per stage
  std::optional<MeshShape> ref_shape;       // the stage's shape on the first island, as the grid sees it
  std::vector<std::pair<int, int>> ranges;  // per stage: first layer, layer count
  int min_gpus_per_node = 1;
};

// Nothing when some island cannot be cut into stages of total / pp GPUs, or the blocks into pp stages.
std::optional<GridLayout> LayoutFor(const Profiler& prof, int pp) {
  const ClusterModel& cl = prof.cluster();
  const int total = cl.total_gpus();
  if (total % pp != 0) return std::nullopt;
  GridLayout l;
  l.pp = pp;
  l.gpus = total / pp;
  for (int j = 0; j < cl.num_islands(); ++j) {
    const std::optional<MeshShape> sh = ShapeFor(cl.island(j), l.gpus);
    if (!sh || cl.island(j).gpus() % l.gpus != 0) return std::nullopt;
    for (int r = 0; r < cl.island(j).gpus() / l.gpus; ++r) {
      l.island_of.push_back(j);
      l.shape_of.push_back(*sh);
    }
  }
  l.ref_shape = ShapeFor(cl.island(0), l.gpus);
  l.ranges = EvenSplit(prof.model(), pp);
  if (static_cast<int>(l.ranges.size()) != pp) return std::nullopt;
  l.min_gpus_per_node = l.gpus;
  for (const MeshShape& sh : l.shape_of) l.min_gpus_per_node = std::min(l.min_gpus_per_node, sh.gpus_per_node);
  return l;
}

// One grid point: its score as the homogeneous grid search sees it (Eq. 13 on the first island's GPU
// and fabric) and its stages on the real GPUs; nothing when a stage does not fit either.
std::optional<std::pair<Time, PipelineCandidate>> PriceGridPoint(Profiler& prof, const GridLayout& l,
                                                                 const IntraStageConfig& cfg, int64_t B) {
  const ClusterModel& cl = prof.cluster();
  Time sum = 0, t_max = 0;
  PipelineCandidate cand;
  for (int s = 0; s < l.pp; ++s) {
    const int launches = static_cast<int>(std::min<int64_t>(l.pp - s, B));
    const auto [first, count] = l.ranges[s];
    const MeshShape seen = l.ref_shape.value_or(l.shape_of[s]);
    // As the grid search sees it: the first island's GPU everywhere.
    std::optional<StageOption> homo = prof.PriceDirect(0, seen, cfg, first, count);
    std::optional<StageOption> real = prof.PriceDirect(l.island_of[s], l.shape_of[s], cfg, first, count);
    if (!homo || !real || homo->max_in_flight < launches || real->max_in_flight < launches) return std::nullopt;
    const double bytes = prof.BoundaryBytes(first + count - 1);
    const bool last = s + 1 == l.pp;
    const Time c_homo = last ? 0 : cl.BoundaryTime(0, 0, bytes, seen);
    sum += homo->total() + 2 * c_homo;
    t_max = std::max(t_max, homo->total());
    SearchedStage st;
    st.first_group = st.first_layer = first;
    st.last_group = first + count - 1;
    st.num_layers = count;
    st.island = l.island_of[s];
    st.shape = l.shape_of[s];
    st.option = *real;
    st.comm_out = last ? 0 : cl.BoundaryTime(l.island_of[s], l.island_of[s + 1], bytes, l.shape_of[s]);
    st.warmup = launches;
    cand.stages.push_back(st);
  }
  return std::make_pair(sum + (B - 1) * t_max, std::move(cand));
}

// Whether every stage's node size keeps the expert blocks of `ep` GPUs inside nodes (or whole nodes).
bool ExpertsFitNodes(const GridLayout& l, int ep) {
  return std::none_of(l.shape_of.begin(), l.shape_of.end(),
                      [ep](const MeshShape& sh) { return sh.gpus_per_node % ep != 0 && ep % sh.gpus_per_node != 0; });
}

}  // namespace

std::optional<PipelineCandidate> PlanMegatron(const PlannerContext& ctx) {
  Profiler& prof = *ctx.profiler;
  const workload::ModelCost& model = prof.model();
  const std::string& ref_gpu = prof.cluster().island(0).gpu_type;
  std::optional<std::tuple<Time, int, int, int, int, int>> best_key;
  std::optional<PipelineCandidate> best;
  for (int pp = 1; pp <= std::min(prof.cluster().total_gpus(), model.num_layers()); ++pp) {
    const std::optional<GridLayout> layout = LayoutFor(prof, pp);
    if (!layout) continue;
    const int gpn = layout->min_gpus_per_node;
    for (int tp = 1; tp <= gpn; ++tp) {
      if (gpn % tp != 0) continue;
      const int dp = prof.DataParallelOf(layout->gpus, tp);
      if (dp == 0 || prof.micro_batch_size() % static_cast<uint64_t>(dp) != 0) continue;
      for (int zero = 0; zero <= (dp > 1 ? 1 : 0); ++zero) {
        for (spec::Recompute rc : {spec::Recompute::kNone, spec::Recompute::kFull}) {
          for (const auto& [ep, etp] : prof.ExpertLayouts(layout->gpus, gpn)) {
            if (!ExpertsFitNodes(*layout, ep)) continue;
            const IntraStageConfig cfg{.tensor_parallel = tp,
                                       .data_parallel = dp,
                                       .zero_stage = zero,
                                       .recompute = rc,
                                       .sequence_parallel = prof.SequenceParallelFor(tp),
                                       .expert_parallel = ep,
                                       .expert_tensor_parallel = etp};
            std::optional<std::pair<Time, PipelineCandidate>> point =
                PriceGridPoint(prof, *layout, cfg, ctx.microbatches);
            if (!point) continue;
            const auto key = std::make_tuple(point->first, pp, tp, zero, static_cast<int>(rc), ep);
            if (best_key && !(key < *best_key)) continue;
            best_key = key;
            best = std::move(point->second);
            best->schedule = spec::ScheduleKind::kOneFOneB;
            best->explicit_warmups = false;
            best->planner_layers = model.num_layers();
            best->notes.push_back("grid search over PP, TP, DP, EP (MoE), ZeRO 0-1, recompute as if every GPU were a " +
                                  ref_gpu);
          }
        }
      }
    }
  }
  return best;
}

}  // namespace hetsim::planner
