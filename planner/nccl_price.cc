#include "planner/nccl_price.h"

#include <algorithm>
#include <utility>

#include "absl/status/statusor.h"
#include "sim/collectives/layout.h"
#include "sim/collectives/nccl_model.h"

namespace hetsim::planner {

double CrossingLoadRatio(const topology::Topology& topology, const std::vector<GpuId>& gpus,
                         const collectives::CollectiveShape& shape) {
  const bool hier = shape.algorithm == collectives::CollectiveAlgorithm::kHierarchical;
  if (!hier && shape.algorithm != collectives::CollectiveAlgorithm::kTree) return 1;
  const std::vector<collectives::Ranks> nodes = collectives::GroupByNode(topology, gpus);
  std::map<std::pair<int, int>, double> load;  // per (from, to) island
  const auto add = [&](GpuId from, GpuId to, double weight) {
    const absl::StatusOr<topology::GpuLocation> a = topology.Locate(from), b = topology.Locate(to);
    if (a.ok() && b.ok() && a->island != b->island) load[{a->island, b->island}] += weight;
  };
  const auto ring = [&](const collectives::Ranks& ranks, double weight) {
    for (size_t r = 0; ranks.size() > 1 && r < ranks.size(); ++r) add(ranks[r], ranks[(r + 1) % ranks.size()], weight);
  };
  const std::vector<int32_t> no_nodes;  // a rail's ranks: a node each
  const auto tree = [&](const collectives::Ranks& ranks, const std::vector<int32_t>& node_sizes, double weight) {
    for (int32_t t = 0; t < 2; ++t) {
      for (const auto& [child, parent] :
           collectives::DoubleTreeEdges(static_cast<int32_t>(ranks.size()), t, node_sizes)) {
        add(ranks[child], ranks[parent], weight);
        add(ranks[parent], ranks[child], weight);
      }
    }
  };
  const auto busiest = [&] {
    double most = 0;
    for (const auto& [pair, bytes] : load) most = std::max(most, bytes);
    load.clear();
    return most;
  };
  const double n = static_cast<double>(gpus.size());
  ring(collectives::ChannelOrder(nodes, 0), 2 * (n - 1) / n);
  const double reference = busiest();
  if (!(reference > 0)) return 1;
  if (!hier) {
    const std::vector<int32_t> sizes = collectives::NodeSizes(nodes);
    for (int32_t c = 0; c < shape.channels; ++c) tree(collectives::ChannelOrder(nodes, c), sizes, 0.5 / shape.channels);
    // A tree under NCCL's per-channel cap moves its bytes x the cap's factor on every link, as the simulator runs it.
    return busiest() * shape.channel_cap_factor / reference;
  }
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
  return busiest() / reference;
}

double NicLoadRatio(const topology::Topology& topology, const std::vector<GpuId>& gpus,
                    const collectives::CollectiveShape& shape) {
  if (shape.algorithm != collectives::CollectiveAlgorithm::kRing) return 1;
  const std::vector<collectives::Ranks> nodes = collectives::GroupByNode(topology, gpus);
  if (nodes.size() < 2) return 1;
  const int32_t channels = std::max<int32_t>(1, shape.channels);
  std::map<topology::DeviceId, int> exits;  // per NIC: the channels leaving a node through it
  for (int32_t c = 0; c < channels; ++c) {
    for (const collectives::Ranks& node : nodes) {
      const size_t shift = static_cast<size_t>(c) % node.size();
      ++exits[topology.nic_of(node[(shift + node.size() - 1) % node.size()])];
    }
  }
  int most = 1;
  for (const auto& [nic, count] : exits) most = std::max(most, count);
  return static_cast<double>(most) / channels;
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
  out = NcclPrice{shape.estimated_seconds.value(), std::min(alpha->estimated_seconds, shape.estimated_seconds).value(),
                  op == CollectiveOp::kAllReduce ? CrossingLoadRatio(topology_, gpus, shape) : 1.0,
                  NicLoadRatio(topology_, gpus, shape),
                  topology_.nccl_model() ? collectives::ProtocolBandwidthFraction(shape.protocol) : 1.0};
  return out;
}

int RangeNccl::HopsOf(const std::vector<GpuId>& gpus) {
  std::vector<int64_t> key;
  for (GpuId g : gpus) key.push_back(g.value());
  return hops_.try_emplace(std::move(key), static_cast<int>(hops_.size())).first->second;
}

}  // namespace hetsim::planner
