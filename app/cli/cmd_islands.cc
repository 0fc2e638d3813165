// `hetsim islands --cluster C`: the cluster's GPU islands by Tangram's Algorithm 1, with each island's
// aggregate compute, memory and bandwidths.
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "app/cli/cli.h"
#include "base/units.h"
#include "proto/resolve_cluster.h"
#include "proto/validate_cluster.h"
#include "topology/gpu_islands.h"

namespace hetsim::cli {
namespace {

const CommandInfo kIslandsInfo = {
    "islands", "hetsim islands --cluster CLUSTER [--tau-c X] [--tau-m X] [--tau-b X] [--merge-factor X]",
    "Groups the cluster's nodes into GPU islands with Tangram's Algorithm 1: nodes whose per-GPU peak\n"
    "BF16 FLOP/s, HBM capacity and HBM bandwidth differ by at most tau (relative to the cluster's\n"
    "maximum) start in one island; islands are then merged greedily while the estimated pipeline\n"
    "bottleneck grows by at most the merge factor. Prints each island's sub-clusters, GPUs, peak and\n"
    "effective (GPUs x slowest GPU) TFLOP/s, HBM (total and the per-GPU minimum a plan must assume),\n"
    "HBM bandwidth, NVLink/PCIe bandwidth per GPU and NIC bandwidth per node."};

int Islands(const Args& args) {
  po::options_description options("options");
  std::string cluster_path;
  topology::IslandThresholds t;
  options.add_options()("cluster,c", po::value(&cluster_path)->required()->value_name("CLUSTER"), "cluster file")(
      "tau-c", po::value(&t.compute)->default_value(t.compute)->value_name("X"), "compute tolerance")(
      "tau-m", po::value(&t.memory)->default_value(t.memory)->value_name("X"), "HBM capacity tolerance")(
      "tau-b", po::value(&t.memory_bandwidth)->default_value(t.memory_bandwidth)->value_name("X"),
      "HBM bandwidth tolerance")("merge-factor",
                                 po::value(&t.merge_factor)->default_value(t.merge_factor)->value_name("X"),
                                 "largest bottleneck increase a merge may cause");
  po::positional_options_description positional;
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kIslandsInfo, args, options, positional, &vm)) return *exit;
  for (auto [name, v] :
       {std::pair<const char*, double>{"--tau-c", t.compute}, {"--tau-m", t.memory}, {"--tau-b", t.memory_bandwidth}}) {
    if (!(v >= 0)) return UsageError(kIslandsInfo, absl::StrFormat("%s: %g must be >= 0", name, v));
  }
  if (!(t.merge_factor >= 1))
    return UsageError(kIslandsInfo, absl::StrFormat("--merge-factor: %g must be >= 1", t.merge_factor));

  auto cluster = proto::LoadCluster(cluster_path);
  if (!cluster.ok()) return ReportFailure(kIslandsInfo, cluster.status());
  absl::StatusOr<spec::ClusterSpec> resolved = proto::ResolveCluster(*cluster, cluster_path);
  if (!resolved.ok()) return ReportFailure(kIslandsInfo, resolved.status());
  absl::StatusOr<topology::IslandFormation> f = topology::FormGpuIslands(*resolved, t);
  if (!f.ok()) return ReportFailure(kIslandsInfo, f.status());

  std::printf(
      "cluster %s: %d sub-clusters, %d initial islands, %zu GPU islands (tau_C %.2f, tau_M %.2f, tau_B %.2f, merge "
      "factor %.2f, bottleneck %.3f)\n",
      cluster->name().empty() ? cluster_path.c_str() : cluster->name().c_str(), cluster->islands_size(),
      f->initial_islands, f->islands.size(), t.compute, t.memory, t.memory_bandwidth, t.merge_factor, f->bottleneck);
  std::printf("%-6s %-24s %-22s %6s %7s %11s %11s %10s %9s %11s %10s %10s\n", "island", "sub-clusters", "gpu types",
              "nodes", "gpus", "peak TF/s", "eff. TF/s", "HBM GiB", "GiB/GPU", "HBM TB/s", "intra Gb/s", "net Gb/s");
  for (size_t i = 0; i < f->islands.size(); ++i) {
    const topology::GpuIsland& g = f->islands[i];
    std::vector<std::string> names;
    for (int32_t m : g.members) names.push_back(cluster->islands(m).name());
    std::printf("%-6zu %-24s %-22s %6d %7d %11.1f %11.1f %10.1f %9.1f %11.2f %10.0f %10.0f\n", i,
                absl::StrJoin(names, ",").c_str(), absl::StrJoin(g.gpu_types, ",").c_str(), static_cast<int>(g.nodes),
                static_cast<int>(g.gpus), g.peak_flop_per_s / 1e12, g.effective_flop_per_s / 1e12,
                BytesToGib(g.hbm_bytes), BytesToGib(g.effective_hbm_bytes_per_gpu), g.hbm_bytes_per_s / 1e12,
                BytesPerSecondToGbps(g.intra_node_bytes_per_s_per_gpu),
                BytesPerSecondToGbps(g.inter_node_bytes_per_s_per_node));
  }
  return kExitOk;
}

}  // namespace

int RunIslands(const Args& args) {
  return RunGuarded(kIslandsInfo, [&] { return Islands(args); });
}

}  // namespace hetsim::cli
