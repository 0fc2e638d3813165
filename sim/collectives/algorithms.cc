#include "sim/collectives/algorithms.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "sim/collectives/estimate.h"
#include "sim/collectives/layout.h"
#include "sim/collectives/nccl_model.h"
#include "sim/collectives/primitives.h"
#include "sim/collectives/representative.h"

namespace hetsim::collectives {
namespace {

// Flow keys keep the paths of different channels and trees apart, so ECMP may spread them.
constexpr uint64_t kTreeKeyBase = 100;
constexpr int32_t kMaxDefaultChunks = 64;
// Flows a CollNet all-reduce's graph may hold when it picks its chunk count (CollNetShape).
constexpr int64_t kMaxCollNetFlows = int64_t{1} << 18;
// The smallest piece of a rail's segment a CollNet chunk carries: NCCL's Simple step (its 4 MiB buffer
// over NCCL_STEPS = 8), from which calcCollChunking in src/enqueue.cc halves CollNetDirect's chunk only
// for small buffers.
constexpr int64_t kCollNetChunkBytes = 512 * 1024;

std::vector<TransferPath> RingPaths(const Ranks& ranks, uint64_t key) {
  std::vector<TransferPath> out;
  if (ranks.size() < 2) return out;
  for (size_t r = 0; r < ranks.size(); ++r) out.push_back({ranks[r], ranks[(r + 1) % ranks.size()], key});
  return out;
}

// The paths of AppendDoubleTreeAllReduce's trees over `ranks` laid on `node_sizes` (empty: a rank per node).
void AppendTreePaths(const Ranks& ranks, std::span<const int32_t> node_sizes, uint64_t key,
                     std::vector<TransferPath>& out) {
  for (int32_t t = 0; t < 2; ++t) {
    for (auto [child, parent] : DoubleTreeEdges(static_cast<int32_t>(ranks.size()), t, node_sizes)) {
      out.push_back({ranks[child], ranks[parent], key * 2 + t});
    }
  }
}

// Picks the chunk count in 1, 2, 4, ... kMaxDefaultChunks that minimizes `seconds(chunks)`, unless fixed.
template <typename F>
std::pair<int32_t, Seconds> BestChunks(int32_t fixed, F seconds) {
  if (fixed > 0) return {fixed, seconds(fixed)};
  std::pair<int32_t, Seconds> best{1, seconds(1)};
  for (int32_t c = 2; c <= kMaxDefaultChunks; c *= 2) {
    const Seconds t = seconds(c);
    if (t < best.second) best = {c, t};
  }
  return best;
}

int32_t RingStepCount(CollectiveOp op, int64_t n) {
  return static_cast<int32_t>(op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1);
}

// Whether a ring of `ranks` ranks in `chunks` chunks runs aggregated (docs/decisions.md).
bool Aggregates(RingSteps mode, int64_t ranks, int32_t chunks) {
  switch (mode) {
    case RingSteps::kStepped: return false;
    case RingSteps::kAggregated: return ranks >= 2;
    case RingSteps::kAuto: return ranks > kMaxSteppedRingRanks && chunks <= 1;
  }
  return false;
}

// Whether `trees` double trees of `ranks` ranks in `chunks` chunks run aggregated (docs/decisions.md):
// stepped, each is 2 trees x 2 directions x (ranks - 1) edges x chunks flows.
bool TreesAggregate(RingSteps mode, int64_t trees, int64_t ranks, int32_t chunks) {
  if (chunks < 3 || ranks < 2) return false;  // nothing to fold: the first and last chunk stay stepped
  switch (mode) {
    case RingSteps::kStepped: return false;
    case RingSteps::kAggregated: return true;
    case RingSteps::kAuto: return trees * 4 * (ranks - 1) * chunks > kMaxSteppedTreeFlows;
  }
  return false;
}

// A ring, stepped or aggregated.
Ready AppendAnyRing(TransferGraph& g, const Ranks& ranks, int64_t bytes, int32_t steps, int32_t chunks,
                    int32_t segment_offset, uint64_t flow_key, const Ready& start, RingSteps mode) {
  if (Aggregates(mode, static_cast<int64_t>(ranks.size()), chunks)) {
    return AppendAggregatedRing(g, ranks, bytes, steps, segment_offset, flow_key, start);
  }
  return AppendRing(g, ranks, bytes, steps, chunks, segment_offset, flow_key, start);
}

absl::StatusOr<CollectiveShape> ShapeOnLinks(const topology::Topology& topology, topology::Router& router,
                                             const CollectiveRequest& req, CollectiveAlgorithm algorithm,
                                             topology::NcclProtocol protocol, ConcurrentCostCache& cache);

// NCCL's latency of an NVLS collective on NVLink (src/graph/tuning.cc, NCCL 2.23 on: hwLat's NVLS entry
// on NVLink, 25 us, the whole of its latency on one node where a ring's grows with its steps), paid
// before the first transfer like the launch latency; none on ideal hardware.
constexpr Time kNvlsLatency = 25 * kMicrosecond;
// NCCL's network latency of a CollNetDirect collective (src/graph/tuning.cc: hwLat's CollNetDirect
// Simple entry on NET, 31 us: the switches' reduction tree), paid like kNvlsLatency.
constexpr Time kCollNetLatency = 31 * kMicrosecond;
// NCCL's network latency of a CollNetChain collective (src/graph/tuning.cc line 172, NVIDIA/nccl 5067397: hwLat's
// CollNetChain Simple entry on NET, 30 us), paid like kCollNetLatency; its 2 (g-1) intra-node hops pay their
// routes' and steps' latencies as a chain's transfers do.
constexpr Time kCollNetChainLatency = 30 * kMicrosecond;

// The latency NCCL's model adds to `algorithm`'s launch (none for the others, and none on ideal hardware):
// NVLS's and NVLSTree's 25 us on NVLink (hwLat's NVLS and NVLSTree Simple entries on NVLINK, NCCL 2.23 on:
// NVLSTree's `intraLat` in `intraLat + 2 log2(nNodes) interLat`; its trees' levels pay their own step latencies),
// CollNetDirect's 31 us and CollNetChain's 30 us on NET.
Time InNetworkLatency(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::kNvls:
    case CollectiveAlgorithm::kNvlsTree: return kNvlsLatency;
    case CollectiveAlgorithm::kCollNet: return kCollNetLatency;
    case CollectiveAlgorithm::kCollNetChain: return kCollNetChainLatency;
    default: return Time();
  }
}

// ShapeFor with the link costs of earlier protocols' pricing.
absl::StatusOr<CollectiveShape> CachedShapeFor(const topology::Topology& topology, topology::Router& router,
                                               const CollectiveRequest& req, CollectiveAlgorithm algorithm,
                                               topology::NcclProtocol protocol, ConcurrentCostCache& cache) {
  absl::StatusOr<CollectiveShape> s = ShapeOnLinks(topology, router, req, algorithm, protocol, cache);
  if (!s.ok()) return s;
  s->protocol = protocol;
  s->launch_latency = LaunchLatency(topology, req.gpus);
  if (topology.nccl_model()) s->launch_latency += InNetworkLatency(algorithm);
  s->estimated_seconds += TimeAsSeconds(s->launch_latency);
  s->latency_seconds += TimeAsSeconds(s->launch_latency);
  return s;
}

}  // namespace

absl::StatusOr<CollectiveShape> ShapeFor(const topology::Topology& topology, topology::Router& router,
                                         const CollectiveRequest& req, CollectiveAlgorithm algorithm,
                                         topology::NcclProtocol protocol) {
  ConcurrentCostCache cache;
  return CachedShapeFor(topology, router, req, algorithm, protocol, cache);
}

namespace {

// What every algorithm's shape needs: the request, its GPUs grouped by node, and the cost of a set of
// concurrent transfers on the links (for the protocol being priced).
struct ShapeInputs {
  topology::Router& router;
  const CollectiveRequest& req;
  topology::NcclProtocol protocol;
  std::vector<Ranks> nodes;
  int64_t n = 0;
  double bytes = 0;
  ConcurrentCostCache& cache;
  absl::StatusOr<std::vector<PathCost>> costs_of(const std::vector<TransferPath>& paths,
                                                 std::span<const double> multiplicity = {}) const {
    return cache.Costs(router, paths, protocol, multiplicity, req.gpus);
  }
  // Channels that are rotations of one another over every GPU of each node (ChannelOrder), which the
  // representative approximation simulates one of (representative.h).
  bool RepresentativeChannels(int32_t channels) const {
    return req.representative && channels > 1 && nodes.size() >= 2 && EvenNodes(nodes) &&
           channels == static_cast<int32_t>(nodes.front().size());
  }
};

// Whether the group's fabric is one where the representative flat double tree, aggregated and without
// timed chunk ends, was measured within 0.5% of the full simulation (docs/decisions.md,
// "Representative trees by default"; tests/sim/collectives/collectives_default_representative_test.cc):
// whole NVSwitch nodes of one island on its own network, one NIC per GPU, joined by one switch or a
// full-bisection fat tree. Not oversubscribed, rail-optimized, Clos or multi-island fabrics, where ECMP's
// hash draw or the islands' asymmetry decides (up to 13% there, same section).
bool ExactTreeFabric(const topology::Topology& topology, const std::vector<Ranks>& nodes) {
  absl::StatusOr<topology::GpuLocation> first = topology.Locate(nodes.front().front());
  if (!first.ok()) return false;
  const spec::IslandSpec& island = topology.island(first->island);
  const bool fabric = island.topology == spec::FabricTopology::kSingleSwitch ||
                      (island.topology == spec::FabricTopology::kFatTree && island.oversubscription == 1);
  if (!fabric || island.network >= 0 || island.node.fabric != spec::IntraNodeFabric::kNvSwitch ||
      island.nics_per_node != island.node.gpus_per_node) {
    return false;
  }
  for (const Ranks& node : nodes) {
    for (GpuId g : node) {
      absl::StatusOr<topology::GpuLocation> at = topology.Locate(g);
      if (!at.ok() || at->island != first->island) return false;
    }
    if (static_cast<int32_t>(node.size()) != island.node.gpus_per_node) return false;
  }
  return true;
}

// Per path of a representative shape's estimate: the parts each stands for (channels or rails).
std::vector<double> Multiplicities(const CollectiveShape& s, size_t paths) {
  if (!s.representative) return {};
  return std::vector<double>(paths, static_cast<double>(s.channels));
}

// The share of NCCL's bus bandwidth its tuner gives a tree all-reduce's algorithm bandwidth (tuning.cc: x 0.92, then
// x 0.5 from bus to algorithm bandwidth).
constexpr double kNcclTreeRatio = 0.5 * 0.92;

// NCCL's tuner (src/graph/tuning.cc, ncclTopoTuneModel) prices an all-reduce's ring and tree from one bus
// bandwidth of its topology search: the ring's algorithm bandwidth is n / (2(n - 1)) of it, the tree's
// `tree_ratio` (kNcclTreeRatio, or NcclTwoNodeTreeRatio's). It sees neither a tree sparing a slow rank nor links of
// different speeds, so it takes the tree only where the latency the tree saves outweighs that ratio. `ring`
// (seconds) and both latencies are hetsim's estimates over n ranks (or nodes); NCCL's view of the tree moves the
// ring's bytes at the tree's ratio. True when NCCL would run the tree (docs/network.md, "Estimates and the automatic
// choice").
bool NcclRunsTree(Seconds ring, Seconds ring_latency, Seconds tree_latency, int64_t n, double tree_ratio) {
  if (n < 2) return false;
  const double ring_ratio = static_cast<double>(n) / (2.0 * static_cast<double>(n - 1));
  return tree_latency + (ring - ring_latency) * (ring_ratio / tree_ratio) < ring;
}

// NCCL's per-channel caps on a tree all-reduce's bus bandwidth across `nodes` (>= 2) nodes, GB/s, by protocol
// (src/graph/tuning.cc, NVIDIA/nccl 5067397, the same since 2.23 for Hopper and 2.10 for Volta and Ampere:
// perChMaxTreeBws for Simple and perChMaxTreeLL128Bws for LL128, their N2 column on two nodes and N4 above, by the
// compute capability's family as NCCL picks it: Volta below 80, Blackwell from 100).
double NcclTreeCapGBps(int compute_capability, topology::NcclProtocol protocol, int64_t nodes) {
  const int family = compute_capability >= 100 ? 3 : compute_capability >= 90 ? 2 : compute_capability >= 80 ? 1 : 0;
  const int column = nodes <= 2 ? 0 : 1;
  constexpr double kSimple[4][2] = {{18.5, 10.0}, {23.6, 17.8}, {41.4, 36.0}, {42.8, 24.0}};
  constexpr double kLl128[4][2] = {{20.0, 20.0}, {20.0, 20.0}, {36.7, 29.0}, {31.67, 20.0}};
  switch (protocol) {
    case topology::NcclProtocol::kSimple: return kSimple[family][column];
    case topology::NcclProtocol::kLL128: return kLl128[family][column];
    default: return 0;
  }
}

// NCCL's per-channel cap between two nodes as its tuner's choice reads it (NcclTwoNodeTreeRatio): 0 for LL, whose
// tree NCCL prices at a quarter of the ring's anyway.
double NcclTwoNodeTreeCapGBps(int compute_capability, topology::NcclProtocol protocol) {
  return NcclTreeCapGBps(compute_capability, protocol, 2);
}

// The payload rate NCCL lets one channel of a tree all-reduce across `nodes` nodes reach, bytes/s of its algorithm
// bandwidth: its tuner gives the tree's bus bandwidth min(nChannels x bw x 0.92, nChannels x perChMaxTreeBw) for every
// protocol, then LL128's x 120/128 capped at perChMaxTreeLL128Bw and LL's / 3.8, and halves it into the algorithm
// bandwidth (tuning.cc, ncclTopoTuneModel). Its cap is on the payload: hetsim's protocols already carry their wire
// overhead (LL128's 0.92, LL's 1/4), so only the caps are taken here.
double TreeChannelPayloadCap(int compute_capability, topology::NcclProtocol protocol, int64_t nodes) {
  const double simple = NcclTreeCapGBps(compute_capability, topology::NcclProtocol::kSimple, nodes);
  double bus = simple;
  if (protocol == topology::NcclProtocol::kLL128) {
    bus = std::min(simple * 120.0 / 128.0, NcclTreeCapGBps(compute_capability, protocol, nodes));
  } else if (protocol == topology::NcclProtocol::kLL) {
    bus = simple / 3.8;
  }
  return 0.5 * GBpsToBytesPerSecond(bus);
}

// The tree's ratio in NcclRunsTree for a group on `nodes` nodes whose ring channels have `ring_channel_busbw` bytes/s
// of NIC bandwidth each (NicRatePerChannel). Across exactly two nodes NCCL's tuner prices every algorithm from its
// graph's intra-node bandwidth (tuning.cc: `nNodes <= 2 ? bwIntra : bwInter`), and its search raises a tree graph's
// bwIntra up to twice its bwInter (search.cc, pass 2: "increase bwIntra for trees (2 nodes or collnet)"): the double
// tree between two nodes sends each byte once each way over every NIC, where a ring sends it 2(n-1)/n times. The tree's
// bus bandwidth per channel is then twice the ring's, at most NcclTwoNodeTreeCapGBps for the tree's protocol: so NCCL
// runs the tree between two GH200 nodes of 200 Gb/s NICs (Alps: 90.5 GB/s measured, above the 57 GB/s a ring's NICs can
// carry), and the ring between two DGX A100 or H100 (GTC 2024's 192 and 380 GB/s bus bandwidths, at the ring's NIC
// bound).
double NcclTwoNodeTreeRatio(int64_t nodes, double ring_channel_busbw, int compute_capability,
                            topology::NcclProtocol protocol) {
  const double cap = GBpsToBytesPerSecond(NcclTwoNodeTreeCapGBps(compute_capability, protocol));
  if (nodes != 2 || !(ring_channel_busbw > 0) || !(cap > 0)) return kNcclTreeRatio;
  return 0.5 * std::min(2.0 * 0.92 * ring_channel_busbw, cap) / ring_channel_busbw;
}

// Rings over every channel (a chain for broadcast), chunks pipelined.
absl::StatusOr<CollectiveShape> RingShape(const ShapeInputs& in, CollectiveShape s) {
  if (in.req.op == CollectiveOp::kBroadcast) {
    s.channels = 1;
    auto costs = in.costs_of(RingPaths(in.req.gpus, 0));
    if (!costs.ok()) return costs.status();
    // A chain, not a ring: drop the edge back to the root.
    if (!costs->empty()) costs->pop_back();
    const std::vector<PathCost> front = StepFrontier(*std::move(costs));  // priced at every chunk count
    std::tie(s.chunks, s.estimated_seconds) = BestChunks(
        in.req.chunks, [&](int32_t c) { return (in.n - 1 + c - 1) * StepSeconds(front, Bytes(in.bytes / c)); });
    return s;
  }
  s.representative = in.RepresentativeChannels(s.channels);
  std::vector<TransferPath> paths;
  for (int32_t c = 0; c < (s.representative ? 1 : s.channels); ++c) {
    for (const auto& p : RingPaths(ChannelOrder(in.nodes, c), c)) paths.push_back(p);
  }
  auto costs = in.costs_of(paths, Multiplicities(s, paths.size()));
  if (!costs.ok()) return costs.status();
  const int32_t steps = RingStepCount(in.req.op, in.n);
  s.aggregated = Aggregates(in.req.ring_steps, in.n, s.chunks);
  s.estimated_seconds =
      in.n < 2 ? Seconds()
               : (steps + s.chunks - 1) * StepSeconds(*costs, Bytes(in.bytes / s.channels / in.n / s.chunks));
  s.latency_seconds = in.n < 2 ? Seconds() : (steps + s.chunks - 1) * StepSeconds(*costs, Bytes(0));
  return s;
}

// The lowest compute capability among `gpus` (NCCL's tuner reads its tables by the communicator's minCompCap); 0 when
// a GPU is not in the topology.
int MinComputeCapability(const topology::Topology& topology, const std::vector<GpuId>& gpus) {
  int capability = 0;
  for (GpuId g : gpus) {
    const absl::StatusOr<topology::GpuLocation> at = topology.Locate(g);
    if (!at.ok()) return 0;
    const int c = topology.island(at->island).gpu.compute_capability;
    capability = capability == 0 ? c : std::min(capability, c);
  }
  return capability;
}

// How much longer than on its links alone a tree all-reduce across nodes runs under NCCL's per-channel cap
// (TreeChannelPayloadCap): its slowest flow's payload rate (`front`, the estimate's concurrent costs of one step) is a
// channel's algorithm bandwidth (each channel moves S / channels, its flows at that rate: both trees' edges once each
// way between two nodes, an inner node's NIC shared by two children's flows across more), and the cap bounds it.
// >= 1; 1 without NCCL's model, inside one node (hetsim's channels there are not NCCL's, whose tree is a chain at the
// N1 column's rate) and for broadcast. The factor stretches every byte of the tree
// (CollectiveShape::channel_cap_factor).
double TreeChannelCapFactor(const ShapeInputs& in, const std::vector<PathCost>& front) {
  const topology::Topology& topology = in.router.topology();
  if (!topology.nccl_model() || !in.req.nccl_channel_caps || in.req.op != CollectiveOp::kAllReduce ||
      in.nodes.size() < 2) {
    return 1.0;
  }
  double seconds_per_byte = 0;
  for (const PathCost& c : front) seconds_per_byte = std::max(seconds_per_byte, c.seconds_per_byte.value());
  const int capability = MinComputeCapability(topology, in.req.gpus);
  const double cap = TreeChannelPayloadCap(capability, in.protocol, static_cast<int64_t>(in.nodes.size()));
  if (!(seconds_per_byte > 0) || !(cap > 0)) return 1.0;
  return std::max(1.0, 1.0 / seconds_per_byte / cap);
}

// Double binary trees over every channel (one heap tree for broadcast), chunks pipelined.
absl::StatusOr<CollectiveShape> TreeShape(const ShapeInputs& in, CollectiveShape s) {
  if (in.req.op == CollectiveOp::kBroadcast) {
    s.channels = 1;
    std::vector<TransferPath> paths;
    for (int64_t p = 1; p < in.n; ++p) paths.push_back({in.req.gpus[(p - 1) / 2], in.req.gpus[p], 0});
    auto costs = in.costs_of(paths);
    if (!costs.ok()) return costs.status();
    const int32_t depth = HeapTreeDepth(in.n);
    const std::vector<PathCost> front = StepFrontier(*std::move(costs));
    std::tie(s.chunks, s.estimated_seconds) = BestChunks(in.req.chunks, [&](int32_t c) {
      return in.n < 2 ? Seconds() : (depth + c - 1) * StepSeconds(front, Bytes(in.bytes / c));
    });
    return s;
  }
  s.representative = in.RepresentativeChannels(s.channels);
  const std::vector<int32_t> sizes = NodeSizes(in.nodes);
  std::vector<TransferPath> paths;
  for (int32_t c = 0; c < (s.representative ? 1 : s.channels); ++c) {
    AppendTreePaths(ChannelOrder(in.nodes, c), sizes, kTreeKeyBase + c, paths);
  }
  auto costs = in.costs_of(paths, Multiplicities(s, paths.size()));
  if (!costs.ok()) return costs.status();
  const int32_t depth = DoubleTreeDepth(in.n, sizes);
  const std::vector<PathCost> front = StepFrontier(*std::move(costs));
  s.channel_cap_factor = TreeChannelCapFactor(in, front);
  const double wire_bytes = in.bytes * s.channel_cap_factor;
  std::tie(s.chunks, s.estimated_seconds) = BestChunks(in.req.chunks, [&](int32_t c) {
    return in.n < 2 ? Seconds() : 2.0 * (c + depth - 1) * StepSeconds(front, Bytes(wire_bytes / s.channels / 2 / c));
  });
  // Once up and once down the tree: NCCL's tree latency, its chunks being its own pipelining.
  s.latency_seconds = in.n < 2 ? Seconds() : 2.0 * depth * StepSeconds(front, Bytes(0));
  s.aggregated = TreesAggregate(in.req.ring_steps, s.channels, in.n, s.chunks);
  // By default, a tree the full simulation runs aggregated (a large one) on a measured fabric runs as its
  // representative, with the full shape's chunks and estimate.
  s.representative_by_default = !s.representative && in.req.representative_by_default && s.aggregated &&
                                s.channels > 1 && in.nodes.size() >= 2 && EvenNodes(in.nodes) &&
                                s.channels == static_cast<int32_t>(in.nodes.front().size()) &&
                                ExactTreeFabric(in.router.topology(), in.nodes);
  s.representative = s.representative || s.representative_by_default;
  return s;
}

// A ring inside each node, then a ring or a tree across nodes on every rail.
absl::StatusOr<CollectiveShape> HierarchicalShape(const ShapeInputs& in, CollectiveShape s) {
  if (in.nodes.size() < 2 || !EvenNodes(in.nodes)) {
    return absl::InvalidArgumentError(
        "algo: hier needs the group on at least two nodes with the same number of GPUs on each");
  }
  const int64_t g = static_cast<int64_t>(in.nodes.front().size());
  const int64_t num_nodes = static_cast<int64_t>(in.nodes.size());
  s.channels = static_cast<int32_t>(g);  // one inter-node all-reduce per local rank (rail)
  Seconds intra;
  if (g > 1) {
    std::vector<TransferPath> paths;
    for (const Ranks& node : in.nodes) {
      for (const auto& p : RingPaths(node, 0)) paths.push_back(p);
    }
    auto costs = in.costs_of(paths);
    if (!costs.ok()) return costs.status();
    intra = (g - 1) * StepSeconds(*costs, Bytes(in.bytes / g));
  }
  s.representative = in.req.representative && g > 1;
  std::vector<TransferPath> ring_paths, tree_paths;
  for (int64_t i = s.representative ? g - 1 : 0; i < g; ++i) {
    Ranks rail;
    for (const Ranks& node : in.nodes) rail.push_back(node[i]);
    for (const auto& p : RingPaths(rail, i)) ring_paths.push_back(p);
    AppendTreePaths(rail, {}, kTreeKeyBase + i, tree_paths);
  }
  auto ring_costs = in.costs_of(ring_paths, Multiplicities(s, ring_paths.size()));
  if (!ring_costs.ok()) return ring_costs.status();
  auto tree_costs = in.costs_of(tree_paths, Multiplicities(s, tree_paths.size()));
  if (!tree_costs.ok()) return tree_costs.status();
  const Seconds ring = 2.0 * (num_nodes - 1) * StepSeconds(*ring_costs, Bytes(in.bytes / g / num_nodes));
  const int32_t depth = DoubleTreeDepth(num_nodes);
  const std::vector<PathCost> tree_front = StepFrontier(*std::move(tree_costs));
  auto [chunks, tree] = BestChunks(in.req.chunks, [&](int32_t c) {
    return 2.0 * (c + depth - 1) * StepSeconds(tree_front, Bytes(in.bytes / g / 2 / c));
  });
  const bool use_tree =
      in.req.inter_node == CollectiveAlgorithm::kAuto
          ? tree < ring && NcclRunsTree(ring, 2.0 * (num_nodes - 1) * StepSeconds(*ring_costs, Bytes(0)),
                                        2.0 * depth * StepSeconds(tree_front, Bytes(0)), num_nodes, kNcclTreeRatio)
          : in.req.inter_node == CollectiveAlgorithm::kTree;
  s.inter_node = use_tree ? CollectiveAlgorithm::kTree : CollectiveAlgorithm::kRing;
  s.chunks = use_tree ? chunks : 1;
  // Auto: a hierarchy that stepped would be more flows than a tree may is aggregated whole, its
  // short intra-node and inter-node rings too (rails in step: exact, docs/decisions.md).
  const int64_t intra_flows = num_nodes * g * (g - 1) * 2;
  const int64_t inter_flows = use_tree ? g * 4 * (num_nodes - 1) * chunks : g * num_nodes * 2 * (num_nodes - 1);
  if (in.req.ring_steps == RingSteps::kAuto && intra_flows + inter_flows > kMaxSteppedTreeFlows) {
    s.ring_steps = RingSteps::kAggregated;
  }
  s.aggregated = Aggregates(s.ring_steps, g, 1) || (use_tree ? TreesAggregate(s.ring_steps, g, num_nodes, chunks)
                                                             : Aggregates(s.ring_steps, num_nodes, 1));
  s.estimated_seconds = 2 * intra + (use_tree ? tree : ring);
  return s;
}

// Direct (every pair at once) and pairwise (n-1 rounds of a shift) exchanges, and send/recv.
absl::StatusOr<CollectiveShape> DirectShape(const ShapeInputs& in, CollectiveShape s) {
  s.channels = 1;
  s.chunks = 1;
  if (in.req.op == CollectiveOp::kSendRecv) {
    auto costs = in.costs_of({{in.req.gpus[0], in.req.gpus[1], 0}});
    if (!costs.ok()) return costs.status();
    s.estimated_seconds = StepSeconds(*costs, Bytes(in.bytes));
    return s;
  }
  s.representative =
      s.algorithm == CollectiveAlgorithm::kDirect && in.req.representative && in.n >= 2 && EvenNodes(in.nodes);
  if (s.representative) {
    std::vector<TransferPath> paths;
    std::vector<double> multiplicity;
    for (const RepresentativePath& r : RepresentativeAllToAllPaths(in.nodes)) {
      paths.push_back(r.path);
      multiplicity.push_back(r.multiplicity);
    }
    auto costs = in.costs_of(paths, multiplicity);
    if (!costs.ok()) return costs.status();
    s.estimated_seconds = StepSeconds(*costs, Bytes(in.bytes / in.n));
    return s;
  }
  if (s.algorithm == CollectiveAlgorithm::kDirect) {
    std::vector<TransferPath> paths;
    for (int64_t i = 0; i < in.n; ++i) {
      for (int64_t j = 0; j < in.n; ++j) {
        if (i != j) paths.push_back({in.req.gpus[i], in.req.gpus[j], 0});
      }
    }
    auto costs = in.costs_of(paths);
    if (!costs.ok()) return costs.status();
    s.estimated_seconds = StepSeconds(*costs, Bytes(in.bytes / in.n));
    return s;
  }
  s.estimated_seconds = Seconds();
  for (int64_t k = 1; k < in.n; ++k) {
    std::vector<TransferPath> paths;
    for (int64_t r = 0; r < in.n; ++r) paths.push_back({in.req.gpus[r], in.req.gpus[(r + k) % in.n], 0});
    auto costs = in.costs_of(paths);
    if (!costs.ok()) return costs.status();
    s.estimated_seconds += StepSeconds(*costs, Bytes(in.bytes / in.n));
  }
  return s;
}

// NVLink SHARP: in an all-reduce GPU i's reducing load of its segment S/n has the switch read that
// segment from every GPU, itself included, and its multicast store of the sum writes it to every GPU,
// itself included, so each GPU's link to the switch carries S + S/n = (n+1)/n S each way, both
// directions at once on the full-duplex link (the issuer's own segment crosses its link twice: the
// measured NVLS algbw rises with n as n/(n+1) does, NVIDIA/nccl#1455); in an all-gather each GPU's multicast
// store of its S/n lands in the n-1 others, so each link carries (n-1)/n S into its GPU (a reduce-scatter
// the same out of it, the switch's reducing loads pulling every other GPU's share). Both at NVLS's share
// of the rate a ring's Simple protocol reaches there: alpha + payload / (share x link rate)
// (docs/network.md). Priced and simulated as GPU r sending payload / share to GPU r+1 through the
// switch, which loads every GPU's link to the switch alike up and down; the switch's reduction itself
// is not a bottleneck. NCCL's own model of NVLS (src/graph/tuning.cc, ncclTopoTuneModel, NCCL 2.23 on):
// its all-reduce algorithm bandwidth is 5/6 of the bus bandwidth of the NVSwitch links, where a ring's
// is n / (2(n-1)) of it; the multimem loads and stores do not reach the links' full rate as a ring's
// copies do. A node type's nvls_efficiency (of the line rate) replaces the 5/6 of its ring's.
double NvlsShare(const topology::Topology& topology, const CollectiveRequest& req) {
  const spec::NodeTypeSpec& node = topology.island(topology.Locate(req.gpus.front())->island).node;
  const double ring_efficiency = topology.nccl_model() ? node.nccl.bandwidth_efficiency : 1.0;
  return node.nvls_efficiency > 0 ? node.nvls_efficiency / ring_efficiency : kNvlsRingShare;
}

// The bytes a GPU's link carries each way in an NVLS all-reduce of `bytes` over `n` GPUs, at NVLS's share.
int64_t NvlsAllReduceWireBytes(double bytes, double n, double share) {
  return static_cast<int64_t>(std::ceil(bytes * (n + 1) / n / share));
}

int64_t NvlsWireBytes(const topology::Topology& topology, const CollectiveRequest& req) {
  const double share = NvlsShare(topology, req);
  const auto n = static_cast<double>(req.gpus.size());
  const double bytes = static_cast<double>(req.bytes);
  if (req.op == CollectiveOp::kAllReduce) return NvlsAllReduceWireBytes(bytes, n, share);
  return static_cast<int64_t>(std::ceil(bytes * (n - 1) / n / share));
}

absl::StatusOr<CollectiveShape> NvlsShape(const topology::Topology& topology, const ShapeInputs& in,
                                          CollectiveShape s) {
  const int32_t island = topology.Locate(in.req.gpus.front())->island;
  const spec::NodeTypeSpec& node = topology.island(island).node;
  if (in.nodes.size() != 1 || node.fabric != spec::IntraNodeFabric::kNvSwitch || !node.nvlink_sharp) {
    return absl::InvalidArgumentError(
        "algo: nvls needs the group on one node whose NVSwitch reduces (node type's nvlink_sharp)");
  }
  if (in.protocol != topology::NcclProtocol::kSimple) {
    return absl::InvalidArgumentError("protocol: NCCL runs NVLS with the Simple protocol only");
  }
  s.channels = 1;
  s.chunks = 1;
  if (in.n < 2) {
    s.estimated_seconds = Seconds();
    return s;
  }
  auto costs = in.costs_of(RingPaths(in.req.gpus, 0));
  if (!costs.ok()) return costs.status();
  s.estimated_seconds = StepSeconds(*costs, Bytes(static_cast<double>(NvlsWireBytes(topology, in.req))));
  return s;
}

// NCCL's CollNetDirect all-reduce on InfiniBand switches that reduce (SHARP): an intra-node
// reduce-scatter and all-gather, each one direct step (every GPU sends the GPU that heads rail i its part
// of segment i, and that head sends the sum back to every GPU: src/device/all_reduce.h's scatter to and
// broadcast from the heads), with each rail's segment S/g sent once into
// the switches and the sum received once between them, where a ring across the N nodes sends
// 2(N-1)/N of it each way (docs/network.md). Priced and simulated as node j's GPU of rail i sending the
// segment to node j+1's, which loads every NIC alike up and down; the switches' reduction is not a
// bottleneck and the sum is ready when every node's segment is in. Simple protocol only, as NCCL.
// The three phases are pipelined by chunks as NCCL's CollNetDirect kernel runs them (a chunk's trip
// through the switches overlaps the next chunk's reduce-scatter and the previous chunk's all-gather):
// CollNetPipelineSeconds of the chunk's phases.
// NCCL's tuner derates CollNetDirect's all-reduce to 0.85 of its bandwidth on GPUs of compute capability
// 9.0 and later (ncclTopoTuneModel in src/graph/tuning.cc, NVIDIA/nccl 5067397: `if (minCompCap >= 90)
// busBw *= .85`, Simple protocol, all-reduce only; the GPU-to-NIC divisor before it is the shared NICs'
// load, which the links carry here). Priced and simulated as the collective's transfers carrying their
// bytes / 0.85; 1 on ideal hardware, for the other operations, and for a GPU type without a preset
// (compute capability unknown).
constexpr double kCollNetHopperShare = 0.85;

// The chunks of an in-network collective pipelined by chunks (CollNet's, NVLSTree's), as NCCL cuts them by size
// (not by what is fastest), unless `fixed`: the largest power of two up to kMaxDefaultChunks that leaves each
// rail's (or channel's) piece of `part_bytes` at least kCollNetChunkBytes, and the graph's `flows_per_chunk` a
// chunk under kMaxCollNetFlows in all.
int32_t PipelineChunks(int32_t fixed, int64_t part_bytes, int64_t flows_per_chunk) {
  if (fixed > 0) return fixed;
  const int64_t max_chunks =
      std::min<int64_t>(kMaxDefaultChunks, kMaxCollNetFlows / std::max<int64_t>(1, flows_per_chunk));
  int32_t chunks = 1;
  while (2 * chunks <= max_chunks && part_bytes / (2 * chunks) >= kCollNetChunkBytes) chunks *= 2;
  return chunks;
}
double CollNetShare(const topology::Topology& topology, const CollectiveRequest& req) {
  if (!topology.nccl_model() || req.op != CollectiveOp::kAllReduce) return 1.0;
  const int capability = topology.island(topology.Locate(req.gpus.front())->island).gpu.compute_capability;
  return capability >= 90 ? kCollNetHopperShare : 1.0;
}

// The island of a CollNet group (`name`: collnet, collnetchain), or why NCCL's CollNet cannot run on it: at least
// two nodes of one island whose InfiniBand switches reduce, the same GPU count on each, the Simple protocol.
absl::StatusOr<int32_t> CollNetIsland(const topology::Topology& topology, const ShapeInputs& in,
                                      absl::string_view name) {
  const int32_t island = topology.Locate(in.req.gpus.front())->island;
  const bool one_island = std::all_of(in.req.gpus.begin(), in.req.gpus.end(),
                                      [&](GpuId gpu) { return topology.Locate(gpu)->island == island; });
  if (in.nodes.size() < 2 || !EvenNodes(in.nodes) || !one_island || !topology.island(island).infiniband_sharp) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "algo: %s needs the group on at least two nodes of one island whose InfiniBand switches reduce (island's "
        "infiniband_sharp), with the same number of GPUs on each",
        name));
  }
  if (in.protocol != topology::NcclProtocol::kSimple) {
    return absl::InvalidArgumentError("protocol: NCCL runs CollNet with the Simple protocol only");
  }
  return island;
}

absl::StatusOr<CollectiveShape> CollNetShape(const topology::Topology& topology, const ShapeInputs& in,
                                             CollectiveShape s) {
  HETSIM_ASSIGN_OR_RETURN(const int32_t island, CollNetIsland(topology, in, "collnet"));
  const int64_t g = static_cast<int64_t>(in.nodes.front().size());
  const int64_t num_nodes = static_cast<int64_t>(in.nodes.size());
  if (in.req.op != CollectiveOp::kAllReduce && topology.island(island).nics_per_node < g) {
    return absl::InvalidArgumentError(
        "algo: collnet all-gather and reduce-scatter need a NIC for every GPU of the group on a node (NCCL "
        "disables them when a node has more local ranks than CollNet heads)");
  }
  s.channels = static_cast<int32_t>(g);  // one in-network reduction per local rank (rail)
  std::vector<TransferPath> intra_paths, inter_paths;
  for (const Ranks& node : in.nodes) {  // NCCL's direct scatter to the heads, every pair at once
    for (int64_t i = 0; i < g; ++i) {
      for (int64_t j = 0; j < g; ++j) {
        if (i != j) intra_paths.push_back({node[i], node[j], 0});
      }
    }
  }
  absl::StatusOr<std::vector<PathCost>> intra = std::vector<PathCost>{};
  if (g > 1) intra = in.costs_of(intra_paths);
  if (!intra.ok()) return intra.status();
  for (int64_t i = 0; i < g; ++i) {
    Ranks rail;
    for (const Ranks& node : in.nodes) rail.push_back(node[i]);
    for (const auto& p : RingPaths(rail, i)) inter_paths.push_back(p);
  }
  auto inter = in.costs_of(inter_paths);
  if (!inter.ok()) return inter.status();
  // Chunks as NCCL cuts them, by size (not by what is fastest): the largest power of two up to
  // kMaxDefaultChunks that leaves each rail's piece at least kCollNetChunkBytes, and the graph's
  // N g (2 (g-1) + 1) flows a chunk under kMaxCollNetFlows in all.
  const int32_t chunks =
      PipelineChunks(in.req.chunks, static_cast<int64_t>(in.bytes) / g, num_nodes * g * (2 * (g - 1) + 1));
  s.chunks = chunks;
  const double wire = in.bytes / CollNetShare(topology, in.req);  // chunks as the real size cuts them
  const Seconds scatter = g > 1 ? StepSeconds(*intra, Bytes(wire / g / chunks)) : Seconds(0);
  if (in.req.op == CollectiveOp::kAllReduce) {
    s.estimated_seconds = CollNetPipelineSeconds(chunks, scatter, StepSeconds(*inter, Bytes(wire / g / chunks)));
  } else {  // the other nodes' shards of the rail's segment through each NIC, then (or before) one direct step
    const Seconds net = StepSeconds(*inter, CollNetShardBytes(Bytes(in.bytes / chunks), g, num_nodes));
    s.estimated_seconds = TwoStagePipelineSeconds(chunks, scatter, net);
  }
  return s;
}

// NCCL's NVLSTree all-reduce (src/device/all_reduce.h, RunWorkColl<..., NCCL_ALGO_NVLS_TREE, ...>, NVIDIA/nccl
// 5067397): inside each node NVLS reduces segment i of a chunk into the node's GPU i (the head of rail i), GPU i
// all-reduces that node sum with the other nodes' GPUs i on NCCL's double binary tree, and NVLS multicasts the result
// back to the node's GPUs, chunks pipelined (the scatter, reduce, tree and broadcast warps run at once). Priced as
// the NVLS all-reduce's (g+1)/g of a chunk on every GPU's link each way, at NVLS's share (its reduction and multicast
// overlap on the full-duplex links, chunk after chunk), and the hierarchy's trees on every rail carrying S/g: NCCL's
// own model takes the lower of NVLS's intra-node bandwidth and the network's (ncclTopoTuneModel in
// src/graph/tuning.cc lines 307-323 at 5067397: `bw = min(intraBw, interBw, perChMaxNVLSTreeBw)`), the pipeline's
// fill added here (NvlsTreePipelineSeconds). The per-channel cap perChMaxNVLSTreeBw is not applied (hetsim has no
// channel caps).
absl::StatusOr<CollectiveShape> NvlsTreeShape(const topology::Topology& topology, const ShapeInputs& in,
                                              CollectiveShape s) {
  const bool reduce_in_switch = std::all_of(in.req.gpus.begin(), in.req.gpus.end(), [&](GpuId gpu) {
    const spec::NodeTypeSpec& node = topology.island(topology.Locate(gpu)->island).node;
    return node.fabric == spec::IntraNodeFabric::kNvSwitch && node.nvlink_sharp;
  });
  if (in.nodes.size() < 2 || !EvenNodes(in.nodes) || in.nodes.front().size() < 2 || !reduce_in_switch) {
    return absl::InvalidArgumentError(
        "algo: nvlstree needs the group on at least two nodes whose NVSwitches reduce (node type's nvlink_sharp), "
        "with the same number of GPUs, at least two, on each");
  }
  if (in.protocol != topology::NcclProtocol::kSimple) {
    return absl::InvalidArgumentError("protocol: NCCL runs NVLSTree with the Simple protocol only");
  }
  const int64_t g = static_cast<int64_t>(in.nodes.front().size());
  const int64_t num_nodes = static_cast<int64_t>(in.nodes.size());
  s.channels = static_cast<int32_t>(g);  // one tree pair per rail, headed by the node's GPU i
  std::vector<TransferPath> nvls_paths, tree_paths;
  for (const Ranks& node : in.nodes) {
    for (const auto& p : RingPaths(node, 0)) nvls_paths.push_back(p);
  }
  for (int64_t i = 0; i < g; ++i) {
    Ranks rail;
    for (const Ranks& node : in.nodes) rail.push_back(node[i]);
    AppendTreePaths(rail, {}, kTreeKeyBase + i, tree_paths);
  }
  auto nvls = in.costs_of(nvls_paths);
  if (!nvls.ok()) return nvls.status();
  auto trees = in.costs_of(tree_paths);
  if (!trees.ok()) return trees.status();
  s.chunks = PipelineChunks(in.req.chunks, static_cast<int64_t>(in.bytes) / g, num_nodes * g + g * 4 * (num_nodes - 1));
  const double share = NvlsShare(topology, in.req);
  const Seconds nvls_chunk = StepSeconds(
      *nvls, Bytes(static_cast<double>(NvlsAllReduceWireBytes(in.bytes / s.chunks, static_cast<double>(g), share))));
  const Seconds tree_step = StepSeconds(*trees, Bytes(in.bytes / g / 2 / s.chunks));
  s.estimated_seconds = NvlsTreePipelineSeconds(s.chunks, DoubleTreeDepth(num_nodes), nvls_chunk, tree_step);
  return s;
}

// Channel k's chain in `node` for CollNetChain: the node's GPUs from the one after the head up to the head
// (local rank k g / K), which sends the chain's sum into the switches.
Ranks ChainToHead(const Ranks& node, int32_t channel, int32_t channels) {
  const int64_t g = static_cast<int64_t>(node.size());
  const int64_t head = channel * g / channels;
  Ranks chain;
  for (int64_t j = 1; j <= g; ++j) chain.push_back(node[(head + j) % g]);
  return chain;
}

// NCCL's CollNetChain all-reduce (src/device/all_reduce.h, RunWorkColl<..., NCCL_ALGO_COLLNET_CHAIN, ...>, NVIDIA/nccl
// 5067397): per channel a node's GPUs form a chain (tree->up, tree->down[0]) to the channel's head, each reducing what
// it receives into what it sends up; the head sends the node's sum into the switches, receives the total and sends it
// back down the chain; half the warps reduce up while the others broadcast down, chunks pipelined. One channel per
// NIC of a node (at most one per GPU), each carrying S/K, its head the GPU k g / K. Priced as a chunk's g-1 hops up
// and down the chain (t_hop each, alone on the links) and through the head's NIC into the switches and back (t_net: a
// flow to the next node's head, every NIC loaded alike), then a chunk a cycle: the slower of the NICs and a chain hop
// among every chain's hops up and down (t_chain: a GPU sends up to the next GPU and down to the one before, for every
// chain, on its one link, 2 (g-1)/g of a channel's piece per chain on average):
// 2 (g-1) t_hop + t_net + (C-1) max(t_chain, t_net) (CollNetChainAllReduceSeconds). NCCL's tuner has no derating
// of its own for CollNetChain (its 0.85 is CollNetDirect's: src/graph/tuning.cc line 348 at 5067397).
absl::StatusOr<CollectiveShape> CollNetChainShape(const topology::Topology& topology, const ShapeInputs& in,
                                                  CollectiveShape s) {
  HETSIM_ASSIGN_OR_RETURN(const int32_t island, CollNetIsland(topology, in, "collnetchain"));
  const int64_t g = static_cast<int64_t>(in.nodes.front().size());
  const int64_t num_nodes = static_cast<int64_t>(in.nodes.size());
  const int64_t nics = std::max<int64_t>(1, topology.island(island).nics_per_node);
  s.channels = static_cast<int32_t>(std::min(g, in.req.channels > 0 ? in.req.channels : nics));
  std::vector<TransferPath> chain_paths, net_paths;
  for (int32_t k = 0; k < s.channels; ++k) {
    Ranks heads;
    for (const Ranks& node : in.nodes) {
      const Ranks chain = ChainToHead(node, k, s.channels);
      for (int64_t e = 0; e + 1 < g; ++e) {
        chain_paths.push_back({chain[e], chain[e + 1], static_cast<uint64_t>(k)});
        chain_paths.push_back({chain[e + 1], chain[e], static_cast<uint64_t>(k)});
      }
      heads.push_back(chain.back());
    }
    for (const auto& p : RingPaths(heads, k)) net_paths.push_back(p);
  }
  auto net = in.costs_of(net_paths);
  if (!net.ok()) return net.status();
  // A chunk's first trip up and down the chain meets no other chunk: priced on the first hop of channel 0's chains,
  // alone on their links; every later chunk's hop shares its links with every chain's hops up and down.
  absl::StatusOr<std::vector<PathCost>> hop = std::vector<PathCost>{}, chain = std::vector<PathCost>{};
  if (g > 1) hop = in.costs_of({chain_paths.front()});
  if (!hop.ok()) return hop.status();
  if (g > 1) chain = in.costs_of(chain_paths);
  if (!chain.ok()) return chain.status();
  s.chunks = PipelineChunks(in.req.chunks, static_cast<int64_t>(in.bytes) / s.channels,
                            num_nodes * s.channels * (2 * (g - 1) + 1));
  const Bytes piece(in.bytes / s.channels / s.chunks);
  const double t_hop = g > 1 ? StepSeconds(*hop, piece).value() : 0.0;
  const double t_chain = g > 1 ? StepSeconds(*chain, piece).value() : 0.0;
  const double t_net = StepSeconds(*net, piece).value();
  s.estimated_seconds =
      Seconds(2.0 * static_cast<double>(g - 1) * t_hop + t_net + (s.chunks - 1) * std::max(t_chain, t_net));
  return s;
}

absl::StatusOr<CollectiveShape> ShapeOnLinks(const topology::Topology& topology, topology::Router& router,
                                             const CollectiveRequest& req, CollectiveAlgorithm algorithm,
                                             topology::NcclProtocol protocol, ConcurrentCostCache& cache) {
  const ShapeInputs in{router,
                       req,
                       protocol,
                       GroupByNode(topology, req.gpus),
                       static_cast<int64_t>(req.gpus.size()),
                       static_cast<double>(req.bytes),
                       cache};
  CollectiveShape s;
  s.algorithm = algorithm;
  s.channels = req.channels > 0 ? req.channels : DefaultChannels(topology, in.nodes);
  s.chunks = req.chunks > 0 ? req.chunks : 1;
  s.ring_steps = req.ring_steps;
  switch (algorithm) {
    case CollectiveAlgorithm::kRing: return RingShape(in, s);
    case CollectiveAlgorithm::kTree: return TreeShape(in, s);
    case CollectiveAlgorithm::kHierarchical: return HierarchicalShape(in, s);
    case CollectiveAlgorithm::kDirect:
    case CollectiveAlgorithm::kPairwise: return DirectShape(in, s);
    case CollectiveAlgorithm::kNvls: return NvlsShape(topology, in, s);
    case CollectiveAlgorithm::kCollNet: return CollNetShape(topology, in, s);
    case CollectiveAlgorithm::kNvlsTree: return NvlsTreeShape(topology, in, s);
    case CollectiveAlgorithm::kCollNetChain: return CollNetChainShape(topology, in, s);
    case CollectiveAlgorithm::kAuto: break;
  }
  return absl::InternalError("ShapeFor: unresolved algorithm");
}

// `algorithm` with the protocol of the smallest estimate.
absl::StatusOr<CollectiveShape> FastestProtocol(const topology::Topology& topology, topology::Router& router,
                                                const CollectiveRequest& req, CollectiveAlgorithm algorithm) {
  std::optional<CollectiveShape> best;
  ConcurrentCostCache cache;  // every protocol prices the same transfer sets
  for (topology::NcclProtocol p : CandidateProtocols(topology, req.protocol, req.gpus)) {
    const bool simple_only = algorithm == CollectiveAlgorithm::kNvls || algorithm == CollectiveAlgorithm::kCollNet ||
                             algorithm == CollectiveAlgorithm::kNvlsTree ||
                             algorithm == CollectiveAlgorithm::kCollNetChain;
    if (simple_only && p != topology::NcclProtocol::kSimple && !req.protocol) continue;
    // Pricing one protocol of a ring of 800,000 ranks takes seconds: the wall limit is checked per protocol.
    HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check("choosing a collective's algorithm"));
    auto s = CachedShapeFor(topology, router, req, algorithm, p, cache);
    if (!s.ok()) return s.status();
    if (!best.has_value() || s->estimated_seconds < best->estimated_seconds) best = *s;
  }
  return *best;
}

// What NCCL's topology search gives a channel of `channels` between the nodes of `gpus`: the line rate of the
// slowest node's NICs shared by the channels, bytes/s. The search's bandwidths are link speeds
// (search.cc: bwInter from the NICs' speed), not achieved ones, so the tuner's choice does not flip with a fitted
// efficiency.
double NicRatePerChannel(const topology::Topology& topology, const std::vector<GpuId>& gpus, int32_t channels) {
  double rate = 0;
  for (GpuId g : gpus) {
    const absl::StatusOr<topology::GpuLocation> at = topology.Locate(g);
    if (!at.ok()) return 0;
    const spec::IslandSpec& island = topology.island(at->island);
    const double node = island.nic_bandwidth.bytes_per_second() * island.nics_per_node;
    rate = rate == 0 ? node : std::min(rate, node);
  }
  return channels < 1 ? 0 : rate / channels;
}

}  // namespace

absl::StatusOr<ShapeChoice> ChooseShape(const topology::Topology& topology, topology::Router& router,
                                        const CollectiveRequest& req) {
  ShapeChoice choice;
  if (req.algorithm != CollectiveAlgorithm::kAuto) {
    auto s = FastestProtocol(topology, router, req, req.algorithm);
    if (!s.ok()) return s.status();
    choice.shape = *s;
    choice.estimates.push_back({s->algorithm, s->estimated_seconds, s->protocol});
    return choice;
  }
  Seconds best(std::numeric_limits<double>::infinity());
  std::optional<CollectiveShape> ring;
  const auto nodes = static_cast<int64_t>(GroupByNode(topology, req.gpus).size());
  const auto n = static_cast<int64_t>(req.gpus.size());
  const int capability =
      req.gpus.empty() ? 0 : topology.island(topology.Locate(req.gpus.front())->island).gpu.compute_capability;
  for (CollectiveAlgorithm a : AlgorithmsFor(req.op)) {
    HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check("choosing a collective's algorithm"));
    auto s = FastestProtocol(topology, router, req, a);
    if (!s.ok()) {
      if (absl::IsInvalidArgument(s.status())) continue;  // not applicable to this group
      return s.status();
    }
    choice.estimates.push_back({a, s->estimated_seconds, s->protocol});
    if (a == CollectiveAlgorithm::kRing) ring = *s;
    // The tree only where NCCL's tuner would run it too (NcclRunsTree).
    const bool nccl_skips =
        a == CollectiveAlgorithm::kTree && req.op == CollectiveOp::kAllReduce && ring &&
        !NcclRunsTree(ring->estimated_seconds, ring->latency_seconds, s->latency_seconds, n,
                      NcclTwoNodeTreeRatio(nodes, NicRatePerChannel(topology, req.gpus, ring->channels), capability,
                                           s->protocol));
    if (!nccl_skips && s->estimated_seconds < best) {
      best = s->estimated_seconds;
      choice.shape = *s;
    }
  }
  return choice;
}

namespace {

// One direct step inside a node: every rank sends rank j segment j of `bytes` (a scatter to the heads) or,
// `from_sender`, its own segment to every rank (the heads' broadcast), all at once after its start. A
// rank is done when its sends have left and its receives are in.
Ready AppendDirectStep(TransferGraph& g, const Ranks& ranks, int64_t bytes, bool from_sender, const Ready& start) {
  const int32_t n = static_cast<int32_t>(ranks.size());
  Ready done(n);
  for (int32_t r = 0; r < n; ++r) {
    if (n < 2) done[r] = start[r];
    for (int32_t j = 0; j < n; ++j) {
      if (j == r) continue;
      const TransferIndex t = g.Add(g.Path(ranks[r], ranks[j], 0), SplitBytes(bytes, n, from_sender ? r : j), start[r]);
      done[r].push_back(t);
      done[j].push_back(t);
    }
  }
  return done;
}

// CollNetShape's transfers, chunk by chunk: per node the scatter of the chunk to the heads (local rank i
// heads segment i), per rail every node's segment into the switches (a flow to the next node's GPU of the
// rail, after the previous chunk's on that NIC) and the sum ready when all are in, then per node the
// heads' broadcast. A rank's NVLink phases alternate as CollNetPipelineSeconds orders them (RS 1, RS 2,
// AG 1, RS 3, AG 2, ..., AG C), each waiting for the one before at that rank, so the phases of
// successive chunks overlap without sharing the NVLink.
// CollNetShape's all-gather (S the gathered output) or reduce-scatter (S each rank's input), chunk by
// chunk. Local rank i heads rail i, whose segment of the chunk is S/(gC): the all-gather sends each node's
// shards of the segment into the switches and receives the other N-1 nodes' (a flow of (N-1)/N of the
// segment to the next node's head, every NIC loaded alike), then the head broadcasts the segment to its
// node's GPUs in one direct step; the reduce-scatter first scatters each GPU's part of segment i to head
// i, then the head sends the other nodes' shards into the switches and receives its own, reduced. Each
// NIC and each rank's NVLink take one chunk at a time.
void AppendCollNetGatherOrScatter(TransferGraph& g, const std::vector<Ranks>& nodes, int64_t bytes, int32_t chunks,
                                  bool all_gather) {
  const int32_t gpn = static_cast<int32_t>(nodes.front().size());
  const int64_t num_nodes = static_cast<int64_t>(nodes.size());
  std::vector<Ready> nvlink(num_nodes, Ready(gpn));
  std::vector<std::vector<TransferIndex>> last_send(num_nodes, std::vector<TransferIndex>(gpn, kNoTransfer));
  for (int32_t c = 0; c < chunks && !WallLimitPassedNow(); ++c) {
    const int64_t chunk_bytes = SplitBytes(bytes, chunks, c);
    if (!all_gather) {
      for (int64_t j = 0; j < num_nodes; ++j) {
        nvlink[j] = AppendDirectStep(g, nodes[j], chunk_bytes, /*from_sender=*/false, nvlink[j]);
      }
    }
    std::vector<Ready> through(num_nodes, Ready(gpn));
    for (int32_t i = 0; i < gpn; ++i) {
      const int64_t shards = SplitBytes(chunk_bytes, gpn, i) * (num_nodes - 1) / num_nodes;
      std::vector<TransferIndex> sends;
      for (int64_t j = 0; j < num_nodes; ++j) {
        std::vector<TransferIndex> deps = all_gather ? std::vector<TransferIndex>{} : nvlink[j][i];
        deps.push_back(last_send[j][i]);
        last_send[j][i] =
            g.Add(g.Path(nodes[j][i], nodes[(j + 1) % num_nodes][i], static_cast<uint64_t>(i)), shards, deps);
        sends.push_back(last_send[j][i]);
      }
      const TransferIndex in = g.AddJoin(sends);
      for (int64_t j = 0; j < num_nodes; ++j) through[j][i] = {in, last_send[j][i]};
    }
    if (all_gather) {
      for (int64_t j = 0; j < num_nodes; ++j) {
        for (int32_t r = 0; r < gpn; ++r) {
          through[j][r].insert(through[j][r].end(), nvlink[j][r].begin(), nvlink[j][r].end());
        }
        nvlink[j] = AppendDirectStep(g, nodes[j], chunk_bytes, /*from_sender=*/true, through[j]);
      }
    }
  }
}

void AppendCollNetAllReduce(TransferGraph& g, const std::vector<Ranks>& nodes, int64_t bytes, int32_t chunks) {
  const int32_t gpn = static_cast<int32_t>(nodes.front().size());
  const size_t num_nodes = nodes.size();
  std::vector<Ready> nvlink(num_nodes, Ready(gpn));  // per rank, its last NVLink phase
  std::vector<Ready> reduced_before;                 // per rank, the previous chunk's sum
  std::vector<std::vector<TransferIndex>> last_send(num_nodes, std::vector<TransferIndex>(gpn, kNoTransfer));
  auto broadcast = [&](std::vector<Ready>& start, int64_t chunk_bytes) {
    for (size_t j = 0; j < num_nodes; ++j) {
      for (int32_t r = 0; r < gpn; ++r) start[j][r].insert(start[j][r].end(), nvlink[j][r].begin(), nvlink[j][r].end());
      nvlink[j] = AppendDirectStep(g, nodes[j], chunk_bytes, /*from_sender=*/true, start[j]);
    }
  };
  for (int32_t c = 0; c < chunks && !WallLimitPassedNow(); ++c) {
    const int64_t chunk_bytes = SplitBytes(bytes, chunks, c);
    for (size_t j = 0; j < num_nodes; ++j) {
      nvlink[j] = AppendDirectStep(g, nodes[j], chunk_bytes, /*from_sender=*/false, nvlink[j]);
    }
    std::vector<Ready> reduced(num_nodes, Ready(gpn));
    for (int32_t i = 0; i < gpn; ++i) {
      std::vector<TransferIndex> sends;
      for (size_t j = 0; j < num_nodes; ++j) {
        std::vector<TransferIndex> deps = nvlink[j][i];
        deps.push_back(last_send[j][i]);
        last_send[j][i] = g.Add(g.Path(nodes[j][i], nodes[(j + 1) % num_nodes][i], static_cast<uint64_t>(i)),
                                SplitBytes(chunk_bytes, gpn, i), deps);
        sends.push_back(last_send[j][i]);
      }
      const TransferIndex sum = g.AddJoin(sends);
      for (size_t j = 0; j < num_nodes; ++j) reduced[j][i].push_back(sum);
    }
    if (c > 0) broadcast(reduced_before, SplitBytes(bytes, chunks, c - 1));
    reduced_before = std::move(reduced);
  }
  if (!reduced_before.empty()) broadcast(reduced_before, SplitBytes(bytes, chunks, chunks - 1));
}

// NvlsTreeShape's transfers, chunk by chunk: per node the NVLS step of the chunk (GPU r sending the all-reduce's
// (g+1)/g of the chunk at NVLS's share to GPU r+1 through the switch, after its previous chunk's), then per rail i the
// double binary trees across the nodes' GPUs i all-reducing segment i of the chunk, each rank's part starting when its
// node's NVLS step of the chunk is done. The chunks' trees overlap one another and the next chunks' NVLS steps, as
// NCCL's warps do; the multicast of a chunk's result is priced with its NVLS step (the link carries both at once).
void AppendNvlsTreeAllReduce(TransferGraph& g, const std::vector<Ranks>& nodes, int64_t bytes, int32_t chunks,
                             double share) {
  const int32_t gpn = static_cast<int32_t>(nodes.front().size());
  std::vector<Ready> nvlink(nodes.size(), Ready(gpn));  // per rank, its node's last NVLS step
  for (int32_t c = 0; c < chunks && !WallLimitPassedNow(); ++c) {
    const int64_t chunk_bytes = SplitBytes(bytes, chunks, c);
    const int64_t wire = NvlsAllReduceWireBytes(static_cast<double>(chunk_bytes), gpn, share);
    for (size_t j = 0; j < nodes.size(); ++j) {
      Ready done(gpn);
      for (int32_t r = 0; r < gpn; ++r) {
        const TransferIndex t = g.Add(g.Path(nodes[j][r], nodes[j][(r + 1) % gpn], 0), wire, nvlink[j][r]);
        done[r].push_back(t);
        done[(r + 1) % gpn].push_back(t);
      }
      nvlink[j] = std::move(done);
    }
    for (int32_t i = 0; i < gpn; ++i) {
      Ranks rail;
      Ready start;
      for (size_t j = 0; j < nodes.size(); ++j) {
        rail.push_back(nodes[j][i]);
        start.push_back(nvlink[j][i]);
      }
      AppendDoubleTreeAllReduce(g, rail, SplitBytes(chunk_bytes, gpn, i), 1, kTreeKeyBase + i, start);
    }
  }
}

// CollNetChainShape's transfers: per channel k (its piece of `bytes`) and chunk, up each node's chain to the head (a
// hop after the chunk's previous hop and the edge's previous chunk), the head's piece to the next node's head through
// the switches (after the chunk's climb and its NIC's previous chunk), the total ready when every node's is in, then
// down the chain from the head.
void AppendCollNetChainAllReduce(TransferGraph& g, const std::vector<Ranks>& nodes, int64_t bytes, int32_t chunks,
                                 int32_t channels) {
  const int64_t gpn = static_cast<int64_t>(nodes.front().size());
  const size_t num_nodes = nodes.size();
  for (int32_t k = 0; k < channels && !WallLimitPassedNow(); ++k) {
    const int64_t channel_bytes = SplitBytes(bytes, channels, k);
    const auto key = static_cast<uint64_t>(k);
    std::vector<Ranks> chains;
    for (const Ranks& node : nodes) chains.push_back(ChainToHead(node, k, channels));
    // Per node, the last transfer on each chain edge (up, down) and through the head's NIC.
    std::vector<std::vector<TransferIndex>> up(num_nodes, std::vector<TransferIndex>(gpn, kNoTransfer));
    std::vector<std::vector<TransferIndex>> down = up;
    std::vector<TransferIndex> net(num_nodes, kNoTransfer);
    for (int32_t c = 0; c < chunks; ++c) {
      const int64_t piece = SplitBytes(channel_bytes, chunks, c);
      for (size_t j = 0; j < num_nodes; ++j) {
        for (int64_t e = 0; e + 1 < gpn; ++e) {
          up[j][e] =
              g.Add(g.Path(chains[j][e], chains[j][e + 1], key), piece, {e > 0 ? up[j][e - 1] : kNoTransfer, up[j][e]});
        }
        net[j] = g.Add(g.Path(chains[j].back(), chains[(j + 1) % num_nodes].back(), key), piece,
                       {gpn > 1 ? up[j][gpn - 2] : kNoTransfer, net[j]});
      }
      const TransferIndex total = g.AddJoin(net);
      for (size_t j = 0; j < num_nodes; ++j) {
        for (int64_t e = gpn - 2; e >= 0; --e) {
          down[j][e] = g.Add(g.Path(chains[j][e + 1], chains[j][e], key), piece,
                             {e == gpn - 2 ? total : down[j][e + 1], down[j][e]});
        }
      }
    }
  }
}

// NVLSTree's or CollNetChain's all-reduce, as `s` chose it.
void AppendTwoLevelAllReduce(TransferGraph& g, const topology::Topology& topology, const CollectiveRequest& req,
                             const CollectiveShape& s, const std::vector<Ranks>& nodes) {
  if (s.algorithm == CollectiveAlgorithm::kNvlsTree) {
    AppendNvlsTreeAllReduce(g, nodes, req.bytes, s.chunks, NvlsShare(topology, req));
  } else {
    AppendCollNetChainAllReduce(g, nodes, req.bytes, s.chunks, s.channels);
  }
}

}  // namespace

TransferGraph BuildTransferGraph(const topology::Topology& topology, const CollectiveRequest& req,
                                 const CollectiveShape& s) {
  TransferGraph g;
  const std::vector<Ranks> nodes = GroupByNode(topology, req.gpus);
  const int64_t n = static_cast<int64_t>(req.gpus.size());
  const Ready none;
  switch (s.algorithm) {
    case CollectiveAlgorithm::kRing:
      if (req.op == CollectiveOp::kBroadcast) {
        AppendChainBroadcast(g, req.gpus, req.bytes, s.chunks, 0, none);
        break;
      }
      for (int32_t c = 0; c < (s.representative ? 1 : s.channels) && !WallLimitPassedNow(); ++c) {
        AppendAnyRing(g, ChannelOrder(nodes, c), SplitBytes(req.bytes, s.channels, c), RingStepCount(req.op, n),
                      s.chunks, 0, c, none, s.ring_steps);
      }
      if (s.representative) MarkRepresentative(g, 0, s.channels);
      break;
    case CollectiveAlgorithm::kTree:
      if (req.op == CollectiveOp::kBroadcast) {
        AppendTreeBroadcast(g, req.gpus, req.bytes, s.chunks, 0, none);
        break;
      }
      for (int32_t c = 0; c < (s.representative ? 1 : s.channels) && !WallLimitPassedNow(); ++c) {
        AppendDoubleTreeAllReduce(g, ChannelOrder(nodes, c), SplitBytes(req.bytes, s.channels, c), s.chunks,
                                  kTreeKeyBase + c, none, TreesAggregate(s.ring_steps, s.channels, n, s.chunks),
                                  s.representative ? static_cast<int32_t>(nodes.front().size()) : 0,
                                  /*timed_ends=*/s.representative && !s.representative_by_default, NodeSizes(nodes));
      }
      if (s.representative) MarkRepresentative(g, 0, s.channels);
      break;
    case CollectiveAlgorithm::kHierarchical: {
      const int32_t gpn = static_cast<int32_t>(nodes.front().size());
      // 1. Reduce-scatter inside every node: local rank r ends with segment (r + 1) mod g.
      std::vector<Ready> after_rs;
      for (const Ranks& node : nodes) {
        after_rs.push_back(AppendAnyRing(g, node, req.bytes, gpn - 1, 1, 0, 0, none, s.ring_steps));
      }
      // 2. All-reduce of that segment across nodes, one ring or tree per local rank.
      // Representative: only the last rail (segment 0, the largest), standing for every rail.
      std::vector<Ready> after_ar(nodes.size(), Ready(gpn));
      for (int32_t i = s.representative ? gpn - 1 : 0; i < gpn && !WallLimitPassedNow(); ++i) {
        const size_t first_path = g.paths().size();
        Ranks rail;
        Ready start;
        for (size_t j = 0; j < nodes.size(); ++j) {
          rail.push_back(nodes[j][i]);
          start.push_back(after_rs[j][i]);
        }
        const int64_t seg = SplitBytes(req.bytes, gpn, (i + 1) % gpn);
        const Ready done = s.inter_node == CollectiveAlgorithm::kTree
                               ? AppendDoubleTreeAllReduce(
                                     g, rail, seg, s.chunks, kTreeKeyBase + i, start,
                                     TreesAggregate(s.ring_steps, gpn, static_cast<int64_t>(nodes.size()), s.chunks))
                               : AppendAnyRing(g, rail, seg, 2 * (static_cast<int32_t>(rail.size()) - 1), 1, 0, i,
                                               start, s.ring_steps);
        if (s.representative) MarkRepresentative(g, first_path, gpn);
        for (size_t j = 0; j < nodes.size(); ++j) {
          for (int32_t r = s.representative ? 0 : i; r <= i; ++r) after_ar[j][r] = done[j];
        }
      }
      // 3. All-gather inside every node, starting from the segment each rank owns.
      for (size_t j = 0; j < nodes.size(); ++j) {
        AppendAnyRing(g, nodes[j], req.bytes, gpn - 1, 1, 1, 0, after_ar[j], s.ring_steps);
      }
      break;
    }
    case CollectiveAlgorithm::kDirect:
      if (req.op == CollectiveOp::kSendRecv) {
        g.Add(g.Path(req.gpus[0], req.gpus[1], 0), req.bytes, {});
      } else if (s.representative) {
        AppendRepresentativeAllToAll(g, nodes, req.bytes);
      } else {
        AppendDirectAllToAll(g, req.gpus, req.bytes, 0, none);
      }
      break;
    case CollectiveAlgorithm::kPairwise: AppendPairwiseAllToAll(g, req.gpus, req.bytes, 0, none); break;
    case CollectiveAlgorithm::kNvls:
      for (int64_t r = 0; n > 1 && r < n; ++r)
        g.Add(g.Path(req.gpus[r], req.gpus[(r + 1) % n], 0), NvlsWireBytes(topology, req), {});
      break;
    case CollectiveAlgorithm::kCollNet:
      if (req.op == CollectiveOp::kAllReduce) {
        AppendCollNetAllReduce(
            g, nodes, static_cast<int64_t>(std::ceil(static_cast<double>(req.bytes) / CollNetShare(topology, req))),
            s.chunks);
      } else {
        AppendCollNetGatherOrScatter(g, nodes, req.bytes, s.chunks, req.op == CollectiveOp::kAllGather);
      }
      break;
    case CollectiveAlgorithm::kNvlsTree:
    case CollectiveAlgorithm::kCollNetChain: AppendTwoLevelAllReduce(g, topology, req, s, nodes); break;
    case CollectiveAlgorithm::kAuto: break;
  }
  if (s.representative) g.SetGroup(req.gpus);
  if (topology.nccl_model()) g.SetNccl(s.protocol, s.launch_latency, s.channel_cap_factor);
  return g;
}

}  // namespace hetsim::collectives
