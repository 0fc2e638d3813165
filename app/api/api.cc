#include "app/api/api.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "app/cli/gpu_list.h"
#include "base/check.h"
#include "base/collective_op.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "planner/planner.h"
#include "proto/any_message.h"
#include "proto/inputs.h"
#include "service/calibrate/calibrate_command.h"
#include "service/chakra/export_command.h"
#include "service/chakra/replay_command.h"
#include "service/driver/check_file.h"
#include "service/driver/collective_command.h"
#include "service/driver/run_command.h"
#include "service/driver/simulate.h"
#include "service/evaluation/validate_predictions.h"
#include "service/fidelity/fidelity_report.h"
#include "service/fidelity/validation_set.h"
#include "service/interop/deepspeed_export.h"
#include "service/interop/import_command.h"
#include "service/interop/megatron_export.h"
#include "service/interop/nemo_export.h"
#include "service/interop/torchtitan_export.h"
#include "service/planning/islands_command.h"
#include "service/planning/plan_command.h"
#include "service/sweep/evaluator.h"
#include "service/sweep/runner.h"
#include "sim/collectives/simulate.h"
#include "sim/network/network.h"

namespace hetsim::api {
namespace {

namespace v1 = hetsim::v1;

proto::Source SourceOf(const Input& in) {
  return {.is_file = in.is_path, .path = in.path, .bytes = in.bytes, .name = in.name};
}

// An integer parameter that lands in a 32-bit field, refused beyond it as the command line's parser
// refuses "--threads 4294967301" (a cast wrapped it to 5, which Python then ran with).
absl::StatusOr<int> Int32Arg(const Args& args, absl::string_view name) {
  const int64_t v = args.integer(name);
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %d is outside [%d, %d]", name, v,
                                                      std::numeric_limits<int32_t>::min(),
                                                      std::numeric_limits<int32_t>::max()));
  }
  return static_cast<int>(v);
}

absl::StatusOr<std::string> Serialize(const google::protobuf::Message& m) {
  std::string out;
  if (!m.SerializeToString(&out)) return absl::InternalError("cannot serialize the result");
  return out;
}

absl::StatusOr<std::string> Run(const Args& args) {
  driver::RunRequest request;
  request.plan = SourceOf(args.input("plan"));
  request.cluster = SourceOf(args.input("cluster"));
  HETSIM_ASSIGN_OR_RETURN(request.network_mode, network::ParseNetworkMode(args.str("network")));
  request.ideal = args.flag("ideal");
  request.max_events = args.integer("max_events");
  request.max_wall_seconds = args.real("max_wall_seconds");
  if (const Input* faults = args.optional_input("faults")) request.faults.file = SourceOf(*faults);
  request.fidelity.exact = args.flag("exact");  // as `hetsim run`: chosen unless exact=True
  request.record_wall_time = false;             // byte-identical reports, as `run --no-wall-time`
  HETSIM_ASSIGN_OR_RETURN(driver::LoadedRun run, driver::LoadRun(request));
  HETSIM_ASSIGN_OR_RETURN(driver::Simulation simulated, driver::SimulateRun(run));
  return Serialize(simulated.report);
}

absl::StatusOr<std::string> Plan(const Args& args) {
  const Input& model_in = args.input("model");
  const Input& cluster_in = args.input("cluster");
  planning::PlanCommand command;
  command.planner_name = args.str("planner");
  command.cp_comm_type = args.str("cp_comm_type");
  command.prediction = args.str("prediction");
  planner::PlanRequest& req = command.request;
  HETSIM_ASSIGN_OR_RETURN(req.layers, Int32Arg(args, "layers"));
  req.global_batch_size = static_cast<uint64_t>(args.integer("global_batch_size"));
  req.micro_batch_size = static_cast<uint64_t>(args.integer("micro_batch_size"));
  HETSIM_ASSIGN_OR_RETURN(req.threads, Int32Arg(args, "threads"));
  HETSIM_ASSIGN_OR_RETURN(req.context_parallel, Int32Arg(args, "context_parallel"));
  req.grad_reduce_in_fp32 = args.flag("grad_reduce_in_fp32");
  req.search_mixed_replicas = args.flag("search_mixed_replicas");
  req.search_pipelines = args.flag("search_pipelines");
  HETSIM_RETURN_IF_ERROR(planning::CheckPlanCommand(command));
  HETSIM_ASSIGN_OR_RETURN(command.inputs.model, proto::LoadModel(SourceOf(model_in)));
  HETSIM_ASSIGN_OR_RETURN(command.inputs.cluster, proto::LoadCluster(SourceOf(cluster_in)));
  HETSIM_ASSIGN_OR_RETURN(driver::Planned planned, planning::PlanWith(command));
  return Serialize(planned.plan);
}

absl::StatusOr<std::string> Validate(const Args& args) {
  std::vector<proto::Source> plans;
  for (const Input& p : args.inputs("plans")) plans.push_back(SourceOf(p));
  HETSIM_ASSIGN_OR_RETURN(
      v1::PlanValidationReport report,
      evaluation::ValidatePredictionSources(plans, SourceOf(args.input("cluster")),
                                            {.chart = args.flag("chart"), .exact = args.flag("exact")}));
  return Serialize(report);
}

absl::StatusOr<std::string> Collective(const Args& args) {
  const Input& cluster_in = args.input("cluster");
  collectives::CollectiveRequest req;
  HETSIM_ASSIGN_OR_RETURN(req.op, ParseCollectiveOp(args.str("op")));
  HETSIM_ASSIGN_OR_RETURN(req.algorithm, collectives::ParseAlgorithm(args.str("algorithm")));
  HETSIM_ASSIGN_OR_RETURN(network::NetworkMode mode, network::ParseNetworkMode(args.str("network")));
  HETSIM_ASSIGN_OR_RETURN(v1::Cluster cluster, proto::LoadCluster(SourceOf(cluster_in)));
  HETSIM_ASSIGN_OR_RETURN(req.gpus, cli::GpuIdsOf(args.integers("gpus"), "gpus"));
  HETSIM_ASSIGN_OR_RETURN(driver::CollectiveSession session,
                          driver::CollectiveSession::Open({.cluster = std::move(cluster),
                                                           .cluster_file = cluster_in.name,
                                                           .ideal = args.flag("ideal"),
                                                           .request = req,
                                                           .mode = mode,
                                                           .max_wall_seconds = args.real("max_wall_seconds")}));
  HETSIM_ASSIGN_OR_RETURN(collectives::CollectiveResult r, session.Simulate(args.integer("bytes")));
  return Serialize(driver::CollectiveReportOf(session.request(), r));
}

absl::StatusOr<std::string> Sweep(const Args& args) {
  const Input& sweep = args.input("sweep");
  HETSIM_ASSIGN_OR_RETURN(const int jobs, Int32Arg(args, "jobs"));
  // As `sweep --jobs`: at least 1 (the runner refuses more than kMaxWorkerThreads for both).
  if (jobs < 1) return absl::InvalidArgumentError(absl::StrFormat("jobs: %d: must be at least 1", jobs));
  v1::Sweep message;
  HETSIM_RETURN_IF_ERROR(proto::ParseSource(SourceOf(sweep), &message));
  sweep::PointOptions point_options;
  point_options.fidelity.exact = args.flag("exact");  // as `hetsim sweep`: chosen unless exact=True
  // As `sweep --max-events / --max-wall-seconds`: each point's limits; a point past one is "limit".
  point_options.max_events = static_cast<uint64_t>(args.integer("max_events"));
  point_options.max_wall_seconds = args.real("max_wall_seconds");
  HETSIM_RETURN_IF_ERROR(driver::CheckRunLimits(args.integer("max_events"), point_options.max_wall_seconds));
  sweep::SimulationEvaluator evaluator(point_options);
  HETSIM_ASSIGN_OR_RETURN(v1::SweepResult result,
                          sweep::RunSweepToMessage(message, sweep.is_path ? sweep.path : sweep.name, jobs, evaluator));
  return Serialize(result);
}

absl::StatusOr<std::string> Check(const Args& args) {
  const Input& file = args.input("file");
  const Input* cluster = args.optional_input("cluster");
  // A message in memory carries its own type; a file's is detected unless `type` names it.
  const std::string& type = !file.is_path && !file.message_type.empty() ? file.message_type : args.str("type");
  std::optional<proto::MessageType> t;
  if (!type.empty()) {
    HETSIM_ASSIGN_OR_RETURN(proto::MessageType parsed, proto::MessageTypeFromName(type));
    t = parsed;
  }
  proto::AnyMessage m{};
  if (file.is_path) {
    HETSIM_ASSIGN_OR_RETURN(m, proto::LoadAnyMessage(file.path, t));
  } else {
    if (!t) return absl::InvalidArgumentError(absl::StrCat(file.name, ": the message type is required"));
    m = {*t, proto::NewMessage(*t)};
    HETSIM_RETURN_IF_ERROR(proto::ParseSource(SourceOf(file), m.message.get()));
  }
  const std::optional<proto::Source> cluster_source =
      cluster != nullptr ? std::optional(SourceOf(*cluster)) : std::nullopt;
  const proto::Source source = SourceOf(file);
  driver::Checked c = driver::CheckOne(m, source, cluster_source ? &*cluster_source : nullptr);
  if (!c.status.ok()) return c.status;
  // A sweep's axes bound to its base inputs, as `hetsim check` and `hetsim sweep` bind them.
  if (m.type == proto::MessageType::kSweep) {
    HETSIM_RETURN_IF_ERROR(sweep::CheckSweepAxes(static_cast<const v1::Sweep&>(*m.message), source.label()));
  }
  return c.summary;
}

// The paths of `inputs`: files that name others relative to themselves, or text that is no message, are
// read from their files, never from messages in memory (`why` says which).
absl::StatusOr<std::vector<std::string>> PathsOf(const std::vector<Input>& inputs, absl::string_view why) {
  std::vector<std::string> paths;
  for (const Input& in : inputs) {
    if (!in.is_path) return absl::InvalidArgumentError(absl::StrFormat("%s: %s: pass the path", in.name, why));
    paths.push_back(in.path);
  }
  return paths;
}

absl::StatusOr<std::string> Fidelity(const Args& args) {
  // As `hetsim fidelity FILES`: the bundled sets when none is named; a set names its plans and clusters
  // relative to its own file, so it is read from a path, never from a message in memory.
  HETSIM_ASSIGN_OR_RETURN(
      std::vector<std::string> files,
      PathsOf(args.inputs("sets"), "a ValidationSet is read from its file (it names its plans relative to it)"));
  HETSIM_ASSIGN_OR_RETURN(std::vector<fidelity::LoadedValidationSet> sets, fidelity::LoadValidationSets(files));
  HETSIM_ASSIGN_OR_RETURN(v1::FidelityReport report,
                          fidelity::PredictSets(sets, args.flag("calibration"), nullptr, args.flag("exact")));
  return Serialize(report);
}

absl::StatusOr<std::string> Islands(const Args& args) {
  HETSIM_ASSIGN_OR_RETURN(planning::IslandsResponse formed,
                          planning::FormIslands({.cluster = SourceOf(args.input("cluster")),
                                                 .thresholds = {.compute = args.real("tau_c"),
                                                                .memory = args.real("tau_m"),
                                                                .memory_bandwidth = args.real("tau_b"),
                                                                .merge_factor = args.real("merge_factor")}}));
  return formed.table;
}

// What the command prints on stderr beside its result (warnings, notes), printed the same way.
void PrintLines(absl::string_view prefix, const std::vector<std::string>& lines) {
  for (const std::string& line : lines) std::fprintf(stderr, "%s%s\n", std::string(prefix).c_str(), line.c_str());
}

constexpr absl::string_view kTextFile = "a text file (a log, a CSV) is read from its file";

absl::StatusOr<std::string> Calibrate(const Args& args) {
  calibrate::CalibrateRequest r;
  HETSIM_ASSIGN_OR_RETURN(std::vector<std::string> cluster,
                          PathsOf({args.input("cluster")},
                                  "the measured iterations' plans are checked against the "
                                  "cluster file"));
  r.cluster_path = cluster[0];
  HETSIM_ASSIGN_OR_RETURN(r.logs, PathsOf(args.inputs("logs"), kTextFile));
  HETSIM_ASSIGN_OR_RETURN(r.gemms, PathsOf(args.inputs("gemms"), kTextFile));
  HETSIM_ASSIGN_OR_RETURN(r.iterations, PathsOf(args.inputs("iterations"), kTextFile));
  r.island = args.str("island");
  r.gpu_type = args.str("gpu_type");
  r.max_mape = args.real("max_mape");
  r.accept_poor_fit = args.flag("accept_poor_fit");
  r.exact = args.flag("exact");
  HETSIM_ASSIGN_OR_RETURN(r.log_shape.ranks, Int32Arg(args, "log_ranks"));
  HETSIM_ASSIGN_OR_RETURN(r.log_shape.hosts, Int32Arg(args, "log_hosts"));
  r.max_wall_seconds = args.real("max_wall_seconds");
  HETSIM_ASSIGN_OR_RETURN(calibrate::CalibrateResponse fitted, calibrate::Calibrate(r));
  PrintLines("hetsim calibrate: warning: ", fitted.warnings);
  HETSIM_RETURN_IF_ERROR(fitted.refusal);
  return Serialize(fitted.cluster);
}

absl::StatusOr<std::string> ImportPlan(const Args& args) {
  const interop::ImportRequest r{.format = args.str("format"),
                                 .file = args.str("file"),
                                 .line = args.str("line"),
                                 .cluster = SourceOf(args.input("cluster")),
                                 .model_path = args.str("model"),
                                 .layout = {.island = args.str("island"),
                                            .nodes = args.integer("nodes"),
                                            .gpus_per_node = args.integer("gpus_per_node"),
                                            .name = args.str("name"),
                                            .model = std::nullopt},
                                 .strict = args.flag("strict")};
  HETSIM_ASSIGN_OR_RETURN(interop::ImportResponse imported, interop::ImportPlan(r));
  return Serialize(imported.plan);
}

absl::StatusOr<std::string> ExportMegatron(const Args& args) {
  HETSIM_ASSIGN_OR_RETURN(proto::PlanInputs inputs,
                          proto::LoadPlanInputs(SourceOf(args.input("plan")), SourceOf(args.input("cluster"))));
  HETSIM_ASSIGN_OR_RETURN(interop::MegatronExport exported, interop::ExportMegatron(inputs));
  PrintLines("note: ", exported.notes);
  return exported.launch_line;
}

// The plan's inputs; `model`, when given, the model of a plan that names none (as the commands' --model).
absl::StatusOr<proto::PlanInputs> PlanInputsOf(const Args& args) {
  const proto::Source plan = SourceOf(args.input("plan")), cluster = SourceOf(args.input("cluster"));
  if (const Input* model = args.optional_input("model")) {
    return proto::LoadPlanInputsWithModel(plan, cluster, SourceOf(*model));
  }
  return proto::LoadPlanInputs(plan, cluster);
}

absl::StatusOr<std::string> ExportTorchtitan(const Args& args) {
  HETSIM_ASSIGN_OR_RETURN(const proto::PlanInputs inputs, PlanInputsOf(args));
  HETSIM_ASSIGN_OR_RETURN(interop::TorchtitanExport exported, interop::ExportTorchtitan(inputs));
  PrintLines("note: ", exported.notes);
  return exported.toml;
}

absl::StatusOr<std::string> ExportNemo(const Args& args) {
  HETSIM_ASSIGN_OR_RETURN(const proto::PlanInputs inputs, PlanInputsOf(args));
  HETSIM_ASSIGN_OR_RETURN(interop::NemoExport exported, interop::ExportNemo(inputs));
  PrintLines("note: ", exported.notes);
  return exported.yaml;
}

// As `hetsim export deepspeed [--out-dir DIR]`: DIR/ds_config.json and DIR/launch.sh, or the text it prints.
absl::StatusOr<std::string> ExportDeepSpeed(const Args& args) {
  const Input& plan = args.input("plan");
  const Input& cluster = args.input("cluster");
  HETSIM_ASSIGN_OR_RETURN(const proto::PlanInputs inputs, proto::LoadPlanInputs(SourceOf(plan), SourceOf(cluster)));
  constexpr absl::string_view kConfigName = "ds_config.json";
  HETSIM_ASSIGN_OR_RETURN(interop::DeepSpeedExport exported, interop::ExportDeepSpeed(inputs, kConfigName));
  const std::filesystem::path dir(args.str("out_dir"));
  const bool to_files = !args.str("out_dir").empty();
  HETSIM_ASSIGN_OR_RETURN(std::string printed,
                          interop::WriteDeepSpeedExport(
                              exported, kConfigName, to_files ? (dir / std::string(kConfigName)).string() : "",
                              to_files ? (dir / "launch.sh").string() : "",
                              {plan.is_path ? plan.path : "", cluster.is_path ? cluster.path : "", inputs.model_path}));
  PrintLines("note: ", exported.notes);
  return printed;
}

absl::StatusOr<std::string> ExportChakra(const Args& args) {
  HETSIM_ASSIGN_OR_RETURN(chakra::ExportResponse exported,
                          chakra::ExportChakraFiles({.plan = SourceOf(args.input("plan")),
                                                     .cluster = SourceOf(args.input("cluster")),
                                                     .out_dir = args.str("out"),
                                                     .prefix = args.str("prefix")}));
  return exported.summary;
}

absl::StatusOr<std::string> ReplayChakra(const Args& args) {
  chakra::ReplayRequest r;
  r.dir = args.str("dir");
  r.cluster = SourceOf(args.input("cluster"));
  r.comm_groups = args.str("comm_groups");
  r.ideal = args.flag("ideal");
  HETSIM_ASSIGN_OR_RETURN(r.options.network_mode, network::ParseNetworkMode(args.str("network")));
  r.options.retime_compute = args.flag("retime_compute");
  r.options.max_events = static_cast<uint64_t>(args.integer("max_events"));
  r.options.max_wall_seconds = args.real("max_wall_seconds");
  r.record_wall_time = false;  // byte-identical reports, as `run --no-wall-time`
  HETSIM_ASSIGN_OR_RETURN(chakra::LoadedReplay loaded, chakra::LoadReplay(r));
  PrintLines("hetsim run: warning: ", loaded.workload.warnings);
  HETSIM_ASSIGN_OR_RETURN(chakra::ReplayResponse replayed, chakra::RunReplay(loaded, r));
  return Serialize(replayed.report);
}

// Parameters, by how a binding passes them.
Param InputParam(const char* name, const char* message) { return {name, Kind::kInput, message, false, true, {}}; }
Param Option(const char* name, Kind kind, Value default_value) {
  return {name, kind, "", true, false, std::move(default_value)};
}
Param RequiredOption(const char* name, Kind kind) { return {name, kind, "", true, true, {}}; }
Param Text(const char* name, const char* default_value) {
  return Option(name, Kind::kString, std::string(default_value));
}
// A list of inputs of `message`; an optional one defaults to the empty list.
Param InputsParam(const char* name, const char* message, bool required) {
  return {name, Kind::kInputs, message, false, required, required ? Value{} : Value{std::vector<Input>{}}};
}
// As the commands' --exact: the full simulation, whatever the run's size (docs/performance.md).
Param ExactOption() { return Option("exact", Kind::kBool, false); }

// `hetsim islands`' defaults (its flags' and the call's).
constexpr topology::IslandThresholds kIslandDefaults;

// The calls that simulate, plan and check: run, plan, islands, validate, collective, sweep, fidelity, check.
std::vector<Call> SimulationCalls() {
  return {
      {"run",
       "`hetsim run`: simulate one iteration of `plan` on `cluster`; returns a Report. As the command, a run\n"
       "whose exact simulation would be slow gets the approximations measured under 0.5% for its shape\n"
       "(Report.approximation_choice); exact=True forces the full simulation.\n\n"
       "A plan that does not fit in its GPUs' memory is still simulated: check report.oom (True when a\n"
       "stage's peak exceeds its capacity; stages[i].peak_memory_gib against memory_capacity_gib) before\n"
       "taking its time, as a planner's search loop must.\n\n"
       "faults: what-if faults (a Faults message or its file, as `hetsim run --faults`; docs/faults.md).",
       "Report",
       {InputParam("plan", "Plan"),
        InputParam("cluster", "Cluster"),
        Text("network", "max-min"),
        Option("ideal", Kind::kBool, false),
        Option("max_events", Kind::kCount, int64_t{0}),
        Option("max_wall_seconds", Kind::kDouble, 0.0),
        ExactOption(),
        {"faults", Kind::kOptionalInput, "Faults", true, false, {}}},
       Run},
      {"plan",
       "`hetsim plan`: a Plan (model inline); prediction \"hetsim\" or \"naive\" fills Plan.prediction.\n\n"
       "context_parallel splits every sequence over that many GPUs (0 searches the powers of two),\n"
       "cp_comm_type is how (\"p2p\", \"all_gather\" or \"a2a\"; Plan.cp_comm_type), grad_reduce_in_fp32 prices\n"
       "FP32 gradients (Plan.grad_reduce_in_fp32), as `hetsim plan`'s flags of the same names;\n"
       "search_mixed_replicas=False leaves out HAPT's mixed replica groups, as `--no-mixed-replicas`;\n"
       "search_pipelines=False its pipelines of different shapes (Plan.pipelines), as `--no-pipelines`.",
       "Plan",
       {InputParam("model", "Model"), InputParam("cluster", "Cluster"), Text("planner", "hapt"),
        Option("global_batch_size", Kind::kCount, int64_t{128}), Option("micro_batch_size", Kind::kCount, int64_t{0}),
        Option("layers", Kind::kInt, int64_t{0}), Option("threads", Kind::kInt, int64_t{1}), Text("prediction", ""),
        Option("context_parallel", Kind::kInt, int64_t{1}), Text("cp_comm_type", "p2p"),
        Option("grad_reduce_in_fp32", Kind::kBool, false), Option("search_mixed_replicas", Kind::kBool, true),
        Option("search_pipelines", Kind::kBool, true)},
       Plan},
      {"islands",
       "`hetsim islands`: the GPU islands of `cluster` by Tangram's Algorithm 1 under the tolerances tau_c,\n"
       "tau_m, tau_b (compute, HBM capacity, HBM bandwidth) and the merge factor, as the command's flags of\n"
       "the same names; returns the table the command prints (text).",
       "",
       {InputParam("cluster", "Cluster"), Option("tau_c", Kind::kDouble, kIslandDefaults.compute),
        Option("tau_m", Kind::kDouble, kIslandDefaults.memory),
        Option("tau_b", Kind::kDouble, kIslandDefaults.memory_bandwidth),
        Option("merge_factor", Kind::kDouble, kIslandDefaults.merge_factor)},
       Islands},
      {"validate",
       "`hetsim validate`: plans carrying predictions against the simulation; a PlanValidationReport.\n"
       "Each plan is simulated at the fidelity `run` chooses; exact=True simulates every one in full.",
       "PlanValidationReport",
       {InputsParam("plans", "Plan", true), InputParam("cluster", "Cluster"), Option("chart", Kind::kBool, false),
        ExactOption()},
       Validate},
      {"collective",
       "`hetsim collective`: one collective of `bytes` over the global GPU ids `gpus`; a CollectiveReport.",
       "CollectiveReport",
       {InputParam("cluster", "Cluster"), Text("op", "all-reduce"), RequiredOption("bytes", Kind::kInt),
        RequiredOption("gpus", Kind::kInts), Text("algorithm", "auto"), Text("network", "max-min"),
        Option("ideal", Kind::kBool, false), Option("max_wall_seconds", Kind::kDouble, 0.0)},
       Collective},
      {"sweep",
       "`hetsim sweep`: a SweepResult, its points in point order, each with its axis values, status and\n"
       "report (a Sweep message names its files relative to the working directory).",
       "SweepResult",
       {InputParam("sweep", "Sweep"), Option("jobs", Kind::kInt, int64_t{1}), ExactOption(),
        Option("max_events", Kind::kCount, int64_t{0}), Option("max_wall_seconds", Kind::kDouble, 0.0)},
       Sweep},
      {"fidelity",
       "`hetsim fidelity`: the validation sets `sets` (paths of ValidationSet files; none: the bundled\n"
       "validation/*.pbtxt) predicted and compared with their published measurements; a FidelityReport\n"
       "(per set MAPE, max |error|, signed error, Kendall's tau, groups, bounds and their violations).\n"
       "calibration=True adds the calibration from k = 1, 2, 3 runs, as `--calibration`; exact=True simulates\n"
       "every training run in full, as `--exact`.",
       "FidelityReport",
       {InputsParam("sets", "ValidationSet", false), Option("calibration", Kind::kBool, false), ExactOption()},
       Fidelity},
      {"check",
       "`hetsim check`: the summary of a valid input (path or message); raises HetsimError otherwise.",
       "",
       {{"file", Kind::kAnyInput, "", false, true, {}},
        {"cluster", Kind::kOptionalInput, "Cluster", true, false, {}},
        Text("type", "")},
       Check},
  };
}

// The calls that read or write other tools' files and measurements: calibrate, import, export, replay.
std::vector<Call> InteropCalls() {
  return {
      {"calibrate",
       "`hetsim calibrate`: the cluster `cluster` (a path) with its NCCL, GEMM and overhead parameters fitted\n"
       "to nccl-tests `logs`, GEMM timings `gemms` and measured `iterations` (paths, as the command's LOG,\n"
       "--gemm and --iterations); returns the calibrated Cluster, as `--out` writes it. A poor fit raises\n"
       "unless accept_poor_fit=True; warnings go to stderr as the command prints them.",
       "Cluster",
       {InputParam("cluster", "Cluster"), InputsParam("logs", "", false),
        Option("gemms", Kind::kInputs, Value{std::vector<Input>{}}),
        Option("iterations", Kind::kInputs, Value{std::vector<Input>{}}), Text("island", ""), Text("gpu_type", ""),
        Option("max_mape", Kind::kDouble, 15.0), Option("accept_poor_fit", Kind::kBool, false), ExactOption(),
        Option("log_ranks", Kind::kInt, int64_t{0}), Option("log_hosts", Kind::kInt, int64_t{0}),
        Option("max_wall_seconds", Kind::kDouble, 0.0)},
       Calibrate},
      {"import_plan",
       "`hetsim import FORMAT`: the Plan of a Megatron-LM launch line (`file` or `line`), a torchtitan TOML or a\n"
       "NeMo YAML config (`file`) on `cluster`, as `--out` writes it; strict=True refuses what it cannot apply.",
       "Plan",
       {{"format", Kind::kString, "", false, true, {}},
        InputParam("cluster", "Cluster"),
        Text("file", ""),
        Text("line", ""),
        Text("model", ""),
        Option("nodes", Kind::kInt, int64_t{0}),
        Option("gpus_per_node", Kind::kInt, int64_t{0}),
        Text("island", ""),
        Text("name", ""),
        Option("strict", Kind::kBool, false)},
       ImportPlan},
      {"export_megatron",
       "`hetsim export megatron`: the Megatron-LM launch line of `plan` on `cluster` (text); notes on stderr.",
       "",
       {InputParam("plan", "Plan"), InputParam("cluster", "Cluster")},
       ExportMegatron},
      {"export_deepspeed",
       "`hetsim export deepspeed`: the DeepSpeed config of `plan` on `cluster` and the Megatron-DeepSpeed launch line\n"
       "that reads it: with out_dir, writes out_dir/ds_config.json and out_dir/launch.sh (both or neither) and\n"
       "returns the command's \"wrote ...\" line and the launch line; without, the text the command prints\n"
       "(\"ds_config.json:\", the config, the launch line). Notes on stderr.",
       "",
       {InputParam("plan", "Plan"), InputParam("cluster", "Cluster"), Text("out_dir", "")},
       ExportDeepSpeed},
      {"export_torchtitan",
       "`hetsim export torchtitan`: the torchtitan TOML job config of `plan` on `cluster` (text); `model` is the\n"
       "model of a plan that names none, as --model. Notes on stderr.",
       "",
       {InputParam("plan", "Plan"),
        InputParam("cluster", "Cluster"),
        {"model", Kind::kOptionalInput, "Model", true, false, {}}},
       ExportTorchtitan},
      {"export_nemo",
       "`hetsim export nemo`: the NeMo YAML training config of `plan` on `cluster` (text); `model` is the model of\n"
       "a plan that names none, as --model. Notes on stderr.",
       "",
       {InputParam("plan", "Plan"),
        InputParam("cluster", "Cluster"),
        {"model", Kind::kOptionalInput, "Model", true, false, {}}},
       ExportNemo},
      {"export_chakra",
       "`hetsim export chakra`: writes `plan`'s iteration on `cluster` as Chakra traces into the folder `out`\n"
       "(prefix: the plan file's name, or \"plan\" for a message); returns the command's line.",
       "",
       {InputParam("plan", "Plan"), InputParam("cluster", "Cluster"), RequiredOption("out", Kind::kString),
        Text("prefix", "")},
       ExportChakra},
      {"replay_chakra",
       "`hetsim run --chakra DIR`: the Report of the Chakra traces in `dir` on `cluster` (rank r on GPU r).",
       "Report",
       {{"dir", Kind::kString, "", false, true, {}},
        InputParam("cluster", "Cluster"),
        Text("comm_groups", ""),
        Option("retime_compute", Kind::kBool, false),
        Text("network", "max-min"),
        Option("ideal", Kind::kBool, false),
        Option("max_events", Kind::kCount, int64_t{0}),
        Option("max_wall_seconds", Kind::kDouble, 0.0)},
       ReplayChakra},
  };
}

std::vector<Call> MakeCalls() {
  std::vector<Call> calls = SimulationCalls();
  for (Call& c : InteropCalls()) calls.push_back(std::move(c));
  return calls;
}

// The value's kind as a parameter of `kind` must hold it.
bool Holds(const Value& v, Kind kind) {
  switch (kind) {
    case Kind::kInput:
    case Kind::kAnyInput: return std::holds_alternative<Input>(v);
    case Kind::kInputs: return std::holds_alternative<std::vector<Input>>(v);
    case Kind::kOptionalInput: return std::holds_alternative<Input>(v) || std::holds_alternative<std::monostate>(v);
    case Kind::kString: return std::holds_alternative<std::string>(v);
    case Kind::kInt:
    case Kind::kCount: return std::holds_alternative<int64_t>(v);
    case Kind::kDouble: return std::holds_alternative<double>(v);
    case Kind::kBool: return std::holds_alternative<bool>(v);
    case Kind::kInts: return std::holds_alternative<std::vector<int64_t>>(v);
  }
  HETSIM_CHECK(false, "parameter kind %d", static_cast<int>(kind));
}

}  // namespace

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kInput: return "input";
    case Kind::kInputs: return "inputs";
    case Kind::kOptionalInput: return "optional_input";
    case Kind::kAnyInput: return "any_input";
    case Kind::kString: return "str";
    case Kind::kInt: return "int";
    case Kind::kCount: return "count";
    case Kind::kDouble: return "float";
    case Kind::kBool: return "bool";
    case Kind::kInts: return "ints";
  }
  HETSIM_CHECK(false, "parameter kind %d", static_cast<int>(kind));
}

const Value& Args::At(absl::string_view name) const {
  for (size_t i = 0; i < call_.params.size(); ++i) {
    if (call_.params[i].name == name) return values_[i];
  }
  HETSIM_CHECK(false, "%s takes no parameter %s", call_.name.c_str(), std::string(name).c_str());
}

const Input* Args::optional_input(absl::string_view name) const { return std::get_if<Input>(&At(name)); }

const std::vector<Call>& Calls() {
  static const std::vector<Call>* calls = new std::vector<Call>(MakeCalls());
  return *calls;
}

const Call* FindCall(absl::string_view name) {
  for (const Call& c : Calls()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::vector<Value> DefaultArguments(const Call& call) {
  std::vector<Value> values;
  for (const Param& p : call.params) values.push_back(p.default_value);
  return values;
}

absl::StatusOr<std::string> Invoke(const Call& call, const std::vector<Value>& values) {
  if (values.size() != call.params.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s takes %d arguments, not %d", call.name, call.params.size(), values.size()));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const Param& p = call.params[i];
    if (!Holds(values[i], p.kind)) {
      return absl::InvalidArgumentError(absl::StrCat(p.name, ": expected ", KindName(p.kind)));
    }
    // A --max-wall-seconds; the CLI's own check, word for word (max_mape: the service's).
    if (p.kind == Kind::kDouble && p.name == "max_wall_seconds")
      HETSIM_RETURN_IF_ERROR(ValidateMaxWallSeconds(std::get<double>(values[i]), p.name));
    if (p.kind == Kind::kCount && std::get<int64_t>(values[i]) < 0) {
      return absl::InvalidArgumentError(absl::StrCat(p.name, ": ", std::get<int64_t>(values[i]), " is negative"));
    }
  }
  return call.body(Args(call, values));
}

}  // namespace hetsim::api
