#include "sim/executor/link_counters.h"

#include "sim/pipeline/dag.h"

namespace hetsim::executor {

namespace {

// Each forward's and backward's closed-form link load, for every pass that ran, through `add(link,
// bytes, busy_time)`.
template <typename Add>
void ForEachCollectiveLoad(const ExecutionSetup& setup, const ExecutionResult& result, Add add) {
  const pipeline::PipelineDag& dag = *setup.dag;
  // Forwards and backwards that ran, per virtual stage (all of them unless the iteration stopped).
  std::vector<int64_t> forwards(setup.virtual_stages.size(), 0), backwards(setup.virtual_stages.size(), 0);
  for (pipeline::NodeId id = 0; id < dag.num_nodes(); ++id) {
    const pipeline::DagNode& node = dag.node(id);
    if (id >= static_cast<pipeline::NodeId>(result.node_finish.size()) || result.node_finish[id] < 0) continue;
    if (node.kind == pipeline::NodeKind::kForward) ++forwards[node.virtual_stage];
    if (node.kind == pipeline::NodeKind::kBackward) ++backwards[node.virtual_stage];
  }
  auto add_all = [&](const std::vector<LinkLoad>& load, int64_t times) {
    for (const LinkLoad& l : load) add(l.link.value(), l.bytes * times, l.busy_time * times);
  };
  for (size_t k = 0; k < setup.virtual_stages.size(); ++k) {
    add_all(setup.virtual_stages[k].forward_link_load, forwards[k]);
    add_all(setup.virtual_stages[k].backward_link_load, backwards[k]);
  }
}

}  // namespace

std::vector<network::LinkCounters> LinkCountersWithCollectives(const ExecutionSetup& setup,
                                                               const ExecutionResult& result) {
  std::vector<network::LinkCounters> counters = result.link_counters;
  ForEachCollectiveLoad(setup, result, [&counters](uint32_t link, int64_t bytes, Time busy_time) {
    if (link >= counters.size()) return;
    counters[link].bytes += bytes;
    counters[link].busy_time += busy_time;
  });
  return counters;
}

std::map<uint32_t, network::LinkCounters> CollectiveLinkCounters(const ExecutionSetup& setup,
                                                                 const ExecutionResult& result) {
  std::map<uint32_t, network::LinkCounters> counters;
  const auto links = static_cast<uint32_t>(setup.topology->links().size());
  ForEachCollectiveLoad(setup, result, [&counters, links](uint32_t link, int64_t bytes, Time busy_time) {
    if (link >= links) return;
    counters[link].bytes += bytes;
    counters[link].busy_time += busy_time;
  });
  return counters;
}

}  // namespace hetsim::executor
