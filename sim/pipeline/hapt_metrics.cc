#include "sim/pipeline/hapt_metrics.h"

#include <algorithm>

namespace hetsim::pipeline {

Eq13Terms Eq13(std::span<const Time> stage_time, std::span<const Time> boundary_comm, int64_t microbatches) {
  Eq13Terms e;
  for (size_t i = 0; i < stage_time.size(); ++i) {
    const Time c = i < boundary_comm.size() ? boundary_comm[i] : 0;
    e.sum += stage_time[i] + 2 * c;
    e.t_max = std::max(e.t_max, stage_time[i]);
    e.cycle = std::max({e.cycle, stage_time[i], c});
  }
  e.iteration = e.sum + (microbatches - 1) * e.cycle;
  return e;
}

double Eta(std::span<const double> compute_time, std::span<const double> peak_flop_per_s) {
  double td_max = 0;
  for (double t : compute_time) td_max = std::max(td_max, t);
  double idle_weighted = 0, peak_sum = 0;
  for (size_t i = 0; i < compute_time.size(); ++i) {
    idle_weighted += (td_max - compute_time[i]) * peak_flop_per_s[i];
    peak_sum += peak_flop_per_s[i];
  }
  if (td_max <= 0 || peak_sum <= 0) return 1.0;
  return 1.0 - idle_weighted / (td_max * peak_sum);
}

}  // namespace hetsim::pipeline
