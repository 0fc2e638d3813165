// How a group of GPUs sits on nodes: the grouping hierarchical algorithms use and the per-channel
// orders that let parallel rings leave each node through different NICs (as NCCL's channels do).
#ifndef HETSIM_SIM_COLLECTIVES_LAYOUT_H_
#define HETSIM_SIM_COLLECTIVES_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "sim/collectives/primitives.h"
#include "topology/device_graph.h"

namespace hetsim::collectives {

// The group's GPUs by node: nodes in order of first appearance, GPUs in group order within a node.
std::vector<Ranks> GroupByNode(const topology::Topology& topology, const Ranks& gpus);

// Node after node, each node's GPUs rotated left by `channel`: channel c enters a node at its
// (c mod k)-th GPU and leaves it from the one before, so channels use different NICs.
Ranks ChannelOrder(const std::vector<Ranks>& nodes, int32_t channel);

// The number of the group's GPUs on each node, in GroupByNode's order: how ChannelOrder's ranks sit on nodes
// (AppendDoubleTreeAllReduce's `node_sizes`).
std::vector<int32_t> NodeSizes(const std::vector<Ranks>& nodes);

// The channel count used when the request leaves it at 0: 1 inside a node; otherwise the smallest
// NIC count per node among the group's islands, at most the smallest number of group GPUs on a node.
int32_t DefaultChannels(const topology::Topology& topology, const std::vector<Ranks>& nodes);

// True when every node holds the same number of the group's GPUs.
bool EvenNodes(const std::vector<Ranks>& nodes);

}  // namespace hetsim::collectives

#endif  // HETSIM_SIM_COLLECTIVES_LAYOUT_H_
