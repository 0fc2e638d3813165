// `hetsim run PLAN --cluster CLUSTER [--report R.json] [--trace T.json] ...`: simulates one training
// iteration of a plan and reports how fast it trains, where the time goes and whether it fits.
#include <cstdio>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_format.h"
#include "app/cli/approximation_options.h"
#include "app/cli/cli.h"
#include "app/cli/cmd_run_chakra.h"
#include "app/cli/gpu_list.h"
#include "app/cli/ideal_option.h"
#include "app/cli/network_option.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/output_files.h"
#include "service/driver/run_command.h"
#include "service/driver/run_replan.h"
#include "service/driver/simulate.h"
#include "traces/chrome_trace.h"
#include "traces/fault_report.h"
#include "traces/html/run_html.h"
#include "traces/text_report.h"

namespace hetsim::cli {
namespace {

// Exit code when --fail-on-oom is given and a stage does not fit in its GPUs' memory.
constexpr int kExitOutOfMemory = 3;

const CommandInfo kRunInfo = {
    "run",
    "hetsim run PLAN --cluster CLUSTER [--report R.json] [--trace T.json] [--html R.html]\n"
    "           [--network max-min-fair|contention-free]\n"
    "           [--trace-replica K | --trace-gpus LIST] [--max-events N] [--max-wall-seconds S]\n"
    "           [--max-memory SIZE] [--no-wall-time] [--fail-on-oom] [--quiet] [--ideal]\n"
    "           [--faults FILE] [--fault 'TEXT']... [--jitter 'TEXT'] [--replan [PLANNER]]\n"
    "           [--ring-steps auto|aggregated] [--boundary-flows all|representative]\n"
    "hetsim run --chakra DIR --cluster CLUSTER [--retime-compute] ...   (Chakra traces: hetsim run --chakra DIR "
    "--help)",
    "Simulates one training iteration of PLAN on CLUSTER: the pipeline DAG of the plan's schedule, with\n"
    "compute on every stage, boundary transfers and data-parallel gradient synchronisation as flows that\n"
    "share the links (max-min fair), then the optimizer step. Prints a table (iteration time, tokens/s,\n"
    "MFU, bubble ratio, eta, per-stage time and memory, boundaries, link utilisation; see docs/metrics.md).\n"
    "--report writes the Report message (format from the extension, .json usually); --html a self-contained\n"
    "HTML report (pipeline schedule, memory, links, tables; docs/report.md); --trace a Chrome Trace Event\n"
    "file for Perfetto (ui.perfetto.dev), speedscope or the Chrome DevTools Performance panel. Plans of more than 64 "
    "GPUs trace one\n"
    "data-parallel replica (replica 0) unless --trace-replica or --trace-gpus (global GPU ids, e.g.\n"
    "0,1,8-15) says otherwise. --network contention-free times every flow as if alone (analytical).\n"
    "A stage that does not fit in memory is simulated and flagged OOM; --fail-on-oom then exits 3.\n"
    "Bad input exits 2 naming the file and field; outputs are written only when the run succeeds.\n"
    "--max-events / --max-wall-seconds stop a simulation that runs too long (the wall clock from the start,\n"
    "setup included): exit 2 with a message naming the limit, no output written. Before anything is set\n"
    "up, a plan estimated to need more events than --max-events or more memory than --max-memory (default:\n"
    "the machine's memory) is refused the same way (docs/reliability.md).\n"
    "What-if faults (docs/faults.md): --faults FILE (a Faults message) and --fault 'TEXT' (one Fault in text\n"
    "format, repeatable), e.g. --fault 'gpu: 3 kind: SLOW factor: 2' (a straggler from 0 ms),\n"
    "--fault 'inter_island_link: 0 kind: FLAP at_ms: 5 period_ms: 20 down_ms: 2', --fault 'node { island:\n"
    "\"a100\" node: 1 } kind: FAIL at_ms: 40' (the iteration stops there; the report says what was lost).\n"
    "--jitter 'seed: 7 distribution: LOGNORMAL spread: 0.05' draws every compute task's time (replaces the\n"
    "file's jitter). Faults appear in the table, the report (faults, failed, lost) and the trace.\n"
    "--replan [PLANNER] (hapt by default; tangram, megatron, alpa) re-plans on what the FAIL faults leave\n"
    "(a failed GPU takes its node out; docs/faults.md, Re-planning), reusing the profiles of a first plan\n"
    "of the full cluster, simulates the new plan and reports its throughput, its ratio to the fault-free\n"
    "plan and the re-plan time (report field replan).\n"
    "Fidelity (docs/performance.md, Fast by default): a run whose exact simulation would start more than\n"
    "1 M flows uses both approximations below when their worst error measured for its shape is under 0.5%\n"
    "(not with faults on links or FAIL faults); the report's fidelity line names them and their bound.\n"
    "--exact forces the full simulation; --ring-steps / --boundary-flows choose each one yourself.\n"
    "--ring-steps aggregated (an approximation, named in the report): gradient\n"
    "synchronisation rings move each ring edge's bytes of all steps as one flow, and trees each edge's\n"
    "chunks as three flows (docs/performance.md gives the measured errors); auto simulates every\n"
    "step of rings up to 128 ranks and every chunk of trees up to 65,536 flows.\n"
    "--boundary-flows representative (an approximation, named in the report): a\n"
    "pipeline boundary's flows in the same role in different data-parallel replicas are simulated as one\n"
    "weighted flow per group (docs/performance.md gives its measured error); all simulates each."};

// --trace-replica K / --trace-gpus LIST as a trace selection (InvalidArgument for a bad GPU list).
absl::StatusOr<traces::TraceSelection> TraceSelectionOf(std::optional<int> replica, const std::string& gpus) {
  traces::TraceSelection selection;
  selection.replica = replica;
  if (!gpus.empty()) {
    HETSIM_ASSIGN_OR_RETURN(selection.gpus, ParseGpuList(gpus, "--trace-gpus"));
  }
  return selection;
}

// One line per stage that does not fit in its GPUs' memory, on stderr; whether there was one.
bool PrintOom(const v1::Report& report) {
  for (const v1::StageReport& s : report.stages()) {
    if (!s.oom()) continue;
    std::fprintf(stderr, "hetsim run: stage %u (%s, %s) needs %.2f GiB per GPU, %.2f GiB more than its %.0f GiB\n",
                 s.index(), s.mesh().c_str(), s.gpu_type().c_str(), s.peak_memory_gib(), s.oom_excess_gib(),
                 s.memory_capacity_gib());
  }
  return report.oom();
}

// --report, --trace and --html, each when asked for, all or none (proto::OutputFiles): a failure
// leaves no output behind, and none of them may be one of the run's inputs.
absl::Status WriteOutputs(proto::OutputFiles outputs, const std::string& report_path, const std::string& trace_path,
                          const std::string& html_path, const driver::Simulation& simulated) {
  HETSIM_RETURN_IF_ERROR(outputs.AddMessage(report_path, simulated.report));
  HETSIM_RETURN_IF_ERROR(outputs.Add(trace_path, simulated.trace_json));
  if (!html_path.empty()) {
    traces::html::RunHtmlInputs page{
        simulated.setup.get(),          &simulated.result, &simulated.report, simulated.sampled_links, {},
        &simulated.pipeline_sync.faults};
    int first_stage = 0;
    for (const driver::PipelineSimulation& p : simulated.pipelines) {
      page.pipelines.push_back({p.name, p.setup, &p.result, first_stage});
      first_stage += p.setup->num_stages();
    }
    // Under the command's wall-clock limit (its scope, installed in Simulate).
    HETSIM_ASSIGN_OR_RETURN(std::string html,
                            DrawPageWithin(CurrentWallLimit(), [&] { return traces::html::RunReportHtml(page); }));
    HETSIM_RETURN_IF_ERROR(outputs.Add(html_path, std::move(html)));
  }
  return outputs.Commit();
}

// The run's inputs, which no output may overwrite, with every output (and the report's encoding) checked
// before the simulation.
absl::StatusOr<proto::OutputFiles> CheckedOutputs(const proto::PlanInputs& inputs, const std::string& faults_path,
                                                  const std::string& report_path, std::vector<std::string> outputs) {
  if (!report_path.empty()) HETSIM_RETURN_IF_ERROR(proto::FileFormatFromPath(report_path).status());
  proto::OutputFiles files({inputs.plan_path, inputs.cluster_path, inputs.model_path, faults_path});
  outputs.push_back(report_path);
  for (const std::string& path : outputs) {
    if (!path.empty()) HETSIM_RETURN_IF_ERROR(files.Check(path));
  }
  return files;
}

// The flags of `hetsim run`.
struct RunFlags {
  std::string plan_path, cluster_path, report_path, trace_path, html_path, network, trace_gpus;
  int trace_replica = -1;
  int64_t max_events = 0;
  double max_wall_seconds = 0;
  std::string max_memory;
  std::string faults_path;               // --faults FILE (a Faults message)
  std::vector<std::string> fault_texts;  // --fault TEXT, repeatable
  std::string jitter_text;               // --jitter TEXT
  std::string replan_planner;
  bool ideal = false;
  ApproximationNames approximation_names;
};

void AddRunOptions(po::options_description& options, RunFlags& f) {
  options.add_options()("cluster,c", po::value(&f.cluster_path)->required()->value_name("CLUSTER"), "cluster file")(
      "report,r", po::value(&f.report_path)->value_name("R.json"), "write the report message")(
      "trace,t", po::value(&f.trace_path)->value_name("T.json"), "write a Chrome Trace Event file")(
      "html", po::value(&f.html_path)->value_name("R.html"), "write a self-contained HTML report")(
      "trace-replica", po::value(&f.trace_replica)->value_name("K"), "trace data-parallel replica K only")(
      "trace-gpus", po::value(&f.trace_gpus)->value_name("LIST"), "trace these global GPU ids (0,4,8-15)")(
      "max-events", po::value(&f.max_events)->value_name("N"), "stop and exit 2 after N events (0 = no limit)")(
      "max-wall-seconds", po::value(&f.max_wall_seconds)->value_name("S"),
      "stop and exit 2 after S seconds, setup included (0 = no limit)")(
      "max-memory", po::value(&f.max_memory)->value_name("SIZE"),
      "refuse (exit 2) a plan estimated to need more (default: the machine's memory)")(
      "no-wall-time", "leave the wall time out of the report (byte-identical reports)")(
      "fail-on-oom", "exit 3 when a stage does not fit in memory")("quiet,q", "do not print the table")(
      "faults", po::value(&f.faults_path)->value_name("FILE"), "what-if faults file (docs/faults.md)")(
      "fault", po::value(&f.fault_texts)->value_name("TEXT"), "one fault in text format (repeatable)")(
      "jitter", po::value(&f.jitter_text)->value_name("TEXT"), "compute jitter in text format")(
      "replan", po::value(&f.replan_planner)->implicit_value("hapt")->value_name("PLANNER"),
      "after a FAIL fault, re-plan on what is left (hapt, tangram, megatron, alpa)")(
      "plan", po::value(&f.plan_path)->required(), "plan file");
  AddIdealOption(options, &f.ideal);
  AddNetworkOption(options, &f.network);
  AddApproximationOptions(options, &f.approximation_names);
}

// The run's request from the flags, checked before any file is read (an exit code on a usage error).
std::variant<driver::RunRequest, int> RequestOf(const RunFlags& f, const po::variables_map& vm) {
  driver::RunRequest request;
  request.plan = proto::Source::File(f.plan_path);
  request.cluster = proto::Source::File(f.cluster_path);
  absl::StatusOr<network::NetworkMode> mode = ParseNetworkOption(f.network);
  if (!mode.ok()) return UsageError(kRunInfo, mode.status().message());
  request.network_mode = *mode;
  absl::StatusOr<driver::FidelityRequest> fidelity = ParseApproximationOptions(f.approximation_names);
  if (!fidelity.ok()) return UsageError(kRunInfo, fidelity.status().message());
  request.fidelity = *fidelity;
  if (vm.count("trace-replica") && !f.trace_gpus.empty()) {
    return UsageError(kRunInfo, "--trace-replica and --trace-gpus exclude each other");
  }
  if ((vm.count("trace-replica") || !f.trace_gpus.empty()) && f.trace_path.empty()) {
    return UsageError(kRunInfo, "--trace-replica and --trace-gpus need --trace");
  }
  if (!f.trace_path.empty()) {
    absl::StatusOr<traces::TraceSelection> selection =
        TraceSelectionOf(vm.count("trace-replica") ? std::optional<int>(f.trace_replica) : std::nullopt, f.trace_gpus);
    if (!selection.ok()) return UsageError(kRunInfo, selection.status().message());
    request.trace = *std::move(selection);
  }
  request.ideal = f.ideal;
  request.max_events = f.max_events;
  request.max_wall_seconds = f.max_wall_seconds;
  if (!f.max_memory.empty()) {
    absl::StatusOr<int64_t> bytes = ParseSize(f.max_memory, "--max-memory");
    if (!bytes.ok()) return UsageError(kRunInfo, bytes.status().message());
    request.max_memory_bytes = static_cast<uint64_t>(*bytes);
  }
  if (!f.faults_path.empty()) request.faults.file = proto::Source::File(f.faults_path);
  request.faults.fault_texts = f.fault_texts;
  request.faults.jitter_text = f.jitter_text;
  request.sample_all_links = !f.html_path.empty();  // the HTML report charts every link class
  if (vm.count("replan")) request.replan_planner = f.replan_planner;
  request.record_wall_time = !vm.count("no-wall-time");
  if (absl::Status s = driver::CheckRunRequest(request); !s.ok()) return UsageError(kRunInfo, s.message());
  return request;
}

// Simulates (and re-plans when asked), writes the outputs and prints the tables.
int SimulateAndWrite(const RunFlags& f, const po::variables_map& vm, const driver::LoadedRun& run,
                     proto::OutputFiles outputs) {
  absl::StatusOr<driver::Simulation> simulated = driver::SimulateRun(run);
  if (!simulated.ok()) return ReportFailure(kRunInfo, simulated.status());
  const v1::Report& report = simulated->report;
  if (absl::Status s = WriteOutputs(std::move(outputs), f.report_path, f.trace_path, f.html_path, *simulated);
      !s.ok()) {
    return ReportFailure(kRunInfo, s);
  }
  if (!vm.count("quiet")) {
    std::fputs(traces::FormatReportTable(report).c_str(), stdout);
    std::fputs(traces::FormatFaultTable(report).c_str(), stdout);
    if (report.has_replan()) std::fputs(driver::FormatReplan(report.replan()).c_str(), stdout);
  }
  if (PrintOom(report) && vm.count("fail-on-oom")) return kExitOutOfMemory;
  return kExitOk;
}

int Simulate(const Args& args) {
  po::options_description options("options");
  RunFlags f;
  AddRunOptions(options, f);
  po::positional_options_description positional;
  positional.add("plan", 1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kRunInfo, args, options, positional, &vm)) return *exit;
  std::variant<driver::RunRequest, int> request = RequestOf(f, vm);
  if (const int* exit = std::get_if<int>(&request)) return *exit;

  const driver::RunRequest& run_request = std::get<driver::RunRequest>(request);
  // --max-wall-seconds holds for the whole command: the simulation (its own scope, from its start) and
  // the HTML page drawn after it.
  const WallLimit wall_limit(run_request.max_wall_seconds, run_request.wall_start);
  std::optional<WallLimitScope> wall_scope;
  if (wall_limit.limited()) wall_scope.emplace(wall_limit);
  absl::StatusOr<driver::LoadedRun> run = driver::LoadRun(run_request);
  if (!run.ok()) return ReportFailure(kRunInfo, run.status());
  absl::StatusOr<proto::OutputFiles> outputs =
      CheckedOutputs(run->inputs, f.faults_path, f.report_path, {f.trace_path, f.html_path});
  if (!outputs.ok()) return ReportFailure(kRunInfo, outputs.status());
  return SimulateAndWrite(f, vm, *run, *std::move(outputs));
}

}  // namespace

int RunRun(const Args& args) {
  if (IsChakraRun(args)) return RunChakraReplay(args);
  return RunGuarded(kRunInfo, [&] { return Simulate(args); });
}

}  // namespace hetsim::cli
