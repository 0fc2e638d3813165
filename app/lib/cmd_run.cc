// `hetsim run PLAN --cluster CLUSTER [--report R.json] [--trace T.json] ...`: simulates one training
// iteration of a plan and reports how fast it trains, where the time goes and whether it fits.
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "app/lib/cli.h"
#include "app/lib/command_list.h"
#include "app/lib/fault_options.h"
#include "app/lib/ideal_option.h"
#include "app/lib/run_replan.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"
#include "traces/chrome_trace.h"
#include "traces/fault_report.h"
#include "traces/metrics.h"
#include "traces/text_report.h"

namespace hetsim::app {
namespace {

// Exit code when --fail-on-oom is given and a stage does not fit in its GPUs' memory.
constexpr int kExitOutOfMemory = 3;

const CommandInfo kInfo = {
    "run",
    "hetsim run PLAN --cluster CLUSTER [--report R.json] [--trace T.json] [--network max-min|contention-free]\n"
    "           [--trace-replica K | --trace-gpus LIST] [--max-events N] [--max-wall-seconds S]\n"
    "           [--no-wall-time] [--fail-on-oom] [--quiet] [--ideal]\n"
    "           [--faults FILE] [--fault 'TEXT']... [--jitter 'TEXT'] [--replan [PLANNER]]",
    "Simulates one training iteration of PLAN on CLUSTER: the pipeline DAG of the plan's schedule, with\n"
    "compute on every stage, boundary transfers and data-parallel gradient synchronisation as flows that\n"
    "share the links (max-min fair), then the optimizer step. Prints a table (iteration time, tokens/s,\n"
    "MFU, bubble ratio, eta, per-stage time and memory, boundaries, link utilisation; see docs/metrics.md).\n"
    "--report writes the Report message (format from the extension, .json usually); --trace writes a\n"
    "Chrome Trace Event file for Perfetto or chrome://tracing. Plans of more than 64 GPUs trace one\n"
    "data-parallel replica (replica 0) unless --trace-replica or --trace-gpus (global GPU ids, e.g.\n"
    "0,1,8-15) says otherwise. --network contention-free times every flow as if alone (analytical).\n"
    "A stage that does not fit in memory is simulated and flagged OOM; --fail-on-oom then exits 3.\n"
    "Bad input exits 2 naming the file and field; outputs are written only when the run succeeds.\n"
    "--max-events / --max-wall-seconds stop a simulation that runs too long: exit 2 with a message naming\n"
    "the limit, no output written.\n"
    "What-if faults (docs/faults.md): --faults FILE (a Faults message) and --fault 'TEXT' (one Fault in text\n"
    "format, repeatable), e.g. --fault 'gpu: 3 kind: SLOW factor: 2' (a straggler from 0 ms),\n"
    "--fault 'inter_island_link: 0 kind: FLAP at_ms: 5 period_ms: 20 down_ms: 2', --fault 'node { island:\n"
    "\"a100\" node: 1 } kind: FAIL at_ms: 40' (the iteration stops there; the report says what was lost).\n"
    "--jitter 'seed: 7 distribution: LOGNORMAL spread: 0.05' draws every compute task's time (replaces the\n"
    "file's jitter). Faults appear in the table, the report (faults, failed, lost) and the trace.\n"
    "--replan [PLANNER] (hapt by default; tangram, megatron, alpa) re-plans on what the FAIL faults leave\n"
    "(a failed GPU takes its node out; docs/faults.md, Re-planning), reusing the profiles of a first plan\n"
    "of the full cluster, simulates the new plan and reports its throughput, its ratio to the fault-free\n"
    "plan and the re-plan time (report field replan)."};

absl::StatusOr<std::vector<GpuId>> ParseGpuList(absl::string_view text) {
  std::vector<GpuId> gpus;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> ends = absl::StrSplit(part, absl::MaxSplits('-', 1));
    int first = 0, last = 0;
    if (!absl::SimpleAtoi(ends[0], &first) || (ends.size() == 2 && !absl::SimpleAtoi(ends[1], &last)) ||
        first < 0) {
      return absl::InvalidArgumentError(absl::StrFormat("--trace-gpus: \"%s\" is not a GPU id or a range a-b", part));
    }
    if (ends.size() == 1) last = first;
    if (last < first || last - first > 1000000) {
      return absl::InvalidArgumentError(absl::StrFormat("--trace-gpus: \"%s\" is not an increasing range", part));
    }
    for (int g = first; g <= last; ++g) gpus.push_back(g);
  }
  if (gpus.empty()) return absl::InvalidArgumentError("--trace-gpus: empty list");
  return gpus;
}

int Simulate(const Args& args) {
  po::options_description options("options");
  std::string plan_path, cluster_path, report_path, trace_path, network = "max-min", trace_gpus;
  int trace_replica = -1;
  int64_t max_events = 0;
  double max_wall_seconds = 0;
  FaultOptions fault_options;
  std::string replan_planner;
  bool ideal = false;
  options.add_options()("cluster,c", po::value(&cluster_path)->required()->value_name("CLUSTER"), "cluster file")(
      "report,r", po::value(&report_path)->value_name("R.json"), "write the report message")(
      "trace,t", po::value(&trace_path)->value_name("T.json"), "write a Chrome Trace Event file")(
      "network", po::value(&network)->value_name("MODE"), "max-min (default) or contention-free")(
      "trace-replica", po::value(&trace_replica)->value_name("K"), "trace data-parallel replica K only")(
      "trace-gpus", po::value(&trace_gpus)->value_name("LIST"), "trace these global GPU ids (0,4,8-15)")(
      "max-events", po::value(&max_events)->value_name("N"), "stop and exit 2 after N events (0 = no limit)")(
      "max-wall-seconds", po::value(&max_wall_seconds)->value_name("S"),
      "stop and exit 2 after S seconds of simulation (0 = no limit)")(
      "no-wall-time", "leave the wall time out of the report (byte-identical reports)")(
      "fail-on-oom", "exit 3 when a stage does not fit in memory")("quiet,q", "do not print the table")(
      "faults", po::value(&fault_options.faults_path)->value_name("FILE"), "what-if faults file (docs/faults.md)")(
      "fault", po::value(&fault_options.fault_texts)->value_name("TEXT"), "one fault in text format (repeatable)")(
      "jitter", po::value(&fault_options.jitter_text)->value_name("TEXT"), "compute jitter in text format")(
      "replan", po::value(&replan_planner)->implicit_value("hapt")->value_name("PLANNER"),
      "after a FAIL fault, re-plan on what is left (hapt, tangram, megatron, alpa)")(
      "plan", po::value(&plan_path)->required(), "plan file");
  AddIdealOption(options, &ideal);
  po::positional_options_description positional;
  positional.add("plan", 1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kInfo, args, options, positional, &vm)) return *exit;

  sim::NetworkMode mode;
  if (network == "max-min" || network == "max-min-fair") {
    mode = sim::NetworkMode::kMaxMinFair;
  } else if (network == "contention-free") {
    mode = sim::NetworkMode::kContentionFree;
  } else {
    return UsageError(kInfo, absl::StrFormat("--network: \"%s\" is not max-min or contention-free", network));
  }
  if (auto exit = CheckRunLimitFlags(kInfo, max_events, max_wall_seconds)) return *exit;
  if (vm.count("trace-replica") && !trace_gpus.empty()) {
    return UsageError(kInfo, "--trace-replica and --trace-gpus exclude each other");
  }
  if ((vm.count("trace-replica") || !trace_gpus.empty()) && trace_path.empty()) {
    return UsageError(kInfo, "--trace-replica and --trace-gpus need --trace");
  }
  if (!report_path.empty()) {
    if (absl::StatusOr<proto::FileFormat> f = proto::FileFormatFromPath(report_path); !f.ok()) {
      return ReportFailure(kInfo, f.status());
    }
  }

  const auto wall_start = std::chrono::steady_clock::now();
  absl::StatusOr<proto::PlanInputs> inputs = proto::LoadPlanInputs(plan_path, cluster_path);
  if (!inputs.ok()) return ReportFailure(kInfo, inputs.status());
  ApplyIdealOption(ideal, &inputs->cluster);
  absl::StatusOr<std::unique_ptr<sim::executor::ExecutionSetup>> setup =
      sim::executor::BuildExecutionSetup(*inputs, mode);
  if (!setup.ok()) return ReportFailure(kInfo, setup.status());

  sim::faults::FaultSet fault_set;
  v1::Faults faults;
  if (!fault_options.empty()) {
    absl::StatusOr<LoadedFaults> loaded = LoadFaultOptions(fault_options, inputs->cluster);
    if (!loaded.ok()) return ReportFailure(kInfo, loaded.status());
    faults = loaded->faults;
    absl::StatusOr<sim::faults::FaultSet> resolved =
        sim::faults::ResolveFaults(loaded->faults, *(*setup)->topology, loaded->sources);
    if (!resolved.ok()) return ReportFailure(kInfo, resolved.status());
    fault_set = *std::move(resolved);
  }

  sim::executor::ExecutorOptions run_options;
  run_options.faults = &fault_set;
  run_options.max_events = max_events;
  run_options.max_wall_seconds = max_wall_seconds;
  std::vector<bool> traced;
  if (!trace_path.empty()) {
    traces::TraceSelection selection;
    if (vm.count("trace-replica")) selection.replica = trace_replica;
    if (!trace_gpus.empty()) {
      absl::StatusOr<std::vector<GpuId>> gpus = ParseGpuList(trace_gpus);
      if (!gpus.ok()) return UsageError(kInfo, gpus.status().message());
      selection.gpus = *std::move(gpus);
    }
    absl::StatusOr<std::vector<bool>> selected = traces::SelectTracedGpus(**setup, selection);
    if (!selected.ok()) return ReportFailure(kInfo, selected.status());
    traced = *std::move(selected);
    run_options.record_flows = true;
    run_options.sampled_links = traces::TraceLinks(**setup, traced);
    run_options.link_sample_period = traces::TraceSamplePeriod(**setup);
  }

  absl::StatusOr<sim::executor::ExecutionResult> result = sim::executor::Execute(**setup, run_options);
  if (!result.ok()) return ReportFailure(kInfo, result.status());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  traces::ReportOptions report_options;
  if (!vm.count("no-wall-time")) report_options.wall_time_s = wall;
  v1::Report report = traces::BuildReport(**setup, *result, report_options);
  if (!fault_set.empty()) traces::AddFaultsToReport(**setup, *result, fault_set, &report);
  if (vm.count("replan")) {
    RunReplanOptions replan;
    replan.planner = replan_planner;
    replan.network_mode = mode;
    replan.max_events = max_events;
    replan.max_wall_seconds = max_wall_seconds;
    replan.record_wall_time = !vm.count("no-wall-time");
    if (absl::Status s = AddReplan(*inputs, faults, replan, &report); !s.ok()) return ReportFailure(kInfo, s);
  }

  // Everything is serialised before anything is written: a failure leaves no output behind.
  std::string trace_json;
  if (!trace_path.empty()) trace_json = traces::ChromeTraceJson(**setup, *result, traced, run_options.sampled_links);
  if (!report_path.empty()) {
    if (absl::Status s = proto::Save(report_path, report); !s.ok()) return ReportFailure(kInfo, s);
  }
  if (!trace_path.empty()) {
    if (absl::Status s = proto::WriteFileAtomically(trace_path, trace_json); !s.ok()) return ReportFailure(kInfo, s);
  }
  if (!vm.count("quiet")) {
    std::fputs(traces::FormatReportTable(report).c_str(), stdout);
    std::fputs(traces::FormatFaultTable(report).c_str(), stdout);
    if (report.has_replan()) std::fputs(FormatReplan(report.replan()).c_str(), stdout);
  }
  if (report.oom()) {
    for (const v1::StageReport& s : report.stages()) {
      if (!s.oom()) continue;
      std::fprintf(stderr, "hetsim run: stage %u (%s, %s) needs %.2f GiB per GPU, %.2f GiB more than its %.0f GiB\n",
                   s.index(), s.mesh().c_str(), s.gpu_type().c_str(), s.peak_memory_gib(), s.oom_excess_gib(),
                   s.memory_capacity_gib());
    }
    if (vm.count("fail-on-oom")) return kExitOutOfMemory;
  }
  return kExitOk;
}

}  // namespace

int RunRun(const Args& args) {
  return RunGuarded(kInfo, [&] { return Simulate(args); });
}

}  // namespace hetsim::app
