// Input limits of the topology, applied when the graph is built (unit conversions: base/units.h).
#ifndef HETSIM_TOPOLOGY_LIMITS_H_
#define HETSIM_TOPOLOGY_LIMITS_H_

#include <cstdint>

namespace hetsim::topology {

// Latencies above one second are certainly typos; the limit also keeps route weights in int64.
inline constexpr int64_t kMaxLatencyNs = 1'000'000'000;
// Global GPU ids are int32; a million GPUs is far beyond any cluster the simulator targets.
inline constexpr int64_t kMaxGpus = 1 << 20;

}  // namespace hetsim::topology

#endif  // HETSIM_TOPOLOGY_LIMITS_H_
