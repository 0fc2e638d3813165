#include "planner/tangram.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "planner/candidates_internal.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/stage_cost.h"
#include "topology/gpu_islands.h"

namespace hetsim::planner {

namespace {

struct SubStageSlot {
  int island;  // cluster island
  int shape;   // index into the profiler's shapes of that island
};

struct InnerPlan {
  bool ok = false;
  std::vector<SearchedStage> stages;  // comm_out of the last one filled by the composition
};

struct TangramCell {
  bool ok = false;
  Time tau_max = 0, tau_sum = 0;
  int stages = 0;
  int next = -1;  // layer where the next island's slice starts (-1: none)
  InnerPlan inner;
};

class Composer {
 public:
  Composer(Profiler& p, int64_t n, const TangramOptions& o) : prof_(p), n_(n), opt_(o) {}

  TangramResult Run() {
    TangramResult result;
    const ClusterModel& cl = prof_.cluster();
    // Algorithm 1 compares BF16 peaks; a GPU without BF16 (V100) is compared at the model's dtype.
    spec::ClusterSpec view = cl.topology().cluster();
    for (spec::IslandSpec& island : view.islands) {
      spec::GpuSpec& g = island.gpu;
      if (g.peak(spec::DType::kBf16) > 0) continue;
      absl::StatusOr<workload::GpuCompute> gc = workload::GpuCompute::Create(g, prof_.model().dtype(), "");
      if (gc.ok()) g.peak_flop_per_s[static_cast<int>(spec::DType::kBf16)] = gc->peak_flop_per_s();
    }
    absl::StatusOr<topology::IslandFormation> f = topology::FormGpuIslands(view);
    if (!f.ok()) return result;
    for (const topology::GpuIsland& gi : f->islands) islands_.push_back(gi);
    stats_.islands = static_cast<int64_t>(islands_.size());
    double total_flop_per_s = 0;
    for (const auto& gi : islands_) total_flop_per_s += gi.effective_flop_per_s;
    for (const auto& gi : islands_) share_.push_back(gi.effective_flop_per_s / total_flop_per_s);
    for (size_t t = 0; t < islands_.size(); ++t) layouts_.push_back(Layouts(islands_[t]));
    const int K = static_cast<int>(islands_.size());
    std::vector<int> order(K);
    std::iota(order.begin(), order.end(), 0);
    // Rule 4 needs a known plan: the compute-proportional split in the first order.
    upper_ = kNone;
    if (opt_.rule_interface || opt_.rule_balance) {
      if (std::optional<std::pair<Time, std::vector<SearchedStage>>> p = Proportional(order)) upper_ = p->first;
    }
    std::optional<Time> best;
    do {
      std::optional<std::pair<Time, std::vector<SearchedStage>>> r = Compose(order);
      if (r && (!best || r->first < *best)) {
        best = r->first;
        result.stages = r->second;
      }
    } while (std::next_permutation(order.begin(), order.end()));
    result.feasible = best.has_value();
    result.cycle = best.value_or(Time());
    result.stats = stats_;
    return result;
  }

 private:
  static constexpr Time kNone = kNoTime;

  // Sub-stage slots of every pipeline depth the island supports.
  std::vector<std::vector<SubStageSlot>> Layouts(const topology::GpuIsland& gi) const {
    std::vector<std::vector<SubStageSlot>> out;
    for (int depth = 1; depth <= opt_.max_island_depth; depth *= 2) {
      if (gi.gpus % depth != 0) continue;
      const int g = static_cast<int>(gi.gpus / depth);
      std::vector<SubStageSlot> slots;
      bool ok = true;
      for (int member : gi.members) {
        const IslandModel& im = prof_.cluster().island(member);
        const auto& shapes = prof_.shapes()[member];
        int idx = -1;
        for (int s = 0; s < static_cast<int>(shapes.size()); ++s) {
          if (shapes[s].gpus() == g) idx = s;
        }
        if (idx < 0 || im.gpus() % g != 0) {
          ok = false;
          break;
        }
        for (int r = 0; r < im.gpus() / g; ++r) slots.push_back({member, idx});
      }
      if (ok) out.push_back(std::move(slots));
    }
    return out;
  }

  // The inner homogeneous planner: best depth and per-sub-stage configuration for layers [a, b).
  InnerPlan Inner(int t, int a, int b, int stages_after) {
    const int sig = prof_.SignatureOf(a, b - a);
    const auto key = std::make_tuple(t, sig, stages_after);
    if (opt_.rule_dedup) {
      auto it = cache_.find(key);
      if (it != cache_.end()) {
        ++stats_.dedup_hits;
        return it->second;
      }
    }
    ++stats_.inner_calls;
    InnerPlan best;
    Time best_cost = 0;
    for (const std::vector<SubStageSlot>& slots : layouts_[t]) {
      const int depth = static_cast<int>(slots.size());
      if (depth > b - a) continue;
      InnerPlan plan;
      plan.ok = true;
      Time tau_max = 0, tau_sum = 0;
      int at = a;
      for (int q = 0; q < depth && plan.ok; ++q) {
        const int count = (b - a) / depth + (q < (b - a) % depth ? 1 : 0);
        const std::vector<StageOption>& opts = prof_.Options(slots[q].island, slots[q].shape, at, count);
        const int launches = static_cast<int>(std::min<int64_t>(n_, stages_after + depth - q));
        const StageOption* pick = nullptr;
        for (const StageOption& o : opts) {
          if (o.max_in_flight >= launches) {
            pick = &o;
            break;
          }
        }
        if (!pick) {
          plan.ok = false;
          break;
        }
        SearchedStage st;
        st.first_layer = st.first_group = at;
        st.num_layers = count;
        st.last_group = at + count - 1;
        st.island = slots[q].island;
        st.shape = prof_.shapes()[slots[q].island][slots[q].shape];
        st.option = *pick;
        st.warmup = launches;
        if (q + 1 < depth) {
          st.comm_out = prof_.cluster().BoundaryTime(slots[q].island, slots[q + 1].island,
                                                     prof_.BoundaryBytes(at + count - 1), st.shape);
        }
        const Time tau = Tau(st.option.total(), st.comm_out);
        tau_max = std::max(tau_max, tau);
        tau_sum += tau;
        plan.stages.push_back(st);
        at += count;
      }
      if (!plan.ok) continue;
      const Time cost = (n_ - 1) * tau_max + tau_sum;
      if (!best.ok || cost < best_cost) {
        best = std::move(plan);
        best_cost = cost;
      }
    }
    if (opt_.rule_dedup) cache_[key] = best;
    return best;
  }

  Time Tau(Time compute, Time comm) const { return opt_.overlap_aware ? std::max(compute, comm) : compute + comm; }

  // Peak FLOP/s of all GPUs of Tangram island t (an upper bound on what any plan achieves there).
  double PeakRate(int t) const {
    double rate = 0;
    for (int m : islands_[t].members)
      rate += prof_.cluster().island(m).peak_flop_per_s * prof_.cluster().island(m).gpus();
    return rate;
  }

  // Seconds of model FLOPs of layers [a, b) for one microbatch at `rate` FLOP/s.
  double Seconds(int a, int b, double rate) const {
    if (b <= a || rate <= 0) return 0;
    return prof_.model().ModelFlopPerSample(a, b - a) * static_cast<double>(prof_.micro_batch_size()) / rate;
  }

  // Rules 2 and 3 for slice [a, b) on the island at position k of `order`.
  bool PrunedByRules(const std::vector<int>& order, int k, int a, int b) {
    const int t = order[k];
    ++stats_.pairs;
    const int L = prof_.model().num_layers();
    if (opt_.beta > 0) {  // the paper's fixed tolerance (not safe: off by default)
      const double ratio = (b - a) / (L * share_[t]);
      if (ratio > opt_.beta || ratio < 1.0 / opt_.beta) {
        ++stats_.pruned_balance;
        return true;
      }
    }
    if (opt_.rule_balance && upper_ != kNone) {
      // Even at peak FLOP/s on every GPU, the slice's island (or the islands before it, which must run
      // layers [0, a)) needs a per-microbatch time tau with (n - 1) tau >= the known plan's cycle.
      double before = 0;
      for (int q = 0; q < k; ++q) before += PeakRate(order[q]);
      const double tau = std::max(Seconds(a, b, PeakRate(t)), Seconds(0, a, before));
      if (static_cast<double>(n_ - 1) * tau * 1e12 > TimeToPicosecondsDouble(upper_)) {
        ++stats_.pruned_balance;
        return true;
      }
    }
    if (opt_.rule_memory) {
      double params = 0;
      for (int i = a; i < b; ++i) params += static_cast<double>(prof_.model().layer(i).param_count);
      const double bytes =
          params * workload::ModelStateBytesPerParam(prof_.model().dtype(), prof_.options().grad_reduce_in_fp32);
      const double capacity = islands_[t].effective_hbm_bytes_per_gpu * islands_[t].gpus;
      if (bytes > capacity) {
        ++stats_.pruned_memory;
        return true;
      }
    }
    return false;
  }

  // Cycle time of the stages of islands order[k..] for layers [l, L): right to left.
  std::optional<std::pair<Time, std::vector<SearchedStage>>> Compose(const std::vector<int>& order) {
    const int L = prof_.model().num_layers();
    const int K = static_cast<int>(order.size());
    std::vector<std::vector<TangramCell>> cell(K, std::vector<TangramCell>(L + 1));
    for (int k = K - 1; k >= 0; --k) {
      const int t = order[k];
      for (int l = 0; l < L; ++l) {
        TangramCell& out = cell[k][l];
        Time best_cost = 0;
        const int b_lo = k == K - 1 ? L : l + 1;
        const int b_hi = k == K - 1 ? L : L - (K - 1 - k);
        for (int b = b_lo; b <= b_hi; ++b) {
          const TangramCell* next = k == K - 1 ? nullptr : &cell[k + 1][b];
          if (next && !next->ok) continue;
          if (PrunedByRules(order, k, l, b)) continue;
          InnerPlan inner = Inner(t, l, b, next ? next->stages : 0);
          if (!inner.ok) continue;
          Time tau_max = next ? next->tau_max : 0, tau_sum = next ? next->tau_sum : 0;
          SearchedStage& last = inner.stages.back();
          if (next) {
            last.comm_out = prof_.cluster().BoundaryTime(last.island, next->inner.stages.front().island,
                                                         prof_.BoundaryBytes(b - 1), last.shape);
            if (opt_.rule_interface && upper_ != kNone && n_ * last.comm_out > upper_) {
              ++stats_.pruned_interface;
              continue;
            }
          }
          for (const SearchedStage& s : inner.stages) {
            const Time tau = Tau(s.option.total(), s.comm_out);
            tau_max = std::max(tau_max, tau);
            tau_sum += tau;
          }
          const Time cost = (n_ - 1) * tau_max + tau_sum;  // Eq. 13 of the review
          if (!out.ok || cost < best_cost) {
            out.ok = true;
            best_cost = cost;
            out.tau_max = tau_max;
            out.tau_sum = tau_sum;
            out.stages = (next ? next->stages : 0) + static_cast<int>(inner.stages.size());
            out.next = next ? b : -1;
            out.inner = std::move(inner);
          }
        }
      }
    }
    if (!cell[0][0].ok) return std::nullopt;
    std::vector<SearchedStage> stages;
    int l = 0;
    for (int k = 0; k < K; ++k) {
      const TangramCell& c = cell[k][l];
      for (const SearchedStage& s : c.inner.stages) stages.push_back(s);
      l = c.next;
    }
    // Launch counts as the 1F1B schedule runs them.
    for (size_t i = 0; i < stages.size(); ++i) {
      stages[i].warmup = static_cast<int>(std::min<int64_t>(n_, static_cast<int64_t>(stages.size() - i)));
    }
    const TangramCell& c0 = cell[0][0];
    return std::make_pair((n_ - 1) * c0.tau_max + c0.tau_sum, stages);
  }

  // The compute-proportional split in `order`, for Rule 4's bound.
  std::optional<std::pair<Time, std::vector<SearchedStage>>> Proportional(const std::vector<int>& order) {
    const int L = prof_.model().num_layers();
    const int K = static_cast<int>(order.size());
    std::vector<int> cut(K + 1, L);
    cut[0] = 0;
    double acc = 0;
    for (int k = 0; k + 1 < K; ++k) {
      acc += share_[order[k]];
      cut[k + 1] = std::clamp(static_cast<int>(acc * L + 0.5), cut[k] + 1, L - (K - 1 - k));
    }
    Time tau_max = 0, tau_sum = 0;
    int after = 0;
    std::vector<SearchedStage> all;
    for (int k = K - 1; k >= 0; --k) {
      InnerPlan inner = Inner(order[k], cut[k], cut[k + 1], after);
      if (!inner.ok) return std::nullopt;
      if (!all.empty()) {
        inner.stages.back().comm_out =
            prof_.cluster().BoundaryTime(inner.stages.back().island, all.front().island,
                                         prof_.BoundaryBytes(cut[k + 1] - 1), inner.stages.back().shape);
      }
      for (const SearchedStage& s : inner.stages) {
        const Time tau = Tau(s.option.total(), s.comm_out);
        tau_max = std::max(tau_max, tau);
        tau_sum += tau;
      }
      after += static_cast<int>(inner.stages.size());
      all.insert(all.begin(), inner.stages.begin(), inner.stages.end());
    }
    return std::make_pair((n_ - 1) * tau_max + tau_sum, all);
  }

  Profiler& prof_;
  int64_t n_;
  TangramOptions opt_;
  std::vector<topology::GpuIsland> islands_;
  std::vector<double> share_;
  std::vector<std::vector<std::vector<SubStageSlot>>> layouts_;
  absl::flat_hash_map<std::tuple<int, int, int>, InnerPlan> cache_;
  Time upper_ = kNone;
  TangramStats stats_;
};

}  // namespace

TangramResult RunTangram(Profiler& profiler, int64_t microbatches, const TangramOptions& options) {
  return Composer(profiler, microbatches, options).Run();
}

std::optional<PipelineCandidate> PlanTangram(const PlannerContext& ctx) {
  TangramOptions o;
  o.overlap_aware = ctx.tangram_overlap_aware;
  TangramResult r = RunTangram(*ctx.profiler, ctx.microbatches, o);
  if (!r.feasible) return std::nullopt;
  PipelineCandidate c;
  c.stages = r.stages;
  c.schedule = spec::ScheduleKind::kOneFOneB;
  c.explicit_warmups = false;
  c.planner_layers = ctx.profiler->model().num_layers();
  c.notes.push_back(absl::StrCat(
      "tangram: ", r.stats.islands, " GPU islands, ", r.stats.pairs, " (slice, island) pairs, pruned: balance ",
      r.stats.pruned_balance, ", memory ", r.stats.pruned_memory, ", interface ", r.stats.pruned_interface,
      "; inner planner calls ", r.stats.inner_calls, " (", r.stats.dedup_hits, " answered by dedup)"));
  return c;
}

}  // namespace hetsim::planner
