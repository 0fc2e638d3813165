// Everything the simulator is told about one run, resolved: the plan, the model and the cluster's
// islands. The executor, the workload and the pipeline read this; none of them opens a file or sees
// a message (driver::BuildSetup makes it from validated inputs).
#ifndef HETSIM_SPEC_SIMULATION_H_
#define HETSIM_SPEC_SIMULATION_H_

#include "spec/cluster.h"
#include "spec/model.h"
#include "spec/plan.h"

namespace hetsim::spec {

struct SimulationSpec {
  PlanSpec plan;
  ModelSpec model;
  ClusterSpec cluster;
};

}  // namespace hetsim::spec

#endif  // HETSIM_SPEC_SIMULATION_H_
