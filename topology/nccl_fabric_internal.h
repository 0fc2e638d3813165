// NCCL's achieved bandwidth and latency on a fabric: spec::NcclFabricTiming (base/spec/cluster.h),
// resolved once by proto::ResolveCluster with the fabric presets filling what a file leaves at zero.
// The topology keeps one per node type, island and inter-island link, and every link knows its fabric;
// with Cluster.ideal there are none (links at line rate, no protocol latency). docs/network.md, "NCCL's
// achieved bandwidth and latency".
#ifndef HETSIM_TOPOLOGY_NCCL_FABRIC_INTERNAL_H_
#define HETSIM_TOPOLOGY_NCCL_FABRIC_INTERNAL_H_

#include "base/spec/cluster.h"

namespace hetsim::topology {

using spec::kNumNcclProtocols;
using spec::NcclFabricTiming;
using spec::NcclProtocol;

}  // namespace hetsim::topology

#endif  // HETSIM_TOPOLOGY_NCCL_FABRIC_INTERNAL_H_
