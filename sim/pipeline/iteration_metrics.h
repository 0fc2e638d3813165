// The figures a user reads off one training iteration, written once: throughput (samples/s,
// tokens/s), model FLOPs utilisation, model TFLOP/s per GPU, the bubble ratio and HAPT's eta
// (Eq. 25). The run report (traces/metrics.cc) fills the inputs from an executed iteration, the
// planner's prediction (planner/prediction.cc) from its closed-form costs; both call
// ComputeIterationMetrics, so each definition (docs/metrics.md) has one implementation.
//
// Times are hetsim::Time (picoseconds); busy times and spans enter the bubble ratio and eta in
// milliseconds, as the report has always computed them (the ratios do not depend on the unit).
#ifndef HETSIM_SIM_PIPELINE_ITERATION_METRICS_H_
#define HETSIM_SIM_PIPELINE_ITERATION_METRICS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "base/time.h"

namespace hetsim::pipeline {

// What the model asks of one iteration, independent of how it runs.
struct IterationWork {
  uint64_t samples = 0;     // global batch size
  uint64_t seq_length = 0;  // tokens per sample
  double model_flop = 0;    // model FLOPs of the iteration (Megatron formula, no recompute)
};

// GPUs of one kind and how long each computed during the iteration.
struct GpuLoad {
  Time busy = 0;
  int gpus = 0;
  double peak_flop_per_s = 0;  // per GPU
};

// One pipeline stage: how long its GPUs computed during the iteration, and what they could do. A mixed
// stage (replica groups on different GPU types) lists its groups: each computes only its own share and
// waits for the slowest, so MFU and eta count its GPUs by group; the bubble ratio keeps the stage's busy.
struct StageLoad : GpuLoad {
  std::vector<GpuLoad> replica_groups;
  StageLoad() = default;
  StageLoad(Time busy, int gpus, double peak) : GpuLoad{busy, gpus, peak} {}
};

struct IterationFigures {
  IterationWork work;
  Time iteration_time = 0;  // what throughput, MFU and TFLOP/s divide by
  Time span = 0;            // what the bubble ratio measures stages' busy time against
  std::vector<StageLoad> stages;
};

struct IterationMetrics {
  double seconds = 0;        // iteration time
  double samples_per_s = 0;  // 0 when the iteration took no time
  double tokens_per_s = 0;
  double model_flop = 0;
  double mfu = 0;  // model FLOPs / (seconds x sum of peak FLOP/s)
  double model_tflops_per_gpu = 0;
  double bubble_ratio = 0;  // 1 - sum_s busy_s / (stages x span)
  double eta = 1;           // HAPT Eq. 25 over GPUs, each weighted by its peak FLOP/s
};

IterationMetrics ComputeIterationMetrics(const IterationFigures& f);

// Model FLOPs utilisation: model FLOPs of the iteration / (iteration seconds x sum of peak FLOP/s);
// 0 when either is 0.
double Mfu(double model_flop, double iteration_seconds, double sum_peak_flop_per_s);

// 1 - sum of busy compute time / (stages x span), busy times per stage, in any one unit; 0 for no
// stages or an empty span.
double BubbleRatio(std::span<const double> busy_per_stage, double span);

}  // namespace hetsim::pipeline

#endif  // HETSIM_SIM_PIPELINE_ITERATION_METRICS_H_
