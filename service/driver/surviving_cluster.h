// What is left of a cluster after GPU, node and link failures, as a Cluster the planner can plan on.
//
// Rules (docs/faults.md, "Re-planning"):
//  - A failed GPU takes its whole node out: schedulers cordon the node, and the plan's meshes are
//    whole-node or within one node anyway. A failed node goes out.
//  - A link with an end on a node (GPU to NVSwitch, GPU to NIC, NIC to fabric) takes that node out.
//  - A failed inter-island link (`inter_island_link` index) removes that bundle; one failed gateway-to-
//    gateway cable (`link` "a/gateway0->b/gateway0", either direction) removes one link of its bundle
//    (count - 1). Islands left with no link between them are disconnected.
//  - A link between an island's fabric and its gateway isolates the island when it was the only one
//    (single switch); any other link inside a fabric (leaf to spine, a second spine's gateway link)
//    leaves every node reachable by the fabric's other paths: noted, nothing removed.
//  - A failed link class: NVLINK or PCIE takes out every node whose intra-node fabric uses it;
//    INFINIBAND, ROCE or ETHERNET removes every inter-island bundle of that fabric, and an island whose
//    own fabric it is falls apart into single nodes (its first surviving node is what remains of it,
//    cut off from the others).
//  - Islands with no node left go, with their gateway (and every bundle through it). Of the connected
//    parts that remain (islands joined by surviving bundles), the one with the most GPUs is kept (ties:
//    the part with the first island); the others are listed as dropped.
// Nodes keep their order; an island's surviving nodes are renumbered from 0 (nodes are identical).
#ifndef HETSIM_SERVICE_DRIVER_SURVIVING_CLUSTER_H_
#define HETSIM_SERVICE_DRIVER_SURVIVING_CLUSTER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/hetsim.pb.h"

namespace hetsim::driver {

// The targets of FAIL faults.
struct FailedTargets {
  std::vector<uint32_t> gpus;                // global GPU ids
  std::vector<hetsim::v1::NodeRef> nodes;    // island name and node index
  std::vector<uint32_t> inter_island_links;  // indices into Cluster.inter_island_links
  std::vector<std::string> links;            // one directed link by its devices: "a100/gateway0->h100/gateway0"
  std::vector<std::string> link_classes;     // NVLINK, PCIE, INFINIBAND, ROCE, ETHERNET
  bool empty() const {
    return gpus.empty() && nodes.empty() && inter_island_links.empty() && links.empty() && link_classes.empty();
  }
};

// The targets of the FAIL faults of `faults` (SLOW and FLAP are not failures), in order.
FailedTargets FailedTargetsOf(const hetsim::v1::Faults& faults);

struct SurvivingCluster {
  hetsim::v1::Cluster cluster;  // valid (presets applied as in the input), connected
  int num_gpus = 0;
  std::vector<std::string> removed;  // what went and why, in input order, e.g. "node a100/node1 (GPU 5 failed)"
  std::vector<std::string> notes;    // failures that removed nothing
};

// `cluster` with presets applied and valid. InvalidArgument naming the target when one does not exist
// (GPU id, island, node, link, class); FailedPrecondition when no GPU survives.
absl::StatusOr<SurvivingCluster> BuildSurvivingCluster(const hetsim::v1::Cluster& cluster, const FailedTargets& failed);

}  // namespace hetsim::driver

#endif  // HETSIM_SERVICE_DRIVER_SURVIVING_CLUSTER_H_
