#include "sim/executor/replica_groups.h"

#include <algorithm>
#include <utility>

#include "base/check.h"

namespace hetsim::executor {

const StageLayout& StageLayout::GroupOfReplica(int& replica) const {
  for (const StageLayout& g : replica_groups) {
    if (replica < g.data_parallel) return g;
    replica -= g.data_parallel;
  }
  HETSIM_CHECK(false, "replica beyond the mixed stage's %d replicas", data_parallel);
  return replica_groups.back();
}

int StageLayout::GroupOfGpu(size_t index) const {
  for (int g = 0; g < static_cast<int>(replica_groups.size()); ++g) {
    if (index < replica_groups[g].gpus.size()) return g;
    index -= replica_groups[g].gpus.size();
  }
  return 0;
}

std::vector<int64_t> StageLayout::ReplicaSampleStarts(uint64_t micro_batch_size) const {
  std::vector<int64_t> starts{0};
  if (!mixed()) {
    const int64_t per = static_cast<int64_t>(micro_batch_size) / data_parallel;
    for (int r = 1; r <= data_parallel; ++r) starts.push_back(r * per);
    return starts;
  }
  for (const StageLayout& g : replica_groups) {
    for (int r = 0; r < g.data_parallel; ++r)
      starts.push_back(starts.back() + static_cast<int64_t>(g.micro_batch_share));
  }
  return starts;
}

StageLayout MixedLayout(std::vector<StageLayout> groups) {
  StageLayout out;
  out.island = groups.front().island;
  out.data_parallel = 0;
  for (const StageLayout& g : groups) {
    out.gpus.insert(out.gpus.end(), g.gpus.begin(), g.gpus.end());
    out.tensor_parallel = std::max(out.tensor_parallel, g.tensor_parallel);
    out.data_parallel += g.data_parallel;
  }
  out.replica_groups = std::move(groups);
  return out;
}

int SlowestGroup(const std::vector<VirtualStageCost>& groups) {
  int slowest = 0;
  for (int g = 1; g < static_cast<int>(groups.size()); ++g) {
    if (groups[g].forward_time() + groups[g].backward_time() >
        groups[slowest].forward_time() + groups[slowest].backward_time()) {
      slowest = g;
    }
  }
  return slowest;
}

int FinestGroup(const StageLayout& mixed) {
  int finest = 0;
  for (int g = 1; g < static_cast<int>(mixed.replica_groups.size()); ++g) {
    if (mixed.replica_groups[g].tensor_parallel > mixed.replica_groups[finest].tensor_parallel) finest = g;
  }
  return finest;
}

int FinestExpertGroup(const StageLayout& mixed) {
  int finest = 0;
  for (int g = 1; g < static_cast<int>(mixed.replica_groups.size()); ++g) {
    if (mixed.replica_groups[g].expert_data_groups() > mixed.replica_groups[finest].expert_data_groups()) finest = g;
  }
  return finest;
}

workload::StageCost MixedStageCost(const std::vector<const workload::StageCost*>& groups, int slowest,
                                   FinestGroups finest, int64_t boundary_bytes_per_microbatch) {
  workload::StageCost out = *groups[slowest];
  const workload::StageCost& fine = *groups[finest.dense];
  const workload::StageCost& fine_experts = *groups[finest.experts];
  out.grad_sync_bytes = fine.grad_sync_bytes;
  out.expert_grad_sync_bytes = fine_experts.expert_grad_sync_bytes;
  out.param_sync_bytes = fine.param_sync_bytes;
  out.expert_param_sync_bytes = fine_experts.expert_param_sync_bytes;
  out.boundary_bytes_per_microbatch = boundary_bytes_per_microbatch;
  return out;
}

void CombineReplicaGroups(VirtualStageCost& vs, FinestGroups finest, int64_t boundary_bytes_per_microbatch) {
  std::vector<VirtualStageCost> groups = std::move(vs.replica_groups);
  const int slowest = SlowestGroup(groups);
  std::vector<const workload::StageCost*> costs;
  Time forward = 0, backward = 0;
  for (const VirtualStageCost& g : groups) {
    costs.push_back(&g.cost);
    forward = std::max(forward, g.forward_time());
    backward = std::max(backward, g.backward_time());
  }
  vs = groups[slowest];
  vs.cost = MixedStageCost(costs, slowest, finest, boundary_bytes_per_microbatch);
  vs.forward_link_load.clear();
  vs.backward_link_load.clear();
  for (const VirtualStageCost& g : groups) {
    AddLoad(vs.forward_link_load, g.forward_link_load, 1);
    AddLoad(vs.backward_link_load, g.backward_link_load, 1);
  }
  vs.forward_wait_time = forward - vs.forward_time();
  vs.backward_wait_time = backward - vs.backward_time();
  vs.replica_groups = std::move(groups);
}

}  // namespace hetsim::executor
