// Identifiers shared by the topology (which numbers GPUs and links), the network (which carries flows
// over links) and everything above: declared once so that a route goes from one to the other as it is.
//
// Each id is a type of its own around its integer (docs/decisions.md, "Ids are types of their own"):
// a GpuId is not a LinkId, and neither is an int. What an id can do is what ids need: compare, hash
// (absl containers, std::hash), print, and give its integer through one accessor, `.value()`, to
// index a flat array. No arithmetic: `LinkId(up.value() + 1)` shows where an id is computed. The
// constructor from the integer is explicit, so new call sites wrap their integers in one word.
#ifndef HETSIM_BASE_IDS_H_
#define HETSIM_BASE_IDS_H_

#include <compare>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hetsim {

template <typename Tag, typename Rep>
class StrongId {
 public:
  using rep_type = Rep;

  constexpr StrongId() = default;  // id 0
  constexpr explicit StrongId(Rep value) : value_(value) {}

  // The integer inside, to index a flat array or to write a file.
  constexpr Rep value() const { return value_; }

  friend constexpr auto operator<=>(StrongId a, StrongId b) = default;
  friend constexpr bool operator==(StrongId a, StrongId b) = default;

  template <typename H>
  friend H AbslHashValue(H h, StrongId id) {
    return H::combine(std::move(h), id.value_);
  }
  // Test messages (Catch2 prints through operator<<). Debian's Abseil (20220623) predates
  // AbslStringify, so messages built with absl::StrFormat pass `.value()` with `%d`.
  // On std::ostream only: a template over any stream would tie with Catch2's own MessageBuilder
  // operator<< under Clang.
  friend std::ostream& operator<<(std::ostream& os, StrongId id) { return os << id.value_; }

 private:
  Rep value_ = 0;
};

using GpuId = StrongId<struct GpuIdTag, int32_t>;     // global: islands in order, nodes in order, GPUs in order
using LinkId = StrongId<struct LinkIdTag, uint32_t>;  // index into the topology's link table (one direction of a cable)

// The ids 0, 1, ..., n - 1 in order, for a loop over every GPU or link of a table:
// `for (LinkId l : IdsBelow<LinkId>(links.size()))`. Written out rather than as a std::views pipeline,
// which Clang 14 cannot compile against libstdc++ 12's ranges.
template <typename Id>
class IdRange {
 public:
  using Rep = typename Id::rep_type;
  class iterator {
   public:
    constexpr explicit iterator(Rep v) : v_(v) {}
    constexpr Id operator*() const { return Id(v_); }
    constexpr iterator& operator++() {
      ++v_;
      return *this;
    }
    friend constexpr bool operator==(iterator a, iterator b) = default;

   private:
    Rep v_;
  };
  constexpr explicit IdRange(Rep n) : n_(n) {}
  constexpr iterator begin() const { return iterator(0); }
  constexpr iterator end() const { return iterator(n_); }

 private:
  Rep n_;
};
template <typename Id, std::integral N>
constexpr IdRange<Id> IdsBelow(N n) {
  return IdRange<Id>(static_cast<typename Id::rep_type>(n));
}

// A list of ids from their integers, where a test or a tool writes them out: `GpuIds({0, 1, 2})`.
inline std::vector<GpuId> GpuIds(std::initializer_list<int32_t> values) {
  std::vector<GpuId> out;
  for (int32_t v : values) out.emplace_back(v);
  return out;
}
inline std::vector<LinkId> LinkIds(std::initializer_list<uint32_t> values) {
  std::vector<LinkId> out;
  for (uint32_t v : values) out.emplace_back(v);
  return out;
}

inline std::vector<std::vector<GpuId>> GpuGroups(std::initializer_list<std::initializer_list<int32_t>> groups) {
  std::vector<std::vector<GpuId>> out;
  for (std::initializer_list<int32_t> g : groups) out.push_back(GpuIds(g));
  return out;
}

static_assert(sizeof(GpuId) == 4 && std::is_trivially_copyable_v<GpuId>);
static_assert(sizeof(LinkId) == 4 && std::is_trivially_copyable_v<LinkId>);
static_assert(!std::is_convertible_v<int, GpuId> && !std::is_convertible_v<GpuId, int>);
static_assert(!std::is_constructible_v<GpuId, LinkId> && !std::is_constructible_v<LinkId, GpuId>);

}  // namespace hetsim

template <typename Tag, typename Rep>
struct std::hash<hetsim::StrongId<Tag, Rep>> {
  size_t operator()(hetsim::StrongId<Tag, Rep> id) const noexcept { return std::hash<Rep>()(id.value()); }
};

#endif  // HETSIM_BASE_IDS_H_
