// Large arrays read at random (a cluster's link records, the event pool, the collectives' transfer
// graphs) backed by 2 MiB transparent huge pages. A 16K-GPU run touches its 115 K link records and
// its graphs' transfers in no order: with 4 KiB pages nearly every such read also misses the TLB, a
// page walk before the cache miss. Linux gives huge pages only to memory marked for them
// (transparent_hugepage "madvise", Debian's default), so blocks of at least 2 MiB are aligned to
// 2 MiB and marked; smaller ones come from the ordinary allocator, and nothing else changes.
#ifndef HETSIM_BASE_HUGE_PAGES_H_
#define HETSIM_BASE_HUGE_PAGES_H_

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

namespace hetsim {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

template <class T>
struct HugePageAllocator {
  using value_type = T;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePageBytes) return std::allocator<T>().allocate(n);
    const size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    void* block = std::aligned_alloc(kHugePageBytes, rounded);
    if (block == nullptr) throw std::bad_alloc();
    // Advice only: without transparent huge pages the block stays in 4 KiB pages, as before.
    madvise(block, rounded, MADV_HUGEPAGE);
    return static_cast<T*>(block);
  }
  void deallocate(T* block, size_t n) {
    if (n * sizeof(T) < kHugePageBytes) {
      std::allocator<T>().deallocate(block, n);
      return;
    }
    std::free(block);
  }

  friend bool operator==(const HugePageAllocator&, const HugePageAllocator&) { return true; }
};

template <class T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace hetsim

#endif  // HETSIM_BASE_HUGE_PAGES_H_
