#include "service/sweep/merge.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "proto/io.h"

namespace hetsim::sweep {
namespace {

struct MergedRow {
  int64_t point;
  size_t shard;
  int64_t line;      // from 1, for messages
  std::string text;  // with its '\n'
};

// What the shards read so far hold: the header (CSV), every row, and the fingerprint of the first row
// with where it was, which every other row must carry.
struct ShardContents {
  bool have_header = false;
  std::string header;
  std::vector<MergedRow> rows;
  std::string fingerprint;
  std::string fingerprint_at;  // "file:line"
};

absl::Status CheckRowFingerprint(const std::string& shard, int64_t line_number, absl::string_view line,
                                 RowFormat format, const MergeExpectation* expect, ShardContents* in) {
  if (expect != nullptr) {
    absl::Status s = expect->formatter->CheckFingerprint(line);
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrFormat("%s:%d: %s", shard, line_number, s.message()));
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> fingerprint = RowFingerprint(format, line);
  if (!fingerprint.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s:%d: %s", shard, line_number, fingerprint.status().message()));
  }
  if (in->fingerprint.empty()) {
    in->fingerprint = *fingerprint;
    in->fingerprint_at = absl::StrFormat("%s:%d", shard, line_number);
  } else if (*fingerprint != in->fingerprint) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d: the row is of sweep %s, %s of sweep %s: the shards come from different sweeps (or from one whose "
        "files changed between shards); run every shard of one sweep",
        shard, line_number, *fingerprint, in->fingerprint_at, in->fingerprint));
  }
  return absl::OkStatus();
}

absl::Status ReadShard(RowFormat format, const std::vector<std::string>& shards, size_t s,
                       const MergeExpectation* expect, ShardContents* in) {
  HETSIM_ASSIGN_OR_RETURN(std::string contents, proto::ReadInputFile(shards[s], proto::InputKind::kRows));
  absl::string_view text = contents;
  if (!text.empty() && text.back() != '\n') {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the last line is incomplete: this shard did not finish; run it again with --resume", shards[s]));
  }
  int64_t line_number = 0;
  if (format == RowFormat::kCsv) {
    const size_t end = text.find('\n');
    if (end == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: empty: no CSV header (is it a sweep's output?)", shards[s]));
    }
    const absl::string_view h = text.substr(0, end + 1);
    if (!in->have_header) {
      if (expect != nullptr && h != expect->formatter->Header()) {
        return absl::InvalidArgumentError(absl::StrFormat("%s: header is not the sweep's (%s)", shards[s],
                                                          absl::StripSuffix(expect->formatter->Header(), "\n")));
      }
      in->header = std::string(h);
      in->have_header = true;
    } else if (h != in->header) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: header differs from %s's: the shards come from different sweeps", shards[s], shards[0]));
    }
    text.remove_prefix(end + 1);
    line_number = 1;
  }
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const absl::string_view line = text.substr(0, end);
    ++line_number;
    absl::StatusOr<int64_t> point = RowPoint(format, line);
    if (!point.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s:%d: %s", shards[s], line_number, point.status().message()));
    }
    HETSIM_RETURN_IF_ERROR(CheckRowFingerprint(shards[s], line_number, line, format, expect, in));
    in->rows.push_back({*point, s, line_number, std::string(text.substr(0, end + 1))});
    text.remove_prefix(end + 1);
  }
  return absl::OkStatus();
}

// Every point once, from 0 without a gap, and (with the sweep) each row the row of its point.
absl::Status CheckPoints(const std::vector<std::string>& shards, const std::vector<MergedRow>& rows,
                         const MergeExpectation* expect) {
  for (size_t k = 0; k < rows.size(); ++k) {
    const MergedRow& r = rows[k];
    if (k > 0 && rows[k - 1].point == r.point) {
      const MergedRow& p = rows[k - 1];
      return absl::InvalidArgumentError(absl::StrFormat("point %d appears twice: %s:%d and %s:%d", r.point,
                                                        shards[p.shard], p.line, shards[r.shard], r.line));
    }
    if (r.point != static_cast<int64_t>(k)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("point %d is in no shard (a shard is missing or unfinished)", k));
    }
    if (expect != nullptr) {
      if (r.point >= expect->total) {
        return absl::InvalidArgumentError(absl::StrFormat("%s:%d: point %d, but the sweep has %d points",
                                                          shards[r.shard], r.line, r.point, expect->total));
      }
      const std::string key = expect->formatter->Key(r.point);
      if (!absl::StartsWith(r.text, key)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s:%d: the row of point %d should start \"%s\": not this sweep's", shards[r.shard], r.line, r.point, key));
      }
    }
  }
  if (expect != nullptr && static_cast<int64_t>(rows.size()) < expect->total) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "point %d is in no shard: the sweep has %d points, the shards %d (a shard is missing or unfinished)",
        static_cast<int64_t>(rows.size()), expect->total, static_cast<int64_t>(rows.size())));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> MergeSweepShards(RowFormat format, const std::vector<std::string>& shards,
                                             const MergeExpectation* expect) {
  ShardContents in;
  for (size_t s = 0; s < shards.size(); ++s) HETSIM_RETURN_IF_ERROR(ReadShard(format, shards, s, expect, &in));
  std::stable_sort(in.rows.begin(), in.rows.end(),
                   [](const MergedRow& a, const MergedRow& b) { return a.point < b.point; });
  HETSIM_RETURN_IF_ERROR(CheckPoints(shards, in.rows, expect));
  std::string merged = format == RowFormat::kCsv ? (in.have_header      ? in.header
                                                    : expect != nullptr ? expect->formatter->Header()
                                                                        : "")
                                                 : "";
  for (const MergedRow& r : in.rows) merged += r.text;
  return merged;
}

}  // namespace hetsim::sweep
