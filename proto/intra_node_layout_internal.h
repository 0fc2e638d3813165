// The rules a node type's intra-node layout must follow (PCIE_TREE, NVLINK_BRIDGE, HYBRID_CUBE_MESH:
// NodeType.pcie, nvlink_bandwidth_gbps), once, for the validator (every problem, with the file) and
// the resolver (the first, for clusters built by code): what a topology could not be built from.
#ifndef HETSIM_PROTO_INTRA_NODE_LAYOUT_INTERNAL_H_
#define HETSIM_PROTO_INTRA_NODE_LAYOUT_INTERNAL_H_

#include <string>
#include <utility>
#include <vector>

#include "proto/hetsim.pb.h"

namespace hetsim::proto {

// (field under the node type, problem) pairs, e.g. {"pcie.sockets", "8 GPUs do not split evenly over 3 sockets"}.
std::vector<std::pair<std::string, std::string>> IntraNodeLayoutProblems(const hetsim::v1::NodeType& n);

// True for the fabrics laid out as a PCIe tree (NodeType.pcie applies).
bool IsPcieTreeFabric(hetsim::v1::IntraNodeFabric fabric);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_INTRA_NODE_LAYOUT_INTERNAL_H_
