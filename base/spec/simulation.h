// Everything the simulator is told about one run, resolved: the plan, the model and the cluster's
// islands. The executor, the workload and the pipeline read this; none of them opens a file or sees
// a message (driver::BuildSetup makes it from validated inputs).
#ifndef HETSIM_BASE_SPEC_SIMULATION_H_
#define HETSIM_BASE_SPEC_SIMULATION_H_

#include "base/spec/cluster.h"
#include "base/spec/model.h"
#include "base/spec/plan.h"

namespace hetsim::spec {

struct SimulationSpec {
  PlanSpec plan;
  ModelSpec model;
  ClusterSpec cluster;
};

}  // namespace hetsim::spec

#endif  // HETSIM_BASE_SPEC_SIMULATION_H_
