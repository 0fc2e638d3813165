#include "planner/prediction.h"

#include <algorithm>

#include "base/check.h"
#include "base/status_macros.h"
#include "planner/shared_links.h"
#include "sim/pipeline/dag.h"
#include "sim/pipeline/hapt_metrics.h"
#include "sim/pipeline/iteration_metrics.h"
#include "sim/pipeline/schedule.h"

namespace hetsim::planner {
namespace {

namespace pl = pipeline;

// Whether stage i's chunks are priced one by one (else its time splits evenly over the v chunks).
bool ChunksPriced(const SearchedStage& s, int v) { return static_cast<int>(s.chunks.size()) == v; }

// Each virtual stage's forward and backward time and the boundary after it. Chunk c of stage i is
// virtual stage c S + i. Its share of the stage's time is its priced share (the stage's total may be
// measured); without priced chunks 1/v, chunk 0 taking the remainder.
pl::UniformCosts ChunkCosts(const std::vector<SearchedStage>& stages, int v) {
  const int S = static_cast<int>(stages.size());
  const auto share = [v](Time t, Time part, Time whole, int chunk) {
    if (whole > 0)
      return PicosecondsToTime(static_cast<int64_t>(TimeToPicosecondsDouble(t) * TimeToPicosecondsDouble(part) /
                                                    TimeToPicosecondsDouble(whole)));
    return t / v + (chunk == 0 ? t % v : Time());
  };
  std::vector<Time> forward_whole(S, 0), backward_whole(S, 0);
  for (int i = 0; i < S; ++i) {
    if (!ChunksPriced(stages[i], v)) continue;
    for (const SearchedStage::Chunk& c : stages[i].chunks) {
      forward_whole[i] += c.forward;
      backward_whole[i] += c.backward;
    }
  }
  pl::UniformCosts costs;
  for (int k = 0; k < S * v; ++k) {
    const int i = k % S, chunk = k / S;
    const SearchedStage::Chunk c = ChunksPriced(stages[i], v) ? stages[i].chunks[chunk] : SearchedStage::Chunk{};
    costs.forward.push_back(share(stages[i].option.forward, c.forward, forward_whole[i], chunk));
    costs.backward.push_back(share(stages[i].option.backward, c.backward, backward_whole[i], chunk));
    if (k + 1 < S * v) {
      costs.comm_forward.push_back(stages[i].comm_out);
      costs.comm_backward.push_back(stages[i].comm_out);
    }
  }
  return costs;
}

// Stage `i`'s times, warm-up and memory: `in_flight` chunk-microbatches at its peak, each 1/v of the
// activations, or with priced chunks the most its own order over them holds at once.
StagePrediction PredictStage(const ClusterModel& cluster, const SearchedStage& s, const pl::PipelineSchedule& sched,
                             int i, int in_flight, int v) {
  StagePrediction sp;
  sp.forward = s.option.forward;
  sp.backward = s.option.backward;
  sp.t = s.option.total();
  sp.comm = s.comm_out;
  sp.warmup = sched.warmup_forwards[i];
  // `o`'s peak: 1/v of its activations per chunk-microbatch in flight, or with its chunks' own activations
  // (`chunk_bytes`, one per chunk) the most its stage's order over them holds at once.
  const auto peak = [&](const StageOption& o, const auto& chunk_bytes) {
    StageOption chunk = o;
    chunk.activation_bytes /= v;
    if (static_cast<int>(chunk_bytes.size()) != v || !ChunksPriced(s, v)) return chunk.PeakBytes(in_flight);
    int64_t live = 0, most = 0;
    for (const pl::PipelineOp& op : sched.ops[i]) {
      const int64_t bytes = chunk_bytes[static_cast<size_t>(op.chunk)];
      live += op.kind == pl::OpKind::kForward ? bytes : -bytes;
      most = std::max(most, live);
    }
    chunk.activation_bytes = 0;
    return chunk.PeakBytes(0) + most + (in_flight > 0 ? chunk.working_bytes : 0);
  };
  std::vector<int64_t> chunk_bytes;
  for (const SearchedStage::Chunk& c : s.chunks) chunk_bytes.push_back(c.activation_bytes);
  sp.peak_bytes = peak(s.option, chunk_bytes);
  sp.capacity_bytes = cluster.island(s.island).hbm_bytes;
  sp.grad_sync = s.option.grad_sync;
  for (const SearchedGroup& g : s.groups) {
    // A group's own chunks (an interleaved mixed stage's), else 1/v of its activations a chunk.
    const int64_t group_peak =
        g.chunk_activation_bytes.empty() ? g.option.PeakBytes(in_flight) : peak(g.option, g.chunk_activation_bytes);
    sp.groups.push_back({g.option.forward, g.option.backward, group_peak, cluster.island(g.island).hbm_bytes});
  }
  sp.SetTightestGroup();
  return sp;
}

// What stage `s` adds to the iteration's figures: its GPUs at their peak FLOP/s, a mixed stage's by
// group, each group busy for its own passes (`microbatches` of them).
pl::StageLoad LoadOf(const ClusterModel& cluster, const SearchedStage& s, int64_t microbatches) {
  pl::StageLoad load(microbatches * s.option.total(), s.shape.gpus(), cluster.island(s.island).peak_flop_per_s);
  if (s.groups.empty()) return load;
  load.gpus = 0;
  double peak = 0;
  for (const SearchedGroup& g : s.groups) {
    const double group_peak = cluster.island(g.island).peak_flop_per_s;
    load.replica_groups.push_back({microbatches * g.option.total(), g.shape.gpus(), group_peak});
    load.gpus += g.shape.gpus();
    peak += g.shape.gpus() * group_peak;
  }
  load.peak_flop_per_s = peak / std::max(1, load.gpus);
  return load;
}

// Per DAG node, the earliest it may start: stage i's first compute node at `per_stage[i]`, the others at
// 0; empty when `per_stage` is.
std::vector<Time> FirstForwardRelease(const pl::PipelineDag& dag, const std::vector<Time>& per_stage) {
  if (per_stage.empty()) return {};
  HETSIM_CHECK(static_cast<int>(per_stage.size()) == dag.num_stages(), "one release per stage");
  std::vector<Time> out(dag.num_nodes(), Time());
  for (int i = 0; i < dag.num_stages(); ++i) out[dag.stage_compute_order()[i].front()] = per_stage[i];
  return out;
}

// How long stage i's first forward waits for `release` after its DAG predecessors have ended (all of
// it on the first stage, which has none), as the executor's EarlyGatherWait measures it.
Time GatherWait(const pl::PipelineDag& dag, const pl::LongestPath& lp, const std::vector<Time>& durations, int i,
                Time release) {
  const pl::NodeId first = dag.stage_compute_order()[i].front();
  Time others = 0;
  for (pl::NodeId u : dag.predecessors(first)) others = std::max(others, lp.earliest_start[u] + durations[u]);
  return std::max(Time(), release - others);
}

// Mixed stages' synchronisations (SearchedStage::grad_sync_flows) each started at its stage's last
// backward's end, sharing the NICs and the crossings they have in common (ShareLinks, max-min), as the
// simulator's flows do when two stages' replica groups sit on one node (the mixed-replicas family cuts
// nodes into slices): per stage, how much longer its synchronisation takes than alone (its grad_sync's
// price); 0 for the others.
std::vector<Time> SharedRingDelays(const std::vector<SearchedStage>& stages,
                                   const std::vector<Time>& last_backward_end) {
  std::vector<Time> delay(stages.size(), 0);
  std::vector<SharedFlow> flows;
  std::vector<std::pair<size_t, size_t>> range;  // per mixed stage: its flows [first, end)
  std::vector<size_t> stage_of;
  for (size_t i = 0; i < stages.size(); ++i) {
    if (stages[i].grad_sync_flows.empty()) continue;
    const size_t first = flows.size();
    for (SharedFlow f : stages[i].grad_sync_flows) {
      f.start = last_backward_end[i];
      if (f.after >= 0) f.after += static_cast<int>(first);
      for (SharedLink& l : f.links) {
        if (l.key == -1) l.key = -(1 << 24) - static_cast<int>(i);  // its own pace: its own link
      }
      flows.push_back(std::move(f));
    }
    range.emplace_back(first, flows.size());
    stage_of.push_back(i);
  }
  if (range.size() < 2) return delay;
  const std::vector<Time> ends = ShareLinks(flows);
  for (size_t k = 0; k < range.size(); ++k) {
    std::vector<SharedFlow> alone(flows.begin() + static_cast<std::ptrdiff_t>(range[k].first),
                                  flows.begin() + static_cast<std::ptrdiff_t>(range[k].second));
    for (SharedFlow& f : alone) {
      if (f.after >= 0) f.after -= static_cast<int>(range[k].first);
    }
    // A stage's synchronisation ends with its last flow (ZeRO-1/2: two gathers at once).
    const Time shared = *std::max_element(ends.begin() + static_cast<std::ptrdiff_t>(range[k].first),
                                          ends.begin() + static_cast<std::ptrdiff_t>(range[k].second));
    const std::vector<Time> own = ShareLinks(alone);
    delay[stage_of[k]] = shared - *std::max_element(own.begin(), own.end());
  }
  return delay;
}

}  // namespace

void StagePrediction::SetTightestGroup() {
  for (const Group& g : groups) {
    const bool tighter = &g == &groups.front() || static_cast<double>(g.peak_bytes) * capacity_bytes >
                                                      static_cast<double>(peak_bytes) * g.capacity_bytes;
    if (tighter) {
      peak_bytes = g.peak_bytes;
      capacity_bytes = g.capacity_bytes;
    }
  }
}

absl::StatusOr<Prediction> Predict(const ClusterModel& cluster, const std::vector<SearchedStage>& stages,
                                   int64_t microbatches, spec::ScheduleKind schedule, double epsilon,
                                   const std::vector<int>& explicit_warmups, const pipeline::IterationWork& work,
                                   int virtual_stages, Time tied_sync, const std::vector<Time>& first_forward_release,
                                   const std::vector<Time>& node_release, PredictedPasses* passes) {
  Prediction p;
  p.microbatches = microbatches;
  const int S = static_cast<int>(stages.size());
  const int v = std::max(1, virtual_stages);
  // HAPT Eq. 13 over the stages' times and boundaries.
  std::vector<Time> stage_time, boundary_comm;
  for (const SearchedStage& s : stages) {
    stage_time.push_back(s.option.total());
    boundary_comm.push_back(s.comm_out);
  }
  const pl::Eq13Terms eq13 = pl::Eq13(stage_time, boundary_comm, microbatches);
  p.t_max = eq13.t_max;
  p.cycle = eq13.cycle;
  p.eq13 = eq13.iteration;

  // The schedule and the longest path of its DAG.
  pl::ScheduleSpec spec;
  spec.kind = schedule;
  spec.num_stages = S;
  spec.num_microbatches = static_cast<int>(microbatches);
  spec.warmup_forwards = explicit_warmups;
  spec.virtual_stages = v;
  for (int i = 0; i + 1 < S; ++i) spec.h1f1b.boundary_comm.push_back(stages[i].comm_out);
  spec.h1f1b.t_max = p.t_max;
  spec.h1f1b.epsilon = epsilon;
  HETSIM_ASSIGN_OR_RETURN(pl::PipelineSchedule sched, pl::BuildSchedule(spec, "planner"));
  const std::vector<int> in_flight = pl::PeakInFlight(sched);
  pl::PipelineDag dag(sched);
  const std::vector<Time> durations = pl::NodeDurations(dag, ChunkCosts(stages, v));
  std::vector<Time> release = FirstForwardRelease(dag, first_forward_release);
  if (!node_release.empty()) {
    HETSIM_CHECK(static_cast<int>(node_release.size()) == dag.num_nodes(), "one release per DAG node");
    if (release.empty()) release.assign(node_release.size(), Time());
    for (size_t u = 0; u < release.size(); ++u) release[u] = std::max(release[u], node_release[u]);
  }
  const pl::LongestPath lp = pl::AnalyzeLongestPath(dag, durations, release);
  if (passes != nullptr) {
    passes->nodes = dag.stage_compute_order();
    passes->start = lp.earliest_start;
    passes->end.resize(lp.earliest_start.size());
    for (size_t u = 0; u < passes->end.size(); ++u) passes->end[u] = lp.earliest_start[u] + durations[u];
    passes->ready.assign(passes->end.size(), Time());
    passes->backward.assign(passes->end.size(), false);
    for (pl::NodeId u = 0; u < dag.num_nodes(); ++u) {
      for (pl::NodeId w : dag.predecessors(u)) passes->ready[u] = std::max(passes->ready[u], passes->end[w]);
      passes->backward[u] = dag.node(u).kind == pl::NodeKind::kBackward;
    }
  }
  p.pipeline = lp.iteration_time;
  p.iteration = p.pipeline;

  // Each stage, its gradient synchronization after its last backward (the first and the last stage
  // after the tied all-reduce they share), and the figures.
  const auto last_backward_end = [&](int i) {
    const pl::NodeId last = dag.stage_compute_order()[i].back();
    return lp.earliest_start[last] + durations[last];
  };
  const bool tied = S > 1 && tied_sync > 0;
  const Time tied_end = tied ? std::max(last_backward_end(0), last_backward_end(S - 1)) + tied_sync : 0;
  pl::IterationFigures figures;
  figures.work = work;
  figures.span = p.pipeline;
  std::vector<Time> backward_ends;
  for (int i = 0; i < S; ++i) backward_ends.push_back(last_backward_end(i));
  const std::vector<Time> ring_delays = SharedRingDelays(stages, backward_ends);
  for (int i = 0; i < S; ++i) {
    const SearchedStage& s = stages[i];
    StagePrediction sp = PredictStage(cluster, s, sched, i, in_flight[i], v);
    sp.grad_sync += ring_delays[i];
    if (sp.peak_bytes > sp.capacity_bytes) p.fits_memory = false;
    sp.last_backward_end = last_backward_end(i);
    if (!first_forward_release.empty()) sp.gather_wait = GatherWait(dag, lp, durations, i, first_forward_release[i]);
    if (tied && (i == 0 || i == S - 1)) sp.grad_sync += tied_end - sp.last_backward_end;
    p.iteration = std::max(p.iteration, sp.last_backward_end + sp.grad_sync);
    figures.stages.push_back(LoadOf(cluster, s, microbatches));
    p.stages.push_back(sp);
  }
  figures.iteration_time = p.iteration;
  p.metrics = pl::ComputeIterationMetrics(figures);
  return p;
}

pipeline::IterationWork WorkOf(const workload::ModelCost& model, uint64_t global_batch_size) {
  return {global_batch_size, model.seq_length(), model.ModelFlopPerIteration(global_batch_size)};
}

}  // namespace hetsim::planner
