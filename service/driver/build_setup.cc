#include "service/driver/build_setup.h"

#include <unistd.h>

#include <string>
#include <utility>

#include "absl/strings/str_format.h"

#include "base/spec/simulation.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "proto/pipeline_plans.h"
#include "proto/resolve.h"
#include "proto/validate_plan.h"
#include "service/driver/cluster_topology.h"
#include "sim/executor/flow_estimate.h"
#include "sim/executor/layer_range_sync.h"

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

// A memory size for a message: GB from 1 GB up, else MB, so that a small plan's estimate and a small
// limit do not both read "0.02 GB".
std::string MemoryText(uint64_t bytes) {
  const auto b = static_cast<double>(bytes);
  return b >= 1e9 ? absl::StrFormat("%.2f GB", b / 1e9) : absl::StrFormat("%.2f MB", b / 1e6);
}

}  // namespace

uint64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_bytes > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_bytes) : 0;
}

int64_t ClusterGpus(const hetsim::v1::Cluster& cluster) {
  int64_t gpus = 0;
  for (const hetsim::v1::Island& island : cluster.islands()) {
    for (const hetsim::v1::NodeType& type : cluster.node_types()) {
      if (type.name() == island.node_type()) gpus += static_cast<int64_t>(island.node_count()) * type.gpus_per_node();
    }
  }
  return gpus;
}

absl::Status CheckWorkEstimate(const spec::PlanSpec& plan, int64_t cluster_gpus, const WorkLimits& limits) {
  const executor::WorkEstimate e = executor::EstimateWork(plan, cluster_gpus);
  if (limits.max_events > 0 && e.min_events > limits.max_events) {
    const std::string passes =
        plan.pipelines.empty() ? absl::StrFormat("%d microbatches x %d stages x %d virtual stages x 2 passes",
                                                 plan.microbatches, plan.stages.size(), plan.virtual_stages)
                               : absl::StrFormat("microbatches x stages x %d virtual stages x 2 passes of %d pipelines",
                                                 plan.virtual_stages, plan.pipelines.size());
    return RunLimitError(absl::StatusCode::kResourceExhausted, "max-events",
                         absl::StrFormat("%s: the iteration needs at least %d events (%s), over the --max-events "
                                         "limit (%d events); raise it with --max-events N (0 = no limit)",
                                         plan.where, e.min_events, passes, limits.max_events));
  }
  const uint64_t memory = limits.max_memory_bytes > 0 ? limits.max_memory_bytes : PhysicalMemoryBytes();
  if (memory == 0 || e.min_memory_bytes <= memory) return absl::OkStatus();
  const std::string limit =
      limits.max_memory_bytes > 0
          ? absl::StrFormat("the --max-memory limit (%s)", MemoryText(memory))
          : absl::StrFormat("the machine's memory (%s, the default --max-memory)", MemoryText(memory));
  return RunLimitError(
      absl::StatusCode::kResourceExhausted, "max-memory",
      absl::StrFormat(
          "%s: the simulation needs at least %s (%d passes in the pipeline DAG, %d ranks in "
          "data-parallel synchronisation rings, %d GPUs in the cluster; docs/reliability.md), over %s; nothing was "
          "set up; raise it with --max-memory SIZE, or shrink the plan",
          plan.where, MemoryText(e.min_memory_bytes), e.pipeline_tasks, e.grad_sync_ranks, e.cluster_gpus, limit));
}

absl::StatusOr<std::unique_ptr<executor::ExecutionSetup>> BuildSetup(
    const proto::PlanInputs& inputs, network::NetworkMode mode, executor::ReplicaReuse reuse, const WorkLimits* limits,
    const executor::ExecutionSetup* network, std::span<const executor::RangeGather> range_gathers) {
  // A plan of pipelines is one setup per pipeline (simulate_pipelines.h), never one setup.
  HETSIM_RETURN_IF_ERROR(proto::RequireOnePipeline(inputs.plan, inputs.plan_path, "an execution setup",
                                                   "each pipeline is set up on its own (BuildPipelineSetup)"));
  if (limits != nullptr) {
    HETSIM_RETURN_IF_ERROR(
        CheckWorkEstimate(proto::ResolvePlan(inputs.plan, inputs.plan_path), ClusterGpus(inputs.cluster), *limits));
  }
  if (network != nullptr) {
    HETSIM_ASSIGN_OR_RETURN(spec::SimulationSpec spec, ResolveSimulation(inputs, *network->topology));
    return executor::BuildExecutionSetup(std::move(spec), network->topology, mode, reuse, network->router,
                                         range_gathers);
  }
  HETSIM_ASSIGN_OR_RETURN(std::unique_ptr<topology::Topology> topology,
                          BuildTopology(inputs.cluster, inputs.cluster_path));
  HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check("building the cluster's topology"));
  HETSIM_ASSIGN_OR_RETURN(spec::SimulationSpec spec, ResolveSimulation(inputs, *topology));
  return executor::BuildExecutionSetup(std::move(spec), std::move(topology), mode, reuse, nullptr, range_gathers);
}

absl::StatusOr<std::unique_ptr<executor::ExecutionSetup>> BuildPipelineSetup(
    const proto::PlanInputs& inputs, int p, network::NetworkMode mode, const WorkLimits* limits,
    const executor::ExecutionSetup* network, std::span<const executor::RangeGather> range_gathers) {
  proto::PlanInputs mine = inputs;
  mine.plan = proto::PipelinePlan(inputs.plan, p);
  mine.microbatches = proto::MicrobatchCount(mine.plan);
  HETSIM_ASSIGN_OR_RETURN(std::unique_ptr<executor::ExecutionSetup> setup,
                          BuildSetup(mine, mode, executor::ReplicaReuse::kMapped, limits, network, range_gathers));
  executor::DropStageGradientSync(*setup);
  return setup;
}

}  // namespace hetsim::driver
