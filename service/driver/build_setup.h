// The edge between the files and the simulator: validated inputs (proto::PlanInputs) become the
// cluster's topology and the resolved spec (base/spec/simulation.h: plan, model and the cluster),
// and the executor's setup is built from those two. Below this call nothing sees a message or a
// file path; the spec's labels ("plan.pbtxt: stages[3]") name the files in messages.
//
//   auto inputs = proto::LoadPlanInputs("plan.pbtxt", "cluster.pbtxt");
//   auto setup = driver::BuildSetup(*inputs, NetworkMode::kMaxMinFair);
#ifndef HETSIM_SERVICE_DRIVER_BUILD_SETUP_H_
#define HETSIM_SERVICE_DRIVER_BUILD_SETUP_H_

#include <memory>

#include "absl/status/statusor.h"
#include "proto/inputs.h"
#include "sim/executor/setup.h"
#include "sim/network/network.h"
#include "topology/device_graph.h"

namespace hetsim::driver {

// The topology, the spec and the setup; a cluster the topology refuses is named by its file.
absl::StatusOr<std::unique_ptr<sim::executor::ExecutionSetup>> BuildSetup(
    const proto::PlanInputs& inputs, sim::NetworkMode mode,
    sim::executor::ReplicaReuse reuse = sim::executor::ReplicaReuse::kMapped);

}  // namespace hetsim::driver

#endif  // HETSIM_SERVICE_DRIVER_BUILD_SETUP_H_
