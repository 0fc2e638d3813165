// A resolved cluster as the executor reads it besides its topology: each island's GPU (presets
// applied, units converted), whether the hardware is ideal, and labels for messages. The topology
// itself (topology::Topology) is built from the validated Cluster message, below the simulator.
#ifndef HETSIM_BASE_SPEC_CLUSTER_H_
#define HETSIM_BASE_SPEC_CLUSTER_H_

#include <string>
#include <vector>

#include "base/spec/gpu.h"

namespace hetsim::spec {

struct IslandSpec {
  std::string name;
  GpuSpec gpu;
  std::string gpu_where;  // "cluster.pbtxt: gpu_types[\"A100\"]"
};

struct ClusterSpec {
  std::string name;
  bool ideal = false;               // flop / peak and bytes / datasheet bandwidth, no overheads
  std::vector<IslandSpec> islands;  // in the order of Cluster.islands (the topology's island index)
};

}  // namespace hetsim::spec

#endif  // HETSIM_BASE_SPEC_CLUSTER_H_
