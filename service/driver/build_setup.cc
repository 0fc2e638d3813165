#include "service/driver/build_setup.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "proto/resolve.h"

namespace hetsim::driver {

absl::StatusOr<spec::SimulationSpec> ResolveSimulation(const proto::PlanInputs& inputs,
                                                       const topology::Topology& topology) {
  spec::SimulationSpec s;
  const std::string model_where = inputs.model_path.empty() ? inputs.plan_path + ": model" : inputs.model_path;
  s.model = proto::ResolveModel(inputs.model, model_where);
  s.plan = proto::ResolvePlan(inputs.plan, inputs.plan_path);
  s.cluster.name = inputs.cluster.name();
  s.cluster.ideal = inputs.cluster.ideal();
  for (int32_t i = 0; i < topology.num_islands(); ++i) {
    const hetsim::v1::GpuType& gpu = topology.gpu_type(i);
    spec::IslandSpec island;
    island.name = inputs.cluster.islands(i).name();
    island.gpu_where = absl::StrCat(inputs.cluster_path, ": gpu_types[\"", gpu.name(), "\"]");
    island.gpu = proto::ResolveGpu(gpu);
    s.cluster.islands.push_back(std::move(island));
  }
  return s;
}

absl::StatusOr<std::unique_ptr<sim::executor::ExecutionSetup>> BuildSetup(const proto::PlanInputs& inputs,
                                                                          sim::NetworkMode mode,
                                                                          sim::executor::ReplicaReuse reuse) {
  absl::StatusOr<topology::Topology> built = topology::Topology::Build(inputs.cluster);
  if (!built.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(inputs.cluster_path, ": ", built.status().message()));
  }
  auto topology = std::make_unique<topology::Topology>(*std::move(built));
  HETSIM_ASSIGN_OR_RETURN(spec::SimulationSpec spec, ResolveSimulation(inputs, *topology));
  return sim::executor::BuildExecutionSetup(std::move(spec), std::move(topology), mode, reuse);
}

}  // namespace hetsim::driver
