#include "planner/nccl_price.h"

#include <algorithm>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "sim/collectives/layout.h"
#include "sim/collectives/nccl_model.h"

namespace hetsim::planner {

namespace {

// Every transfer between two GPUs that an all-reduce over `gpus` run as `shape` makes, with its share of the
// bytes one way (`add(from, to, share)`), as the simulator lays the algorithm out (sim/collectives/algorithms.cc):
// a ring's channels each over its own order (ChannelOrder: every node's ranks rotated by the channel), 2 (n - 1)
// / n of 1 / channels of the bytes a hop; a double tree's edges (NCCL's over the nodes, a chain inside each:
// DoubleTreeEdges) half of their channel's bytes each way, x the per-channel cap's factor; a hierarchical
// all-reduce's rails (rank i of every node) rings (or trees) over the nodes with 1 / g of the bytes each.
// The ring of channel 0 alone when `ring_only`: the reference the ratios below divide by.
void ForEachTransfer(const topology::Topology& topology, const std::vector<GpuId>& gpus,
                     const collectives::CollectiveShape& shape, bool ring_only,
                     absl::FunctionRef<void(GpuId, GpuId, double)> add) {
  const std::vector<collectives::Ranks> nodes = collectives::GroupByNode(topology, gpus);
  const auto ring = [&](const collectives::Ranks& ranks, double share) {
    for (size_t r = 0; ranks.size() > 1 && r < ranks.size(); ++r) add(ranks[r], ranks[(r + 1) % ranks.size()], share);
  };
  const std::vector<int32_t> no_nodes;  // a rail's ranks: a node each
  const auto tree = [&](const collectives::Ranks& ranks, const std::vector<int32_t>& node_sizes, double share) {
    for (int32_t t = 0; t < 2; ++t) {
      for (const auto& [child, parent] :
           collectives::DoubleTreeEdges(static_cast<int32_t>(ranks.size()), t, node_sizes)) {
        add(ranks[child], ranks[parent], share);
        add(ranks[parent], ranks[child], share);
      }
    }
  };
  const double n = static_cast<double>(gpus.size());
  const int32_t channels = std::max<int32_t>(1, shape.channels);
  switch (ring_only ? collectives::CollectiveAlgorithm::kAuto : shape.algorithm) {
    case collectives::CollectiveAlgorithm::kRing:
      for (int32_t c = 0; c < channels; ++c) ring(collectives::ChannelOrder(nodes, c), 2 * (n - 1) / n / channels);
      return;
    case collectives::CollectiveAlgorithm::kTree: {
      const std::vector<int32_t> sizes = collectives::NodeSizes(nodes);
      // A tree under NCCL's per-channel cap moves its bytes x the cap's factor on every link, as the simulator runs it.
      for (int32_t c = 0; c < channels; ++c) {
        tree(collectives::ChannelOrder(nodes, c), sizes, 0.5 / channels * shape.channel_cap_factor);
      }
      return;
    }
    case collectives::CollectiveAlgorithm::kHierarchical: {
      const size_t g = nodes.front().size();
      const double rails = static_cast<double>(g), num_nodes = static_cast<double>(nodes.size());
      for (size_t i = 0; i < g; ++i) {
        collectives::Ranks rail;
        for (const collectives::Ranks& node : nodes) rail.push_back(node[i]);
        if (shape.inter_node == collectives::CollectiveAlgorithm::kTree) {
          tree(rail, no_nodes, 0.5 / rails);
        } else {
          ring(rail, 2 * (num_nodes - 1) / num_nodes / rails);
        }
      }
      return;
    }
    default: ring(collectives::ChannelOrder(nodes, 0), 2 * (n - 1) / n);
  }
}

// What the busiest `key` (of a transfer; none: it loads no such key) carries under `shape` (ForEachTransfer; one
// ring alone when `ring_only`): its bytes, and the transfers over it, each a flow of the simulator.
struct KeyLoad {
  double bytes = 0;
  int flows = 0;
};
template <typename Key>
KeyLoad Busiest(const topology::Topology& topology, const std::vector<GpuId>& gpus,
                const collectives::CollectiveShape& shape, bool ring_only,
                absl::FunctionRef<void(GpuId, GpuId, absl::FunctionRef<void(Key)>)> keys) {
  std::map<Key, KeyLoad> load;
  ForEachTransfer(topology, gpus, shape, ring_only, [&](GpuId from, GpuId to, double share) {
    keys(from, to, [&](Key k) {
      load[k].bytes += share;
      ++load[k].flows;
    });
  });
  KeyLoad most;
  for (const auto& [k, one] : load) {
    if (one.bytes > most.bytes) most = one;
  }
  return most;
}

// The busiest `key` under `shape` over the same under one ring (Busiest), 1 when the ring loads none; and the
// flows over it.
template <typename Key>
KeyLoad LoadRatio(const topology::Topology& topology, const std::vector<GpuId>& gpus,
                  const collectives::CollectiveShape& shape,
                  absl::FunctionRef<void(GpuId, GpuId, absl::FunctionRef<void(Key)>)> keys) {
  const double reference = Busiest<Key>(topology, gpus, shape, true, keys).bytes;
  KeyLoad out = Busiest<Key>(topology, gpus, shape, false, keys);
  out.bytes = reference > 0 ? out.bytes / reference : 1;
  return out;
}

// The NICs a transfer leaves and enters its node by, each direction apart (none inside a node).
using NicWay = std::pair<topology::DeviceId, bool>;  // (NIC, into its node)
void NicWays(const topology::Topology& topology, GpuId from, GpuId to, absl::FunctionRef<void(NicWay)> load) {
  const absl::StatusOr<topology::GpuLocation> a = topology.Locate(from), b = topology.Locate(to);
  if (!a.ok() || !b.ok() || (a->island == b->island && a->node == b->node)) return;
  load({topology.nic_of(from), false});
  load({topology.nic_of(to), true});
}

// NicLoadRatio, and the flows over that NIC (1 inside one node).
KeyLoad NicLoadOf(const topology::Topology& topology, const std::vector<GpuId>& gpus,
                  const collectives::CollectiveShape& shape) {
  if (collectives::GroupByNode(topology, gpus).size() < 2) return {1, 1};
  KeyLoad out = LoadRatio<NicWay>(
      topology, gpus, shape,
      [&](GpuId from, GpuId to, absl::FunctionRef<void(NicWay)> load) { NicWays(topology, from, to, load); });
  out.flows = std::max(1, out.flows);
  return out;
}

}  // namespace

double CrossingLoadRatio(const topology::Topology& topology, const std::vector<GpuId>& gpus,
                         const collectives::CollectiveShape& shape) {
  if (shape.algorithm != collectives::CollectiveAlgorithm::kHierarchical &&
      shape.algorithm != collectives::CollectiveAlgorithm::kTree)
    return 1;
  using Pair = std::pair<int, int>;  // (from, to) island
  return LoadRatio<Pair>(topology, gpus, shape,
                         [&](GpuId from, GpuId to, absl::FunctionRef<void(Pair)> load) {
                           const absl::StatusOr<topology::GpuLocation> a = topology.Locate(from),
                                                                       b = topology.Locate(to);
                           if (a.ok() && b.ok() && a->island != b->island) load({a->island, b->island});
                         })
      .bytes;
}

double NicLoadRatio(const topology::Topology& topology, const std::vector<GpuId>& gpus,
                    const collectives::CollectiveShape& shape) {
  return NicLoadOf(topology, gpus, shape).bytes;
}

int NicFlows(const topology::Topology& topology, const std::vector<GpuId>& gpus,
             const collectives::CollectiveShape& shape) {
  return NicLoadOf(topology, gpus, shape).flows;
}

std::optional<NcclPrice> RangeNccl::Of(const std::vector<GpuId>& gpus, CollectiveOp op, int64_t bytes) {
  if (gpus.size() < 2 || bytes <= 0) return std::nullopt;
  std::vector<int64_t> key = {static_cast<int64_t>(op), bytes};
  for (GpuId g : gpus) key.push_back(g.value());
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  std::optional<NcclPrice>& out = cache_[key];
  collectives::CollectiveRequest req;
  req.op = op;
  req.gpus = gpus;
  req.bytes = bytes;
  if (!collectives::ValidateRequest(topology_, req).ok()) return out;
  absl::StatusOr<collectives::ShapeChoice> choice = collectives::ChooseShape(topology_, router_, req);
  if (!choice.ok()) return out;
  const collectives::CollectiveShape& shape = choice->shape;
  collectives::CollectiveRequest tiny = req;
  tiny.algorithm = shape.algorithm;
  tiny.inter_node = shape.inter_node;
  tiny.channels = shape.channels;
  tiny.chunks = shape.chunks;
  tiny.bytes = 0;  // the same shape's estimate without a bandwidth term
  absl::StatusOr<collectives::CollectiveShape> alpha =
      collectives::ShapeFor(topology_, router_, tiny, shape.algorithm, shape.protocol);
  if (!alpha.ok()) return out;
  out = NcclPrice{shape.estimated_seconds.value(),
                  std::min(alpha->estimated_seconds, shape.estimated_seconds).value(),
                  op == CollectiveOp::kAllReduce ? CrossingLoadRatio(topology_, gpus, shape) : 1.0,
                  NicLoadRatio(topology_, gpus, shape),
                  topology_.nccl_model() ? collectives::ProtocolBandwidthFraction(shape.protocol) : 1.0,
                  NicFlows(topology_, gpus, shape)};

  return out;
}

int RangeNccl::HopsOf(const std::vector<GpuId>& gpus) {
  std::vector<int64_t> key;
  for (GpuId g : gpus) key.push_back(g.value());
  return hops_.try_emplace(std::move(key), static_cast<int>(hops_.size())).first->second;
}

}  // namespace hetsim::planner
