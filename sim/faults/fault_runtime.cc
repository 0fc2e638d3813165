#include "sim/faults/fault_runtime.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace hetsim::faults {

FaultRuntime::FaultRuntime(const FaultSet& faults, int num_gpus, engine::Simulator* simulator,
                           network::Network* network, std::function<void(int)> on_fail)
    : set_(faults),
      simulator_(simulator),
      network_(network),
      on_fail_(std::move(on_fail)),
      compute_(faults, num_gpus),
      pending_(faults.faults.size()),
      down_since_(faults.faults.size(), kNoTime),
      gpu_faults_(num_gpus) {
  outcome_.effects.resize(faults.faults.size());
  for (int i = 0; i < static_cast<int>(faults.faults.size()); ++i) {
    const ResolvedFault& f = faults.faults[i];
    if (f.compute()) {
      for (GpuId g : f.gpus) gpu_faults_[g.value()].push_back(i);
    }
    if (f.kind == spec::FaultKind::kFail) continue;
    for (LinkId l : f.links) links_[l].nominal = network->link(l).capacity.bytes_per_second();
  }
}

void FaultRuntime::Start() {
  for (int i = 0; i < static_cast<int>(set_.faults.size()); ++i) ScheduleNext(i);
}

void FaultRuntime::Stop() {
  const Time now = simulator_->now();
  for (int i = 0; i < static_cast<int>(pending_.size()); ++i) {
    if (pending_[i].scheduled) simulator_->Cancel(pending_[i].event);
    pending_[i].scheduled = false;
    if (down_since_[i] >= 0) {
      outcome_.effects[i].down_time += now - down_since_[i];
      down_since_[i] = kNoTime;
    }
  }
}

// The time of fault `i`'s next transition (its phase), or none.
void FaultRuntime::ScheduleNext(int i) {
  const ResolvedFault& f = set_.faults[i];
  Pending& p = pending_[i];
  p.scheduled = false;
  Time at = kTimeMax;
  switch (f.kind) {
    case spec::FaultKind::kSlow:
      if (p.phase == 0) at = f.at;
      if (p.phase == 1) at = f.end;
      break;
    case spec::FaultKind::kFlap: {
      // Down period k begins at at + k * period (while before `end`) and lasts `down`.
      const int64_t k = p.phase / 2;
      if (f.period > 0 && k < (kTimeMax - f.at) / f.period - 1) {
        const Time begin = f.at + k * f.period;
        at = p.phase % 2 == 0 ? (begin < f.end ? begin : kTimeMax) : begin + f.down;
      }
      break;
    }
    case spec::FaultKind::kFail:
      if (p.phase == 0) at = f.at;
      break;
    case spec::FaultKind::kNone: break;  // does nothing (base/spec/faults.h)
  }
  if (at == kTimeMax) return;
  p.event = simulator_->Schedule(std::max(at, simulator_->now()), this, static_cast<uint64_t>(i));
  p.scheduled = true;
}

void FaultRuntime::Log(int fault, const char* what) {
  outcome_.events.push_back({simulator_->now(), fault, what});
  outcome_.effects[fault].started = true;
}

void FaultRuntime::OnEvent(uint64_t payload) {
  const int i = static_cast<int>(payload);
  const ResolvedFault& f = set_.faults[i];
  Pending& p = pending_[i];
  p.scheduled = false;
  FaultEffect& effect = outcome_.effects[i];
  switch (f.kind) {
    case spec::FaultKind::kSlow: {
      const bool starts = p.phase == 0;
      for (LinkId l : f.links) {
        std::vector<int>& slowing = links_[l].slowing;
        if (starts) {
          slowing.insert(std::lower_bound(slowing.begin(), slowing.end(), i), i);
        } else {
          slowing.erase(std::remove(slowing.begin(), slowing.end(), i), slowing.end());
        }
      }
      ApplyLinks(f);
      Log(i, starts ? "starts" : "ends");
      break;
    }
    case spec::FaultKind::kFlap: {
      const bool down = p.phase % 2 == 0;
      for (LinkId l : f.links) links_[l].down += down ? 1 : -1;
      ApplyLinks(f);
      if (down) {
        ++effect.downs;
        down_since_[i] = simulator_->now();
      } else {
        effect.down_time += simulator_->now() - down_since_[i];
        down_since_[i] = kNoTime;
      }
      Log(i, down ? "down" : "up");
      break;
    }
    case spec::FaultKind::kFail:
      Log(i, "fails");
      outcome_.failed = true;
      outcome_.failed_at = simulator_->now();
      outcome_.failed_fault = i;
      ++p.phase;
      on_fail_(i);
      return;
    case spec::FaultKind::kNone: return;  // does nothing (base/spec/faults.h)
  }
  ++p.phase;
  ScheduleNext(i);
}

void FaultRuntime::ApplyLinks(const ResolvedFault& f) {
  std::vector<std::pair<LinkId, double>> changes;
  changes.reserve(f.links.size());
  for (LinkId l : f.links) {
    const LinkState& s = links_[l];
    double capacity = 0;
    if (s.down == 0) {
      double factor = 1;  // in fault order: the same product every time
      for (int j : s.slowing) factor *= set_.faults[j].factor;
      capacity = s.nominal / factor;
    }
    changes.emplace_back(l, capacity);
  }
  network_->SetLinkCapacities(changes);
}

Time FaultRuntime::TaskFinish(int stage, std::span<const GpuId> gpus, Time start, Time work, uint64_t task) {
  const TaskPart part{gpus, work, 0};
  return TaskFinish(stage, std::span<const TaskPart>(&part, 1), start, task);
}

Time FaultRuntime::TaskFinish(int stage, std::span<const TaskPart> parts, Time start, uint64_t task,
                              std::vector<Time>* part_ends) {
  std::vector<Time> local;
  std::vector<Time>& ends = part_ends != nullptr ? *part_ends : local;
  ends.clear();
  ends.reserve(parts.size());
  Time finish = start, nominal = start;
  for (const TaskPart& p : parts) {
    ends.push_back(compute_.Finish(p.gpus, start, p.work, task) + p.tail);
    finish = std::max(finish, ends.back());
    nominal = std::max(nominal, start + p.work + p.tail);
  }
  if (finish == nominal) return finish;
  // Credit every straggler fault on the GPUs of the parts that end last whose window the task overlapped,
  // once per task.
  std::vector<int> credited;
  for (size_t k = 0; k < parts.size(); ++k) {
    if (ends[k] != finish) continue;
    for (GpuId g : parts[k].gpus) {
      for (int i : gpu_faults_[g.value()]) {
        const ResolvedFault& f = set_.faults[i];
        if (f.at >= finish || f.end <= start) continue;
        if (std::find(credited.begin(), credited.end(), i) != credited.end()) continue;
        credited.push_back(i);
        FaultEffect& e = outcome_.effects[i];
        ++e.tasks_slowed;
        e.task_delay += finish - nominal;
        auto at = std::lower_bound(e.stages.begin(), e.stages.end(), stage);
        if (at == e.stages.end() || *at != stage) e.stages.insert(at, stage);
      }
    }
  }
  return finish;
}

}  // namespace hetsim::faults
