// `hetsim run --chakra DIR --cluster C`: simulates a folder of Chakra execution traces on a hetsim
// cluster (service/chakra/replay.h) and prints the usual summary; --report / --trace as `run`.
#include "app/cli/cmd_run_chakra.h"

#include <chrono>
#include <cstdio>
#include <string>

#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "app/cli/ideal_option.h"
#include "app/cli/network_option.h"
#include "proto/io.h"
#include "proto/output_files.h"
#include "proto/validate_cluster.h"
#include "service/chakra/replay.h"
#include "service/chakra/replay_report.h"
#include "service/chakra/trace.h"
#include "service/driver/cluster_topology.h"
#include "topology/device_graph.h"

namespace hetsim::cli {
namespace {

const CommandInfo kRunChakraInfo = {
    "run",
    "hetsim run --chakra DIR --cluster CLUSTER [--comm-groups FILE] [--retime-compute] [--report R.json]\n"
    "           [--trace T.json]\n"
    "           [--network max-min|contention-free] [--max-events N] [--max-wall-seconds S] [--no-wall-time]\n"
    "           [--quiet] [--ideal]",
    "Simulates the Chakra execution traces in DIR (<prefix>.<rank>.et, and <prefix>.comm_groups.json for\n"
    "the collectives' groups, or --comm-groups FILE: the JSON ASTRA-sim takes with\n"
    "--comm-group-configuration) on CLUSTER, rank r on global GPU r: COMP nodes take their recorded duration\n"
    "(--retime-compute: the kernel model of the GPU type they land on, from num_ops and tensor_size),\n"
    "sends, receives and collectives run on hetsim's network with its collective algorithms. Prints the\n"
    "iteration time; --report writes the Report, --trace a Chrome trace (a process per rank).\n"
    "Broken traces exit 2 naming the rank file and node; repairs print a warning (docs/chakra.md)."};

// Warnings beyond this many are counted, not printed.
constexpr int kMaxWarnings = 20;

int Replay(const Args& args) {
  po::options_description options("options");
  std::string dir, cluster_path, report_path, trace_path, network, groups_path;
  int64_t max_events = 0;
  double max_wall_seconds = 0;
  bool ideal = false;
  options.add_options()("chakra", po::value(&dir)->required()->value_name("DIR"), "folder of Chakra traces")(
      "cluster,c", po::value(&cluster_path)->required()->value_name("CLUSTER"), "cluster file")(
      "comm-groups", po::value(&groups_path)->value_name("FILE"), "communicator groups (ASTRA-sim's JSON)")(
      "retime-compute", "time COMP nodes from num_ops / tensor_size by the GPU type they run on")(
      "report,r", po::value(&report_path)->value_name("R.json"), "write the report message")(
      "trace,t", po::value(&trace_path)->value_name("T.json"), "write a Chrome Trace Event file")(
      "max-events", po::value(&max_events)->value_name("N"), "stop and exit 2 after N events (0 = no limit)")(
      "max-wall-seconds", po::value(&max_wall_seconds)->value_name("S"), "stop and exit 2 after S seconds")(
      "no-wall-time", "leave the wall time out of the report")("quiet,q", "do not print the summary");
  AddIdealOption(options, &ideal);
  AddNetworkOption(options, &network);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kRunChakraInfo, args, options, po::positional_options_description(), &vm))
    return *exit;
  chakra::ReplayOptions replay;
  absl::StatusOr<network::NetworkMode> mode = ParseNetworkOption(network);
  if (!mode.ok()) return UsageError(kRunChakraInfo, mode.status().message());
  replay.network_mode = *mode;
  if (auto exit = CheckRunLimitFlags(kRunChakraInfo, max_events, max_wall_seconds)) return *exit;
  replay.max_events = static_cast<uint64_t>(max_events);
  replay.max_wall_seconds = max_wall_seconds;
  replay.retime_compute = vm.count("retime-compute") > 0;
  if (!report_path.empty()) {
    if (absl::StatusOr<proto::FileFormat> f = proto::FileFormatFromPath(report_path); !f.ok()) {
      return ReportFailure(kRunChakraInfo, f.status());
    }
  }

  const auto wall_start = std::chrono::steady_clock::now();
  absl::StatusOr<v1::Cluster> cluster = proto::LoadCluster(cluster_path);
  if (!cluster.ok()) return ReportFailure(kRunChakraInfo, cluster.status());
  ApplyIdealOption(ideal, &*cluster);
  absl::StatusOr<std::unique_ptr<topology::Topology>> built = driver::BuildTopology(*cluster, cluster_path);
  if (!built.ok()) return ReportFailure(kRunChakraInfo, built.status());
  const topology::Topology& topology = **built;
  absl::StatusOr<chakra::ChakraWorkload> workload = chakra::LoadChakraDir(dir, topology.num_gpus(), groups_path);
  if (!workload.ok()) return ReportFailure(kRunChakraInfo, workload.status());
  for (size_t i = 0; i < workload->warnings.size() && i < kMaxWarnings; ++i) {
    std::fprintf(stderr, "hetsim run: warning: %s\n", workload->warnings[i].c_str());
  }
  if (workload->warnings.size() > kMaxWarnings) {
    std::fprintf(stderr, "hetsim run: warning: %zu more warnings\n", workload->warnings.size() - kMaxWarnings);
  }
  if (replay.retime_compute && !workload->dtype.empty()) {
    v1::DType dtype;
    if (!v1::DType_Parse(workload->dtype, &dtype) || dtype == v1::DTYPE_UNSPECIFIED) {
      return ReportFailure(kRunChakraInfo, absl::InvalidArgumentError(absl::StrFormat(
                                               "%s: GlobalMetadata attribute dtype: \"%s\" is not a hetsim DType",
                                               workload->ranks[0].file, workload->dtype)));
    }
    replay.dtype = dtype;
  }
  absl::StatusOr<chakra::ReplayResult> result = chakra::ReplayChakra(*workload, topology, replay);
  if (!result.ok()) return ReportFailure(kRunChakraInfo, result.status());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const v1::Report report = chakra::BuildReplayReport(*workload, *result, dir, *cluster, replay.network_mode,
                                                      vm.count("no-wall-time") ? -1 : wall);
  std::string trace_json;
  if (!trace_path.empty()) trace_json = chakra::ReplayChromeTrace(*workload, *result);
  std::vector<std::string> inputs = {cluster_path};
  for (const chakra::RankTrace& rank : workload->ranks) inputs.push_back(rank.file);
  proto::OutputFiles outputs(std::move(inputs));  // all or none, and never over a rank file or the cluster
  if (absl::Status s = outputs.AddMessage(report_path, report); !s.ok()) return ReportFailure(kRunChakraInfo, s);
  if (absl::Status s = outputs.Add(trace_path, trace_json); !s.ok()) return ReportFailure(kRunChakraInfo, s);
  if (absl::Status s = outputs.Commit(); !s.ok()) return ReportFailure(kRunChakraInfo, s);
  if (!vm.count("quiet")) std::fputs(chakra::FormatReplaySummary(*workload, *result, report).c_str(), stdout);
  return kExitOk;
}

}  // namespace

bool IsChakraRun(const Args& args) {
  for (const std::string& a : args) {
    if (a == "--chakra" || a.rfind("--chakra=", 0) == 0) return true;
  }
  return false;
}

int RunChakraReplay(const Args& args) {
  return RunGuarded(kRunChakraInfo, [&] { return Replay(args); });
}

}  // namespace hetsim::cli
