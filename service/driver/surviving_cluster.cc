#include "service/driver/surviving_cluster.h"

#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "proto/resolve_cluster.h"
#include "proto/validate_cluster.h"
#include "topology/device_graph.h"

namespace hetsim::driver {
namespace {

using topology::Device;
using topology::DeviceKind;
using topology::Link;

class Survivors {
 public:
  Survivors(const topology::Topology& t, const hetsim::v1::Cluster& c) : t_(t), c_(c) {
    for (int i = 0; i < t.num_islands(); ++i) alive_.emplace_back(t.num_nodes(i), true);
    isolated_.assign(t.num_islands(), false);
    for (const hetsim::v1::InterIslandLink& l : c_.inter_island_links()) {
      bundle_links_.push_back(static_cast<int>(std::max<uint32_t>(1, l.count())));
    }
  }

  void Cordon(int island, int node, const std::string& why) {
    if (!alive_[island][node]) return;
    alive_[island][node] = false;
    result_.removed.push_back(absl::StrFormat("node %s/node%d (%s)", c_.islands(island).name(), node, why));
  }

  absl::Status FailGpu(uint32_t gpu) {
    absl::StatusOr<topology::GpuLocation> at = t_.Locate(static_cast<GpuId>(gpu));
    if (!at.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("failed gpu %d: no such GPU (the cluster has %d)", gpu, t_.num_gpus()));
    }
    Cordon(at->island, at->node, absl::StrFormat("GPU %d failed", gpu));
    return absl::OkStatus();
  }

  absl::Status FailNode(const hetsim::v1::NodeRef& ref) {
    absl::StatusOr<int32_t> island = t_.IslandIndex(ref.island());
    if (!island.ok()) return absl::InvalidArgumentError(absl::StrFormat("failed node: %s", island.status().message()));
    if (ref.node() >= static_cast<uint32_t>(t_.num_nodes(*island))) {
      return absl::InvalidArgumentError(absl::StrFormat("failed node: node %d is outside island \"%s\" (%d nodes)",
                                                        ref.node(), ref.island(), t_.num_nodes(*island)));
    }
    Cordon(*island, static_cast<int>(ref.node()), "node failed");
    return absl::OkStatus();
  }

  absl::Status FailBundle(uint32_t k) {
    if (k >= static_cast<uint32_t>(c_.inter_island_links_size())) {
      return absl::InvalidArgumentError(
          absl::StrFormat("failed inter_island_link %d: the cluster has %d", k, c_.inter_island_links_size()));
    }
    if (bundle_links_[k] == 0) return absl::OkStatus();
    bundle_links_[k] = 0;
    const hetsim::v1::InterIslandLink& l = c_.inter_island_links(k);
    result_.removed.push_back(absl::StrFormat("inter-island link %d (%s-%s, %d links) failed", k, l.island_a(),
                                              l.island_b(), std::max<uint32_t>(1, l.count())));
    return absl::OkStatus();
  }

  absl::Status FailLinkByName(const std::string& name) {
    std::vector<std::string> ends = absl::StrSplit(name, "->");
    if (ends.size() != 2) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "failed link \"%s\": expected two device names joined by ->, e.g. a100/gateway0->h100/gateway0", name));
    }
    if (device_ids_.empty()) {
      for (topology::DeviceId d : IdsBelow<topology::DeviceId>(t_.devices().size())) device_ids_[t_.DeviceName(d)] = d;
    }
    auto src = device_ids_.find(ends[0]), dst = device_ids_.find(ends[1]);
    for (LinkId l : IdsBelow<LinkId>(src != device_ids_.end() && dst != device_ids_.end() ? t_.links().size() : 0)) {
      if (t_.link(l).src == src->second && t_.link(l).dst == dst->second) {
        FailLink(l, /*quiet=*/false);
        return absl::OkStatus();
      }
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("failed link \"%s\": no such link (devices are named like a100/node0/gpu3, a100/node0/nic0, "
                        "a100/gateway0)",
                        name));
  }

  absl::Status FailClass(const std::string& name) {
    int found = -1;
    for (int k = 0; k < topology::kNumLinkClasses; ++k) {
      if (topology::LinkClassName(static_cast<topology::LinkClass>(k)) == name) found = k;
    }
    if (found < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("failed link_class \"%s\": expected NVLINK, PCIE, INFINIBAND, ROCE or ETHERNET", name));
    }
    int count = 0;
    for (LinkId l : IdsBelow<LinkId>(t_.links().size())) {
      if (static_cast<int>(t_.link(l).link_class) != found) continue;
      FailLink(l, /*quiet=*/true);
      ++count;
    }
    result_.removed.push_back(absl::StrFormat("link class %s failed (%d links)", name, count));
    return absl::OkStatus();
  }

  absl::StatusOr<SurvivingCluster> Finish() {
    const int n = t_.num_islands();
    std::vector<int> gpus(n, 0);
    for (int i = 0; i < n; ++i) {
      gpus[i] = static_cast<int>(std::count(alive_[i].begin(), alive_[i].end(), true)) * t_.gpus_per_node(i);
    }
    // Connected parts: islands with GPUs left, joined by bundles with links left.
    std::vector<int> part(n);
    std::iota(part.begin(), part.end(), 0);
    auto root = [&](int i) {
      while (part[i] != i) i = part[i] = part[part[i]];
      return i;
    };
    for (int k = 0; k < c_.inter_island_links_size(); ++k) {
      const int a = *t_.IslandIndex(c_.inter_island_links(k).island_a());
      const int b = *t_.IslandIndex(c_.inter_island_links(k).island_b());
      if (bundle_links_[k] == 0 || gpus[a] == 0 || gpus[b] == 0 || isolated_[a] || isolated_[b]) continue;
      const int ra = root(a), rb = root(b);
      part[std::max(ra, rb)] = std::min(ra, rb);  // the root is the part's first island
    }
    std::vector<int> part_gpus(n, 0);
    for (int i = 0; i < n; ++i) part_gpus[root(i)] += gpus[i];
    int best = -1;
    for (int i = 0; i < n; ++i) {
      if (root(i) == i && part_gpus[i] > 0 && (best < 0 || part_gpus[i] > part_gpus[best])) best = i;
    }
    if (best < 0) return absl::FailedPreconditionError("no GPU survives the failures: nothing to re-plan on");

    SurvivingCluster& out = result_;
    out.cluster = c_;
    out.cluster.clear_islands();
    out.cluster.clear_inter_island_links();
    for (int i = 0; i < n; ++i) {
      if (gpus[i] == 0) continue;
      if (root(i) != best) {
        out.removed.push_back(
            absl::StrFormat("island %s (%d GPUs left) dropped: cut off from the largest connected part",
                            c_.islands(i).name(), gpus[i]));
        continue;
      }
      hetsim::v1::Island* island = out.cluster.add_islands();
      *island = c_.islands(i);
      const uint32_t nodes = static_cast<uint32_t>(gpus[i] / t_.gpus_per_node(i));
      island->set_node_count(nodes);
      if (island->nodes_per_leaf() > nodes) island->set_nodes_per_leaf(nodes);
      out.num_gpus += gpus[i];
    }
    for (int k = 0; k < c_.inter_island_links_size(); ++k) {
      const hetsim::v1::InterIslandLink& l = c_.inter_island_links(k);
      const int a = *t_.IslandIndex(l.island_a()), b = *t_.IslandIndex(l.island_b());
      if (bundle_links_[k] == 0 || gpus[a] == 0 || gpus[b] == 0 || root(a) != best || root(b) != best) continue;
      hetsim::v1::InterIslandLink* kept = out.cluster.add_inter_island_links();
      *kept = l;
      if (bundle_links_[k] != static_cast<int>(std::max<uint32_t>(1, l.count()))) kept->set_count(bundle_links_[k]);
    }
    if (absl::Status s = proto::ValidateCluster(out.cluster, "surviving cluster"); !s.ok()) {
      return absl::InternalError(absl::StrFormat("the surviving cluster is not valid: %s", s.message()));
    }
    return std::move(result_);
  }

 private:
  // One failed directed link, by the rules of the header. `quiet`: no note for links that remove nothing.
  void FailLink(LinkId id, bool quiet) {
    const Link& link = t_.link(id);
    const Device& src = t_.device(link.src);
    const Device& dst = t_.device(link.dst);
    const std::string name = absl::StrFormat("%s->%s", t_.DeviceName(link.src), t_.DeviceName(link.dst));
    if (src.node >= 0 || dst.node >= 0) {
      if (src.node >= 0) Cordon(src.island, src.node, absl::StrFormat("link %s failed", name));
      if (dst.node >= 0) Cordon(dst.island, dst.node, absl::StrFormat("link %s failed", name));
      return;
    }
    if (src.kind == DeviceKind::kGateway && dst.kind == DeviceKind::kGateway) {
      for (int k = 0; k < c_.inter_island_links_size(); ++k) {
        const hetsim::v1::InterIslandLink& l = c_.inter_island_links(k);
        const int a = *t_.IslandIndex(l.island_a()), b = *t_.IslandIndex(l.island_b());
        const bool joins = (a == src.island && b == dst.island) || (a == dst.island && b == src.island);
        if (!joins || bundle_links_[k] == 0 || t_.cluster().inter_island_links[k].bandwidth != link.bandwidth ||
            hetsim::v1::InterNodeFabric_Name(l.fabric()) != topology::LinkClassName(link.link_class)) {
          continue;
        }
        --bundle_links_[k];
        if (!quiet) {
          result_.removed.push_back(absl::StrFormat("one link of inter-island link %d (%s-%s) failed: %d left", k,
                                                    l.island_a(), l.island_b(), bundle_links_[k]));
        }
        return;
      }
      if (!quiet)
        result_.notes.push_back(absl::StrFormat("link %s failed: its inter-island link was already gone", name));
      return;
    }
    const bool to_gateway = src.kind == DeviceKind::kGateway || dst.kind == DeviceKind::kGateway;
    const int island = src.kind == DeviceKind::kGateway ? src.island : dst.island;
    if (to_gateway && GatewayLinks(island) == 1) {
      if (!isolated_[island]) {
        isolated_[island] = true;
        result_.removed.push_back(absl::StrFormat("island %s cut off from the other islands (link %s failed)",
                                                  c_.islands(island).name(), name));
      }
      return;
    }
    if (!quiet) {
      result_.notes.push_back(
          absl::StrFormat("link %s failed inside island %s's fabric: its other paths keep every node reachable", name,
                          c_.islands(src.island).name()));
    }
  }

  // Links from island `i`'s gateway into the island's fabric.
  int GatewayLinks(int i) const {
    int count = 0;
    for (const Link& l : t_.links()) {
      const Device& s = t_.device(l.src);
      const Device& d = t_.device(l.dst);
      if (s.kind == DeviceKind::kGateway && s.island == i && d.island == i && d.kind != DeviceKind::kGateway) ++count;
    }
    return count;
  }

  const topology::Topology& t_;
  const hetsim::v1::Cluster& c_;
  std::vector<std::vector<bool>> alive_;  // [island][node]
  std::vector<bool> isolated_;            // island cut off from its gateway
  std::vector<int> bundle_links_;         // links left per inter-island link
  absl::flat_hash_map<std::string, topology::DeviceId> device_ids_;
  SurvivingCluster result_;
};

}  // namespace

FailedTargets FailedTargetsOf(const hetsim::v1::Faults& faults) {
  FailedTargets out;
  for (const hetsim::v1::Fault& f : faults.faults()) {
    if (f.kind() != hetsim::v1::FAIL) continue;
    switch (f.target_case()) {
      case hetsim::v1::Fault::kGpu: out.gpus.push_back(f.gpu()); break;
      case hetsim::v1::Fault::kNode: out.nodes.push_back(f.node()); break;
      case hetsim::v1::Fault::kLinkClass: out.link_classes.push_back(f.link_class()); break;
      case hetsim::v1::Fault::kLink: out.links.push_back(f.link()); break;
      case hetsim::v1::Fault::kInterIslandLink: out.inter_island_links.push_back(f.inter_island_link()); break;
      case hetsim::v1::Fault::TARGET_NOT_SET: break;
    }
  }
  return out;
}

absl::StatusOr<SurvivingCluster> BuildSurvivingCluster(const hetsim::v1::Cluster& cluster,
                                                       const FailedTargets& failed) {
  HETSIM_ASSIGN_OR_RETURN(spec::ClusterSpec resolved, proto::ResolveCluster(cluster, ""));
  const topology::Topology topo = topology::Topology::Build(std::move(resolved));
  HETSIM_RETURN_IF_ERROR(topo.CheckComplete());
  Survivors s(topo, cluster);
  for (uint32_t gpu : failed.gpus) {
    HETSIM_RETURN_IF_ERROR(s.FailGpu(gpu));
  }
  for (const hetsim::v1::NodeRef& node : failed.nodes) {
    HETSIM_RETURN_IF_ERROR(s.FailNode(node));
  }
  for (uint32_t k : failed.inter_island_links) {
    HETSIM_RETURN_IF_ERROR(s.FailBundle(k));
  }
  for (const std::string& link : failed.links) {
    HETSIM_RETURN_IF_ERROR(s.FailLinkByName(link));
  }
  for (const std::string& cls : failed.link_classes) {
    HETSIM_RETURN_IF_ERROR(s.FailClass(cls));
  }
  return s.Finish();
}

}  // namespace hetsim::driver
