// `hetsim sweep-merge OUT SHARD... [--sweep SWEEP]`: combines the outputs of `hetsim sweep --shard K/N`
// into the file one unsharded run writes.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "proto/io.h"
#include "proto/output_files.h"
#include "proto/validate_sweep.h"
#include "service/sweep/merge.h"
#include "service/sweep/space.h"
#include "traces/html/sweep_html.h"

namespace hetsim::cli {
namespace {

const CommandInfo kSweepMergeInfo = {
    "sweep-merge", "hetsim sweep-merge OUT SHARD... [--sweep SWEEP] [--html R.html] [--max-wall-seconds S]",
    "Merges the output files of the shards of one sweep (hetsim sweep --shard K/N for K = 0..N-1, any\n"
    "order) into OUT: the header once and every point's row in point order, exactly the file one machine\n"
    "running the whole sweep writes. Shards that disagree on the header or on the sweep's fingerprint (the\n"
    "last column: the sweep, the files it names and its point count), hold a point twice, miss a point or\n"
    "end in an incomplete line are refused (exit 2). With --sweep, the rows are also checked against the\n"
    "sweep's points and fingerprint, which catches a shard that lost its last rows. OUT is written\n"
    "atomically; its format (CSV, or JSON Lines for .jsonl) must be the shards'. --html also writes the\n"
    "merged sweep as charts and a sortable table (CSV only; docs/report.md). --max-wall-seconds bounds the\n"
    "whole command, the page's drawing included (0 = no limit)."};

int Merge(const Args& args) {
  po::options_description options("options");
  std::vector<std::string> files;
  std::string sweep_path, html_path;
  double max_wall_seconds = 0;
  options.add_options()("sweep", po::value(&sweep_path)->value_name("SWEEP"), "check against this sweep's points")(
      "max-wall-seconds", po::value(&max_wall_seconds)->value_name("S"), "stop after S seconds (0 = no limit)")(
      "html", po::value(&html_path)->value_name("R.html"), "write charts and a table of the merged sweep")(
      "files", po::value(&files)->multitoken(), "OUT SHARD...");
  po::positional_options_description positional;
  positional.add("files", -1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kSweepMergeInfo, args, options, positional, &vm)) return *exit;
  if (files.size() < 2) return UsageError(kSweepMergeInfo, "needs OUT and at least one SHARD");
  if (auto exit = CheckRunLimitFlags(kSweepMergeInfo, 0, max_wall_seconds)) return *exit;
  const WallLimit wall_limit(max_wall_seconds);
  const std::string out = files[0];
  const std::vector<std::string> shards(files.begin() + 1, files.end());
  const sweep::RowFormat format = sweep::RowFormatForPath(out);
  for (const std::string& s : shards) {
    if (sweep::RowFormatForPath(s) != format) {
      return UsageError(kSweepMergeInfo, absl::StrFormat("%s and %s are not the same format (CSV, or .jsonl)", s, out));
    }
  }
  if (!html_path.empty() && format != sweep::RowFormat::kCsv)
    return UsageError(kSweepMergeInfo, "--html needs CSV shards and OUT");
  absl::StatusOr<std::string> merged;
  std::optional<std::string> header;  // the sweep's CSV header, with --sweep
  if (sweep_path.empty()) {
    merged = sweep::MergeSweepShards(format, shards, nullptr);
  } else {
    absl::StatusOr<hetsim::v1::Sweep> sweep_message = proto::LoadAs<hetsim::v1::Sweep>(sweep_path);
    if (!sweep_message.ok()) return ReportFailure(kSweepMergeInfo, sweep_message.status());
    if (absl::Status s = proto::ValidateSweep(*sweep_message, sweep_path); !s.ok())
      return ReportFailure(kSweepMergeInfo, s);
    absl::StatusOr<sweep::SweepBase> base = sweep::LoadSweepBase(*sweep_message, sweep_path);
    if (!base.ok()) return ReportFailure(kSweepMergeInfo, base.status());
    absl::StatusOr<sweep::SweepSpace> space = sweep::SweepSpace::Create(*sweep_message, sweep_path, *base);
    if (!space.ok()) return ReportFailure(kSweepMergeInfo, space.status());
    const sweep::RowFormatter formatter(format, *space);
    header = formatter.Header();
    if (!header->empty() && header->back() == '\n') header->pop_back();
    const sweep::MergeExpectation expect{&formatter, space->size()};
    merged = sweep::MergeSweepShards(format, shards, &expect);
  }
  if (!merged.ok()) return ReportFailure(kSweepMergeInfo, merged.status());
  std::string html;
  if (!html_path.empty()) {  // before anything is written: a bad merge leaves neither file
    absl::StatusOr<traces::html::SweepTable> table = traces::html::ParseSweepCsv(*merged, out, header);
    if (!table.ok()) return ReportFailure(kSweepMergeInfo, table.status());
    absl::StatusOr<std::string> page = DrawPageWithin(
        wall_limit, [&] { return traces::html::SweepReportHtml(*table, sweep_path.empty() ? out : sweep_path); });
    if (!page.ok()) return ReportFailure(kSweepMergeInfo, page.status());
    html = *std::move(page);
  }
  std::vector<std::string> inputs = shards;
  inputs.push_back(sweep_path);
  proto::OutputFiles outputs(std::move(inputs));  // the rows and the page, both or neither
  if (absl::Status s = outputs.Add(out, *std::move(merged)); !s.ok()) return ReportFailure(kSweepMergeInfo, s);
  if (!html_path.empty()) {
    if (absl::Status s = outputs.Add(html_path, std::move(html)); !s.ok()) return ReportFailure(kSweepMergeInfo, s);
  }
  if (absl::Status s = outputs.Commit(); !s.ok()) return ReportFailure(kSweepMergeInfo, s);
  return kExitOk;
}

}  // namespace

int RunSweepMerge(const Args& args) {
  return RunGuarded(kSweepMergeInfo, [&] { return Merge(args); });
}

}  // namespace hetsim::cli
