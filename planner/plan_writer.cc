#include "planner/plan_writer.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "planner/mixed_replicas.h"

namespace hetsim::planner {

absl::StatusOr<std::vector<spec::MeshSpec>> PlaceMeshes(const ClusterModel& cluster,
                                                        const std::vector<SearchedStage>& stages) {
  std::vector<spec::MeshSpec> meshes(stages.size());
  for (int j = 0; j < cluster.num_islands(); ++j) {
    const IslandModel& im = cluster.island(j);
    std::vector<int> used(im.nodes, 0);  // GPUs taken on each node, from GPU 0 up
    std::vector<int> whole, partial;
    for (int s = 0; s < static_cast<int>(stages.size()); ++s) {
      if (stages[s].island != j || !stages[s].groups.empty()) continue;  // a mixed stage's groups are placed
      (stages[s].shape.gpus_per_node == im.gpus_per_node ? whole : partial).push_back(s);
    }
    std::stable_sort(partial.begin(), partial.end(),
                     [&](int a, int b) { return stages[a].shape.gpus() > stages[b].shape.gpus(); });
    int next_node = 0;
    for (int s : whole) {
      const MeshShape sh = stages[s].shape;
      if (next_node + sh.nodes > im.nodes) {
        return absl::InternalError(absl::StrFormat("planner: island \"%s\" has no room for a (%d, %d) mesh", im.name,
                                                   sh.nodes, sh.gpus_per_node));
      }
      meshes[s] = {.island = im.name,
                   .first_node = static_cast<uint32_t>(next_node),
                   .node_count = static_cast<uint32_t>(sh.nodes),
                   .first_gpu = 0,
                   .gpus_per_node = static_cast<uint32_t>(sh.gpus_per_node)};
      for (int n = next_node; n < next_node + sh.nodes; ++n) used[n] = im.gpus_per_node;
      next_node += sh.nodes;
    }
    for (int s : partial) {
      const int need = stages[s].shape.gpus_per_node;
      int node = -1;
      for (int n = 0; n < im.nodes; ++n) {
        if (im.gpus_per_node - used[n] >= need) {
          node = n;
          break;
        }
      }
      if (node < 0) {
        return absl::InternalError(
            absl::StrFormat("planner: island \"%s\" has no room for a (1, %d) mesh", im.name, need));
      }
      meshes[s] = {.island = im.name,
                   .first_node = static_cast<uint32_t>(node),
                   .node_count = 1,
                   .first_gpu = static_cast<uint32_t>(used[node]),
                   .gpus_per_node = static_cast<uint32_t>(need)};
      used[node] += need;
    }
  }
  return meshes;
}

absl::StatusOr<spec::PlanSpec> WritePlan(const ClusterModel& cluster, const std::vector<SearchedStage>& stages,
                                         const spec::PlanSpec& shape, bool explicit_warmups) {
  HETSIM_ASSIGN_OR_RETURN(std::vector<spec::MeshSpec> meshes, PlaceMeshes(cluster, stages));
  spec::PlanSpec plan = shape;
  plan.stages.clear();
  for (size_t s = 0; s < stages.size(); ++s) {
    const SearchedStage& st = stages[s];
    if (!st.groups.empty()) {
      plan.stages.push_back(MixedStageSpec(cluster, st));
      continue;
    }
    spec::StageSpec& out = plan.stages.emplace_back();
    static_cast<spec::StageParallelism&>(out) = st.option.config;
    // A written plan is priced by the cost model: the measured times of a plan the planner read stay
    // with that plan.
    out.measured_forward_ms = out.measured_backward_ms = 0;
    static_cast<spec::LayerRange&>(out) = st;
    out.mesh = std::move(meshes[s]);
    if (explicit_warmups) out.warmup_forwards = st.warmup;
  }
  return plan;
}

}  // namespace hetsim::planner
