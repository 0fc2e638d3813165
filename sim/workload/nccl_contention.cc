#include "sim/workload/nccl_contention.h"

#include <cmath>

namespace hetsim::workload {

namespace {

// The compute capabilities (spec::GpuSpec.compute_capability) NCCL's search tables key on.
constexpr int kVolta = 70;
constexpr int kBlackwell = 100;

int NvSwitchChannels(int compute_capability) {
  if (compute_capability == kVolta) return kNcclV100NvLinkChannels;
  if (compute_capability >= kBlackwell) return kNcclNvLink5Channels;
  return kNcclNvSwitchChannels;  // A100, H100; and where unknown (no preset), the count measured on them
}

int PcieChannels(const spec::NodeTypeSpec& node) {
  return node.bandwidth.bytes_per_second() >= kNcclPcieDoublingLineRateBytesPerS ? kNcclPcieGen5Channels
                                                                                 : spec::kNcclPcieChannels;
}

}  // namespace

int NcclCollectiveChannels(const spec::IslandSpec& island) {
  const spec::NodeTypeSpec& node = island.node;
  switch (node.fabric) {
    case spec::IntraNodeFabric::kNvSwitch: return NvSwitchChannels(island.gpu.compute_capability);
    case spec::IntraNodeFabric::kHybridCubeMesh: return kNcclV100NvLinkChannels;  // DGX-1's mesh (V100)
    case spec::IntraNodeFabric::kNvlinkBridge:
      // Two GPUs on one bridge ring over NVLink alone: no log or bridge link count to size it by, so the
      // NVSwitch count stays; more GPUs ring through PCIe between the pairs.
      if (node.gpus_per_node <= 2) return kNcclNvSwitchChannels;
      return PcieChannels(node);
    case spec::IntraNodeFabric::kPcie:
    case spec::IntraNodeFabric::kPcieTree: return PcieChannels(node);
  }
  return kNcclNvSwitchChannels;
}

double NcclSmShare(bool on, const spec::IslandSpec& island) {
  const int channels = NcclCollectiveChannels(island);
  // A GPU with no more SMs than the channels: NCCL would not open them all there; not priced.
  if (!on || island.gpu.sm_count <= channels) return 0;
  return static_cast<double>(channels) / island.gpu.sm_count;
}

Time ContentionTime(double share, Time overlapped) {
  if (share <= 0 || overlapped <= 0) return 0;
  return PicosecondsToTime(std::llround(share * TimeToPicosecondsDouble(overlapped)));
}

}  // namespace hetsim::workload
