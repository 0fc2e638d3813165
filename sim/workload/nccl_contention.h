// NCCL's kernels beside the computation (Plan.nccl_sm_contention; docs/cost-model.md, "NCCL beside the
// computation"): a collective that runs on a side stream while the GPU computes holds one thread block
// per channel on as many SMs, for as long as it runs, so the kernels computing beside it have the GPU's
// other SMs: a compute task runs at (SMs - channels) / SMs of its speed while the collective is in
// flight, and one that ran `overlapped` beside it takes share x overlapped longer (share = channels /
// SMs: work W beside a collective for o of its time ends at W + share x o).
//
//   const double share = NcclSmShare(plan, gpu);      // 24 / 132 on an H100 with the behaviour on
//   Time extra = ContentionTime(share, hidden);       // what the hidden collective costs the compute
#ifndef HETSIM_SIM_WORKLOAD_NCCL_CONTENTION_H_
#define HETSIM_SIM_WORKLOAD_NCCL_CONTENTION_H_

#include "base/spec/gpu.h"
#include "base/time.h"

namespace hetsim::workload {

// The channels, one CTA each, an NCCL collective runs on A100 and H100 NVSwitch nodes: NCCL's init log
// prints "24 coll channels" on 8 x H100 (AWS p5.48xlarge, NCCL 2.18-2.27 logs in aws-samples and
// NVIDIA/nccl issues) and on 8 x A100 SXM4, and Nsight Systems shows an ncclAllGather of FSDP's
// prefetch launching 24 blocks on an H100's 132 SMs (NVIDIA developer forums, "Compute-Communication
// Overlap Causes Severe GEMM Performance Degradation because of Tail Effect", 2025). Measured beside
// GEMMs, that share (18.2% of an H100) is the average slowdown Lee et al. report for computation
// overlapped with communication on A100 and H100 (18.9%, at most 40%; arXiv 2507.03114, 2025).
inline constexpr int kNcclCollectiveChannels = 24;

// The share of `gpu`'s SMs an NCCL collective holds, kNcclCollectiveChannels / sm_count; 0 when `on` is
// false or the GPU type has no more SMs than that (or gives no sm_count).
double NcclSmShare(bool on, const spec::GpuSpec& gpu);

// What `overlapped` of a collective beside a compute task adds to the task: share x overlapped.
Time ContentionTime(double share, Time overlapped);

}  // namespace hetsim::workload

#endif  // HETSIM_SIM_WORKLOAD_NCCL_CONTENTION_H_
