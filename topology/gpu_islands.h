// GPU islands by Tangram's Algorithm 1 (seed 000): groups of GPU nodes similar enough that a
// homogeneous parallelizer can plan for them as if they were identical.
//
// Phase 1 joins two nodes when their per-GPU 16-bit peak FLOP/s (BF16, or FP16 on a GPU without BF16),
// HBM capacity and HBM bandwidth each differ by at most a tolerance relative to the cluster-wide
// maximum; the initial islands are the connected components. Nodes of one ClusterSpec.islands entry are identical, so
// the comparison runs over those entries (O(K^2) instead of O(N^2) with the same components). Phase 2 greedily merges
// the pair of islands whose merge raises the estimated pipeline bottleneck least, while the bottleneck stays within
// merge_factor times the current one.
//
// The bottleneck estimate: a homogeneous plan gives every GPU of an island the same work, so an island
// runs at (its GPU count) x (its slowest GPU). For compute and for HBM bandwidth, the slowdown of a
// partition is (sum of peak rates) / (sum over islands of GPUs x minimum rate); the estimate is the
// larger of the two. A partition into identical-GPU islands scores 1.
#ifndef HETSIM_TOPOLOGY_GPU_ISLANDS_H_
#define HETSIM_TOPOLOGY_GPU_ISLANDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/spec/cluster.h"

namespace hetsim::topology {

struct IslandThresholds {
  double compute = 0.2;           // tau_C
  double memory = 0.2;            // tau_M
  double memory_bandwidth = 0.2;  // tau_B
  double merge_factor = 1.05;     // t_merge: largest accepted bottleneck increase of one merge
};

// Figures in the spec's units (FLOP/s, bytes, bytes/s).
struct GpuIsland {
  std::vector<int32_t> members;        // indices into ClusterSpec.islands, ascending
  std::vector<std::string> gpu_types;  // distinct, in member order
  int64_t nodes = 0;
  int64_t gpus = 0;
  double peak_flop_per_s = 0;                  // sum of per-GPU 16-bit peaks (BF16, else FP16)
  double effective_flop_per_s = 0;             // gpus x slowest GPU: what a homogeneous plan can use
  double hbm_bytes = 0;                        // total
  double effective_hbm_bytes_per_gpu = 0;      // min: the parallelizer plans for the smallest HBM
  double hbm_bytes_per_s = 0;                  // total HBM bandwidth
  double intra_node_bytes_per_s_per_gpu = 0;   // min NVLink / PCIe bandwidth per GPU, per direction
  double inter_node_bytes_per_s_per_node = 0;  // min NIC bandwidth per node (all NICs), per direction
};

struct IslandFormation {
  std::vector<GpuIsland> islands;
  int32_t initial_islands = 0;  // after phase 1
  double bottleneck = 1.0;      // estimate for the final partition
};

// InvalidArgument naming the GPU type (IslandSpec.gpu_where) when it has no BF16 or FP16 peak, HBM capacity or
// HBM bandwidth.
absl::StatusOr<IslandFormation> FormGpuIslands(const spec::ClusterSpec& cluster,
                                               const IslandThresholds& thresholds = {});

}  // namespace hetsim::topology

#endif  // HETSIM_TOPOLOGY_GPU_ISLANDS_H_
