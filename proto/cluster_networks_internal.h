// Flat networks shared by several islands (Island.network): which islands sit on which network, the
// checks that their fabric fields agree, and the node count a network's switches are sized for. The
// validator and the resolver both group islands through these, so a network means the same to both.
#ifndef HETSIM_PROTO_CLUSTER_NETWORKS_INTERNAL_H_
#define HETSIM_PROTO_CLUSTER_NETWORKS_INTERNAL_H_

#include <string>
#include <vector>

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

// The first fabric field of Island (fabric, topology, NICs, latencies, oversubscription,
// nodes_per_leaf, clos, nccl) where island `member` differs from island `first`; empty when none.
std::string DifferingFabricField(const hetsim::v1::Island& first, const hetsim::v1::Island& member);

// Each member of a network repeats its first island's fabric fields (a problem names the field).
void CheckNetworks(Problems& p, const hetsim::v1::Cluster& c);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_CLUSTER_NETWORKS_INTERNAL_H_
