// Byte, bandwidth and FLOP units, spelled one way across the tree, and the types that carry bytes and
// bandwidths (Bytes, Bandwidth). Binary sizes (KiB, MiB, GiB, TiB) are
// powers of 1024 (HBM capacities, buffer sizes); decimal rates are powers of 1000 (Gb/s on links,
// GB/s as nccl-tests prints them). The schema's unit is in each field's name (`hbm_gib`,
// `bandwidth_gbps`); these convert it once, at load.
#ifndef HETSIM_BASE_UNITS_H_
#define HETSIM_BASE_UNITS_H_

#include <cmath>
#include <compare>
#include <cstdint>
#include <type_traits>

#include "base/strong_scalar.h"
#include "base/time.h"

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

// Decimal GB/s (10^9 bytes per second: datasheet HBM and DRAM bandwidths, nccl-tests' busbw, the
// schema's *_gbytes_per_s) to bytes per second.
inline constexpr double GBpsToBytesPerSecond(double gbytes_per_s) { return gbytes_per_s * 1e9; }

// FLOP units of the schema (GFLOP per sample, TFLOP/s peaks) to FLOP and FLOP/s.
inline constexpr double GflopToFlop(double gflop) { return gflop * 1e9; }
inline constexpr double TflopsToFlopPerSecond(double tflops) { return tflops * 1e12; }

// Durations the cost models keep in double seconds (kernel launch, host and pass overheads: summed
// below a picosecond before one rounding into a Time) from the schema's *_us and *_ms.
inline constexpr double MicrosecondsToSeconds(double us) { return us * 1e-6; }
inline constexpr double MillisecondsToSeconds(double ms) { return ms * 1e-3; }

// A byte count. A double, because the cost and memory models share tensors out: a tensor-parallel
// rank holds 1/t of a layer's weights, ZeRO shards optimizer state over d ranks, an expert receives an
// average number of tokens, and those shares are fractional by meaning (docs/decisions.md, "Bytes and
// bandwidths"). Whole counts (a message, a flow) are exact in a double up to 2^53 bytes.
class Bytes : public DoubleScalar<Bytes> {
 public:
  using DoubleScalar::DoubleScalar;
};

// A rate in bytes per second (links, NICs, HBM). Derating by an efficiency or splitting over flows is
// a multiplication or a division by a plain number; a ratio of two rates is a number.
class Bandwidth : public DoubleScalar<Bandwidth> {
 public:
  using DoubleScalar::DoubleScalar;  // bytes per second
  constexpr double bytes_per_second() const { return value(); }

 private:
  using DoubleScalar::value;  // read as bytes_per_second()
};

// The time a transfer takes per byte it moves on links it shares: the transfers on a link over its
// capacity in bytes per second (collectives::PathCost). Not the inverse of a Bandwidth: the load
// divides the capacity once, and `bytes * seconds_per_byte` is the one multiplication an alpha-beta
// step makes, the same double operations as before the type (docs/decisions.md, session 32).
class SecondsPerByte : public DoubleScalar<SecondsPerByte> {
 public:
  using DoubleScalar::DoubleScalar;
};
// `bytes` at `per_byte`: bytes.value() * per_byte.value() seconds.
constexpr Seconds operator*(Bytes bytes, SecondsPerByte per_byte) { return Seconds(bytes.value() * per_byte.value()); }

static_assert(sizeof(Bytes) == 8 && std::is_trivially_copyable_v<Bytes>);
static_assert(sizeof(Bandwidth) == 8 && std::is_trivially_copyable_v<Bandwidth>);
static_assert(sizeof(SecondsPerByte) == 8 && std::is_trivially_copyable_v<SecondsPerByte>);
static_assert(!std::is_convertible_v<double, Bytes> && !std::is_convertible_v<Bytes, double>);
static_assert(!std::is_constructible_v<Bytes, Bandwidth> && !std::is_constructible_v<Bandwidth, Bytes>);
static_assert(!std::is_convertible_v<double, SecondsPerByte> && !std::is_constructible_v<SecondsPerByte, Bandwidth>);

// The schema's units to the types, written once.
inline constexpr Bytes GibBytes(double gib) { return Bytes(GibToBytes(gib)); }
inline constexpr Bandwidth GbpsBandwidth(double gbps) { return Bandwidth(GbpsToBytesPerSecond(gbps)); }
inline constexpr Bandwidth GBpsBandwidth(double gbytes_per_s) { return Bandwidth(GBpsToBytesPerSecond(gbytes_per_s)); }

// Time to move `bytes` at `rate`, rounded up so that a transfer never finishes early. The one
// conversion of bytes and a rate into a Time (there is no overload on raw numbers).
inline Time TransferTime(Bytes bytes, Bandwidth rate) {
  const double ps = std::ceil(bytes.value() / rate.bytes_per_second() * 1e12);
  if (!(ps < 9.2e18)) return kTimeMax;
  return PicosecondsToTime(static_cast<int64_t>(ps));
}

}  // namespace hetsim

#endif  // HETSIM_BASE_UNITS_H_
