// Alpha-beta time estimates of the collective algorithms, without simulating.
//
// The closed forms take one latency a (Seconds per step, the whole route) and one Bandwidth B per
// level, a message of S Bytes, and return Seconds: typed, so a caller cannot pass a rate for a byte
// count or a latency for a rate, and computed inside in the same double operations as before (the
// values keep their bits). The on-link estimates (EstimateSeconds in algorithms.h) derive a and B from the
// actual routes: for every set of transfers that run at the same time, each link's capacity is
// divided among the transfers that cross it, and the slowest transfer sets the step time.
#ifndef HETSIM_SIM_COLLECTIVES_ESTIMATE_H_
#define HETSIM_SIM_COLLECTIVES_ESTIMATE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "base/time.h"
#include "base/units.h"
#include "sim/collectives/transfer_graph_internal.h"
#include "topology/routing.h"

namespace hetsim::collectives {

// Ring all-reduce of S bytes over n ranks: 2(n-1)/n * S/B + 2(n-1) a.
Seconds RingAllReduceSeconds(int64_t n, Bytes bytes, Bandwidth rate, Seconds latency);
// Ring all-gather or reduce-scatter (S = the gathered size): (n-1)/n * S/B + (n-1) a.
Seconds RingAllGatherSeconds(int64_t n, Bytes bytes, Bandwidth rate, Seconds latency);
// Hierarchical all-reduce over N nodes of g GPUs: ring reduce-scatter and all-gather inside nodes,
// ring all-reduce of S/g across nodes (one ring per local rank, concurrently).
Seconds HierarchicalAllReduceSeconds(int64_t gpus_per_node, int64_t nodes, Bytes bytes, Bandwidth intra_rate,
                                     Seconds intra_latency, Bandwidth inter_rate, Seconds inter_latency);
// Pipelined double binary tree all-reduce with C chunks per tree, depth D = ceil(log2 n): each chunk step moves S/(2C)
// bytes per tree; an inner node shares its links between two transfers (its two children, or its own
// parent in one tree and its leaf role in the other), hence 2 (C + D - 1) (a + S/(C B)).
Seconds TreeAllReduceSeconds(int64_t n, Bytes bytes, Bandwidth rate, Seconds latency, int32_t chunks);
// NCCL's CollNetDirect all-reduce pipelined over C chunks: each chunk's intra-node reduce-scatter
// (t_rs, a scatter to the heads), its network step through the reducing switches (t_net, one chunk at a time on the
// NICs) and its intra-node all-gather (t_rs again). A rank's NVLink phases alternate, one at a time: RS 1, RS 2, AG 1,
// RS 3, AG 2, ..., RS C, AG C-1, AG C, an all-gather also waiting for its chunk's network step. The time of that
// schedule: 2 C t_rs when t_net <= t_rs (the NVLink never waits), 2 t_rs + C t_net when t_net >= 2 t_rs (the NICs never
// wait), at least the larger of the two otherwise; t_rs + t_net + t_rs with C = 1, the phases one after the other.
Seconds CollNetPipelineSeconds(int32_t chunks, Seconds rs_chunk, Seconds net_chunk);
// CollNetPipelineSeconds over nodes of g GPUs (one NIC each) for S bytes, the reduce-scatter and the
// all-gather each one direct step (every GPU sends or receives g-1 parts of S/(gC)):
// t_rs = a + (g-1) S/(gCB), t_net = a_net + S/(gCR).
Seconds CollNetAllReduceSeconds(int64_t gpus_per_node, Bytes bytes, Bandwidth intra_rate, Seconds intra_latency,
                                Bandwidth nic_rate, Seconds net_latency, int32_t chunks);
// Two stages on resources of their own pipelined over C chunks (t_first, t_second a chunk each):
// t_first + t_second + (C - 1) max(t_first, t_second).
Seconds TwoStagePipelineSeconds(int32_t chunks, Seconds first_chunk, Seconds second_chunk);
// The bytes of a CollNet all-gather's or reduce-scatter's `bytes` (a chunk of the gathered output or of
// each rank's input) that cross one NIC each way: the rail's segment bytes/g less the node's own shard,
// (N-1)/N bytes/g.
Bytes CollNetShardBytes(Bytes bytes, int64_t gpus_per_node, int64_t nodes);
// NCCL's CollNetDirect all-gather (the switches' all-gather across the nodes, then the head's broadcast
// inside the node) or reduce-scatter (a scatter to the heads, then the switches' reduce-scatter), C
// chunks: t_net = a_net + (N-1) S/(N g C R), t_nvl = a + (g-1) S/(gCB), TwoStagePipelineSeconds.
Seconds CollNetAllGatherSeconds(int64_t gpus_per_node, int64_t nodes, Bytes bytes, Bandwidth intra_rate,
                                Seconds intra_latency, Bandwidth nic_rate, Seconds net_latency, int32_t chunks);
// NCCL's NVLSTree all-reduce over N nodes pipelined over C chunks: each chunk's NVLS step inside the nodes (t_nvls:
// the reduction into GPU i's segment and the multicast of the sum, overlapping on the full-duplex NVSwitch links) and
// its double binary trees across the nodes' GPUs i (t_tree a tree chunk step, 2 D steps a chunk, D the trees'
// depth). The NVLink takes one chunk at a time, the trees pipeline theirs:
// max(C t_nvls + 2 D t_tree, t_nvls + 2 (C + D - 1) t_tree); t_nvls + 2 D t_tree with C = 1.
Seconds NvlsTreePipelineSeconds(int32_t chunks, int32_t depth, Seconds nvls_chunk, Seconds tree_step);
// NvlsTreePipelineSeconds over nodes of g GPUs (one NIC each) for S bytes, B the NVLS rate of a GPU's link (its share
// applied), R a NIC's: t_nvls = a + (g+1)/g S/(CB), t_tree = a_net + S/(gCR), D = ceil(log2 N).
Seconds NvlsTreeAllReduceSeconds(int64_t gpus_per_node, int64_t nodes, Bytes bytes, Bandwidth nvls_rate,
                                 Seconds intra_latency, Bandwidth nic_rate, Seconds net_latency, int32_t chunks);
// NCCL's CollNetChain all-reduce over nodes of g GPUs, K channels (a chain up each node's GPUs to the channel's head,
// each head on its own NIC), C chunks of S/K per channel: a chunk's first trip climbs the chain's g-1 hops alone
// (t_hop = a + S/(KCB)), crosses the head's NIC into the switches and back (t_net = a_net + S/(KCR)) and descends the
// g-1 hops; then a chunk a cycle, the slower of the NICs and the chains' hops, where a GPU sends up and down for
// every chain on its one link (t_chain = a + 2 (g-1) S/(gCB), the K chains' heads spread over the GPUs):
// 2 (g-1) t_hop + t_net + (C-1) max(t_chain, t_net).
Seconds CollNetChainAllReduceSeconds(int64_t gpus_per_node, int32_t channels, Bytes bytes, Bandwidth intra_rate,
                                     Seconds intra_latency, Bandwidth nic_rate, Seconds net_latency, int32_t chunks);
// Pipelined chain broadcast: (n - 1 + C - 1) (a + S/(C B)).
Seconds ChainBroadcastSeconds(int64_t n, Bytes bytes, Bandwidth rate, Seconds latency, int32_t chunks);
// Direct all-to-all on a non-blocking switch: every uplink carries (n-1)/n S: a + (n-1)/n S/B.
Seconds DirectAllToAllSeconds(int64_t n, Bytes bytes, Bandwidth rate, Seconds latency);

// Per-transfer cost of a set of concurrent transfers on the actual links.
struct PathCost {
  Seconds latency;                  // the route's links' latencies (and the protocol's step latency)
  SecondsPerByte seconds_per_byte;  // max over the route's links of (transfers on the link) / capacity
};
// With the NCCL model (Topology::nccl_model()), protocol p adds its step latency to every route and
// divides the bandwidth by its bandwidth fraction (sim/collectives/nccl_model.h). With `multiplicity`
// (per path, TransferGraph::multiplicities()), representatives load links with their pooled weights.
absl::StatusOr<std::vector<PathCost>> ConcurrentCosts(topology::Router& router, const std::vector<TransferPath>& paths,
                                                      topology::NcclProtocol protocol = topology::NcclProtocol::kSimple,
                                                      std::span<const double> multiplicity = {});
// ConcurrentCosts for the sets of one algorithm priced under several protocols: each set is routed
// and its links loaded once (the protocol only adds step latency and wire bytes). Sets are compared
// whole; an algorithm prices a handful of them.
class ConcurrentCostCache {
 public:
  absl::StatusOr<std::vector<PathCost>> Costs(topology::Router& router, const std::vector<TransferPath>& paths,
                                              topology::NcclProtocol protocol,
                                              std::span<const double> multiplicity = {},
                                              std::span<const GpuId> group = {});

 private:
  struct Entry {
    std::vector<TransferPath> paths;
    std::vector<double> multiplicity;
    std::vector<GpuId> group;
    std::vector<const topology::Route*> routes;
    std::vector<PathCost> costs;  // without a protocol
  };
  std::vector<Entry> entries_;
};

// Time for every transfer of the set to move `bytes`: the slowest one.
Seconds StepSeconds(const std::vector<PathCost>& costs, Bytes bytes);
// The costs of `costs` that no other dominates (none with a latency and seconds per byte both at least
// as large), in no particular order: StepSeconds of them is StepSeconds of all, the same double for any
// `bytes` (latency + bytes x seconds per byte is monotone in both under rounding), for a set priced at
// several sizes (the chunk counts an estimate tries). `costs` unchanged if a value is NaN.
std::vector<PathCost> StepFrontier(std::vector<PathCost> costs);

}  // namespace hetsim::collectives

#endif  // HETSIM_SIM_COLLECTIVES_ESTIMATE_H_
