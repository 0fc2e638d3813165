// The edge between the files and the simulator: validated inputs (proto::PlanInputs) become the
// cluster's topology and the resolved spec (base/spec/simulation.h: plan, model and the cluster),
// and the executor's setup is built from those two. Below this call nothing sees a message or a
// file path; the spec's labels ("plan.pbtxt: stages[3]") name the files in messages.
//
//   auto inputs = proto::LoadPlanInputs("plan.pbtxt", "cluster.pbtxt");
//   auto setup = driver::BuildSetup(*inputs, NetworkMode::kMaxMinFair);
#ifndef HETSIM_SERVICE_DRIVER_BUILD_SETUP_H_
#define HETSIM_SERVICE_DRIVER_BUILD_SETUP_H_

#include <cstdint>
#include <memory>
#include <span>

#include "absl/status/statusor.h"
#include "base/spec/plan.h"
#include "proto/inputs.h"
#include "sim/executor/setup.h"
#include "sim/network/network.h"
#include "topology/device_graph.h"

namespace hetsim::driver {

// What a run may cost, checked against the plan's executor::WorkEstimate before the setup is
// built (docs/reliability.md, "Work bounded before it starts").
struct WorkLimits {
  uint64_t max_events = 0;        // --max-events; 0 = no limit
  uint64_t max_memory_bytes = 0;  // --max-memory; 0 = the machine's physical memory
};

// The machine's physical memory in bytes (0 when the system does not say).
uint64_t PhysicalMemoryBytes();

// A run limit (base/wall_limit.h) naming the plan file, the estimate, the limit and how to raise it,
// when the plan's estimate on a cluster of `cluster_gpus` is over `limits`; OK otherwise.
absl::Status CheckWorkEstimate(const spec::PlanSpec& plan, int64_t cluster_gpus, const WorkLimits& limits);

// The GPUs of a validated cluster message (every island's nodes x its node type's GPUs).
int64_t ClusterGpus(const hetsim::v1::Cluster& cluster);

// The topology, the spec and the setup; a cluster the topology refuses is named by its file. With
// `limits`, a plan whose estimate is over them is refused before the setup is built. With `network`
// (a setup on the same cluster), its topology and router are shared instead of built again.
absl::StatusOr<std::unique_ptr<executor::ExecutionSetup>> BuildSetup(
    const proto::PlanInputs& inputs, network::NetworkMode mode,
    executor::ReplicaReuse reuse = executor::ReplicaReuse::kMapped, const WorkLimits* limits = nullptr,
    const executor::ExecutionSetup* network = nullptr, std::span<const executor::RangeGather> range_gathers = {});

// Pipeline `p` of a plan of pipelines (Plan.pipelines) set up as a plan of its own on the one cluster
// (its GPUs global ids), its stages' own data-parallel reduction left to the layer ranges
// (executor::DropStageGradientSync), as `hetsim run` and the Chakra export set each pipeline up. With
// `network` (an earlier pipeline's setup), the cluster's topology and router are that setup's: a plan
// of many pipelines builds them once, not once per pipeline. `range_gathers`: under ZeRO-3 the layer
// ranges' gathers (executor::RangeGathersOf), which need every pipeline's layout, so the pipelines are
// set up once without them and again with them.
absl::StatusOr<std::unique_ptr<executor::ExecutionSetup>> BuildPipelineSetup(
    const proto::PlanInputs& inputs, int p, network::NetworkMode mode, const WorkLimits* limits = nullptr,
    const executor::ExecutionSetup* network = nullptr, std::span<const executor::RangeGather> range_gathers = {});

}  // namespace hetsim::driver

#endif  // HETSIM_SERVICE_DRIVER_BUILD_SETUP_H_
