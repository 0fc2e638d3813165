#include "service/planning/islands_command.h"

#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/spec/cluster.h"
#include "base/status_macros.h"
#include "base/units.h"
#include "proto/resolve_cluster.h"

namespace hetsim::planning {
namespace {

// The table of `f` over `cluster` (the cluster's name, else its file), formed under `t`.
std::string IslandsTable(const spec::ClusterSpec& cluster, const std::string& label,
                         const topology::IslandThresholds& t, const topology::IslandFormation& f) {
  std::string out = absl::StrFormat(
      "cluster %s: %d sub-clusters, %d initial islands, %d GPU islands (tau_C %.2f, tau_M %.2f, tau_B %.2f, merge "
      "factor %.2f, bottleneck %.3f)\n",
      cluster.name.empty() ? label : cluster.name, cluster.islands.size(), f.initial_islands, f.islands.size(),
      t.compute, t.memory, t.memory_bandwidth, t.merge_factor, f.bottleneck);
  absl::StrAppendFormat(&out, "%-6s %-24s %-22s %6s %7s %11s %11s %10s %9s %11s %10s %10s\n", "island", "sub-clusters",
                        "gpu types", "nodes", "gpus", "peak TF/s", "eff. TF/s", "HBM GiB", "GiB/GPU", "HBM TB/s",
                        "intra Gb/s", "net Gb/s");
  for (size_t i = 0; i < f.islands.size(); ++i) {
    const topology::GpuIsland& g = f.islands[i];
    std::vector<std::string> names;
    for (int32_t m : g.members) names.push_back(cluster.islands[m].name);
    absl::StrAppendFormat(&out, "%-6d %-24s %-22s %6d %7d %11.1f %11.1f %10.1f %9.1f %11.2f %10.0f %10.0f\n", i,
                          absl::StrJoin(names, ","), absl::StrJoin(g.gpu_types, ","), g.nodes, g.gpus,
                          g.peak_flop_per_s / 1e12, g.effective_flop_per_s / 1e12, BytesToGib(g.hbm_bytes),
                          BytesToGib(g.effective_hbm_bytes_per_gpu), g.hbm_bytes_per_s / 1e12,
                          BytesPerSecondToGbps(g.intra_node_bytes_per_s_per_gpu),
                          BytesPerSecondToGbps(g.inter_node_bytes_per_s_per_node));
  }
  return out;
}

}  // namespace

absl::Status CheckIslandsRequest(const IslandsRequest& request) {
  const topology::IslandThresholds& t = request.thresholds;
  for (auto [name, v] :
       {std::pair<const char*, double>{"--tau-c", t.compute}, {"--tau-m", t.memory}, {"--tau-b", t.memory_bandwidth}}) {
    if (!(v >= 0)) return absl::InvalidArgumentError(absl::StrFormat("%s: %g must be >= 0", name, v));
  }
  if (!(t.merge_factor >= 1))
    return absl::InvalidArgumentError(absl::StrFormat("--merge-factor: %g must be >= 1", t.merge_factor));
  return absl::OkStatus();
}

absl::StatusOr<IslandsResponse> FormIslands(const IslandsRequest& request) {
  HETSIM_RETURN_IF_ERROR(CheckIslandsRequest(request));
  const std::string& label = request.cluster.label();
  HETSIM_ASSIGN_OR_RETURN(const hetsim::v1::Cluster cluster, proto::LoadCluster(request.cluster));
  HETSIM_ASSIGN_OR_RETURN(const spec::ClusterSpec resolved, proto::ResolveCluster(cluster, label));
  IslandsResponse out;
  HETSIM_ASSIGN_OR_RETURN(out.formation, topology::FormGpuIslands(resolved, request.thresholds));
  out.table = IslandsTable(resolved, label, request.thresholds, out.formation);
  return out;
}

}  // namespace hetsim::planning
