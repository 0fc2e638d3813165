// HAPT's two closed forms, each written once: the iteration time of a pipeline whose communication
// overlaps compute (Eq. 13) and the load-balance metric eta (Eq. 25). The planner's search and
// prediction and the run report (traces/metrics.cc) all call these.
#ifndef HETSIM_SIM_PIPELINE_HAPT_METRICS_H_
#define HETSIM_SIM_PIPELINE_HAPT_METRICS_H_

#include <cstdint>
#include <span>

#include "base/time.h"

namespace hetsim::pipeline {

// The terms of HAPT Eq. 13 for stages with per-microbatch compute t_i (forward + backward) and
// boundary transfer c_i after stage i (0 after the last stage).
struct Eq13Terms {
  Time sum = 0;        // sum_i (t_i + 2 c_i): one microbatch through the pipeline and back
  Time t_max = 0;      // max_i t_i
  Time cycle = 0;      // max(t_max, max_i c_i): the steady-state period
  Time iteration = 0;  // sum + (B - 1) cycle
};
Eq13Terms Eq13(std::span<const Time> stage_time, std::span<const Time> boundary_comm, int64_t microbatches);

// HAPT Eq. 25: 1 - sum_i (td_max - td_i) P_i / (td_max sum_i P_i), over devices with compute time
// td_i and peak FLOP/s P_i; 1 means perfect balance. 1 when every td_i is 0.
double Eta(std::span<const double> compute_time, std::span<const double> peak_flop_per_s);

}  // namespace hetsim::pipeline

#endif  // HETSIM_SIM_PIPELINE_HAPT_METRICS_H_
