// Collectives the executor times in closed form (tensor- and expert-parallel collectives inside a
// compute node's duration) and the load they put on the links: each distinct collective is simulated
// once alone on the flow-level network (cached), its per-link bytes and busy time kept, and copied to
// every other replica's group by mapping the GPUs (and their node switches and NICs) position by
// position; a group that does not map (a conflicting or missing device, a fabric switch on the path)
// is simulated itself. The report adds these loads to the flow counters, so that NVLink shows the
// tensor-parallel traffic (docs/metrics.md, "Link utilisation").
//
//   CollectiveTimer timer(topology, router, NetworkMode::kMaxMinFair);
//   auto t = timer.TimeOf(CollectiveOp::kAllReduce, {0, 1, 2, 3}, 64 << 20);    // cached
//   auto load = timer.LoadOf(CollectiveOp::kAllReduce, {4, 5, 6, 7}, 64 << 20);  // per link
#ifndef HETSIM_SIM_EXECUTOR_COLLECTIVE_LOAD_H_
#define HETSIM_SIM_EXECUTOR_COLLECTIVE_LOAD_H_

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "base/time.h"
#include "sim/collectives/collective.h"
#include "sim/engine/simulator.h"
#include "sim/network/network.h"
#include "topology/device_graph.h"
#include "topology/routing.h"

namespace hetsim::executor {

// Bytes and busy time one link carries, summed over some collectives.
struct LinkLoad {
  LinkId link;
  int64_t bytes = 0;
  Time busy_time = 0;
};

// Whether the timer may copy one group's result to an isomorphic group instead of simulating it
// (exact: the devices correspond one to one and every link it maps onto has the same capacity and
// latency); kNone simulates every group, which the tests use to show the reports are byte-identical.
enum class ReplicaReuse { kMapped, kNone };

// The same collective on every group of a list, each alone: the slowest group's time and the groups'
// loads summed by link.
struct GroupsTiming {
  Time slowest = 0;
  std::vector<LinkLoad> load;
};

// Adds `load` x `times` into `into` (sorted by link, one entry per link).
void AddLoad(std::vector<LinkLoad>& into, const std::vector<LinkLoad>& load, int64_t times);
// Entries in any order, links repeated: sorted by link, one entry per link.
std::vector<LinkLoad> SumByLink(std::vector<LinkLoad> loads);

class CollectiveTimer {
 public:
  CollectiveTimer(const topology::Topology& topology, topology::Router& router, network::NetworkMode mode,
                  ReplicaReuse reuse = ReplicaReuse::kMapped)
      : topology_(topology), router_(router), mode_(mode), reuse_(reuse) {}

  // The collective alone on the network: from its first flow to its last byte. 0 for one GPU.
  absl::StatusOr<Time> TimeOf(CollectiveOp op, const std::vector<GpuId>& gpus, int64_t bytes);
  // Its per-link load (sorted by link), mapped from an isomorphic group simulated before when possible.
  absl::StatusOr<std::vector<LinkLoad>> LoadOf(CollectiveOp op, const std::vector<GpuId>& gpus, int64_t bytes);
  // Every group alone (a stage's TP groups, one per replica): groups isomorphic to one simulated
  // before reuse its time and load (ReplicaReuse::kMapped), the others are simulated.
  absl::StatusOr<GroupsTiming> EachGroup(CollectiveOp op, const std::vector<std::vector<GpuId>>& groups, int64_t bytes);
  // Every group at once, as a stage's ranks run them (an MoE layer's token all-to-all: NCCL's grouped sends
  // and receives on every expert-parallel group at the same time), timed per set of groups that share a
  // node (its NICs, its PCIe tree): the groups of a set simulated together, sets apart (they share no
  // node's links), a set isomorphic to one simulated before mapped from it (ReplicaReuse::kMapped). A set
  // of one group is EachGroup's. The slowest set's time and the loads summed by link.
  absl::StatusOr<GroupsTiming> EachNodeSharingSet(CollectiveOp op, const std::vector<std::vector<GpuId>>& groups,
                                                  int64_t bytes);
  // Groups (sets of them) SetTimed answered by mapping a template's result, and by simulating them.
  int64_t mapped_groups() const { return mapped_groups_; }
  int64_t simulated_groups() const { return simulated_groups_; }
  // The same collective on several disjoint groups at once (a stage's data-parallel groups, one per
  // TP rank, sharing the nodes' NICs): from the first flow to the last byte of any group, and the
  // exact load of all of them.
  absl::StatusOr<Time> ConcurrentTimeOf(CollectiveOp op, const std::vector<std::vector<GpuId>>& groups, int64_t bytes);
  absl::StatusOr<std::vector<LinkLoad>> ConcurrentLoadOf(CollectiveOp op, const std::vector<std::vector<GpuId>>& groups,
                                                         int64_t bytes);

 private:
  struct Timed {
    Time time = 0;
    std::vector<LinkLoad> load;
  };
  using Key = std::tuple<int, int64_t, std::vector<std::vector<GpuId>>>;
  absl::StatusOr<const Timed*> Simulate(CollectiveOp op, const std::vector<std::vector<GpuId>>& groups, int64_t bytes);
  // Groups at once (one group: alone): mapped from the template of their (op, bytes, group sizes) when
  // they correspond GPU by GPU, else simulated (and the template when it is the first).
  absl::StatusOr<Timed> SetTimed(CollectiveOp op, const std::vector<std::vector<GpuId>>& set, int64_t bytes);
  // `load` of group `from` moved onto group `to`, or false when the groups' devices do not correspond.
  bool MapLoad(const std::vector<GpuId>& from, const std::vector<GpuId>& to, const std::vector<LinkLoad>& load,
               std::vector<LinkLoad>& out);
  const absl::flat_hash_map<std::pair<topology::DeviceId, topology::DeviceId>, LinkId>& LinkIndex();

  const topology::Topology& topology_;
  topology::Router& router_;
  network::NetworkMode mode_;
  ReplicaReuse reuse_;
  int64_t mapped_groups_ = 0;
  int64_t simulated_groups_ = 0;
  engine::Simulator simulator_;                // the clock of network_, carried on from one collective to the next
  std::unique_ptr<network::Network> network_;  // built on first use
  std::map<Key, Timed> cache_;
  // First set simulated per (op, bytes, its groups' sizes): the template other sets are mapped from.
  std::map<std::tuple<int, int64_t, std::vector<size_t>>, std::vector<std::vector<GpuId>>> templates_;
  // Sets answered by mapping a template's result, by (op, bytes, set).
  absl::flat_hash_map<std::tuple<int, int64_t, std::vector<std::vector<GpuId>>>, Timed> mapped_;
  // Directed links by their devices; pairs joined by several parallel links are left out (unmappable).
  absl::flat_hash_map<std::pair<topology::DeviceId, topology::DeviceId>, LinkId> link_index_;
  bool link_index_built_ = false;
};

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_COLLECTIVE_LOAD_H_
