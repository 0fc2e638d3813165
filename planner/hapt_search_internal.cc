#include "planner/hapt_search_internal.h"

#include <algorithm>
#include <memory>
#include <numeric>

#include "base/threads.h"
#include "sim/pipeline/hapt_metrics.h"
#include "sim/pipeline/schedule.h"

namespace hetsim::planner {

// The DP table's cell types: named (not anonymous) because HaptSearch::DpTable holds them.
namespace hapt_dp {

constexpr int kParetoCapacity = 4;

struct Entry {
  Time cost;
  int32_t n;          // launch count of the suffix's first stage
  int32_t src_state;  // -1: this stage is the last one
  int16_t src_entry;
  int16_t shape;
  int16_t end;  // last planner layer of the stage
  int16_t option;
};

struct Cell {
  int count = 0;
  Entry e[kParetoCapacity];
};

}  // namespace hapt_dp

namespace {

using hapt_dp::Cell;
using hapt_dp::Entry;
using hapt_dp::kParetoCapacity;

// Adds `x` unless an entry at most as costly with at most as many launches exists; removes entries
// that `x` dominates. Returns false when the set was full (x dropped).
bool Insert(Cell& cell, const Entry& x) {
  for (int a = 0; a < cell.count; ++a) {
    if (cell.e[a].cost <= x.cost && cell.e[a].n <= x.n) return true;
  }
  int w = 0;
  for (int a = 0; a < cell.count; ++a) {
    if (!(x.cost <= cell.e[a].cost && x.n <= cell.e[a].n)) cell.e[w++] = cell.e[a];
  }
  cell.count = w;
  if (cell.count == kParetoCapacity) return false;
  cell.e[cell.count++] = x;
  return true;
}

// Runs body(i, t) for i in [0, n) over up to `threads` threads (RunOnThreads); t < threads names the thread.
template <typename F>
void ParallelFor(int n, int threads, F body) {
  threads = std::max(1, std::min(threads, n));
  if (threads == 1) {
    for (int i = 0; i < n; ++i) body(i, 0);
    return;
  }
  RunOnThreads(threads, [&](int t) {
    for (int i = t; i < n; i += threads) body(i, t);
  });
}

}  // namespace

HaptSearch::HaptSearch(Profiler& profiler, std::vector<LayerGroup> layers, int64_t num_microbatches,
                       SearchOptions options)
    : profiler_(profiler), layers_(std::move(layers)), microbatches_(num_microbatches), options_(options) {
  const ClusterModel& cluster = profiler_.cluster();
  num_islands_ = cluster.num_islands();
  for (int j = 0; j < num_islands_; ++j) {
    int unit = 0;
    for (const MeshShape& s : profiler_.shapes()[j]) unit = std::gcd(unit, s.gpus());
    unit_.push_back(std::max(1, unit));
    full_units_.push_back(cluster.island(j).gpus() / unit_.back());
    max_units_ = std::max(max_units_, full_units_.back() + 1);
    max_shapes_ = std::max<int>(max_shapes_, profiler_.shapes()[j].size());
  }
  for (const LayerGroup& g : layers_) boundary_bytes_.push_back(profiler_.BoundaryBytes(g.first + g.count - 1));
  BuildIndex();
}

void HaptSearch::BuildIndex() {
  const int L = static_cast<int>(layers_.size());
  index_.assign(static_cast<size_t>(num_islands_) * max_shapes_ * L, {});
  std::vector<Time> times;
  for (int j = 0; j < num_islands_; ++j) {
    for (int s = 0; s < static_cast<int>(profiler_.shapes()[j].size()); ++s) {
      for (int k = 0; k < L; ++k) {
        std::vector<IndexEntry>& list = index_[(static_cast<size_t>(j) * max_shapes_ + s) * L + k];
        for (int i = k; i < L; ++i) {
          const int first = layers_[k].first;
          const int count = layers_[i].first + layers_[i].count - first;
          const std::vector<StageOption>& opts = profiler_.Options(j, s, first, count);
          if (opts.empty()) break;  // memory only grows with more layers
          list.push_back({i, opts.front().total(), &opts});
          for (const StageOption& o : opts) times.push_back(o.total());
        }
      }
    }
  }
  if (options_.communication_aware) {
    const ClusterModel& cluster = profiler_.cluster();
    for (int a = 0; a < num_islands_; ++a) {
      for (int b = 0; b < num_islands_; ++b) {
        for (const MeshShape& shape : profiler_.shapes()[a]) {
          for (double bytes : boundary_bytes_) times.push_back(cluster.BoundaryTime(a, b, bytes, shape));
        }
      }
    }
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  times.erase(std::remove(times.begin(), times.end(), Time()), times.end());
  if (options_.t_max_relative_gap > 0) {
    std::vector<Time> kept;
    for (Time t : times) {
      if (kept.empty() ||
          TimeToPicosecondsDouble(t) > TimeToPicosecondsDouble(kept.back()) * (1 + options_.t_max_relative_gap)) {
        kept.push_back(t);
      }
    }
    // Keep the largest candidate so that feasibility is never lost to the gap.
    if (!times.empty() && kept.back() != times.back()) kept.push_back(times.back());
    times = std::move(kept);
  }
  candidates_ = std::move(times);
}

int HaptSearch::Delta(Time comm, Time t_max) const {
  switch (options_.schedule) {
    case spec::ScheduleKind::kEager1F1B: return 2;
    case spec::ScheduleKind::kH1F1B: return pipeline::H1F1BDelta(comm, t_max, options_.epsilon);
    case spec::ScheduleKind::kGpipe:
    case spec::ScheduleKind::kOneFOneB:
    case spec::ScheduleKind::kInterleaved1F1B: break;
  }
  return 1;
}

Time HaptSearch::Score(const std::vector<SearchedStage>& stages) const {
  std::vector<Time> t, c;
  for (const SearchedStage& s : stages) {
    t.push_back(s.option.total());
    c.push_back(s.comm_out);
  }
  return pipeline::Eq13(t, c, microbatches_).iteration;
}

// The DP table of one Solve: a Pareto cell per (first layer group k, island j of the stage that
// starts there, mask of islands already filled by later stages, units u of island j used).
struct HaptSearch::DpTable {
  DpTable(int layers, int islands, int units)
      : L(layers),
        I(islands),
        M(1 << islands),
        U(units),
        cells(static_cast<size_t>(L) * I * M * U),
        lo(static_cast<size_t>(L) * I * M, U),
        hi(static_cast<size_t>(L) * I * M, -1) {}
  int Id(int k, int j, int mask, int uu) const { return ((k * I + j) * M + mask) * U + uu; }
  void Touch(int st) {
    const int row = st / U, uu = st % U;
    lo[row] = std::min(lo[row], uu);
    hi[row] = std::max(hi[row], uu);
  }
  // Empties the table for the next Solve: only the touched ranges, so that a search reuses one
  // table per thread instead of allocating and zeroing a fresh one per candidate t_max.
  void Clear() {
    for (size_t row = 0; row < lo.size(); ++row) {
      for (int uu = lo[row]; uu <= hi[row]; ++uu) cells[row * U + uu].count = 0;
      lo[row] = U;
      hi[row] = -1;
    }
    transitions = overflow = 0;
  }

  const int L, I, M, U;
  std::vector<Cell> cells;
  // Per (k, j, mask): the range of u with a non-empty cell, so that sources are scanned sparsely.
  std::vector<int> lo, hi;
  int64_t transitions = 0, overflow = 0;
};

std::optional<CandidatePlan> HaptSearch::Solve(Time t_max, SearchStats* stats,
                                               std::unique_ptr<DpTable>& scratch) const {
  if (scratch == nullptr) {
    scratch = std::make_unique<DpTable>(static_cast<int>(layers_.size()), num_islands_, max_units_);
  } else {
    scratch->Clear();
  }
  DpTable& table = *scratch;
  FillTable(t_max, table);
  if (stats) {
    stats->transitions += table.transitions;
    stats->pareto_overflow += table.overflow;
    ++stats->dp_runs;
  }
  return BestPlan(table, t_max);
}

// Fills the table from the last layer group back: a stage over groups k..i on a shape of island j2,
// followed by the best suffixes starting at i + 1 (on the same island or, filling j2, another).
void HaptSearch::FillTable(Time t_max, DpTable& t) const {
  const ClusterModel& cluster = profiler_.cluster();
  const int L = t.L, I = t.I, M = t.M;
  const bool aware = options_.communication_aware;
  for (int k = L - 1; k >= 0; --k) {
    for (int j2 = 0; j2 < I; ++j2) {
      const int bit2 = 1 << j2;
      for (int s = 0; s < static_cast<int>(profiler_.shapes()[j2].size()); ++s) {
        const MeshShape shape = profiler_.shapes()[j2][s];
        const int g = shape.gpus() / unit_[j2];
        if (g > full_units_[j2]) continue;
        for (const IndexEntry& ie : index_[(static_cast<size_t>(j2) * max_shapes_ + s) * L + k]) {
          if (ie.fastest > t_max) break;
          const std::vector<StageOption>& opts = *ie.options;
          const int i = ie.end;
          // Fastest configuration that holds `launches` microbatches and meets t_max.
          auto pick = [&](int launches) -> int {
            for (int o = 0; o < static_cast<int>(opts.size()); ++o) {
              if (opts[o].total() > t_max) return -1;
              if (opts[o].max_in_flight >= launches) return o;
            }
            return -1;
          };
          if (i == L - 1) {
            const int o = pick(1);
            if (o < 0) continue;
            ++t.transitions;
            Entry x{opts[o].total(),        1, -1, 0, static_cast<int16_t>(s), static_cast<int16_t>(i),
                    static_cast<int16_t>(o)};
            if (!Insert(t.cells[t.Id(k, j2, 0, g)], x)) ++t.overflow;
            t.Touch(t.Id(k, j2, 0, g));
            continue;
          }
          for (int j = 0; j < I; ++j) {
            const Time c = aware ? cluster.BoundaryTime(j2, j, boundary_bytes_[i], shape) : 0;
            if (c > t_max) continue;
            const int delta = Delta(c, t_max);
            auto relax = [&](int src, int dst) {
              const Cell& from = t.cells[src];
              for (int e = 0; e < from.count; ++e) {
                const int launches = static_cast<int>(std::min<int64_t>(microbatches_, from.e[e].n + delta));
                const int o = pick(launches);
                if (o < 0) continue;
                ++t.transitions;
                Entry x{from.e[e].cost + opts[o].total() + 2 * c,
                        launches,
                        src,
                        static_cast<int16_t>(e),
                        static_cast<int16_t>(s),
                        static_cast<int16_t>(i),
                        static_cast<int16_t>(o)};
                if (!Insert(t.cells[dst], x)) ++t.overflow;
                t.Touch(dst);
              }
            };
            if (j == j2) {
              for (int mask = 0; mask < M; ++mask) {
                if (mask & bit2) continue;
                const int row = ((i + 1) * I + j2) * M + mask;
                const int last = std::min(t.hi[row], full_units_[j2] - g);
                for (int uu = std::max(1, t.lo[row]); uu <= last; ++uu)
                  relax(t.Id(i + 1, j2, mask, uu), t.Id(k, j2, mask, uu + g));
              }
            } else {
              const int bit = 1 << j;
              for (int mask = 0; mask < M; ++mask) {
                if ((mask & bit2) || (mask & bit)) continue;
                relax(t.Id(i + 1, j, mask, full_units_[j]), t.Id(k, j2, mask | bit, g));
              }
            }
          }
        }
      }
    }
  }
}

// The cheapest state with every island filled (Eq. 22), and its stages by backtracking.
std::optional<CandidatePlan> HaptSearch::BestPlan(const DpTable& t, Time t_max) const {
  const ClusterModel& cluster = profiler_.cluster();
  const int L = t.L, I = t.I, M = t.M, U = t.U;
  // Every island filled (Eq. 22).
  int best_state = -1, best_entry = -1;
  Time best = 0;
  for (int j = 0; j < I; ++j) {
    const int st = t.Id(0, j, (M - 1) & ~(1 << j), full_units_[j]);
    const Cell& cell = t.cells[st];
    for (int e = 0; e < cell.count; ++e) {
      if (best_state < 0 || cell.e[e].cost < best) {
        best = cell.e[e].cost;
        best_state = st;
        best_entry = e;
      }
    }
  }
  if (best_state < 0) return std::nullopt;
  CandidatePlan plan;
  plan.objective = best + (microbatches_ - 1) * t_max;
  int st = best_state, en = best_entry;
  while (st >= 0) {
    const Entry& x = t.cells[st].e[en];
    const int k = st / (U * M * I);
    const int j = (st / (U * M)) % I;
    SearchedStage stage;
    stage.first_group = k;
    stage.last_group = x.end;
    stage.first_layer = layers_[k].first;
    stage.num_layers = layers_[x.end].first + layers_[x.end].count - stage.first_layer;
    stage.island = j;
    stage.shape = profiler_.shapes()[j][x.shape];
    for (const IndexEntry& ie : index_[(static_cast<size_t>(j) * max_shapes_ + x.shape) * L + k]) {
      if (ie.end == x.end) stage.option = (*ie.options)[x.option];
    }
    stage.warmup = x.n;
    if (x.src_state >= 0) {
      const int next_island = (x.src_state / (U * M)) % I;
      stage.comm_out = cluster.BoundaryTime(j, next_island, boundary_bytes_[x.end], stage.shape);
    }
    plan.stages.push_back(stage);
    st = x.src_state;
    en = x.src_entry;
  }
  return plan;
}

class CandidateRuns {
 public:
  CandidateRuns(const HaptSearch& search, int threads)
      : search_(search),
        threads_(threads),
        solved_(search.candidates().size()),
        done_(search.candidates().size(), 0),
        per_(search.candidates().size()),
        tables_(std::max(1, threads)) {}

  // Runs the DP of each candidate in `which` not run yet.
  void Evaluate(const std::vector<int>& which) {
    ParallelFor(static_cast<int>(which.size()), threads_, [&](int w, int thread) {
      const int c = which[w];
      if (done_[c]) return;
      solved_[c] = search_.Solve(search_.candidates()[c], &per_[c], tables_[thread]);
      done_[c] = 1;
    });
  }
  bool done(int c) const { return done_[c] != 0; }
  const std::optional<CandidatePlan>& solved(int c) const { return solved_[c]; }
  const SearchStats& stats(int c) const { return per_[c]; }

 private:
  const HaptSearch& search_;
  int threads_;
  std::vector<std::optional<CandidatePlan>> solved_;
  std::vector<char> done_;
  std::vector<SearchStats> per_;
  std::vector<std::unique_ptr<HaptSearch::DpTable>> tables_;  // one per thread
};

int HaptSearch::FirstFeasible(CandidateRuns& runs) const {
  const int n = static_cast<int>(candidates_.size());
  int lo = 0, hi = n - 1;  // hi feasible; everything below lo infeasible
  if (!options_.bidirectional_pruning) {
    lo = hi = 0;
    runs.Evaluate({0});
  }
  while (lo < hi) {
    const int k = std::max(1, options_.threads);
    std::vector<int> probes;
    for (int p = 1; p <= k; ++p) {
      const int at = lo + static_cast<int>(static_cast<int64_t>(hi - lo) * p / (k + 1));
      if (at < hi && (probes.empty() || probes.back() != at)) probes.push_back(at);
    }
    if (probes.empty()) probes.push_back(lo);
    runs.Evaluate(probes);
    int new_lo = lo, new_hi = hi;
    for (int p : probes) {
      if (runs.solved(p)) {
        new_hi = std::min(new_hi, p);
      } else if (p < new_hi) {
        new_lo = std::max(new_lo, p + 1);
      }
    }
    lo = new_lo;
    hi = new_hi;
  }
  int start = options_.bidirectional_pruning ? hi : 0;
  while (start < n && !runs.done(start)) runs.Evaluate({start});
  while (start < n && !runs.solved(start)) {
    ++start;
    if (start < n) runs.Evaluate({start});
  }
  return start;
}

int HaptSearch::BestFrom(CandidateRuns& runs, int start, SearchStats& stats) const {
  const int n = static_cast<int>(candidates_.size());
  stats.t_start = candidates_[start];
  Time best = runs.solved(start)->objective;
  int best_index = start;
  stats.t_end = options_.bidirectional_pruning ? best / std::max<int64_t>(1, microbatches_ - 1) : candidates_.back();
  // T(t) >= (B - 1) t, so candidates above T(t_S) / (B - 1) cannot win.
  int next = start + 1;
  while (next < n) {
    std::vector<int> batch;
    for (; next < n && static_cast<int>(batch.size()) < std::max(1, options_.batch); ++next) {
      if (options_.bidirectional_pruning && (microbatches_ - 1) * candidates_[next] > best) {
        next = n;
        break;
      }
      batch.push_back(next);
    }
    runs.Evaluate(batch);
    for (int c : batch) {
      if (runs.solved(c) && runs.solved(c)->objective < best) {
        best = runs.solved(c)->objective;
        best_index = c;
      }
    }
  }
  return best_index;
}

SearchResult HaptSearch::Run() {
  SearchResult result;
  SearchStats& stats = result.stats;
  stats.candidates = static_cast<int64_t>(candidates_.size());
  for (const auto& list : index_) stats.index_entries += static_cast<int64_t>(list.size());
  evaluated_.clear();
  const int n = static_cast<int>(candidates_.size());
  if (n == 0) return result;
  CandidateRuns runs(*this, options_.threads);
  // Feasibility grows with t_max: when the largest candidate is infeasible, so is every other.
  runs.Evaluate({n - 1});
  if (!runs.solved(n - 1)) {
    for (int c = 0; c < n; ++c) {
      stats.transitions += runs.stats(c).transitions;
      stats.dp_runs += runs.stats(c).dp_runs;
    }
    stats.candidates_evaluated = 1;
    return result;
  }
  const int start = FirstFeasible(runs);
  if (start >= n) return result;
  const int best_index = BestFrom(runs, start, stats);
  for (int c = 0; c < n; ++c) {
    stats.transitions += runs.stats(c).transitions;
    stats.pareto_overflow += runs.stats(c).pareto_overflow;
    stats.dp_runs += runs.stats(c).dp_runs;
    if (runs.done(c)) ++stats.candidates_evaluated;
    if (runs.solved(c)) evaluated_.push_back(*runs.solved(c));
  }
  std::stable_sort(evaluated_.begin(), evaluated_.end(),
                   [](const CandidatePlan& a, const CandidatePlan& b) { return a.objective < b.objective; });
  const CandidatePlan& plan = *runs.solved(best_index);
  result.feasible = true;
  result.stages = plan.stages;
  result.candidate = candidates_[best_index];
  result.search_value = plan.objective;
  for (const SearchedStage& s : result.stages) {
    result.t_max = std::max(result.t_max, s.option.total());
    result.cycle = std::max({result.cycle, s.option.total(), s.comm_out});
  }
  result.objective = Score(result.stages);
  return result;
}

}  // namespace hetsim::planner
