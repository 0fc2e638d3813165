// The faults of one simulated iteration, as the executor sees them: link capacity changes (SLOW,
// FLAP) applied to the network at their times, FAIL faults reported through a callback, compute
// tasks stretched by stragglers and jitter (compute_model.h), and a record of what each fault did.
//
//   FaultRuntime faults(set, topology.num_gpus(), &sim, network.get(), [&](int f) { /* stop */ });
//   faults.Start();                                    // before the first event
//   Time end = faults.TaskFinish(stage, gpus, now, work, TaskKey(0, mb, k));
//   faults.Stop();                                     // the iteration ended: cancel what is pending
#ifndef HETSIM_SIM_FAULTS_FAULT_RUNTIME_H_
#define HETSIM_SIM_FAULTS_FAULT_RUNTIME_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "sim/engine/event.h"
#include "sim/engine/simulator.h"
#include "sim/faults/compute_model.h"
#include "sim/faults/fault_set.h"
#include "sim/network/network.h"

namespace hetsim::faults {

// One thing a fault did, at its time: for the trace's instant events.
struct FaultEvent {
  Time at;
  int fault;         // index into FaultSet::faults
  std::string what;  // "starts", "ends", "down", "up", "fails"
};

// What one fault did before the iteration ended (or failed).
struct FaultEffect {
  bool started = false;      // its first transition happened
  int downs = 0;             // FLAP: down periods begun
  Time down_time = 0;        // FLAP: time down, up to the end
  int64_t tasks_slowed = 0;  // SLOW on GPUs: compute tasks on its GPUs that overlapped its window
  Time task_delay = 0;       // their total extra time over fault-free (all stragglers and jitter)
  std::vector<int> stages;   // stages of those tasks, sorted
};

struct FaultOutcome {
  bool failed = false;  // a FAIL fault stopped the iteration
  Time failed_at = 0;
  int failed_fault = -1;
  std::vector<FaultEvent> events;    // in time order
  std::vector<FaultEffect> effects;  // per fault
};

class FaultRuntime : private engine::EventHandler {
 public:
  FaultRuntime(const FaultSet& faults, int num_gpus, engine::Simulator* simulator, network::Network* network,
               std::function<void(int fault)> on_fail);
  FaultRuntime(const FaultRuntime&) = delete;
  FaultRuntime& operator=(const FaultRuntime&) = delete;

  // Schedules every fault's first transition (at or after Simulator::now()).
  void Start();
  // Cancels every pending transition and closes open down periods at Simulator::now().
  void Stop();

  bool stretches_compute() const { return compute_.active(); }
  // When a task of `work` nominal picoseconds on `gpus` (of physical stage `stage`), started now, ends.
  Time TaskFinish(int stage, std::span<const GpuId> gpus, Time start, Time work, uint64_t task);

  // A mixed stage's task (Stage.replica_groups): each replica group runs its own `work` on its own GPUs
  // and then `tail` more (its collectives at fabric speed); the task ends when its last group does. A
  // straggler in a group with slack delays the stage only past the slowest group's end, and the delay
  // is credited to the faults of the groups that end last. `part_ends`, when given, gets each part's end.
  struct TaskPart {
    std::span<const GpuId> gpus;
    Time work;
    Time tail;
  };
  Time TaskFinish(int stage, std::span<const TaskPart> parts, Time start, uint64_t task,
                  std::vector<Time>* part_ends = nullptr);

  const FaultOutcome& outcome() const { return outcome_; }
  FaultOutcome& mutable_outcome() { return outcome_; }

 private:
  struct LinkState {
    double nominal = 0;        // bytes/s without faults
    std::vector<int> slowing;  // active SLOW faults, sorted
    int down = 0;              // FLAP faults down now
  };
  struct Pending {
    engine::EventId event;
    int phase = 0;  // SLOW: 0 start, 1 end; FLAP: even down, odd up
    bool scheduled = false;
  };

  void OnEvent(uint64_t payload) override;
  void ScheduleNext(int fault);
  void ApplyLinks(const ResolvedFault& f);
  void Log(int fault, const char* what);

  const FaultSet& set_;
  engine::Simulator* simulator_;
  network::Network* network_;
  std::function<void(int)> on_fail_;
  ComputeModel compute_;
  std::vector<Pending> pending_;
  absl::flat_hash_map<LinkId, LinkState> links_;
  std::vector<Time> down_since_;  // FLAP: start of the open down period, or -1
  // Per GPU: the compute faults (SLOW on GPUs) that target it.
  std::vector<std::vector<int>> gpu_faults_;
  FaultOutcome outcome_;
};

}  // namespace hetsim::faults

#endif  // HETSIM_SIM_FAULTS_FAULT_RUNTIME_H_
