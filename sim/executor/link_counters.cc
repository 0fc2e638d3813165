#include "sim/executor/link_counters.h"

#include "sim/pipeline/dag.h"

namespace hetsim::executor {

std::vector<network::LinkCounters> LinkCountersWithCollectives(const ExecutionSetup& setup,
                                                               const ExecutionResult& result) {
  std::vector<network::LinkCounters> counters = result.link_counters;
  const pipeline::PipelineDag& dag = *setup.dag;
  // Forwards and backwards that ran, per virtual stage (all of them unless the iteration stopped).
  std::vector<int64_t> forwards(setup.virtual_stages.size(), 0), backwards(setup.virtual_stages.size(), 0);
  for (pipeline::NodeId id = 0; id < dag.num_nodes(); ++id) {
    const pipeline::DagNode& node = dag.node(id);
    if (id >= static_cast<pipeline::NodeId>(result.node_finish.size()) || result.node_finish[id] < 0) continue;
    if (node.kind == pipeline::NodeKind::kForward) ++forwards[node.virtual_stage];
    if (node.kind == pipeline::NodeKind::kBackward) ++backwards[node.virtual_stage];
  }
  auto add = [&](const std::vector<LinkLoad>& load, int64_t times) {
    for (const LinkLoad& l : load) {
      if (l.link.value() >= counters.size()) continue;
      counters[l.link.value()].bytes += l.bytes * times;
      counters[l.link.value()].busy_time += l.busy_time * times;
    }
  };
  for (size_t k = 0; k < setup.virtual_stages.size(); ++k) {
    add(setup.virtual_stages[k].forward_link_load, forwards[k]);
    add(setup.virtual_stages[k].backward_link_load, backwards[k]);
  }
  return counters;
}

}  // namespace hetsim::executor
