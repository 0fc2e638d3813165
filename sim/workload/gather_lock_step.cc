#include "sim/workload/gather_lock_step.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "base/check.h"

namespace hetsim::workload {

std::vector<Time> LockStepPassEnds(const std::vector<std::vector<Time>>& layers, const std::vector<Time>& gathers,
                                   bool prefetch) {
  const size_t ranks = layers.size(), n = gathers.size();
  // starts[r]: when rank r started its current layer; ends[r]: when it ended it.
  std::vector<Time> starts(ranks, Time()), ends(ranks, Time());
  Time stream = 0;  // when the last gather issued ended (one stream per rank, every rank's the same order)
  for (size_t i = 0; i < n; ++i) {
    Time gathered = 0;
    if (gathers[i] > Time()) {
      // Issued when each rank reaches the layer (prefetch: starts the one before); starts with the last.
      Time issued = stream;
      for (size_t r = 0; r < ranks; ++r) {
        const Time at = i == 0 ? Time() : (prefetch ? starts[r] : ends[r]);
        issued = std::max(issued, at);
      }
      stream = issued + gathers[i];
      gathered = stream;
    }
    for (size_t r = 0; r < ranks; ++r) {
      HETSIM_CHECK(layers[r].size() == n, "rank %d has %d layers, not %d", static_cast<int>(r),
                   static_cast<int>(layers[r].size()), static_cast<int>(n));
      starts[r] = std::max(ends[r], gathered);
      ends[r] = starts[r] + layers[r][i];
    }
  }
  return ends;
}

std::vector<Time> CutByWeights(Time total, const std::vector<double>& weights, size_t n) {
  std::vector<double> w = weights;
  if (w.size() != n || std::accumulate(w.begin(), w.end(), 0.0) <= 0) w.assign(n, 1.0);
  const double sum = std::accumulate(w.begin(), w.end(), 0.0);
  std::vector<Time> out;
  double cumulative = 0;
  Time done = 0;
  for (size_t i = 0; i < n; ++i) {
    cumulative += w[i];
    const Time upto =
        PicosecondsToTime(static_cast<int64_t>(std::llround(TimeToPicosecondsDouble(total) * cumulative / sum)));
    out.push_back(upto - done);
    done = upto;
  }
  return out;
}

Time LockStepPass(const std::vector<std::vector<Time>>& layers, const std::vector<Time>& gathers, bool prefetch) {
  const std::vector<Time> ends = LockStepPassEnds(layers, gathers, prefetch);
  return ends.empty() ? Time() : *std::max_element(ends.begin(), ends.end());
}

}  // namespace hetsim::workload
