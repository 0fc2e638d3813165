#include "sim/executor/representative_flows.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"

namespace hetsim::executor {
namespace {

// Same bytes, between the same (island, local GPU) positions: the same role in another replica.
using RoleKey = std::tuple<int64_t, int32_t, int32_t, int32_t, int32_t>;

RoleKey RoleOf(const topology::Topology& topology, const BoundaryFlow& f) {
  const absl::StatusOr<topology::GpuLocation> src = topology.Locate(f.src);
  const absl::StatusOr<topology::GpuLocation> dst = topology.Locate(f.dst);
  if (!src.ok() || !dst.ok())
    return {f.bytes, -1, f.src.value(), -1, f.dst.value()};  // unreachable: flows name real GPUs
  return {f.bytes, src->island, src->local, dst->island, dst->local};
}

}  // namespace

std::vector<RepresentativeFlow> RepresentativeFlows(const topology::Topology& topology,
                                                    const std::vector<BoundaryFlow>& flows) {
  // How many of the transfer's flows cross each link.
  absl::flat_hash_map<LinkId, int32_t> crossing;
  for (const BoundaryFlow& f : flows) {
    for (LinkId l : f.route) ++crossing[l];
  }
  const auto& links = topology.links();
  // A route's load: its most crowded link, in flows per byte/s of capacity.
  auto load = [&](const BoundaryFlow& f) {
    double worst = 0;
    for (LinkId l : f.route) worst = std::max(worst, crossing[l] / links[l.value()].bandwidth.bytes_per_second());
    return worst;
  };

  std::vector<RepresentativeFlow> reps;
  std::vector<double> rep_load;  // load(flows[reps[k].flow]), kept with the representative
  absl::flat_hash_map<RoleKey, int32_t> group_of;
  for (int32_t i = 0; i < static_cast<int32_t>(flows.size()); ++i) {
    const BoundaryFlow& f = flows[i];
    if (f.route.empty() || f.bytes == 0) {
      reps.push_back({i, {}, {i}});
      rep_load.push_back(0);
      continue;
    }
    auto [it, fresh] = group_of.emplace(RoleOf(topology, f), static_cast<int32_t>(reps.size()));
    if (fresh) {
      reps.push_back({i, {}, {i}});
      rep_load.push_back(load(f));
      continue;
    }
    RepresentativeFlow& r = reps[it->second];
    r.members.push_back(i);
    if (const double l = load(f); l > rep_load[it->second]) {  // strictly more: the first of equals stays
      r.flow = i;
      rep_load[it->second] = l;
    }
  }

  // A link's grouped flows (those of groups of two or more: the others are simulated themselves)
  // are shared among the representatives that cross it.
  absl::flat_hash_map<LinkId, int32_t> grouped, reps_crossing;
  for (const RepresentativeFlow& r : reps) {
    if (r.members.size() < 2) continue;
    for (int32_t m : r.members) {
      for (LinkId l : flows[m].route) ++grouped[l];
    }
    for (LinkId l : flows[r.flow].route) ++reps_crossing[l];
  }
  for (RepresentativeFlow& r : reps) {
    if (r.members.size() < 2) continue;
    for (LinkId l : flows[r.flow].route) {
      r.weights.push_back(std::max(1.0, static_cast<double>(grouped[l]) / reps_crossing[l]));
    }
  }
  return reps;
}

}  // namespace hetsim::executor
