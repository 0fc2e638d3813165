// The megatron baseline: Megatron-LM's manual 3D parallelism as a user would tune it with a grid search
// that assumes a homogeneous cluster. One (PP, TP, DP, ZeRO, recompute) for every stage, transformer
// blocks split evenly over the stages (embedding on the first, head on the last), stages laid over the
// GPUs in cluster order, 1F1B. The grid is scored as if every GPU were the first island's and every
// boundary the first island's fabric; among the configurations that score best, the first one that
// fits the real GPUs' memory is taken (a user would see the others crash).
#include <algorithm>
#include <tuple>

#include "planner/candidates.h"

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
std::vector<std::pair<int, int>> EvenSplit(const sim::workload::ModelCost& model, int stages) {
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

}  // namespace

std::optional<PipelineCandidate> PlanMegatron(const PlannerContext& ctx) {
  Profiler& prof = *ctx.profiler;
  const ClusterModel& cl = prof.cluster();
  const sim::workload::ModelCost& model = prof.model();
  const int total = cl.total_gpus();
  const int64_t B = ctx.microbatches;
  const IslandModel& ref = cl.island(0);
  std::optional<std::tuple<Time, int, int, int, int, int>> best_key;
  std::optional<PipelineCandidate> best;
  for (int pp = 1; pp <= std::min(total, model.num_layers()); ++pp) {
    if (total % pp != 0) continue;
    const int g = total / pp;
    std::vector<int> island_of;
    std::vector<MeshShape> shape_of;
    bool ok = true;
    for (int j = 0; j < cl.num_islands() && ok; ++j) {
      const std::optional<MeshShape> sh = ShapeFor(cl.island(j), g);
      if (!sh || cl.island(j).gpus() % g != 0) {
        ok = false;
        break;
      }
      for (int r = 0; r < cl.island(j).gpus() / g; ++r) {
        island_of.push_back(j);
        shape_of.push_back(*sh);
      }
    }
    if (!ok) continue;
    const std::optional<MeshShape> ref_shape = ShapeFor(ref, g);
    const std::vector<std::pair<int, int>> ranges = EvenSplit(model, pp);
    if (static_cast<int>(ranges.size()) != pp) continue;
    int min_gpn = g;
    for (const MeshShape& s : shape_of) min_gpn = std::min(min_gpn, s.gpus_per_node);
    for (int tp = 1; tp <= min_gpn; ++tp) {
      if (min_gpn % tp != 0) continue;
      const int dp = prof.DataParallelOf(g, tp);
      if (dp == 0 || prof.micro_batch_size() % static_cast<uint64_t>(dp) != 0) continue;
      for (int zero = 0; zero <= (dp > 1 ? 1 : 0); ++zero) {
        for (hetsim::v1::Recompute rc : {hetsim::v1::RECOMPUTE_NONE, hetsim::v1::RECOMPUTE_FULL}) {
          for (const auto& [ep, etp] : prof.ExpertLayouts(g, min_gpn)) {
            // Every stage's node size must keep the expert blocks inside nodes (or whole nodes).
            if (std::any_of(shape_of.begin(), shape_of.end(), [ep = ep](const MeshShape& sh) {
                  return sh.gpus_per_node % ep != 0 && ep % sh.gpus_per_node != 0;
                })) {
              continue;
            }
            const IntraStageConfig cfg{.tensor_parallel = tp,
                                       .data_parallel = dp,
                                       .zero_stage = zero,
                                       .recompute = rc,
                                       .sequence_parallel = prof.SequenceParallelFor(tp),
                                       .expert_parallel = ep,
                                       .expert_tensor_parallel = etp};
            Time sum = 0, t_max = 0;
            bool fits = true;
            PipelineCandidate cand;
            for (int s = 0; s < pp && fits; ++s) {
              const int launches = static_cast<int>(std::min<int64_t>(pp - s, B));
              const auto [first, count] = ranges[s];
              // As the grid search sees it: the first island's GPU everywhere.
              std::optional<StageOption> homo = prof.PriceDirect(0, ref_shape.value_or(shape_of[s]), cfg, first, count);
              std::optional<StageOption> real = prof.PriceDirect(island_of[s], shape_of[s], cfg, first, count);
              if (!homo || !real || homo->max_in_flight < launches || real->max_in_flight < launches) {
                fits = false;
                break;
              }
              const double bytes = prof.BoundaryBytes(first + count - 1);
              const Time c_homo = s + 1 < pp ? cl.BoundaryTime(0, 0, bytes, ref_shape.value_or(shape_of[s])) : 0;
              sum += homo->total() + 2 * c_homo;
              t_max = std::max(t_max, homo->total());
              SearchedStage st;
              st.first_group = st.first_layer = first;
              st.last_group = first + count - 1;
              st.num_layers = count;
              st.island = island_of[s];
              st.shape = shape_of[s];
              st.option = *real;
              st.comm_out = s + 1 < pp ? cl.BoundaryTime(island_of[s], island_of[s + 1], bytes, shape_of[s]) : 0;
              st.warmup = launches;
              cand.stages.push_back(st);
            }
            if (!fits) continue;
            const auto key = std::make_tuple(sum + (B - 1) * t_max, pp, tp, zero, static_cast<int>(rc), ep);
            if (!best_key || key < *best_key) {
              best_key = key;
              cand.schedule = hetsim::v1::ONE_F_ONE_B;
              cand.explicit_warmups = false;
              cand.planner_layers = model.num_layers();
              cand.notes.push_back(
                  "grid search over PP, TP, DP, EP (MoE), ZeRO 0-1, recompute as if every GPU were a " + ref.gpu_type);
              best = std::move(cand);
            }
          }
        }
      }
    }
  }
  return best;
}

}  // namespace hetsim::planner
