// NCCL's kernels beside the computation (Plan.nccl_sm_contention; docs/cost-model.md, "NCCL beside the
// computation"): a collective that runs on a side stream while the GPU computes holds one thread block
// per channel on as many SMs, for as long as it runs, so the kernels computing beside it have the GPU's
// other SMs: a compute task runs at (SMs - channels) / SMs of its speed while the collective is in
// flight, and one that ran `overlapped` beside it takes share x overlapped longer (share = channels /
// SMs: work W beside a collective for o of its time ends at W + share x o).
//
//   const double share = NcclSmShare(plan.nccl_sm_contention, island);  // 24 / 132 on an H100 node
//   Time extra = ContentionTime(share, hidden);  // what the hidden collective costs the compute
#ifndef HETSIM_SIM_WORKLOAD_NCCL_CONTENTION_H_
#define HETSIM_SIM_WORKLOAD_NCCL_CONTENTION_H_

#include "base/spec/cluster.h"
#include "base/spec/gpu.h"
#include "base/time.h"

namespace hetsim::workload {

// How NCCL sizes its collective channels (one CTA each), NVIDIA/nccl at 5067397 (2026): the ring search
// (src/graph/search.cc) finds n channels of bandwidth b over the node's intra-node links;
// ncclTopoDupChannels doubles them when b >= 25 GB/s (not on compute capability > 8.0 with b < 50 and
// n > 4); src/graph/connect.cc then doubles every search channel again ("Execution channels are
// typically 2x the search channels", S. Jeaugey, NVIDIA/nccl#1041). The execution counts per fabric:

// A100 and H100 NVSwitch nodes: NCCL's init log prints "24 coll channels" on 8 x H100 (AWS p5.48xlarge,
// NCCL 2.18-2.27 logs in aws-samples and NVIDIA/nccl issues, e.g. NVIDIA/nccl#1781) and on 8 x A100
// SXM4, and Nsight Systems shows an ncclAllGather of FSDP's prefetch launching 24 blocks on an H100's
// 132 SMs (NVIDIA developer forums, "Compute-Communication Overlap Causes Severe GEMM Performance
// Degradation because of Tail Effect", 2025). Measured beside GEMMs, that share (18.2% of an H100) is
// the average slowdown Lee et al. report for computation overlapped with communication on A100 and H100
// (18.9%, at most 40%; arXiv 2507.03114, 2025). Also what the search gives: A100, 12 NVLinks x 20 GB/s
// (topo.h SM80_NVLINK_BW): 6 channels at 40, doubled to 12, then 24; H100, 18 x 20.6: 6 at 60, 12, 24.
// Also the count kept where nothing better is known (another NVSwitch GPU, a GPU without a preset).
inline constexpr int kNcclNvSwitchChannels = 24;
// B200 (NVLink 5) NVSwitch nodes: no public log found; NCCL's search on 18 NVLinks x 40.1 GB/s
// (SM100_NVLINK_BW) starts at 90 GB/s (sm100SpeedArrayIntra): 8 channels (720 GB/s), doubled to 16
// (b = 90 >= 50), then 32, the ring search's cap (MAXCHANNELS / 2, src/init.cc).
inline constexpr int kNcclNvLink5Channels = 32;
// V100 NVLink (DGX-1's hybrid cube-mesh, NVSwitch nodes of V100s): the dumped graph of 4 x V100 with 2
// NVLinks per pair holds 6 ring channels (NVIDIA/nccl#713), which NCCL runs as 12; the search gives the
// same on V100's 6 NVLinks x 20 GB/s: 3 channels at 40, doubled to 6, then 12.
inline constexpr int kNcclV100NvLinkChannels = 12;
// PCIe nodes (P2P through PCIe switches, or through host memory, NCCL's SHM transport), and NVLink-bridge
// nodes whose rings cross PCIe between the pairs: "2 coll channels" on PCIe P2P nodes (NVIDIA/nccl-tests
// #128), Channel 00 and 01 only on 8 x RTX 4090 over SHM (NVIDIA/nccl-tests#307) and on 8 GPUs over SHM
// (NVIDIA/nccl-tests#228). The search finds one channel at NCCL's PCIe rate (topo.cc: width x GT/s
// x 120/8/80, 12 GB/s on Gen3 x16, 24 on Gen4 x16), below the 25 GB/s doubling, and runs it as 2.
// The count is spec::kNcclPcieChannels (2), the channels NCCL's SHM connections also run on (base/spec/cluster.h).
// PCIe Gen5 x16 (48 GB/s in NCCL's units): no public log found; the search's one channel (at 40 GB/s,
// speedArrayIntra) is doubled (b >= 25, n = 1), then run as 4. NCCL rates a PCIe link at 12/15.75 of
// its line rate (Gen3 x16: 12 of 15.75 GB/s), so a link of line rate >= 25 x 15.75 / 12 GB/s doubles.
inline constexpr int kNcclPcieGen5Channels = 4;
inline constexpr double kNcclPcieDoublingLineRateBytesPerS = 25e9 * 15.75 / 12;

// The channels an NCCL collective of `island`'s GPUs runs on, by the node type's intra-node fabric (and,
// on NVSwitch, the GPU's compute capability); see the constants above.
int NcclCollectiveChannels(const spec::IslandSpec& island);

// The share of `island`'s GPUs' SMs an NCCL collective holds, NcclCollectiveChannels / sm_count; 0 when
// `on` is false or the GPU type has no more SMs than that (or gives no sm_count).
double NcclSmShare(bool on, const spec::IslandSpec& island);

// What `overlapped` of a collective beside a compute task adds to the task: share x overlapped.
Time ContentionTime(double share, Time overlapped);

}  // namespace hetsim::workload

#endif  // HETSIM_SIM_WORKLOAD_NCCL_CONTENTION_H_
