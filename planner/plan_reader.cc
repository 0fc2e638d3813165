#include "planner/plan_reader.h"

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "proto/validate_plan.h"

namespace hetsim::planner {

absl::StatusOr<std::vector<SearchedStage>> StagesOfPlan(Profiler& profiler, const hetsim::v1::Plan& plan) {
  const ClusterModel& cluster = profiler.cluster();
  std::vector<SearchedStage> stages;
  for (int i = 0; i < plan.stages_size(); ++i) {
    const hetsim::v1::Stage& st = plan.stages(i);
    absl::StatusOr<int32_t> island = cluster.topology().IslandIndex(st.mesh().island());
    if (!island.ok()) return island.status();
    SearchedStage s;
    s.first_layer = s.first_group = static_cast<int>(st.first_layer());
    s.num_layers = static_cast<int>(st.num_layers());
    s.last_group = s.first_layer + s.num_layers - 1;
    s.island = *island;
    s.shape = {static_cast<int>(st.mesh().node_count()), static_cast<int>(st.mesh().gpus_per_node())};
    IntraStageConfig cfg;
    cfg.tensor_parallel = static_cast<int>(proto::TensorParallel(st));
    cfg.data_parallel = static_cast<int>(proto::DataParallel(st));
    cfg.zero_stage = static_cast<int>(st.zero_stage());
    cfg.recompute = st.recompute();
    cfg.measured_forward_ms = st.measured_forward_ms();
    cfg.measured_backward_ms = st.measured_backward_ms();
    std::optional<StageOption> o = profiler.PriceDirect(s.island, s.shape, cfg, s.first_layer, s.num_layers);
    if (!o) {
      return absl::InvalidArgumentError(
          absl::StrFormat("plan: stages[%d]: the cost model rejects this stage configuration", i));
    }
    s.option = *o;
    s.warmup = static_cast<int>(st.warmup_forwards());
    stages.push_back(s);
  }
  for (size_t i = 0; i + 1 < stages.size(); ++i) {
    stages[i].comm_out =
        cluster.BoundaryTime(stages[i].island, stages[i + 1].island,
                             profiler.BoundaryBytes(stages[i].first_layer + stages[i].num_layers - 1), stages[i].shape);
  }
  return stages;
}

absl::StatusOr<Prediction> PredictPlan(Profiler& profiler, const hetsim::v1::Plan& plan) {
  HETSIM_ASSIGN_OR_RETURN(std::vector<SearchedStage> stages, StagesOfPlan(profiler, plan));
  std::vector<int> warmups;
  bool any = false;
  for (const SearchedStage& s : stages) {
    warmups.push_back(s.warmup);
    any = any || s.warmup > 0;
  }
  if (!any) warmups.clear();
  return Predict(profiler.cluster(), stages, proto::MicrobatchCount(plan), plan.schedule(), proto::H1f1bEpsilon(plan),
                 warmups, WorkOf(profiler.model(), plan.global_batch_size()));
}

}  // namespace hetsim::planner
