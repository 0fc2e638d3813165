// `hetsim islands --cluster C`: the cluster's GPU islands by Tangram's Algorithm 1, with each island's
// aggregate compute, memory and bandwidths.
#include <cstdio>
#include <string>

#include "app/cli/cli.h"
#include "proto/inputs.h"
#include "service/planning/islands_command.h"

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
  planning::IslandsRequest request;
  topology::IslandThresholds& t = request.thresholds;
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
  request.cluster = proto::Source::File(cluster_path);
  if (absl::Status s = planning::CheckIslandsRequest(request); !s.ok()) return UsageError(kIslandsInfo, s.message());
  absl::StatusOr<planning::IslandsResponse> formed = planning::FormIslands(request);
  if (!formed.ok()) return ReportFailure(kIslandsInfo, formed.status());
  std::fputs(formed->table.c_str(), stdout);
  return kExitOk;
}

}  // namespace

int RunIslands(const Args& args) {
  return RunGuarded(kIslandsInfo, [&] { return Islands(args); });
}

}  // namespace hetsim::cli
