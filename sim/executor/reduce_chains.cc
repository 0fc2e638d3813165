#include "sim/executor/reduce_chains.h"

#include <algorithm>

namespace hetsim::executor {

Time ReduceChainsExtraTime(Time reduce_scatter_time, int64_t bytes, int64_t ranks, int64_t nodes) {
  if (ranks < 2 || bytes <= 0 || reduce_scatter_time <= 0) return 0;
  const double n = static_cast<double>(ranks);
  const double t = TimeToSeconds(reduce_scatter_time);
  const double rate = (n - 1) * static_cast<double>(bytes) / (n * t);  // bytes/s a rank sends
  const double hops = static_cast<double>(nodes) * (1 - 1 / n);
  const double fill =
      n * std::max(0.0, hops - 1) * static_cast<double>(kNcclReduceChannels * kNcclReduceChunkBytes) / rate;
  return SecondsToTime(t / (n - 1) + fill);
}

}  // namespace hetsim::executor
