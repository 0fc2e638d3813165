// `hetsim sweep-merge OUT SHARD... [--sweep SWEEP]`: combines the outputs of `hetsim sweep --shard K/N`
// into the file one unsharded run writes.
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "app/lib/cli.h"
#include "app/lib/command_list.h"
#include "app/lib/sweep_merge.h"
#include "app/lib/sweep_space.h"
#include "proto/io.h"
#include "proto/validate_sweep.h"

namespace hetsim::app {
namespace {

const CommandInfo kInfo = {
    "sweep-merge", "hetsim sweep-merge OUT SHARD... [--sweep SWEEP]",
    "Merges the output files of the shards of one sweep (hetsim sweep --shard K/N for K = 0..N-1, any\n"
    "order) into OUT: the header once and every point's row in point order, exactly the file one machine\n"
    "running the whole sweep writes. Shards that disagree on the header, hold a point twice, miss a point\n"
    "or end in an incomplete line are refused (exit 2). With --sweep, the rows are also checked against\n"
    "the sweep's points, which catches a shard that lost its last rows. OUT is written atomically; its\n"
    "format (CSV, or JSON Lines for .jsonl) must be the shards'."};

int Merge(const Args& args) {
  po::options_description options("options");
  std::vector<std::string> files;
  std::string sweep_path;
  options.add_options()("sweep", po::value(&sweep_path)->value_name("SWEEP"), "check against this sweep's points")(
      "files", po::value(&files)->multitoken(), "OUT SHARD...");
  po::positional_options_description positional;
  positional.add("files", -1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kInfo, args, options, positional, &vm)) return *exit;
  if (files.size() < 2) return UsageError(kInfo, "needs OUT and at least one SHARD");
  const std::string out = files[0];
  const std::vector<std::string> shards(files.begin() + 1, files.end());
  const RowFormat format = RowFormatForPath(out);
  for (const std::string& s : shards) {
    if (RowFormatForPath(s) != format) {
      return UsageError(kInfo, absl::StrFormat("%s and %s are not the same format (CSV, or .jsonl)", s, out));
    }
  }
  absl::StatusOr<std::string> merged;
  if (sweep_path.empty()) {
    merged = MergeSweepShards(format, shards, nullptr);
  } else {
    absl::StatusOr<hetsim::v1::Sweep> sweep = proto::LoadAs<hetsim::v1::Sweep>(sweep_path);
    if (!sweep.ok()) return ReportFailure(kInfo, sweep.status());
    if (absl::Status s = proto::ValidateSweep(*sweep, sweep_path); !s.ok()) return ReportFailure(kInfo, s);
    absl::StatusOr<SweepBase> base = LoadSweepBase(*sweep, sweep_path);
    if (!base.ok()) return ReportFailure(kInfo, base.status());
    absl::StatusOr<SweepSpace> space = SweepSpace::Create(*sweep, sweep_path, *base);
    if (!space.ok()) return ReportFailure(kInfo, space.status());
    const RowFormatter formatter(format, *space);
    const MergeExpectation expect{&formatter, space->size()};
    merged = MergeSweepShards(format, shards, &expect);
  }
  if (!merged.ok()) return ReportFailure(kInfo, merged.status());
  if (absl::Status s = proto::WriteFileAtomically(out, *merged); !s.ok()) return ReportFailure(kInfo, s);
  return kExitOk;
}

}  // namespace

int RunSweepMerge(const Args& args) {
  return RunGuarded(kInfo, [&] { return Merge(args); });
}

}  // namespace hetsim::app
