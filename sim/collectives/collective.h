// Collective operations over a group of GPUs, their algorithms, and nccl-tests' size conventions.
//
// `bytes` follows nccl-tests: all-reduce and broadcast move a buffer of `bytes`; all-gather's `bytes`
// is the gathered output (each rank contributes bytes / n); reduce-scatter's is the input (each rank
// keeps bytes / n); all-to-all's is one rank's send buffer (bytes / n to each peer); send/recv moves
// `bytes` from gpus[0] to gpus[1]. Broadcast's root is gpus[0].
#ifndef HETSIM_SIM_COLLECTIVES_COLLECTIVE_H_
#define HETSIM_SIM_COLLECTIVES_COLLECTIVE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/collective_op.h"
#include "topology/device_graph.h"

namespace hetsim::collectives {

enum class CollectiveAlgorithm {
  kAuto,          // the fastest by the alpha-beta estimate on the actual links
  kRing,          // NCCL-style ring(s); broadcast: a pipelined chain
  kTree,          // double binary tree (all-reduce), pipelined binary tree (broadcast)
  kHierarchical,  // all-reduce: intra-node reduce-scatter, inter-node all-reduce per rail, all-gather
  kDirect,        // all-to-all: every pair at once; send/recv: one flow
  kPairwise,      // all-to-all: n-1 rounds, round k pairs rank r with r+k
  kNvls,          // all-reduce, all-gather or reduce-scatter in one node whose NVSwitch reduces and
                  // multicasts (NodeTypeSpec::nvlink_sharp): all-reduce (n+1)/n S each way per GPU, the others
                  // (n-1)/n S, in one step (docs/network.md)
  kCollNet,       // all-reduce, all-gather or reduce-scatter across nodes of one island whose InfiniBand
                  // switches reduce (IslandSpec::infiniband_sharp), NCCL's CollNetDirect: intra-node
                  // scatter to the heads, each GPU's segment sent once into the switches and the result
                  // received once, the heads' broadcast, pipelined by chunks (docs/network.md)
  kNvlsTree,      // all-reduce across nodes whose NVSwitches reduce (NodeTypeSpec::nvlink_sharp), NCCL's NVLSTree:
                  // NVLS inside each node, GPU i's node sum of segment i on a double binary tree across the
                  // nodes' GPUs i, the result multicast back, pipelined by chunks (docs/network.md)
  kCollNetChain,  // all-reduce across nodes of one island whose InfiniBand switches reduce, NCCL's CollNetChain:
                  // per channel a chain up a node's GPUs to its head, the head's part through the switches,
                  // the sum back down the chain, pipelined by chunks (docs/network.md)
};

// NCCL's NVLS bandwidth as a share of a ring's Simple rate on the same NVSwitch links (src/graph/tuning.cc,
// docs/network.md): a node type without its own nvls_efficiency runs NVLS at this share.
inline constexpr double kNvlsRingShare = 5.0 / 6.0;

// How rings and double trees are simulated (docs/decisions.md, "Aggregated ring steps", "Aggregated
// tree chunks").
enum class RingSteps {
  kAuto,        // aggregated for rings of more than kMaxSteppedRingRanks ranks with one chunk, and for trees
                // and hierarchies of more than kMaxSteppedTreeFlows flows stepped; else stepped
  kStepped,     // one flow per rank, step and chunk: every step's latency and contention
  kAggregated,  // one flow per ring edge carrying every step's bytes, paying every step's latency; three
                // per tree edge and direction (first chunk, the middle ones, last chunk)
};
// A ring of this many ranks is 2 x 127 x 128 = 32,512 flows per all-reduce ring when stepped.
inline constexpr int64_t kMaxSteppedRingRanks = 128;
// kAuto aggregates a collective's double trees when stepped they would be more flows than this (a
// 512-GPU hierarchical all-reduce over 64 nodes in 64 chunks: 8 rails x 2 trees x 2 x 63 x 64 = 129,024).
inline constexpr int64_t kMaxSteppedTreeFlows = 65536;

absl::string_view AlgorithmName(CollectiveAlgorithm algorithm);  // "ring", "tree", "hier", ...
absl::StatusOr<CollectiveAlgorithm> ParseAlgorithm(absl::string_view name);
absl::string_view RingStepsName(RingSteps steps);  // "auto", "stepped", "aggregated"
absl::StatusOr<RingSteps> ParseRingSteps(absl::string_view name);

// nccl-tests' bus bandwidth factor: busbw = algbw x factor (all-reduce 2(n-1)/n, all-gather,
// reduce-scatter and all-to-all (n-1)/n, broadcast and send/recv 1).
double BusBandwidthFactor(CollectiveOp op, int64_t ranks);

struct CollectiveRequest {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::vector<GpuId> gpus;
  int64_t bytes = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto;
  int32_t channels = 0;  // parallel rings / tree pairs; 0 = chosen from the NICs per node
  int32_t chunks = 0;    // pipeline chunks per channel; 0 = chosen from the size
  // Hierarchical all-reduce: kRing or kTree across nodes; kAuto = the faster estimate.
  CollectiveAlgorithm inter_node = CollectiveAlgorithm::kAuto;
  // Rings (flat, and hierarchical's rings) and double trees: stepped or aggregated.
  RingSteps ring_steps = RingSteps::kAuto;
  // NCCL protocol (sim/collectives/nccl_model.h); nullopt = the fastest estimate. Ignored when ideal.
  std::optional<topology::NcclProtocol> protocol;
  // Opt-in approximation (representative.h): simulate one channel of channels that are rotations of
  // each other, one rail of a hierarchy, a few shifts of a direct all-to-all, as weighted flows.
  bool representative = false;
  // `hetsim collective`'s default (off with --exact): a flat double tree run aggregated runs as the
  // representative above, without timed chunk ends, where its measured worst error against the full
  // simulation is under 0.5%: one island, NVSwitch nodes, a full-bisection fat tree (ExactTreeFabric in
  // algorithms.cc; docs/decisions.md, "Representative trees by default").
  bool representative_by_default = false;
  // NCCL's per-channel cap on a tree across nodes (CollectiveShape::channel_cap_factor). Off only where the links
  // alone are asked for: `hetsim calibrate`'s check that a row is not faster than the links carry.
  bool nccl_channel_caps = true;
};

// Largest `bytes` accepted (1 PiB): keeps every per-flow byte count and rate product far from overflow.
inline constexpr int64_t kMaxCollectiveBytes = int64_t{1} << 50;
inline constexpr int32_t kMaxChunks = 4096;
inline constexpr int32_t kMaxChannels = 64;
// All-to-all is n(n-1) flows (and as many cached routes): 2048 GPUs is already 4.2 M.
inline constexpr int64_t kMaxAllToAllGpus = 2048;

// InvalidArgument naming the field ("gpus", "bytes", "algorithm", ...): empty or duplicate groups,
// GPU ids out of range, send/recv without exactly two GPUs, all-to-all over more than
// kMaxAllToAllGpus, sizes outside [0, kMaxCollectiveBytes], an algorithm that does not implement the
// operation, chunks > 1 with aggregated ring steps.
absl::Status ValidateRequest(const topology::Topology& topology, const CollectiveRequest& request);

// Whether `algorithm` (not kAuto) implements `op`.
bool Supports(CollectiveAlgorithm algorithm, CollectiveOp op);
// The algorithms that implement `op`, in a fixed order.
std::vector<CollectiveAlgorithm> AlgorithmsFor(CollectiveOp op);

}  // namespace hetsim::collectives

#endif  // HETSIM_SIM_COLLECTIVES_COLLECTIVE_H_
