// What the planner needs to know about a cluster, in one place: per island the GPU (its cost model,
// memory, peak), the node shape, and alpha-beta link figures taken from real routes of the device graph
// (inside a node, between two nodes, between islands). From them it prices, without simulating, the
// tensor-parallel collectives of a stage, the data-parallel gradient synchronisation and the
// activation transfer across a stage boundary.
//
// Boundary transfer model (C(i) of HAPT Eq. 13): the microbatch's boundary activations (every data-
// parallel replica's share) leave the sending stage as one flow per GPU (the executor splits a boundary
// over replicas and tensor-parallel ranks) along a representative route between the two stages'
// islands (for one island: between two of its nodes, or inside the node when it has only one), over
//   p = min(sending GPUs, parallel paths)
// paths in parallel: the inter-island links between two islands, the sending mesh's NICs inside an
// island or between two islands on one flat network (Island.network), its GPUs when the island is one
// node:
//   c = route latency + bytes / (p x route bottleneck bandwidth).
// Inside a CLOS or FAT_TREE island whose sending mesh fills whole racks (leaves), the flows (one per
// sending GPU) also hash over their ToR's (leaf's) uplinks, and the transfer waits for the busiest
// uplink of all the sending ToRs:
//   c = route latency + max(bytes / (p x bottleneck), bytes / flows x E[max load] / uplink bandwidth),
// E[max load] from balls into bins (ecmp_collisions.h). Pod-tier crossings need the stages' placement,
// which the DP does not know: PlacedBoundaryTime prices them for a given plan.
#ifndef HETSIM_PLANNER_CLUSTER_MODEL_H_
#define HETSIM_PLANNER_CLUSTER_MODEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/spec/cluster.h"
#include "base/spec/defaults.h"
#include "base/spec/dtype.h"
#include "base/time.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/stage_cost.h"
#include "topology/device_graph.h"
#include "topology/routing.h"

namespace hetsim::planner {

// A submesh of one island: `nodes` whole or partial nodes, `gpus_per_node` GPUs on each.
struct MeshShape {
  int nodes = 1;
  int gpus_per_node = 1;
  int gpus() const { return nodes * gpus_per_node; }
  bool operator==(const MeshShape&) const = default;
};

// Alpa's submesh shapes for an N x M island: (1, 2^p) for every power of two dividing M, (1, M), and
// (n, M) for n = 2..N; ascending by GPU count.
std::vector<MeshShape> SubmeshShapes(int nodes, int gpus_per_node);

struct LinkFigures {
  double bytes_per_s = 0;  // bottleneck of the route
  Time latency = 0;        // whole route
};

struct IslandModel {
  int index = 0;  // into Cluster.islands
  std::string name;
  std::string gpu_type;
  int nodes = 0;
  int gpus_per_node = 0;
  int gpus() const { return nodes * gpus_per_node; }
  int64_t hbm_bytes = 0;                    // per GPU
  double peak_flop_per_s = 0;               // per GPU, compute dtype
  std::optional<workload::GpuCompute> gpu;  // always set by ClusterModel::Create
  LinkFigures intra_node;                   // GPU to GPU inside a node (zero when one GPU per node)
  // PCIe-tree nodes (NVLink bridges, the hybrid cube-mesh, no_p2p) only, where pairs differ: per ring
  // size k and GPUs busy per node m, [k * (gpus_per_node + 1) + m], what each hop of a ring over k
  // consecutive GPUs reaches while the m / k rings over the node's first m GPUs run at once (its slowest
  // hop; links the rings share, as no_p2p's host memory, split). Empty elsewhere: every pair is alike.
  std::vector<LinkFigures> intra_rings;
  // The figure a ring of `members` consecutive GPUs runs at with `busy_gpus` GPUs of the node busy.
  const LinkFigures& IntraRing(int members, int busy_gpus) const;
  LinkFigures inter_node;           // GPU to GPU on two nodes (zero when one node)
  double node_nic_bytes_per_s = 0;  // all NICs of a node, one direction
  int nics_per_node = 1;
  // One NIC into the fabric as the simulator's link carries it (its line rate x the island's NCCL
  // bandwidth efficiency, an ETHERNET island's socket streams' cap included; topology::Link::bandwidth):
  // what collectives whose flows fill the NIC get (an all-to-all's, many rings'); the line rate where the
  // node has no NIC link.
  double nic_link_bytes_per_s = 0;
  // A CLOS or FAT_TREE island with more than one ToR (leaf): what a boundary's flows hash over on
  // their way up.
  struct TorUplinks {
    int nodes_per_rack = 1;
    int tors_per_rack = 1;          // nics_per_node when rail-optimised
    int uplinks = 1;                // per ToR (pod switches)
    double uplink_bytes_per_s = 0;  // each
  };
  std::optional<TorUplinks> tor_uplinks;
  // A CLOS island of more than one pod: the aggregation tier a boundary between pods crosses.
  struct PodTier {
    int nodes_per_pod = 1;
    int links = 1;                // per pod, pod switches x aggregation switches
    double node_bytes_per_s = 0;  // a node's NICs; a pod's links carry its nodes' / oversubscription
    double oversubscription = 1;
  };
  std::optional<PodTier> pod_tier;
};

// Where a stage sits, for pricing a boundary of a given plan (the DP does not know it).
struct PlacedMesh {
  MeshShape shape;
  int first_node = 0;
};

// How a stage (its parallelism, spec::StageParallelism) on a mesh shape forms the groups of its layer
// collectives, as the simulator lays them out (sim/executor/setup.h GroupsOf): TP consecutive GPUs; for
// the experts ETP consecutive GPUs sharing an expert, EP groups of GPUs ETP apart, and blocks of ETP x
// EP holding every expert once.
struct StageGroups : spec::StageParallelism {
  StageGroups() = default;
  StageGroups(MeshShape mesh_shape, const spec::StageParallelism& stage)
      : spec::StageParallelism(stage), shape(mesh_shape) {}
  MeshShape shape;
  int context_parallel = 1;  // the plan's CP degree (CollectiveGroup::kStage spans TP x CP x DP)
  // The GPUs of one group of `group`, and how many consecutive GPUs of the mesh one group spans.
  int Size(workload::CollectiveGroup group) const;
  int Span(workload::CollectiveGroup group) const;
  // The fewest members of one group of `group` in one node: Size when every group fits in a node.
  int MembersPerNode(workload::CollectiveGroup group) const;
};

class ClusterModel {
 public:
  // `cluster` resolved (proto::ResolveCluster at the edge). `dtype` is the model's compute dtype.
  static absl::StatusOr<std::unique_ptr<ClusterModel>> Create(spec::ClusterSpec cluster, spec::DType dtype);

  const topology::Topology& topology() const { return *topology_; }
  const std::vector<IslandModel>& islands() const { return islands_; }
  const IslandModel& island(int i) const { return islands_[i]; }
  int num_islands() const { return static_cast<int>(islands_.size()); }
  int total_gpus() const;

  // Activation transfer of `bytes` from a stage on `sender` of island `from` to one on island `to`.
  Time BoundaryTime(int from, int to, double bytes, MeshShape sender) const;
  // The same for a placed pair of stages: inside a CLOS island, flows between pods also wait for the
  // busiest aggregation link of the sending pod (up) and of the receiving pod (down), a partial pod
  // having fewer nodes' bandwidth behind its links.
  Time PlacedBoundaryTime(int from, int to, double bytes, PlacedMesh sender, PlacedMesh receiver) const;
  const LinkFigures& BoundaryLink(int from, int to) const { return boundary_[from * num_islands() + to]; }
  // Whether islands `a` and `b` (a != b) sit on one flat network (Island.network): no link of their own
  // joins them, each node's NICs reach the other's through the network's switches.
  bool SharesNetwork(int a, int b) const { return shared_network_[a * num_islands() + b]; }

  // A stage's layer collectives, forward or backward, each on its group (StageGroups); CollectiveTime
  // prices one entry (all its calls).
  Time CollectiveTime(int island, const StageGroups& groups, const workload::StageCollective& collective) const;
  Time CollectivesTime(int island, const StageGroups& groups,
                       const std::vector<workload::StageCollective>& collectives) const;
  // Data-parallel gradient synchronisation of `bytes` per GPU over groups of the stage's GPUs `stride`
  // apart (TP for the dense parameters' DP x CP groups, ETP x EP for the experts' expert-data-parallel
  // groups), every group at once: ring inside a node, hierarchical (intra-node reduce-scatter,
  // inter-node rings sharing the node's NICs) across.
  Time GradSyncTime(int island, MeshShape shape, int stride, double bytes) const;
  // The inter-node bandwidth each GPU of a mesh with `mesh_gpus_per_node` GPUs in each node of `im`
  // gets when all of them send at once: its NIC's, shared with the mesh's other GPUs wired to it.
  // At the NIC's line rate; with `link` at what the simulator's NIC link carries (nic_link_bytes_per_s).
  double NicShare(const IslandModel& im, int mesh_gpus_per_node, bool link = false) const;

 private:
  ClusterModel() = default;
  std::unique_ptr<topology::Topology> topology_;
  std::vector<IslandModel> islands_;
  std::vector<LinkFigures> boundary_;  // num_islands^2, row = from
  std::vector<int> parallel_links_;    // num_islands^2: inter-island links joining the pair (>= 1)
  std::vector<bool> shared_network_;   // num_islands^2: two islands on one flat network (Island.network)
};

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_CLUSTER_MODEL_H_
