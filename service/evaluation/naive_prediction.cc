#include "service/evaluation/naive_prediction.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"

#include "base/status_macros.h"
#include "base/time.h"
#include "proto/gpu_presets.h"
#include "proto/pipeline_plans.h"
#include "proto/resolve.h"
#include "proto/validate_plan.h"
#include "sim/pipeline/hapt_metrics.h"
#include "sim/workload/model_cost.h"

namespace hetsim::evaluation {
namespace {

namespace v1 = hetsim::v1;

const v1::GpuType* GpuOfIsland(const v1::Cluster& cluster, const std::string& island) {
  for (const v1::Island& i : cluster.islands()) {
    if (i.name() != island) continue;
    for (const v1::NodeType& n : cluster.node_types()) {
      if (n.name() != i.node_type()) continue;
      for (const v1::GpuType& g : cluster.gpu_types()) {
        if (g.name() == n.gpu_type()) return &g;
      }
    }
  }
  return nullptr;
}

// The meshes of a stage with the samples of a microbatch each computes: the stage's mesh all of them,
// or each replica group's mesh its replicas' shares.
std::vector<std::pair<const v1::Mesh*, double>> StageWork(const v1::Stage& s, double micro) {
  std::vector<std::pair<const v1::Mesh*, double>> out;
  if (s.replica_groups().empty()) out.emplace_back(&s.mesh(), micro);
  for (const v1::ReplicaGroup& g : s.replica_groups()) {
    out.emplace_back(&g.mesh(), static_cast<double>(g.micro_batch_share() * spec::DegreeOrOne(g.data_parallel())));
  }
  return out;
}

}  // namespace

namespace {

absl::StatusOr<v1::PlanPrediction> NaiveOnePipeline(const proto::PlanInputs& inputs) {
  const workload::ModelCost model = workload::ModelCost::Create(proto::ResolveModel(inputs.model, "model"));
  const v1::Plan& plan = inputs.plan;
  const double micro = static_cast<double>(plan.micro_batch_size());
  std::vector<Time> stage_time;
  std::vector<double> forward_ms;
  for (const v1::Stage& s : plan.stages()) {
    const double per_sample =
        model.ModelFlopPerSample(static_cast<int>(s.first_layer()), static_cast<int>(s.num_layers()));
    // A mixed stage lasts as long as its slowest replica group: its replicas' samples on its GPUs.
    double seconds = 0;
    for (const auto& [mesh, samples] : StageWork(s, micro)) {
      const v1::GpuType* gpu = GpuOfIsland(inputs.cluster, mesh->island());
      const double peak = gpu != nullptr ? proto::PeakTflops(*gpu, proto::EffectiveDType(inputs.model)) * 1e12 : 0;
      if (peak <= 0) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: stages: island \"%s\" has no peak FLOP/s", inputs.plan_path, mesh->island()));
      }
      seconds = std::max(seconds, per_sample * samples / (peak * static_cast<double>(proto::MeshGpuCount(*mesh))));
    }
    forward_ms.push_back(seconds / 3 * 1e3);
    stage_time.push_back(SecondsToTime(seconds));
  }
  const std::vector<Time> free_comm(stage_time.size(), Time());
  const pipeline::Eq13Terms eq13 = pipeline::Eq13(stage_time, free_comm, inputs.microbatches);
  v1::PlanPrediction out;
  out.set_planner("naive: FLOPs / peak FLOP/s, free communication, HAPT Eq. 13");
  out.set_iteration_time_ms(TimeToMilliseconds(eq13.iteration));
  for (double f : forward_ms) {
    v1::PredictedStage* s = out.add_stages();
    s->set_forward_ms(f);
    s->set_backward_ms(2 * f);
    s->set_compute_ms(static_cast<double>(inputs.microbatches) * 3 * f);
    s->set_exposed_comm_ms(0);
    s->set_bubble_ms(std::max(0.0, out.iteration_time_ms() - s->compute_ms()));
    s->set_grad_sync_ms(0);
  }
  for (int i = 0; i + 1 < out.stages_size(); ++i) out.mutable_stages(i)->set_boundary_transfer_ms(0);
  return out;
}

}  // namespace

absl::StatusOr<v1::PlanPrediction> NaivePrediction(const proto::PlanInputs& inputs) {
  if (inputs.plan.pipelines().empty()) return NaiveOnePipeline(inputs);
  // A plan of pipelines: each pipeline alone (its stages in turn, each idle until its own end), the
  // iteration the slowest pipeline's; gradient synchronisation is free.
  v1::PlanPrediction out;
  for (int p = 0; p < inputs.plan.pipelines_size(); ++p) {
    proto::PlanInputs one = inputs;
    one.plan = proto::PipelinePlan(inputs.plan, p);
    one.microbatches =
        static_cast<int64_t>(one.plan.global_batch_size() / std::max<uint64_t>(1, one.plan.micro_batch_size()));
    HETSIM_ASSIGN_OR_RETURN(v1::PlanPrediction pipeline, NaiveOnePipeline(one));
    out.set_planner(pipeline.planner());
    out.set_iteration_time_ms(std::max(out.iteration_time_ms(), pipeline.iteration_time_ms()));
    for (const v1::PredictedStage& s : pipeline.stages()) *out.add_stages() = s;
  }
  return out;
}

}  // namespace hetsim::evaluation
