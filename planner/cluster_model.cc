#include "planner/cluster_model.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/units.h"
#include "sim/collectives/estimate.h"
#include "topology/ecmp_collisions.h"

namespace hetsim::planner {

std::vector<MeshShape> SubmeshShapes(int nodes, int gpus_per_node) {
  std::vector<MeshShape> shapes;
  for (int m = 1; m < gpus_per_node; m *= 2) {
    if (gpus_per_node % m == 0) shapes.push_back({1, m});
  }
  shapes.push_back({1, gpus_per_node});
  for (int n = 2; n <= nodes; ++n) shapes.push_back({n, gpus_per_node});
  return shapes;
}

namespace {

absl::StatusOr<LinkFigures> RouteFigures(topology::Router& router, GpuId a, GpuId b) {
  HETSIM_ASSIGN_OR_RETURN(const topology::Route* route, router.GpuRoute(a, b));
  return LinkFigures{router.BottleneckBytesPerSecond(*route), router.Latency(*route)};
}

// The rings over the first `busy` GPUs of a node, `members` consecutive GPUs each, all running: every hop
// is one flow and gets the smallest capacity / flows over the links its ring crosses (the ring waits for
// its slowest hop, as the simulator's does); the latency is the longest hop's.
absl::StatusOr<LinkFigures> ConcurrentRingFigures(topology::Router& router, GpuId g0, int members, int busy) {
  absl::flat_hash_map<LinkId, int> flows;
  Time latency = 0;
  for (int first = 0; first + members <= busy; first += members) {
    for (int i = 0; i < members; ++i) {
      const GpuId from(g0.value() + first + i), to(g0.value() + first + (i + 1) % members);
      HETSIM_ASSIGN_OR_RETURN(const topology::Route* route, router.GpuRoute(from, to));
      latency = std::max(latency, router.Latency(*route));
      for (LinkId l : *route) ++flows[l];
    }
  }
  double rate = std::numeric_limits<double>::infinity();
  for (const auto& [l, count] : flows)
    rate = std::min(rate, router.topology().link(l).bandwidth.bytes_per_second() / count);
  return LinkFigures{rate, latency};
}

// IslandModel::intra_rings for a node whose GPU pairs differ (topology/intra_node.cc); empty for
// NVSwitch and single-switch PCIe nodes.
absl::StatusOr<std::vector<LinkFigures>> IntraRingTable(topology::Router& router, const spec::IslandSpec& isl,
                                                        GpuId g0) {
  const spec::IntraNodeFabric f = isl.node.fabric;
  const int gpus = isl.node.gpus_per_node;
  std::vector<LinkFigures> table;
  if (f != spec::IntraNodeFabric::kPcieTree && f != spec::IntraNodeFabric::kNvlinkBridge &&
      f != spec::IntraNodeFabric::kHybridCubeMesh) {
    return table;
  }
  table.resize((gpus + 1) * (gpus + 1));
  for (int k = 2; k <= gpus; ++k) {
    for (int m = k; m <= gpus; ++m) {
      HETSIM_ASSIGN_OR_RETURN(table[k * (gpus + 1) + m], ConcurrentRingFigures(router, g0, k, m));
    }
  }
  return table;
}

int NicsPerNode(const spec::IslandSpec& isl) { return std::max(1, isl.nics_per_node); }

// The first switch tier above the NICs as topology/device_graph.cc builds it: a CLOS island's ToRs
// (to its pod switches), a FAT_TREE island's leaves (to one spine per NIC index). None for other
// fabrics or a single switch.
std::optional<IslandModel::TorUplinks> TorUplinksOf(const spec::IslandSpec& isl, int nodes) {
  const int nics_per_node = NicsPerNode(isl);
  const double nic_bps = isl.nic_bandwidth.bytes_per_second();
  IslandModel::TorUplinks u;
  if (isl.topology == spec::FabricTopology::kFatTree) {
    u.nodes_per_rack = isl.nodes_per_leaf == 0 ? nodes : std::min(nodes, isl.nodes_per_leaf);
    if (u.nodes_per_rack >= nodes) return std::nullopt;
    u.uplinks = nics_per_node;
    u.uplink_bytes_per_s = u.nodes_per_rack * nic_bps / isl.oversubscription;
    return u;
  }
  if (isl.topology != spec::FabricTopology::kClos) return std::nullopt;
  const spec::ClosSpec& f = isl.clos;
  u.nodes_per_rack = f.nodes_per_rack;
  u.tors_per_rack = f.rail_optimized ? nics_per_node : 1;
  if ((nodes + u.nodes_per_rack - 1) / u.nodes_per_rack * u.tors_per_rack <= 1) return std::nullopt;
  u.uplinks = f.pod_switches;
  const int nics_per_tor = u.nodes_per_rack * nics_per_node / u.tors_per_rack;
  u.uplink_bytes_per_s = nics_per_tor * nic_bps / f.rack_oversubscription / u.uplinks;
  return u;
}

// The aggregation tier of a CLOS island of more than one pod, as topology/device_graph.cc builds it.
std::optional<IslandModel::PodTier> PodTierOf(const spec::IslandSpec& isl, int nodes) {
  if (isl.topology != spec::FabricTopology::kClos) return std::nullopt;
  const spec::ClosSpec& f = isl.clos;
  IslandModel::PodTier tier;
  tier.nodes_per_pod = f.nodes_per_rack * f.racks_per_pod;
  if (nodes <= tier.nodes_per_pod) return std::nullopt;
  tier.links = f.pod_switches * f.aggregation_switches;
  tier.node_bytes_per_s = NicsPerNode(isl) * isl.nic_bandwidth.bytes_per_second();
  tier.oversubscription = f.aggregation_oversubscription;
  return tier;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ClusterModel>> ClusterModel::Create(spec::ClusterSpec cluster, spec::DType dtype) {
  std::unique_ptr<ClusterModel> model(new ClusterModel());
  model->topology_ = std::make_unique<topology::Topology>(topology::Topology::Build(std::move(cluster)));
  HETSIM_RETURN_IF_ERROR(model->topology_->CheckComplete());
  const topology::Topology& t = *model->topology_;
  topology::Router router(t);
  for (int i = 0; i < t.num_islands(); ++i) {
    const spec::IslandSpec& isl = t.island(i);
    IslandModel im;
    im.index = i;
    im.name = isl.name;
    im.gpu_type = isl.gpu.name;
    im.nodes = t.num_nodes(i);
    im.gpus_per_node = t.gpus_per_node(i);
    im.hbm_bytes = static_cast<int64_t>(isl.gpu.hbm_capacity.value());
    // The cluster file's path and GPU type, as the simulator names them (IslandSpec.gpu_where).
    const std::string where =
        isl.gpu_where.empty() ? absl::StrFormat("cluster: gpu_types[\"%s\"]", isl.gpu.name) : isl.gpu_where;
    absl::StatusOr<workload::GpuCompute> gc = workload::GpuCompute::Create(isl.gpu, dtype, where, t.cluster().ideal);
    if (!gc.ok()) return gc.status();
    im.gpu = *std::move(gc);
    im.peak_flop_per_s = im.gpu->peak_flop_per_s();
    im.nics_per_node = NicsPerNode(isl);
    im.node_nic_bytes_per_s = isl.nic_bandwidth.bytes_per_second() * im.nics_per_node;
    im.nic_link_bytes_per_s = isl.nic_bandwidth.bytes_per_second();
    im.tor_uplinks = TorUplinksOf(isl, im.nodes);
    im.pod_tier = PodTierOf(isl, im.nodes);
    HETSIM_ASSIGN_OR_RETURN(GpuId g0, t.GpuIdOf(i, 0, 0));
    if (const topology::DeviceId nic = t.nic_of(g0); nic != topology::kNoDevice) {
      if (const LinkId up = t.nic_uplink(nic); up != topology::kNoLink) {
        im.nic_link_bytes_per_s = t.link(up).bandwidth.bytes_per_second();
      }
    }
    if (im.gpus_per_node > 1) {
      HETSIM_ASSIGN_OR_RETURN(LinkFigures f, RouteFigures(router, g0, GpuId(g0.value() + 1)));
      im.intra_node = f;
      HETSIM_ASSIGN_OR_RETURN(im.intra_rings, IntraRingTable(router, isl, g0));
      im.intra_node = im.IntraRing(im.gpus_per_node, im.gpus_per_node);
    }
    if (im.nodes > 1) {
      HETSIM_ASSIGN_OR_RETURN(LinkFigures f, RouteFigures(router, g0, GpuId(g0.value() + im.gpus_per_node)));
      im.inter_node = f;
    }
    model->islands_.push_back(std::move(im));
  }
  const int n = t.num_islands();
  model->boundary_.resize(n * n);
  model->parallel_links_.assign(n * n, 1);
  for (const spec::InterIslandLinkSpec& l : t.cluster().inter_island_links) {
    model->parallel_links_[l.island_a * n + l.island_b] = model->parallel_links_[l.island_b * n + l.island_a] = l.count;
  }
  model->shared_network_.assign(n * n, false);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      const int net = t.island(a).network;
      model->shared_network_[a * n + b] = a != b && net >= 0 && net == t.island(b).network;
    }
  }
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      const IslandModel& ia = model->islands_[a];
      LinkFigures f;
      if (a != b) {
        HETSIM_ASSIGN_OR_RETURN(GpuId ga, t.GpuIdOf(a, 0, 0));
        HETSIM_ASSIGN_OR_RETURN(GpuId gb, t.GpuIdOf(b, 0, 0));
        HETSIM_ASSIGN_OR_RETURN(f, RouteFigures(router, ga, gb));
      } else {
        f = ia.nodes > 1 ? ia.inter_node : ia.intra_node;
      }
      model->boundary_[a * n + b] = f;
    }
  }
  return model;
}

const LinkFigures& IslandModel::IntraRing(int members, int busy_gpus) const {
  if (intra_rings.empty() || members < 2 || members > gpus_per_node) return intra_node;
  return intra_rings[members * (gpus_per_node + 1) + std::clamp(busy_gpus, members, gpus_per_node)];
}

int ClusterModel::total_gpus() const {
  int total = 0;
  for (const IslandModel& i : islands_) total += i.gpus();
  return total;
}

Time ClusterModel::BoundaryTime(int from, int to, double bytes, MeshShape sender) const {
  const LinkFigures& f = BoundaryLink(from, to);
  if (bytes <= 0 || f.bytes_per_s <= 0) return 0;
  const IslandModel& im = islands_[from];
  // Islands on one flat network reach each other as nodes of one island do: through every sending NIC.
  const bool through_nics = from == to ? im.nodes > 1 : shared_network_[from * num_islands() + to];
  int paths;
  if (from != to && !through_nics) {
    paths = parallel_links_[from * num_islands() + to];
  } else if (through_nics) {
    // On a flat network of node types with different NICs, the side with fewer NICs per node.
    paths = sender.nodes * std::min({sender.gpus_per_node, im.nics_per_node, islands_[to].nics_per_node});
  } else {
    paths = sender.gpus();
  }
  paths = std::max(1, std::min(paths, sender.gpus()));
  Time transfer = TransferTime(Bytes(bytes), Bandwidth(f.bytes_per_s * paths));
  // ECMP over the ToR uplinks, when the sender fills whole racks (its successor is then on others).
  if (from == to && im.tor_uplinks && sender.nodes >= im.tor_uplinks->nodes_per_rack) {
    const IslandModel::TorUplinks& u = *im.tor_uplinks;
    const int tors_used = std::min(u.tors_per_rack, sender.gpus_per_node);
    const int flows_per_tor = u.nodes_per_rack * ((sender.gpus_per_node + tors_used - 1) / tors_used);
    const int tors = (sender.nodes + u.nodes_per_rack - 1) / u.nodes_per_rack * tors_used;
    const double busiest = topology::CachedExpectedMaxLoad(flows_per_tor, u.uplinks, tors);
    transfer =
        std::max(transfer, TransferTime(Bytes(bytes / sender.gpus() * busiest), Bandwidth(u.uplink_bytes_per_s)));
  }
  return f.latency + transfer;
}

Time ClusterModel::PlacedBoundaryTime(int from, int to, double bytes, PlacedMesh sender, PlacedMesh receiver) const {
  const Time unplaced = BoundaryTime(from, to, bytes, sender.shape);
  const IslandModel& im = islands_[from];
  const int flows = sender.shape.gpus();
  if (from != to || !im.pod_tier || bytes <= 0 || flows <= 0 || receiver.shape.gpus() <= 0) return unplaced;
  const IslandModel::PodTier& tier = *im.pod_tier;
  // Flow k goes from the k-th GPU of the sending mesh to the matching GPU of the receiving one; count
  // the flows leaving and entering each pod.
  const int pods = (im.nodes + tier.nodes_per_pod - 1) / tier.nodes_per_pod;
  std::vector<int> up(pods, 0), down(pods, 0);
  for (int k = 0; k < flows; ++k) {
    const int s = (sender.first_node + k / sender.shape.gpus_per_node) / tier.nodes_per_pod;
    const int r_gpu = static_cast<int>(static_cast<int64_t>(k) * receiver.shape.gpus() / flows);
    const int r = (receiver.first_node + r_gpu / receiver.shape.gpus_per_node) / tier.nodes_per_pod;
    if (s == r || s >= pods || r >= pods) continue;
    ++up[s];
    ++down[r];
  }
  Time busiest = 0;
  for (int p = 0; p < pods; ++p) {
    const int pod_nodes = std::min(tier.nodes_per_pod, im.nodes - p * tier.nodes_per_pod);
    const double link_bps = pod_nodes * tier.node_bytes_per_s / tier.oversubscription / tier.links;
    for (int count : {up[p], down[p]}) {
      if (count == 0) continue;
      busiest =
          std::max(busiest, TransferTime(Bytes(bytes / flows * topology::CachedExpectedMaxLoad(count, tier.links, 1)),
                                         Bandwidth(link_bps)));
    }
  }
  return std::max(unplaced, BoundaryLink(from, to).latency + busiest);
}

int StageGroups::Size(workload::CollectiveGroup group) const {
  const int etp = ExpertTensorParallel();
  switch (group) {
    case workload::CollectiveGroup::kTensor: return tensor_parallel;
    case workload::CollectiveGroup::kExpert: return expert_parallel;
    case workload::CollectiveGroup::kExpertTensor: return etp;
    case workload::CollectiveGroup::kExpertAndTensor: return etp * expert_parallel;
    case workload::CollectiveGroup::kStage: return tensor_parallel * context_parallel * data_parallel;
  }
  return 1;
}

int StageGroups::Span(workload::CollectiveGroup group) const {
  return group == workload::CollectiveGroup::kExpert ? ExpertTensorParallel() * expert_parallel : Size(group);
}

int StageGroups::MembersPerNode(workload::CollectiveGroup group) const {
  const int n = Size(group), span = Span(group);
  // Blocks of `span` GPUs start at multiples of span, nodes at multiples of gpus_per_node: a node cuts
  // a block into pieces that are multiples of their gcd, the smallest piece being the gcd itself.
  const int piece = std::gcd(span, std::max(1, shape.gpus_per_node));
  return piece == span ? n : std::max(1, piece * n / span);
}

double ClusterModel::NicShare(const IslandModel& im, int mesh_gpus_per_node, bool link) const {
  // GPU g of a node is wired to NIC g x nics / gpus (topology/device_graph.cc); a mesh on the first
  // GPUs of each node shares each NIC among the mesh's GPUs wired to it.
  const int nics = std::max(1, im.nics_per_node);
  const int gpus_per_nic = std::max(1, im.gpus_per_node / nics);
  const double nic = link ? im.nic_link_bytes_per_s : im.node_nic_bytes_per_s / nics;
  return nic / std::max(1, std::min(mesh_gpus_per_node, gpus_per_nic));
}

Time ClusterModel::CollectiveTime(int island, const StageGroups& groups, const workload::StageCollective& c) const {
  const IslandModel& im = islands_[island];
  const int n = groups.Size(c.group);
  const int local = groups.MembersPerNode(c.group);
  // Every GPU of a node runs its own group's collective at once: they share the node's NICs (and, on a
  // PCIe-tree node, what the rings inside it cross).
  const LinkFigures& ring = im.IntraRing(std::min(n, local), groups.shape.gpus_per_node);
  const double bw = ring.bytes_per_s;
  const Seconds lat(TimeToSeconds(ring.latency));
  // An all-to-all's flows, every GPU's to each peer on the other nodes (NCCL's grouped sends and receives)
  // on every group at once, fill the NIC: at what the NIC carries (as a ring rarely does, its own pace
  // binding first).
  const double nic_bw = NicShare(im, groups.shape.gpus_per_node, c.op == CollectiveOp::kAllToAll);
  if (n <= 1) return 0;
  const Bytes bytes(c.bytes);
  Seconds seconds(0);
  if (local >= n || nic_bw <= 0) {
    if (bw <= 0) return 0;
    const Bandwidth rate(bw);
    switch (c.op) {
      case CollectiveOp::kAllReduce: seconds = collectives::RingAllReduceSeconds(n, bytes, rate, lat); break;
      case CollectiveOp::kAllGather:
      case CollectiveOp::kReduceScatter: seconds = collectives::RingAllGatherSeconds(n, bytes, rate, lat); break;
      case CollectiveOp::kAllToAll: seconds = collectives::DirectAllToAllSeconds(n, bytes, rate, lat); break;
      case CollectiveOp::kSendRecv:  // layers issue neither (sim/workload/layer_cost_internal.h)
      case CollectiveOp::kBroadcast: break;
    }
    return c.count * SecondsToTime(seconds);
  }
  // Across nodes: `local` members in each of `nodes` nodes (the fewest a node holds of one group, which
  // sets its pace). Rings reduce or gather inside the node and run one inter-node ring per local rank
  // (a gather or reduce-scatter is half an all-reduce); an all-to-all sends (local - 1)/n of its buffer
  // over NVLink and the rest over the GPU's NIC share.
  const int nodes = std::max(1, n / local);
  const double intra_bw = std::max(1.0, bw);
  const Seconds inter_lat(TimeToSeconds(im.inter_node.latency));
  const Bandwidth intra_rate(intra_bw), nic_rate(nic_bw);
  switch (c.op) {
    case CollectiveOp::kAllReduce:
      seconds = collectives::HierarchicalAllReduceSeconds(local, nodes, bytes, intra_rate, lat, nic_rate, inter_lat);
      break;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
      seconds = collectives::RingAllGatherSeconds(local, bytes, intra_rate, lat) +
                collectives::RingAllGatherSeconds(nodes, Bytes(c.bytes / local), nic_rate, inter_lat);
      break;
    case CollectiveOp::kAllToAll:
      seconds = Seconds(inter_lat.value() +
                        std::max(c.bytes * (local - 1) / n / intra_bw, c.bytes * (n - local) / n / nic_bw));
      break;
    case CollectiveOp::kSendRecv:
    case CollectiveOp::kBroadcast: break;
  }
  return c.count * SecondsToTime(seconds);
}

Time ClusterModel::CollectivesTime(int island, const StageGroups& groups,
                                   const std::vector<workload::StageCollective>& collectives) const {
  Time total = 0;
  for (const workload::StageCollective& c : collectives) total += CollectiveTime(island, groups, c);
  return total;
}

Time ClusterModel::GradSyncTime(int island, MeshShape shape, int stride, double bytes) const {
  const int dp = shape.gpus() / std::max(1, stride);
  if (dp <= 1 || bytes <= 0) return 0;
  const IslandModel& im = islands_[island];
  const Seconds intra_lat(TimeToSeconds(im.intra_node.latency));
  // A group's members in one node (one where the stride does not divide the node: some node then
  // holds a single member), and the nodes it spans.
  const int gpn = std::max(1, shape.gpus_per_node);
  const int local = gpn % std::max(1, stride) == 0 ? gpn / std::max(1, stride) : 1;
  const int nodes = std::max(1, dp / local);
  if (nodes == 1)
    return SecondsToTime(
        collectives::RingAllReduceSeconds(dp, Bytes(bytes), Bandwidth(im.intra_node.bytes_per_s), intra_lat));
  // Every GPU of a node runs its own inter-node ring at the same time: they share the node's NICs.
  const double inter_bw = NicShare(im, shape.gpus_per_node);
  return SecondsToTime(collectives::HierarchicalAllReduceSeconds(
      local, nodes, Bytes(bytes), Bandwidth(std::max(1.0, im.intra_node.bytes_per_s)), intra_lat, Bandwidth(inter_bw),
      TimeAsSeconds(im.inter_node.latency)));
}

}  // namespace hetsim::planner
