#include "proto/cluster_networks_internal.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_format.h"

namespace hetsim::proto {

using hetsim::v1::Cluster;
using hetsim::v1::Island;

std::vector<IslandNetwork> IslandNetworks(const Cluster& c) {
  std::vector<IslandNetwork> out;
  for (int i = 0; i < c.islands_size(); ++i) {
    const std::string& name = c.islands(i).network();
    if (name.empty()) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const IslandNetwork& n) { return n.name == name; });
    if (it == out.end()) it = out.insert(out.end(), IslandNetwork{name, {}});
    it->islands.push_back(i);
  }
  return out;
}

std::vector<int> NetworkMembers(const Cluster& c, int i) {
  const std::string& name = c.islands(i).network();
  if (name.empty()) return {i};
  std::vector<int> members;
  for (int j = 0; j < c.islands_size(); ++j) {
    if (c.islands(j).network() == name) members.push_back(j);
  }
  return members;
}

int64_t NetworkNodeCount(const Cluster& c, int i) {
  int64_t nodes = 0;
  for (int j : NetworkMembers(c, i)) nodes += c.islands(j).node_count();
  return nodes;
}

bool IsNodeNicField(absl::string_view name) {
  static constexpr absl::string_view kFields[] = {
      "nics_per_node",       "nic_bandwidth_gbps",      "nic_sharing",    "fabric", "nccl",
      "nccl_socket_threads", "nccl_sockets_per_thread", "tcp_stream_gbps"};
  return std::find(std::begin(kFields), std::end(kFields), name) != std::end(kFields);
}

std::string DifferingFabricField(const Island& first, const Island& member) {
  const google::protobuf::Descriptor* d = Island::descriptor();
  const google::protobuf::Reflection* r = Island::GetReflection();
  for (int k = 0; k < d->field_count(); ++k) {
    const google::protobuf::FieldDescriptor* f = d->field(k);
    const std::string& name = f->name();
    if (name == "name" || name == "node_type" || name == "node_count" || name == "network") continue;
    if (IsNodeNicField(name)) continue;
    // The one field alone in two otherwise empty islands, compared by their encodings.
    Island a = first, b = member, only_a, only_b;
    r->SwapFields(&a, &only_a, {f});
    r->SwapFields(&b, &only_b, {f});
    if (only_a.SerializeAsString() != only_b.SerializeAsString()) return name;
  }
  return "";
}

std::string MixedTransportProblem(const Cluster& c, const IslandNetwork& n, int member) {
  const auto infiniband = [&](int i) { return c.islands(i).fabric() == hetsim::v1::INFINIBAND; };
  const auto known = [&](int i) { return c.islands(i).fabric() != hetsim::v1::INTER_NODE_FABRIC_UNSPECIFIED; };
  if (!known(member)) return "";
  for (int j : n.islands) {
    if (j == member) return "";
    if (!known(j) || infiniband(j) == infiniband(member)) continue;
    return absl::StrFormat(
        "%s beside islands[%d] (\"%s\") on %s on network \"%s\": an InfiniBand switch carries no Ethernet (ROCE, "
        "ETHERNET) and an Ethernet switch no InfiniBand; describe the NICs the nodes share the network with",
        InterNodeFabric_Name(c.islands(member).fabric()), j, c.islands(j).name(),
        InterNodeFabric_Name(c.islands(j).fabric()), n.name);
  }
  return "";
}

void CheckNetworks(Problems& p, const Cluster& c) {
  for (const IslandNetwork& n : IslandNetworks(c)) {
    const int first = n.islands.front();
    for (size_t k = 1; k < n.islands.size(); ++k) {
      const int i = n.islands[k];
      if (std::string problem = MixedTransportProblem(c, n, i); !problem.empty()) {
        p.Add(absl::StrFormat("islands[%d].fabric", i), "%s", problem);
      }
      const std::string field = DifferingFabricField(c.islands(first), c.islands(i));
      if (field.empty()) continue;
      p.Add(absl::StrFormat("islands[%d].%s", i, field),
            "differs from islands[%d] (\"%s\"), whose switch fields describe network \"%s\" for every island on it",
            first, c.islands(first).name(), n.name);
    }
  }
}

}  // namespace hetsim::proto
