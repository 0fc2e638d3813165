#include "sim/workload/nccl_contention.h"

#include <cmath>

namespace hetsim::workload {

double NcclSmShare(bool on, const spec::GpuSpec& gpu) {
  // A GPU with no more SMs than the channels: NCCL would not open them all there; not priced.
  if (!on || gpu.sm_count <= kNcclCollectiveChannels) return 0;
  return static_cast<double>(kNcclCollectiveChannels) / gpu.sm_count;
}

Time ContentionTime(double share, Time overlapped) {
  if (share <= 0 || overlapped <= 0) return 0;
  return PicosecondsToTime(std::llround(share * TimeToPicosecondsDouble(overlapped)));
}

}  // namespace hetsim::workload
