// base/huge_pages.h: large blocks start on a 2 MiB boundary (where a huge page can back them), small
// ones come from the ordinary allocator, and a vector keeps its contents as it grows across the two.
#include <cstdint>

#include <catch2/catch.hpp>

#include "base/huge_pages.h"

namespace hetsim {
namespace {

bool OnHugePageBoundary(const void* p) { return reinterpret_cast<uintptr_t>(p) % kHugePageBytes == 0; }

TEST_CASE("HugePageVector aligns blocks of 2 MiB or more to 2 MiB", "[huge_pages]") {
  HugePageVector<int64_t> small(16);
  CHECK(small.capacity() * sizeof(int64_t) < kHugePageBytes);
  HugePageVector<int64_t> large(kHugePageBytes / sizeof(int64_t) + 1);
  CHECK(OnHugePageBoundary(large.data()));
  HugePageVector<int64_t> exact(kHugePageBytes / sizeof(int64_t));
  CHECK(OnHugePageBoundary(exact.data()));
}

TEST_CASE("HugePageVector keeps its contents while it grows past 2 MiB", "[huge_pages]") {
  HugePageVector<int32_t> v;
  const int32_t n = 3 * static_cast<int32_t>(kHugePageBytes / sizeof(int32_t));
  for (int32_t i = 0; i < n; ++i) v.push_back(i * 7);
  CHECK(OnHugePageBoundary(v.data()));
  bool same = true;
  for (int32_t i = 0; i < n; ++i) same &= v[static_cast<size_t>(i)] == i * 7;
  CHECK(same);
  v.resize(4);
  v.shrink_to_fit();  // back to a small block from the ordinary allocator
  CHECK(v.size() == 4);
  CHECK(v[3] == 21);
}

}  // namespace
}  // namespace hetsim
