// The strong ids (base/ids.h) and the byte and bandwidth types (base/units.h): what they allow, what
// they refuse to compile, and that the typed TransferTime rounds exactly as the raw one.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "base/ids.h"
#include "base/time.h"
#include "base/units.h"
#include "topology/device_graph.h"

namespace hetsim {
namespace {

// What must not compile, as concepts (a `requires` on an ill-formed expression is false).
template <typename A, typename B>
concept Addable = requires(A a, B b) {
  a + b;
};
template <typename A, typename B>
concept EqualityComparable = requires(A a, B b) {
  a == b;
};
template <typename A, typename B>
concept Orderable = requires(A a, B b) {
  a < b;
};

static_assert(!std::is_convertible_v<int32_t, GpuId> && !std::is_convertible_v<GpuId, int32_t>);
static_assert(!std::is_convertible_v<uint32_t, LinkId> && !std::is_convertible_v<LinkId, uint32_t>);
static_assert(!std::is_constructible_v<GpuId, LinkId> && !std::is_constructible_v<LinkId, GpuId>);
static_assert(!EqualityComparable<GpuId, LinkId> && !EqualityComparable<GpuId, int>);
static_assert(!Orderable<LinkId, uint32_t> && !Orderable<GpuId, LinkId>);
static_assert(!Addable<GpuId, int> && !Addable<LinkId, LinkId> && !Addable<GpuId, GpuId>);
static_assert(EqualityComparable<GpuId, GpuId> && Orderable<LinkId, LinkId>);
static_assert(sizeof(GpuId) == sizeof(int32_t) && std::is_trivially_copyable_v<LinkId>);

static_assert(!std::is_convertible_v<double, Bytes> && !std::is_convertible_v<double, Bandwidth>);
static_assert(!Addable<Bytes, Bandwidth> && !Addable<Bytes, double> && !Addable<Bandwidth, double>);
static_assert(!EqualityComparable<Bytes, Bandwidth> && !EqualityComparable<Bytes, double>);
static_assert(Addable<Bytes, Bytes> && Addable<Bandwidth, Bandwidth>);
// topology::DeviceId is a strong id too: no integer in or out, no mixing with the other ids.
static_assert(!std::is_convertible_v<int32_t, topology::DeviceId> &&
              !std::is_convertible_v<topology::DeviceId, int32_t>);
static_assert(!std::is_constructible_v<topology::DeviceId, GpuId> && !EqualityComparable<topology::DeviceId, int>);
static_assert(sizeof(topology::DeviceId) == sizeof(int32_t));
// The shared operator set (base/strong_scalar.h): a floating-point unit scales by any number, Time by
// integers only; no unit adds another or a bare number.
template <typename A, typename K>
concept Scalable = requires(A a, K k) {
  a* k;
  k* a;
  a / k;
};
static_assert(Scalable<Bytes, double> && Scalable<Bytes, int> && Scalable<Bandwidth, double>);
static_assert(Scalable<Time, int64_t> && !Scalable<Time, double>);
static_assert(!Addable<Time, Bytes> && !Addable<Time, int64_t> && !EqualityComparable<Time, Bytes>);
static_assert(Bytes(6) / Bytes(4) == 1.5 && Bandwidth(3) + Bandwidth(1) == Bandwidth(4) && -Bytes(2) < Bytes());
static_assert(7_ns / 2_ns == 3 && 7_ns - 2_ns == 5_ns && 3 * 2_ns == 6_ns && -(2_ns) < 0);

TEST_CASE("strong ids: compare, hash, print and index through value()", "[base]") {
  const GpuId a(3), b(7);
  CHECK(a < b);
  CHECK(a != b);
  CHECK(a == GpuId(3));
  CHECK(a.value() == 3);
  absl::flat_hash_set<GpuId> seen = {a, b, GpuId(3)};
  CHECK(seen.size() == 2);
  std::ostringstream os;
  os << LinkId(42);
  CHECK(os.str() == "42");
  const std::vector<double> per_link = {1.5, 2.5, 3.5};
  CHECK(per_link[LinkId(2).value()] == 3.5);
}

TEST_CASE("strong ids: IdsBelow walks 0 .. n-1, the list helpers wrap integers", "[base]") {
  std::vector<LinkId> walked;
  for (LinkId l : IdsBelow<LinkId>(size_t{4})) walked.push_back(l);
  CHECK(walked == LinkIds({0, 1, 2, 3}));
  CHECK(GpuIds({5, 2}) == std::vector<GpuId>{GpuId(5), GpuId(2)});
  CHECK(GpuGroups({{0, 1}, {2}}) == std::vector<std::vector<GpuId>>{{GpuId(0), GpuId(1)}, {GpuId(2)}});
  int count = 0;
  for (GpuId g : IdsBelow<GpuId>(0)) count += g.value() + 1;
  CHECK(count == 0);
  CHECK(topology::ReverseLink(LinkId(10)) == LinkId(11));
  CHECK(topology::kNoLink == LinkId(0xffffffffu));
}

TEST_CASE("bytes and bandwidth: the schema's units, written once", "[base]") {
  CHECK(GibBytes(1).value() == 1073741824.0);
  CHECK(GbpsBandwidth(400).bytes_per_second() == 50e9);
  CHECK(GBpsBandwidth(3.35e3).bytes_per_second() == 3.35e12);
  CHECK(GflopToFlop(2.5) == 2.5e9);
  CHECK(TflopsToFlopPerSecond(989) == 989e12);
  CHECK(MicrosecondsToSeconds(3) == Approx(3e-6));
  CHECK(MillisecondsToSeconds(250) == Approx(0.25));
  const Bytes b(1000);
  CHECK((b + Bytes(24)).value() == 1024);
  CHECK((b - Bytes(1)).value() == 999);
  CHECK((b / 8).value() == 125);
  CHECK((b * 0.5).value() == 500);
  CHECK(b / Bytes(250) == 4);
  CHECK(Bandwidth(10e9) * 0.9 == Bandwidth(9e9));
  CHECK(Bandwidth(10e9) / Bandwidth(5e9) == 2);
  CHECK(Bandwidth(1) < Bandwidth(2));
}

TEST_CASE("bytes and bandwidth: TransferTime is ceil(bytes / rate) picoseconds clamped to kTimeMax", "[base]") {
  CHECK(TransferTime(Bytes(1e6), Bandwidth(1e10)) == 100 * kMicrosecond);
  CHECK(TransferTime(Bytes(1), Bandwidth(3)) == 333333333334_ps);  // rounded up: never early
  const double bytes[] = {0, 1, 7.25, 4096, 1e6 / 3, 16777216, 3.3e9, 1e15};
  const double rates[] = {1, 3e9, 12.5e9, 25e9 * 0.93, 50e9, 4.8e11 / 7};
  // The closed form, rounded up (a transfer never finishes early) and clamped where it leaves Time's range.
  const auto closed_form = [](double by, double r) {
    const double ps = std::ceil(by / r * 1e12);
    return ps < 9.2e18 ? PicosecondsToTime(static_cast<int64_t>(ps)) : kTimeMax;
  };
  for (double by : bytes) {
    for (double r : rates) CHECK(TransferTime(Bytes(by), Bandwidth(r)) == closed_form(by, r));
  }
  CHECK(TransferTime(Bytes(1e30), Bandwidth(1)) == kTimeMax);
}

}  // namespace
}  // namespace hetsim
