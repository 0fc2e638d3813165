// NCCL's achieved bandwidth and latency on a fabric, converted once from the cluster's NcclFabric
// (proto/fabric_presets.h fills the fields a file leaves at zero). The topology keeps one per node
// type, island and inter-island link, and every link knows its fabric; with Cluster.ideal there are
// none (links at line rate, no protocol latency). docs/network.md, "NCCL's achieved bandwidth and
// latency".
#ifndef HETSIM_TOPOLOGY_NCCL_FABRIC_H_
#define HETSIM_TOPOLOGY_NCCL_FABRIC_H_

#include <array>
#include <cstdint>
#include <string>

#include "base/time.h"

namespace hetsim::topology {

// NCCL's protocols: LL (8-byte lines with a flag, lowest latency), LL128 (128-byte lines, 120 bytes of
// payload), Simple (large chunks and fences, full bandwidth, highest latency).
enum class NcclProtocol : uint8_t { kLL = 0, kLL128 = 1, kSimple = 2 };
inline constexpr int kNumNcclProtocols = 3;

struct NcclFabricTiming {
  std::string name;                                            // "node type \"dgx\"", "island \"a100\"", ...
  double bandwidth_efficiency = 1;                             // link capacities are line rate x this
  hetsim::Time launch_latency = 0;                             // once per collective
  std::array<hetsim::Time, kNumNcclProtocols> step_latency{};  // per algorithm step, by NcclProtocol
};

}  // namespace hetsim::topology

#endif  // HETSIM_TOPOLOGY_NCCL_FABRIC_H_
