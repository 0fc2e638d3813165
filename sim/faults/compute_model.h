// How stragglers and jitter stretch compute tasks (docs/faults.md, "Compute").
//
// A SLOW fault on a GPU makes it run at 1/factor of its speed during [at, end); overlapping faults
// multiply. A task is an amount of work measured in nominal (fault-free) picoseconds; it progresses
// at the GPU's speed at every instant, so a task straddling `at` runs its part before `at` at full
// speed and only the rest slowed (and the part after `end` at full speed again). Jitter multiplies a
// task's work on a GPU by an independent draw keyed by (seed, GPU, task), so results do not depend on
// event order. A stage's task runs on all the stage's GPUs together (tensor-parallel collectives and
// boundary resharding wait for every replica): it ends when its slowest GPU ends.
//
//   ComputeModel model(fault_set, topology.num_gpus());
//   Time finish = model.Finish(stage_gpus, now, duration, TaskKey(kForward, microbatch, k));
#ifndef HETSIM_SIM_FAULTS_COMPUTE_MODEL_H_
#define HETSIM_SIM_FAULTS_COMPUTE_MODEL_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "base/spec/faults.h"
#include "base/time.h"
#include "sim/faults/fault_set.h"

namespace hetsim::faults {

// Identity of a compute task for jitter draws: kind (0 forward, 1 backward, 2 optimizer step),
// microbatch and virtual stage (the optimizer step: microbatch 0, its physical stage).
uint64_t TaskKey(int kind, int64_t microbatch, int64_t virtual_stage);

// The jitter factor of `task` on `gpu`: a pure function of (seed, gpu, task). UNIFORM: uniform in
// [1 - spread, 1 + spread]; NORMAL: 1 + spread * N(0, 1), at least 0.1; LOGNORMAL: exp(spread * N(0, 1))
// (median 1, mean exp(spread^2 / 2)).
double JitterFactor(const spec::JitterSpec& jitter, GpuId gpu, uint64_t task);

class ComputeModel {
 public:
  ComputeModel(const FaultSet& faults, int num_gpus);

  // True when some GPU has a straggler fault or jitter is on: otherwise Finish is start + work.
  bool active() const { return active_; }

  // When a task of `work` nominal picoseconds on every GPU of `gpus`, started at `start`, ends.
  Time Finish(std::span<const GpuId> gpus, Time start, Time work, uint64_t task) const;

  // When `work` started at `start` ends on `gpu` (no jitter).
  Time FinishOn(GpuId gpu, Time start, Time work) const;

 private:
  struct Segment {
    Time begin;     // the segment runs until the next one begins
    double factor;  // slowdown (1 = full speed)
  };
  // Straggler profile per GPU: -1 = full speed throughout, else an index into profiles_.
  std::vector<int32_t> profile_of_;
  std::vector<std::vector<Segment>> profiles_;  // each starts at time 0
  std::optional<spec::JitterSpec> jitter_;
  std::vector<bool> jittered_;  // per GPU
  bool active_ = false;
};

}  // namespace hetsim::faults

#endif  // HETSIM_SIM_FAULTS_COMPUTE_MODEL_H_
