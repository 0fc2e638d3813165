#include "planner/plan_writer.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "proto/validate_plan.h"

namespace hetsim::planner {

absl::StatusOr<std::vector<hetsim::v1::Mesh>> PlaceMeshes(const ClusterModel& cluster,
                                                          const std::vector<SearchedStage>& stages) {
  std::vector<hetsim::v1::Mesh> meshes(stages.size());
  for (int j = 0; j < cluster.num_islands(); ++j) {
    const IslandModel& im = cluster.island(j);
    std::vector<int> used(im.nodes, 0);  // GPUs taken on each node, from GPU 0 up
    std::vector<int> whole, partial;
    for (int s = 0; s < static_cast<int>(stages.size()); ++s) {
      if (stages[s].island != j) continue;
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
      hetsim::v1::Mesh& m = meshes[s];
      m.set_island(im.name);
      m.set_first_node(next_node);
      m.set_node_count(sh.nodes);
      m.set_first_gpu(0);
      m.set_gpus_per_node(sh.gpus_per_node);
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
      hetsim::v1::Mesh& m = meshes[s];
      m.set_island(im.name);
      m.set_first_node(node);
      m.set_node_count(1);
      m.set_first_gpu(used[node]);
      m.set_gpus_per_node(need);
      used[node] += need;
    }
  }
  return meshes;
}

absl::StatusOr<hetsim::v1::Plan> WritePlan(const ClusterModel& cluster, const std::vector<SearchedStage>& stages,
                                           const PlanShape& shape) {
  HETSIM_ASSIGN_OR_RETURN(std::vector<hetsim::v1::Mesh> meshes, PlaceMeshes(cluster, stages));
  hetsim::v1::Plan plan;
  plan.set_name(shape.name);
  if (shape.model_path.empty()) {
    *plan.mutable_model() = shape.model;
  } else {
    plan.set_model_path(shape.model_path);
  }
  plan.set_global_batch_size(shape.global_batch_size);
  plan.set_micro_batch_size(shape.micro_batch_size);
  if (shape.context_parallel > 1) plan.set_context_parallel(static_cast<uint32_t>(shape.context_parallel));
  plan.set_tp_comm_overlap(shape.tp_comm_overlap);
  plan.set_tp_backward_overlap(shape.tp_backward_overlap);
  plan.set_tp_comm_overlap_aggregate(shape.tp_comm_overlap_aggregate);
  if (shape.tp_comm_overlap_config) *plan.mutable_tp_comm_overlap_config() = *shape.tp_comm_overlap_config;
  plan.set_grad_reduce_in_fp32(shape.grad_reduce_in_fp32);
  if (shape.context_parallel > 1) plan.set_cp_comm_type(proto::ContextParallelCommProto(shape.cp_comm));
  plan.set_schedule(shape.schedule);
  if (shape.schedule == hetsim::v1::H_1F1B && shape.epsilon != proto::kDefaultH1f1bEpsilon)
    plan.set_h1f1b_epsilon(shape.epsilon);
  for (size_t s = 0; s < stages.size(); ++s) {
    const SearchedStage& st = stages[s];
    hetsim::v1::Stage* out = plan.add_stages();
    out->set_first_layer(st.first_layer);
    out->set_num_layers(st.num_layers);
    *out->mutable_mesh() = (meshes)[s];
    out->set_tensor_parallel(st.option.config.tensor_parallel);
    out->set_data_parallel(st.option.config.data_parallel);
    out->set_zero_stage(st.option.config.zero_stage);
    out->set_recompute(st.option.config.recompute);
    if (st.option.config.recompute_num_layers > 0) out->set_recompute_num_layers(st.option.config.recompute_num_layers);
    if (st.option.config.sequence_parallel) out->set_sequence_parallel(true);
    if (st.option.config.expert_parallel > 1) out->set_expert_parallel(st.option.config.expert_parallel);
    if (st.option.config.expert_tensor_parallel > 0) {
      out->set_expert_tensor_parallel(st.option.config.expert_tensor_parallel);
    }
    if (shape.explicit_warmups) out->set_warmup_forwards(st.warmup);
  }
  return plan;
}

}  // namespace hetsim::planner
