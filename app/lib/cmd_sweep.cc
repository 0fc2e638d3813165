// `hetsim sweep SWEEP [-o results.csv] [--format csv|jsonl] [--jobs N] [--resume] [--shard K/N]`: runs
// every point of a sweep (docs/sweeps.md) and writes one row per point as it ends.
#include <cstdio>
#include <string>
#include <thread>

#include "absl/strings/str_format.h"
#include "app/lib/cli.h"
#include "app/lib/command_list.h"
#include "app/lib/sweep_evaluator.h"
#include "app/lib/sweep_progress.h"
#include "app/lib/sweep_runner.h"

namespace hetsim::app {
namespace {

const CommandInfo kInfo = {
    "sweep",
    "hetsim sweep SWEEP [-o results.csv] [--format csv|jsonl] [--jobs N] [--resume] [--shard K/N]\n"
    "             [--max-events N] [--max-wall-seconds S]",
    "Runs every point of SWEEP (the cartesian product of its axes, filtered): substitutes the axis values\n"
    "into the base cluster, model and plan, plans when the sweep has no plan, simulates, and writes one row\n"
    "per point (axis values, iteration time, tokens/s, MFU, bubble ratio, eta, peak memory, OOM, status,\n"
    "message) to -o (standard output without it). CSV, or JSON Lines for --format jsonl or a .jsonl file.\n"
    "A point that fails gets its status and message in its row. Rows are in point order whatever --jobs\n"
    "(default: all cores), written as points end: after a kill, --resume continues the file with no row\n"
    "lost or repeated (a missing file starts afresh). --shard K/N runs points p with p % N == K (K from 0);\n"
    "hetsim sweep-merge combines the shards. An axis naming a field that does not exist exits 2 before\n"
    "anything runs. Progress goes to stderr when it is a terminal. --max-events and --max-wall-seconds\n"
    "bound each point's simulation (0 = no limit): a point that reaches one gets status \"limit\" and a\n"
    "message naming the limit, and the sweep goes on."};

int Sweep(const Args& args) {
  po::options_description options("options");
  SweepJob job;
  std::string format, shard;
  int jobs = 0;
  PointLimits limits;
  int64_t max_events = 0;
  options.add_options()("out,o", po::value(&job.output_path)->value_name("FILE"), "results file (CSV or .jsonl)")(
      "format", po::value(&format)->value_name("F"), "csv or jsonl (default: from the file's extension)")(
      "jobs,j", po::value(&jobs)->value_name("N"), "points run at once (default: all cores)")(
      "resume", po::bool_switch(&job.resume), "continue FILE where a previous run stopped")(
      "shard", po::value(&shard)->value_name("K/N"), "run the K-th of N slices (K from 0)")(
      "max-events", po::value(&max_events)->value_name("N"), "fail a point after N events (0 = no limit)")(
      "max-wall-seconds", po::value(&limits.max_wall_seconds)->value_name("S"),
      "fail a point whose simulation runs longer than S seconds (0 = no limit)")(
      "sweep", po::value(&job.sweep_path)->required(), "sweep file");
  po::positional_options_description positional;
  positional.add("sweep", 1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kInfo, args, options, positional, &vm)) return *exit;
  if (!format.empty()) {
    absl::StatusOr<RowFormat> f = RowFormatFromName(format);
    if (!f.ok()) return UsageError(kInfo, f.status().message());
    job.format = *f;
  }
  if (auto exit = CheckRunLimitFlags(kInfo, max_events, limits.max_wall_seconds)) return *exit;
  limits.max_events = static_cast<uint64_t>(max_events);
  if (vm.count("jobs") && jobs < 1) return UsageError(kInfo, "--jobs: must be at least 1");
  job.jobs = jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!shard.empty()) {
    absl::StatusOr<Shard> s = ParseShard(shard);
    if (!s.ok()) return UsageError(kInfo, s.status().message());
    job.shard = *s;
  }
  if (job.resume && job.output_path.empty()) return UsageError(kInfo, "--resume needs an output file (-o FILE)");
  job.progress = StderrIsTerminal();
  const SimulationEvaluator evaluator(limits);
  absl::StatusOr<SweepOutcome> outcome = RunSweep(job, evaluator);
  if (!outcome.ok()) return ReportFailure(kInfo, outcome.status());
  if (job.progress) {
    std::fprintf(stderr, "sweep: %lld points in this shard (%lld resumed), %lld not ok\n",
                 static_cast<long long>(outcome->shard_points), static_cast<long long>(outcome->resumed),
                 static_cast<long long>(outcome->failed));
  }
  return kExitOk;
}

}  // namespace

int RunSweep(const Args& args) {
  return RunGuarded(kInfo, [&] { return Sweep(args); });
}

}  // namespace hetsim::app
