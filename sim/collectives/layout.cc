#include "sim/collectives/layout.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace hetsim::collectives {

std::vector<Ranks> GroupByNode(const topology::Topology& topology, const Ranks& gpus) {
  std::vector<Ranks> nodes;
  absl::flat_hash_map<topology::DeviceId, size_t> index;  // node switch -> position in `nodes`
  for (GpuId g : gpus) {
    auto [it, inserted] = index.try_emplace(topology.node_switch(g), nodes.size());
    if (inserted) nodes.emplace_back();
    nodes[it->second].push_back(g);
  }
  return nodes;
}

Ranks ChannelOrder(const std::vector<Ranks>& nodes, int32_t channel) {
  Ranks out;
  for (const Ranks& node : nodes) {
    const size_t shift = static_cast<size_t>(channel) % node.size();
    out.insert(out.end(), node.begin() + static_cast<std::ptrdiff_t>(shift), node.end());
    out.insert(out.end(), node.begin(), node.begin() + static_cast<std::ptrdiff_t>(shift));
  }
  return out;
}

std::vector<int32_t> NodeSizes(const std::vector<Ranks>& nodes) {
  std::vector<int32_t> sizes;
  for (const Ranks& node : nodes) sizes.push_back(static_cast<int32_t>(node.size()));
  return sizes;
}

int32_t DefaultChannels(const topology::Topology& topology, const std::vector<Ranks>& nodes) {
  if (nodes.size() < 2) return 1;
  int64_t channels = 1 << 20;
  for (const Ranks& node : nodes) {
    const auto loc = topology.Locate(node.front());
    const int64_t nics = topology.island(loc->island).nics_per_node;
    channels = std::min<int64_t>(channels, std::min<int64_t>(nics, static_cast<int64_t>(node.size())));
  }
  return static_cast<int32_t>(std::max<int64_t>(1, channels));
}

bool EvenNodes(const std::vector<Ranks>& nodes) {
  for (const Ranks& node : nodes) {
    if (node.size() != nodes.front().size()) return false;
  }
  return true;
}

}  // namespace hetsim::collectives
