// `hetsim run --chakra DIR --cluster C`: simulates a folder of Chakra execution traces on a hetsim
// cluster (service/chakra/replay_command.h) and prints the usual summary; --report / --trace as `run`.
#include "app/cli/cmd_run_chakra.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "app/cli/ideal_option.h"
#include "app/cli/network_option.h"
#include "base/status_macros.h"
#include "proto/io.h"
#include "proto/output_files.h"
#include "service/chakra/replay_command.h"
#include "service/chakra/replay_report.h"

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

// Replays `request`, printing the traces' repairs, and writes the report and the trace (all or none).
absl::Status ReplayAndWrite(const chakra::ReplayRequest& request, const std::string& report_path,
                            const std::string& trace_path, bool quiet) {
  HETSIM_ASSIGN_OR_RETURN(chakra::LoadedReplay loaded, chakra::LoadReplay(request));
  const std::vector<std::string>& warnings = loaded.workload.warnings;
  for (size_t i = 0; i < warnings.size() && i < kMaxWarnings; ++i) {
    std::fprintf(stderr, "hetsim run: warning: %s\n", warnings[i].c_str());
  }
  if (warnings.size() > kMaxWarnings) {
    std::fprintf(stderr, "hetsim run: warning: %zu more warnings\n", warnings.size() - kMaxWarnings);
  }
  HETSIM_ASSIGN_OR_RETURN(chakra::ReplayResponse replayed, chakra::RunReplay(loaded, request));
  std::string trace_json;
  if (!trace_path.empty()) trace_json = chakra::ReplayChromeTrace(loaded.workload, replayed.result);
  std::vector<std::string> inputs = {request.cluster.path};
  for (const chakra::RankTrace& rank : loaded.workload.ranks) inputs.push_back(rank.file);
  proto::OutputFiles outputs(std::move(inputs));  // all or none, and never over a rank file or the cluster
  HETSIM_RETURN_IF_ERROR(outputs.AddMessage(report_path, replayed.report));
  HETSIM_RETURN_IF_ERROR(outputs.Add(trace_path, trace_json));
  HETSIM_RETURN_IF_ERROR(outputs.Commit());
  if (!quiet)
    std::fputs(chakra::FormatReplaySummary(loaded.workload, replayed.result, replayed.report).c_str(), stdout);
  return absl::OkStatus();
}

int Replay(const Args& args) {
  po::options_description options("options");
  chakra::ReplayRequest request;
  std::string cluster_path, report_path, trace_path, network;
  int64_t max_events = 0;
  double max_wall_seconds = 0;
  options.add_options()("chakra", po::value(&request.dir)->required()->value_name("DIR"), "folder of Chakra traces")(
      "cluster,c", po::value(&cluster_path)->required()->value_name("CLUSTER"), "cluster file")(
      "comm-groups", po::value(&request.comm_groups)->value_name("FILE"), "communicator groups (ASTRA-sim's JSON)")(
      "retime-compute", "time COMP nodes from num_ops / tensor_size by the GPU type they run on")(
      "report,r", po::value(&report_path)->value_name("R.json"), "write the report message")(
      "trace,t", po::value(&trace_path)->value_name("T.json"), "write a Chrome Trace Event file")(
      "max-events", po::value(&max_events)->value_name("N"), "stop and exit 2 after N events (0 = no limit)")(
      "max-wall-seconds", po::value(&max_wall_seconds)->value_name("S"), "stop and exit 2 after S seconds")(
      "no-wall-time", "leave the wall time out of the report")("quiet,q", "do not print the summary");
  AddIdealOption(options, &request.ideal);
  AddNetworkOption(options, &network);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kRunChakraInfo, args, options, po::positional_options_description(), &vm))
    return *exit;
  absl::StatusOr<network::NetworkMode> mode = ParseNetworkOption(network);
  if (!mode.ok()) return UsageError(kRunChakraInfo, mode.status().message());
  request.options.network_mode = *mode;
  if (auto exit = CheckRunLimitFlags(kRunChakraInfo, max_events, max_wall_seconds)) return *exit;
  request.options.max_events = static_cast<uint64_t>(max_events);
  request.options.max_wall_seconds = max_wall_seconds;
  request.options.retime_compute = vm.count("retime-compute") > 0;
  request.cluster = proto::Source::File(cluster_path);
  request.record_wall_time = vm.count("no-wall-time") == 0;
  if (!report_path.empty()) {
    if (absl::StatusOr<proto::FileFormat> f = proto::FileFormatFromPath(report_path); !f.ok()) {
      return ReportFailure(kRunChakraInfo, f.status());
    }
  }
  if (absl::Status s = ReplayAndWrite(request, report_path, trace_path, vm.count("quiet") > 0); !s.ok()) {
    return ReportFailure(kRunChakraInfo, s);
  }
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
