// Unit conversions and input limits of the topology, applied once when the graph is built.
#ifndef HETSIM_TOPOLOGY_UNITS_H_
#define HETSIM_TOPOLOGY_UNITS_H_

#include <cstdint>

namespace hetsim::topology {

// Gb/s (10^9 bits per second, the schema's *_gbps) to bytes per second (the simulator's unit).
inline constexpr double GbpsToBytesPerSecond(double gbps) { return gbps * 1e9 / 8.0; }
inline constexpr double BytesPerSecondToGbps(double bps) { return bps * 8.0 / 1e9; }

// Latencies above one second are certainly typos; the limit also keeps route weights in int64.
inline constexpr int64_t kMaxLatencyNs = 1'000'000'000;
// Global GPU ids are int32; a million GPUs is far beyond any cluster the simulator targets.
inline constexpr int64_t kMaxGpus = 1 << 20;

}  // namespace hetsim::topology

#endif  // HETSIM_TOPOLOGY_UNITS_H_
