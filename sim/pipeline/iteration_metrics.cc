#include "sim/pipeline/iteration_metrics.h"

#include "sim/pipeline/hapt_metrics.h"

namespace hetsim::pipeline {

double Mfu(double model_flop, double iteration_seconds, double sum_peak_flop_per_s) {
  if (iteration_seconds <= 0 || sum_peak_flop_per_s <= 0) return 0;
  return model_flop / (iteration_seconds * sum_peak_flop_per_s);
}

double BubbleRatio(std::span<const double> busy_per_stage, double span) {
  if (busy_per_stage.empty() || span <= 0) return 0;
  double busy = 0;
  for (double b : busy_per_stage) busy += b;
  return 1.0 - busy / (static_cast<double>(busy_per_stage.size()) * span);
}

IterationMetrics ComputeIterationMetrics(const IterationFigures& f) {
  IterationMetrics m;
  m.seconds = TimeToSeconds(f.iteration_time);
  m.model_flop = f.work.model_flop;
  const double samples = static_cast<double>(f.work.samples);
  double peak_sum = 0;
  int gpus = 0;
  std::vector<double> busy_ms, device_busy_ms, device_peak;
  for (const StageLoad& s : f.stages) {
    busy_ms.push_back(TimeToMilliseconds(s.busy));
    std::span<const GpuLoad> kinds(static_cast<const GpuLoad*>(&s), 1);
    if (!s.replica_groups.empty()) kinds = s.replica_groups;
    for (const GpuLoad& k : kinds) {
      peak_sum += k.peak_flop_per_s * static_cast<double>(k.gpus);
      gpus += k.gpus;
      device_busy_ms.insert(device_busy_ms.end(), k.gpus, TimeToMilliseconds(k.busy));
      device_peak.insert(device_peak.end(), k.gpus, k.peak_flop_per_s);
    }
  }
  if (m.seconds > 0) {
    m.samples_per_s = samples / m.seconds;
    m.tokens_per_s = samples * static_cast<double>(f.work.seq_length) / m.seconds;
  }
  m.mfu = Mfu(m.model_flop, m.seconds, peak_sum);
  if (m.seconds > 0 && gpus > 0) m.model_tflops_per_gpu = m.model_flop / m.seconds / gpus / 1e12;
  m.bubble_ratio = BubbleRatio(busy_ms, TimeToMilliseconds(f.span));
  m.eta = Eta(device_busy_ms, device_peak);
  return m;
}

}  // namespace hetsim::pipeline
