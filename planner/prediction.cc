#include "planner/prediction.h"

#include <algorithm>

#include "base/status_macros.h"
#include "sim/pipeline/dag.h"
#include "sim/pipeline/schedule.h"

namespace hetsim::planner {

absl::StatusOr<Prediction> Predict(const ClusterModel& cluster, const std::vector<SearchedStage>& stages,
                                   int64_t microbatches, hetsim::v1::Schedule schedule, double epsilon,
                                   const std::vector<int>& explicit_warmups) {
  namespace pl = sim::pipeline;
  Prediction p;
  p.microbatches = microbatches;
  const int S = static_cast<int>(stages.size());
  pl::ScheduleSpec spec;
  spec.kind = schedule;
  spec.num_stages = S;
  spec.num_microbatches = static_cast<int>(microbatches);
  spec.warmup_forwards = explicit_warmups;
  Time sum = 0;
  for (const SearchedStage& s : stages) {
    p.t_max = std::max(p.t_max, s.option.total());
    p.cycle = std::max({p.cycle, s.option.total(), s.comm_out});
    sum += s.option.total() + 2 * s.comm_out;
  }
  for (int i = 0; i + 1 < S; ++i) spec.h1f1b.boundary_comm.push_back(stages[i].comm_out);
  spec.h1f1b.t_max = p.t_max;
  spec.h1f1b.epsilon = epsilon;
  p.eq13 = sum + (microbatches - 1) * p.cycle;

  HETSIM_ASSIGN_OR_RETURN(pl::PipelineSchedule sched, pl::BuildSchedule(spec, "planner"));
  const std::vector<int> in_flight = pl::PeakInFlight(sched);
  pl::PipelineDag dag(sched);
  pl::UniformCosts costs;
  for (int i = 0; i < S; ++i) {
    costs.forward.push_back(stages[i].option.forward);
    costs.backward.push_back(stages[i].option.backward);
    if (i + 1 < S) {
      costs.comm_forward.push_back(stages[i].comm_out);
      costs.comm_backward.push_back(stages[i].comm_out);
    }
  }
  const std::vector<Time> durations = pl::NodeDurations(dag, costs);
  const pl::LongestPath lp = pl::AnalyzeLongestPath(dag, durations);
  p.pipeline = lp.iteration_time;
  p.iteration = p.pipeline;

  double weighted_gap = 0, weighted = 0;
  for (int i = 0; i < S; ++i) {
    const SearchedStage& s = stages[i];
    StagePrediction sp;
    sp.forward = s.option.forward;
    sp.backward = s.option.backward;
    sp.t = s.option.total();
    sp.comm = s.comm_out;
    sp.warmup = sched.warmup_forwards[i];
    sp.peak_bytes = s.option.PeakBytes(in_flight[i]);
    sp.capacity_bytes = cluster.island(s.island).hbm_bytes;
    sp.grad_sync = s.option.grad_sync;
    if (sp.peak_bytes > sp.capacity_bytes) p.fits_memory = false;
    const pl::NodeId last = dag.stage_compute_order()[i].back();
    p.iteration = std::max(p.iteration, lp.earliest_start[last] + durations[last] + sp.grad_sync);
    // Eq. 25 over devices: every GPU of a stage computes B t_i.
    const double peak = cluster.island(s.island).peak_flop_per_s * s.shape.gpus();
    weighted_gap += peak * static_cast<double>(p.t_max - sp.t);
    weighted += peak;
    p.stages.push_back(sp);
  }
  p.eta = p.t_max > 0 ? 1.0 - weighted_gap / (static_cast<double>(p.t_max) * weighted) : 1.0;
  return p;
}

}  // namespace hetsim::planner
