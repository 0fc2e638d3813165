// Flat networks shared by several islands (Island.network): which islands sit on which network, the
// checks that their fabric fields agree, and the node count a network's switches are sized for. The
// validator and the resolver both group islands through these, so a network means the same to both.
#ifndef HETSIM_PROTO_CLUSTER_NETWORKS_INTERNAL_H_
#define HETSIM_PROTO_CLUSTER_NETWORKS_INTERNAL_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "proto/validate_problems.h"

namespace hetsim::proto {

struct IslandNetwork {
  std::string name;
  std::vector<int> islands;  // indices into Cluster.islands, ascending
};

// Every network named by an island, in order of its first island.
std::vector<IslandNetwork> IslandNetworks(const hetsim::v1::Cluster& c);

// The members of island i's network (just i when it has none).
std::vector<int> NetworkMembers(const hetsim::v1::Cluster& c, int i);

// The nodes of island i's network (its own node_count when it has none): what nodes_per_leaf and
// clos.nodes_per_rack are bounded by.
int64_t NetworkNodeCount(const hetsim::v1::Cluster& c, int i);

// Whether an Island field describes its own nodes' NICs (nics_per_node, nic_bandwidth_gbps,
// nic_sharing, fabric, nccl, the socket fields), which the members of a network may each set.
bool IsNodeNicField(absl::string_view name);

// The first switch field of Island (topology, latencies, oversubscription, nodes_per_leaf, clos,
// infiniband_sharp: every field but the name, node type and count, network and the NIC fields) where
// island `member` differs from island `first`; empty when none.
std::string DifferingFabricField(const hetsim::v1::Island& first, const hetsim::v1::Island& member);

// Why member island `member` of network `n` cannot sit on it beside an earlier member: an InfiniBand
// transport beside an Ethernet one (ROCE, ETHERNET) or the other way round; empty when it can.
std::string MixedTransportProblem(const hetsim::v1::Cluster& c, const IslandNetwork& n, int member);

// Each member of a network repeats its first island's switch fields and shares its kind of switch
// (InfiniBand or Ethernet); a problem names the field.
void CheckNetworks(Problems& p, const hetsim::v1::Cluster& c);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_CLUSTER_NETWORKS_INTERNAL_H_
