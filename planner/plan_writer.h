// Turns a searched pipeline into a Plan message: meshes placed inside their islands (whole-node
// submeshes first, then the (1, m) submeshes packed first-fit decreasing, which always fits for
// Alpa's shapes), stage configurations, schedule and explicit warm-up counts.
#ifndef HETSIM_PLANNER_PLAN_WRITER_H_
#define HETSIM_PLANNER_PLAN_WRITER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/cluster_model.h"
#include "planner/hapt_search.h"
#include "proto/hetsim.pb.h"
#include "proto/validate_plan.h"

namespace hetsim::planner {

// One Mesh per stage, in stage order; Internal error if the shapes do not pack.
absl::StatusOr<std::vector<hetsim::v1::Mesh>> PlaceMeshes(const ClusterModel& cluster,
                                                          const std::vector<SearchedStage>& stages);

struct PlanShape {
  std::string name;
  hetsim::v1::Model model;  // written inline when model_path is empty
  std::string model_path;
  uint64_t global_batch_size = 0;
  uint64_t micro_batch_size = 0;
  int context_parallel = 1;                                               // Plan.context_parallel (written when > 1)
  bool tp_comm_overlap = false;                                           // Plan.tp_comm_overlap
  bool tp_backward_overlap = false;                                       // Plan.tp_backward_overlap
  bool tp_comm_overlap_aggregate = false;                                 // Plan.tp_comm_overlap_aggregate
  std::optional<hetsim::v1::TpCommOverlapConfig> tp_comm_overlap_config;  // Plan.tp_comm_overlap_config
  bool grad_reduce_in_fp32 = false;                                       // Plan.grad_reduce_in_fp32
  spec::ContextParallelComm cp_comm = spec::ContextParallelComm::kRing;   // Plan.cp_comm_type (written with CP)
  hetsim::v1::Schedule schedule = hetsim::v1::H_1F1B;
  double epsilon = proto::kDefaultH1f1bEpsilon;
  bool explicit_warmups = true;  // write SearchedStage::warmup into Stage.warmup_forwards
};

absl::StatusOr<hetsim::v1::Plan> WritePlan(const ClusterModel& cluster, const std::vector<SearchedStage>& stages,
                                           const PlanShape& shape);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_PLAN_WRITER_H_
