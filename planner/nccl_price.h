// NCCL's price of a collective over placed GPUs as the simulator runs it (collectives::ChooseShape on
// the actual GPUs and links): shared by the planner's layer ranges of plans of pipelines
// (planner/layer_ranges.cc) and the gradient ring of a mixed stage (planner/mixed_replicas.cc).
#ifndef HETSIM_PLANNER_NCCL_PRICE_H_
#define HETSIM_PLANNER_NCCL_PRICE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "base/ids.h"
#include "planner/cluster_model.h"
#include "planner/shared_links.h"
#include "sim/collectives/algorithms.h"
#include "topology/routing.h"

namespace hetsim::planner {

// How much more (or less) an all-reduce over `gpus` run as `shape` moves over its busiest crossing between
// two islands (each direction apart) than a ring over the same GPUs in the same order does, which is what
// the ranges' crossings are priced for (MixedRingOf: each ring once each way, 2 (n - 1) / n of its bytes):
// a hierarchical all-reduce's rails are rings over the nodes, 2 (N - 1) / N of a rail's 1/g of the bytes
// on each crossing edge; a double tree's edges (NCCL's, DoubleTreeEdges) carry half of their channel's or
// rail's bytes each way, once up the tree and once down (sim/collectives/algorithms.cc: RingShape,
// TreeShape, HierarchicalShape), x the tree's channel cap factor (CollectiveShape::channel_cap_factor: NCCL's
// per-channel cap run as bytes stretched on every link). 1 for a ring and the algorithms that stay inside an island.
double CrossingLoadRatio(const topology::Topology& topology, const std::vector<GpuId>& gpus,
                         const collectives::CollectiveShape& shape);

// What the busiest NIC (each direction apart) carries of an all-reduce over `gpus` run as `shape`, for a ring's
// bytes through a NIC (2 (n - 1) / n of them): a ring's channels each leave a node from their last rank there
// (collectives::ChannelOrder rotates each node's ranks per channel), through that GPU's NIC, with 1 / channels
// of the bytes, so a NIC that several channels leave by carries their shares; a double tree's edges between
// nodes half of their channel's bytes each way (x the per-channel cap's factor: 2/3 of a ring's for 2 GPUs on
// each of 2 nodes); a hierarchy's rails each 1 / g of a ring's over the nodes. 1 inside one node. The same walk
// of the algorithm's transfers as CrossingLoadRatio.
double NicLoadRatio(const topology::Topology& topology, const std::vector<GpuId>& gpus,
                    const collectives::CollectiveShape& shape);

// The simulator's flows over that busiest NIC one way (the same walk, each transfer a flow of the network, which
// shares a NIC equally per flow): one per ring channel leaving the node there, one per tree of each double tree
// (per channel) whose edge crosses it, one per hierarchy's rail through it. 1 inside one node.
int NicFlows(const topology::Topology& topology, const std::vector<GpuId>& gpus,
             const collectives::CollectiveShape& shape);

// NCCL's price of one collective of a range's first shard group alone, as the simulator runs it
// (sim/executor/layer_range_sync.cc: collectives::ChooseShape on the group's GPUs picks the algorithm,
// ring or double tree, the protocol, the channels and the chunks by the alpha-beta estimate on the
// actual links): the estimate, whose bandwidth term waits for the slowest link its transfers cross (an
// SHM connection inside a node without P2P, a NIC between nodes), and its latency part (launch, wire
// and protocol step latencies: the same shape's estimate for no bytes).
struct NcclPrice {
  double seconds = 0;
  double latency_s = 0;
  // What its algorithm moves over the busiest crossing between islands for a ring's bytes there
  // (CrossingLoadRatio), weighted by each collective's ring bytes when it stands for several.
  double crossing = 1;
  // The busiest NIC's share of a ring's bytes leaving a node (NicLoadRatio; the largest when it stands for
  // several).
  double nic_load = 1;
  // What of a link's rate its payload gets: the bytes it moves on the wire per byte are 1 / this, as the
  // simulator moves them (collectives::ProtocolBandwidthFraction of its protocol: LL 0.25, LL128 0.92,
  // Simple 1; the smallest when it stands for several).
  double payload_fraction = 1;
  // The flows one collective puts through its busiest NIC one way (NicFlows; when it stands for several, the
  // largest): what its share of a NIC shared per flow counts.
  int nic_flows = 1;
  double bandwidth_s() const { return std::max(0.0, seconds - latency_s); }
  // What a NIC whose link carries `link_bytes_per_s` one way (the simulator's rate: line x NCCL's efficiency)
  // gives each of `rings` such collectives through it, in payload bytes of a ring's: its protocol's payload
  // fraction of the rate, over the busiest NIC's share of a ring's bytes (nic_load). The layer ranges' node
  // NICs and a mixed stage's (planner/layer_ranges.cc, planner/mixed_replicas.cc) both take it.
  double NicBytesPerS(double link_bytes_per_s, int rings) const {
    return link_bytes_per_s * payload_fraction / nic_load / std::max(1, rings);
  }
  // That NIC as a link of ShareLinks: NicBytesPerS, with the `rings` x nic_flows flows the simulator puts on it
  // at its rate, so that each gets as much of it as any other range's flow (SharedLink). `pace_bytes_per_s`
  // (a mixed stage's: one ring alone at NCCL's estimate, which has seen the NIC) floors what the NIC gives one
  // ring before the `rings` divide it. The simulator's NIC still splits its rate equally per flow whatever a
  // flow's bytes: the floor raises what one flow's share moves of the ring's bytes, not the share, so the link
  // keeps its own rate and its flows and the weight (flows x bytes_per_s / link) rises with the floored rate;
  // against another transfer on the NIC each then takes flows x rate-per-flow / link of it, as in the simulator.
  SharedLink NicLink(int key, double link_bytes_per_s, int rings, double pace_bytes_per_s = 0) const {
    return {key, std::max(NicBytesPerS(link_bytes_per_s, 1), pace_bytes_per_s) / std::max(1, rings),
            static_cast<double>(std::max(1, rings) * nic_flows), link_bytes_per_s};
  }
};

class RangeNccl {
 public:
  explicit RangeNccl(const ClusterModel& cluster) : topology_(cluster.topology()), router_(cluster.topology()) {}

  // nullopt when `gpus` is not a group (fewer than two, nothing to move) or has no route.
  std::optional<NcclPrice> Of(const std::vector<GpuId>& gpus, CollectiveOp op, int64_t bytes);

  // One index per distinct group of GPUs (in order): the hops of rings over the same GPUs are the same links.
  int HopsOf(const std::vector<GpuId>& gpus);

 private:
  const topology::Topology& topology_;
  topology::Router router_;
  std::map<std::vector<int64_t>, std::optional<NcclPrice>> cache_;
  std::map<std::vector<int64_t>, int> hops_;
};

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_NCCL_PRICE_H_
