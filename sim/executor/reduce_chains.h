// DeepSpeed ZeRO-1/2's per-rank reduce calls (Plan.zero_reduce_per_rank): what a gradient bucket costs beyond
// the reduce-scatter hetsim simulates for it when DeepSpeed reduces it as one NCCL Reduce per data-parallel rank.
#ifndef HETSIM_SIM_EXECUTOR_REDUCE_CHAINS_H_
#define HETSIM_SIM_EXECUTOR_REDUCE_CHAINS_H_

#include <cstdint>

#include "base/time.h"

namespace hetsim::executor {

// NCCL's Reduce pipelines one step a chunk (REDUCE_CHUNKSTEPS 1): its 4 MiB buffer over NCCL_STEPS 8 is
// 512 KiB a channel (NCCL 2.10, src/include/collectives.h, devcomm.h, init.cc DEFAULT_BUFFSIZE).
inline constexpr int64_t kNcclReduceChunkBytes = int64_t{512} * 1024;
// NCCL doubles the rings its search finds (src/graph/connect.cc, "Duplicate channels"): 2 at least.
inline constexpr int64_t kNcclReduceChannels = 2;

// The time n Reduce chains (one to each of `ranks` ranks over `nodes` nodes, `bytes` / ranks each, in sequence)
// take beyond one reduce-scatter of `bytes` a rank that took `reduce_scatter_time`:
//   T / (n - 1)                 each call idles its root's outgoing link (n calls of B / n against (n - 1) / n of B),
// + n (H - 1) C c / b           each call's fill: its first chunk crosses H - 1 node boundaries before the
//                               pipeline runs full, H = N (1 - 1/n) the chain's average hops between nodes
//                               (a ring crosses N of them and the chain leaves out one edge of n), at the
//                               rate b = (n - 1) B / (n T) a rank moves over them, C channels of c bytes each;
// hops inside a node are left out (NVLink's chunk times are short next to a NIC's). 0 for one rank or no time.
Time ReduceChainsExtraTime(Time reduce_scatter_time, int64_t bytes, int64_t ranks, int64_t nodes);

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_REDUCE_CHAINS_H_
