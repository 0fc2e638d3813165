#include "sim/executor/lock_step.h"

#include <algorithm>
#include <vector>

#include "sim/workload/gather_lock_step.h"

namespace hetsim::executor {
namespace {

// The lock-step of one pass of every group: each group's time without its exposed gathers cut into its
// layers, in pass order (a backward runs the layers last to first).
Time GroupsLockStep(const VirtualStageCost& vs, bool backward, bool prefetch) {
  const auto n = static_cast<size_t>(vs.num_layers);
  std::vector<std::vector<Time>> layers;
  for (const VirtualStageCost& g : vs.replica_groups) {
    const Time pass = backward ? g.backward_time() : g.forward_time();
    const Time exposed = backward ? g.backward_gather_exposed_time : g.forward_gather_exposed_time;
    layers.push_back(
        workload::CutByWeights(pass - exposed, backward ? g.cost.layer_backward_s : g.cost.layer_forward_s, n));
    if (backward) std::reverse(layers.back().begin(), layers.back().end());
  }
  std::vector<Time> gathers = vs.replica_groups.front().layer_gather_time;
  if (backward) std::reverse(gathers.begin(), gathers.end());
  return workload::LockStepPass(layers, gathers, prefetch);
}

}  // namespace

void LockStepReplicaGroups(VirtualStageCost& vs, bool prefetch) {
  if (vs.replica_groups.size() < 2 ||
      vs.replica_groups.front().layer_gather_time.size() != static_cast<size_t>(vs.num_layers)) {
    return;
  }
  const Time forward = vs.forward_time() - vs.forward_wait_time;
  const Time backward = vs.backward_time() - vs.backward_wait_time;
  vs.forward_wait_time = std::max(vs.forward_wait_time, GroupsLockStep(vs, false, prefetch) - forward);
  vs.backward_wait_time = std::max(vs.backward_wait_time, GroupsLockStep(vs, true, prefetch) - backward);
}

}  // namespace hetsim::executor
