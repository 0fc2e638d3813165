// Byte and bandwidth units, spelled one way across the tree. Binary sizes (KiB, MiB, GiB, TiB) are
// powers of 1024 (HBM capacities, buffer sizes); decimal rates are powers of 1000 (Gb/s on links,
// GB/s as nccl-tests prints them). The schema's unit is in each field's name (`hbm_gib`,
// `bandwidth_gbps`); these convert it once, at load.
#ifndef HETSIM_BASE_UNITS_H_
#define HETSIM_BASE_UNITS_H_

#include <cstdint>

namespace hetsim {

inline constexpr int64_t kKiB = int64_t{1} << 10;
inline constexpr int64_t kMiB = int64_t{1} << 20;
inline constexpr int64_t kGiB = int64_t{1} << 30;
inline constexpr int64_t kTiB = int64_t{1} << 40;

// GiB (the schema's *_gib) to bytes and back. Multiplying by 2^30 is exact in double, so these give
// the same bits as any other spelling of the factor.
inline constexpr double GibToBytes(double gib) { return gib * static_cast<double>(kGiB); }
inline constexpr double BytesToGib(double bytes) { return bytes / static_cast<double>(kGiB); }

// Gb/s (10^9 bits per second, the schema's *_gbps) to bytes per second (the simulator's unit).
inline constexpr double GbpsToBytesPerSecond(double gbps) { return gbps * 1e9 / 8.0; }
inline constexpr double BytesPerSecondToGbps(double bps) { return bps * 8.0 / 1e9; }

}  // namespace hetsim

#endif  // HETSIM_BASE_UNITS_H_
