// `hetsim sweep SWEEP [-o results.csv] [--format csv|jsonl] [--jobs N] [--resume] [--shard K/N]`: runs
// every point of a sweep (docs/sweeps.md) and writes one row per point as it ends.
#include <cstdio>
#include <string>
#include <thread>

#include "absl/strings/str_format.h"
#include "app/cli/approximation_options.h"
#include "app/cli/cli.h"
#include "proto/io.h"
#include "service/sweep/evaluator.h"
#include "service/sweep/progress.h"
#include "service/sweep/runner.h"
#include "traces/html/sweep_html.h"

namespace hetsim::cli {
namespace {

const CommandInfo kSweepInfo = {
    "sweep",
    "hetsim sweep SWEEP [-o results.csv] [--format csv|jsonl] [--jobs N] [--resume] [--shard K/N]\n"
    "             [--max-events N] [--max-wall-seconds S] [--html R.html]",
    "Runs every point of SWEEP (the cartesian product of its axes, filtered): substitutes the axis values\n"
    "into the base cluster, model and plan, plans when the sweep has no plan, simulates, and writes one row\n"
    "per point (axis values, iteration time, tokens/s, MFU, bubble ratio, eta, peak memory, OOM, status,\n"
    "message, the sweep's fingerprint) to -o (standard output without it). CSV, or JSON Lines for --format jsonl or a "
    ".jsonl file.\n"
    "A point that fails gets its status and message in its row. Rows are in point order whatever --jobs\n"
    "(default: all cores), written as points end: after a kill, --resume continues the file with no row\n"
    "lost or repeated (a missing file starts afresh). --shard K/N runs points p with p % N == K (K from 0);\n"
    "hetsim sweep-merge combines the shards. An axis naming a field that does not exist exits 2 before\n"
    "anything runs. Progress goes to stderr when it is a terminal. --max-events and --max-wall-seconds\n"
    "bound each point's simulation (0 = no limit): a point that reaches one gets status \"limit\" and a\n"
    "message naming the limit, and the sweep goes on. --html writes the results as charts (one per metric\n"
    "against the first axis, a line per value of the second, small multiples for the others) and a\n"
    "sortable table (docs/report.md); it needs CSV results in a file, and --max-wall-seconds bounds its\n"
    "drawing too."};

int SweepCommand(const Args& args) {
  po::options_description options("options");
  sweep::SweepJob job;
  std::string format, shard, html_path;
  int jobs = 0;
  sweep::PointOptions point_options;
  int64_t max_events = 0;
  options.add_options()("out,o", po::value(&job.output_path)->value_name("FILE"), "results file (CSV or .jsonl)")(
      "format", po::value(&format)->value_name("F"), "csv or jsonl (default: from the file's extension)")(
      "jobs,j", po::value(&jobs)->value_name("N"), "points run at once (default: all cores)")(
      "resume", po::bool_switch(&job.resume), "continue FILE where a previous run stopped")(
      "shard", po::value(&shard)->value_name("K/N"), "run the K-th of N slices (K from 0)")(
      "max-events", po::value(&max_events)->value_name("N"), "fail a point after N events (0 = no limit)")(
      "max-wall-seconds", po::value(&point_options.max_wall_seconds)->value_name("S"),
      "fail a point whose simulation runs longer than S seconds, and the --html page (0 = no limit)")(
      "html", po::value(&html_path)->value_name("R.html"), "write charts and a table of the results (CSV)")(
      "sweep", po::value(&job.sweep_path)->required(), "sweep file");
  ApproximationNames approximation_names;
  AddApproximationOptions(options, &approximation_names);
  po::positional_options_description positional;
  positional.add("sweep", 1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kSweepInfo, args, options, positional, &vm)) return *exit;
  if (!format.empty()) {
    absl::StatusOr<sweep::RowFormat> f = sweep::RowFormatFromName(format);
    if (!f.ok()) return UsageError(kSweepInfo, f.status().message());
    job.format = *f;
  }
  if (auto exit = CheckRunLimitFlags(kSweepInfo, max_events, point_options.max_wall_seconds)) return *exit;
  point_options.max_events = static_cast<uint64_t>(max_events);
  absl::StatusOr<driver::FidelityRequest> fidelity = ParseApproximationOptions(approximation_names);
  if (!fidelity.ok()) return UsageError(kSweepInfo, fidelity.status().message());
  point_options.fidelity = *fidelity;
  if (vm.count("jobs") && jobs < 1) return UsageError(kSweepInfo, "--jobs: must be at least 1");
  job.jobs = jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!shard.empty()) {
    absl::StatusOr<sweep::Shard> s = sweep::ParseShard(shard);
    if (!s.ok()) return UsageError(kSweepInfo, s.status().message());
    job.shard = *s;
  }
  if (job.resume && job.output_path.empty()) return UsageError(kSweepInfo, "--resume needs an output file (-o FILE)");
  if (!html_path.empty() && (job.output_path.empty() ||
                             job.format.value_or(sweep::RowFormatForPath(job.output_path)) != sweep::RowFormat::kCsv)) {
    return UsageError(kSweepInfo, "--html needs CSV results in a file (-o FILE.csv)");
  }
  job.progress = sweep::StderrIsTerminal();
  job.html_path = html_path;
  const sweep::SimulationEvaluator evaluator(point_options);
  absl::StatusOr<sweep::SweepOutcome> outcome = sweep::RunSweep(job, evaluator);
  if (!outcome.ok()) return ReportFailure(kSweepInfo, outcome.status());
  if (job.progress) {
    std::fprintf(stderr, "sweep: %lld points in this shard (%lld resumed), %lld not ok\n",
                 static_cast<long long>(outcome->shard_points), static_cast<long long>(outcome->resumed),
                 static_cast<long long>(outcome->failed));
  }
  if (!html_path.empty()) {
    absl::StatusOr<std::string> rows = proto::ReadInputFile(job.output_path, proto::InputKind::kRows);
    if (!rows.ok()) return ReportFailure(kSweepInfo, rows.status());
    absl::StatusOr<traces::html::SweepTable> table = traces::html::ParseSweepCsv(*rows, job.output_path);
    if (!table.ok()) return ReportFailure(kSweepInfo, table.status());
    // The page, like each point, gets --max-wall-seconds from its own start.
    absl::StatusOr<std::string> html = DrawPageWithin(WallLimit(point_options.max_wall_seconds), [&] {
      return traces::html::SweepReportHtml(*table, job.sweep_path);
    });
    if (!html.ok()) return ReportFailure(kSweepInfo, html.status());
    if (absl::Status s = proto::WriteFileAtomically(html_path, *html); !s.ok()) return ReportFailure(kSweepInfo, s);
  }
  return kExitOk;
}

}  // namespace

int RunSweep(const Args& args) {
  return RunGuarded(kSweepInfo, [&] { return SweepCommand(args); });
}

}  // namespace hetsim::cli
