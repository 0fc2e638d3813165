// SplitMix64 (Steele, Lea, Flood): a tiny, fast, seeded generator for workloads that must be
// reproducible from a seed (benchmarks, synthetic traffic) without the weight of std::mt19937_64.
#ifndef HETSIM_SIM_ENGINE_SPLIT_MIX_H_
#define HETSIM_SIM_ENGINE_SPLIT_MIX_H_

#include <cstdint>

namespace hetsim::engine {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) for n > 0 (modulo bias is negligible for the small n used here).
  uint64_t Below(uint64_t n) { return Next() % n; }

 private:
  uint64_t state_;
};

}  // namespace hetsim::engine

#endif  // HETSIM_SIM_ENGINE_SPLIT_MIX_H_
