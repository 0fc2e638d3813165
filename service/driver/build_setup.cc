#include "service/driver/build_setup.h"

#include <string>
#include <utility>

#include "base/spec/simulation.h"
#include "base/status_macros.h"
#include "proto/pipeline_plans.h"
#include "proto/resolve.h"
#include "service/driver/cluster_topology.h"

namespace hetsim::driver {
namespace {

// The spec of validated inputs; the cluster's part is the one `topology` was built from.
absl::StatusOr<spec::SimulationSpec> ResolveSimulation(const proto::PlanInputs& inputs,
                                                       const topology::Topology& topology) {
  spec::SimulationSpec s;
  const std::string model_where = inputs.model_path.empty() ? inputs.plan_path + ": model" : inputs.model_path;
  s.model = proto::ResolveModel(inputs.model, model_where);
  s.plan = proto::ResolvePlan(inputs.plan, inputs.plan_path);
  s.cluster = topology.cluster();
  return s;
}

}  // namespace

absl::StatusOr<std::unique_ptr<sim::executor::ExecutionSetup>> BuildSetup(const proto::PlanInputs& inputs,
                                                                          sim::NetworkMode mode,
                                                                          sim::executor::ReplicaReuse reuse) {
  // A plan of pipelines is one setup per pipeline (simulate_pipelines.h), never one setup.
  HETSIM_RETURN_IF_ERROR(proto::RequireOnePipeline(inputs.plan, inputs.plan_path, "an execution setup"));
  HETSIM_ASSIGN_OR_RETURN(std::unique_ptr<topology::Topology> topology,
                          BuildTopology(inputs.cluster, inputs.cluster_path));
  HETSIM_ASSIGN_OR_RETURN(spec::SimulationSpec spec, ResolveSimulation(inputs, *topology));
  return sim::executor::BuildExecutionSetup(std::move(spec), std::move(topology), mode, reuse);
}

}  // namespace hetsim::driver
