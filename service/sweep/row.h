// The rows a sweep writes: one per point, columns in a fixed order
//   point, <one column per axis, named by its path>, iteration_time_ms, tokens_per_s, samples_per_s,
//   mfu, bubble_ratio, eta, peak_memory_gib, oom, num_gpus, num_stages, num_microbatches, schedule,
//   status, message, sweep_fingerprint
// as CSV (a header line, RFC 4180 quoting) or JSON Lines (one object per line, keys in that order).
// sweep_fingerprint (fingerprint.h) names the sweep the row belongs to; merges and resumes check it.
// Every row is exactly one line, so a file can be resumed and merged line by line: messages that
// span lines are joined with "; ". Numbers are printed in their shortest round-trip form, so the bytes
// depend only on the values (never on the thread or machine that computed them).
//
// status: ok | oom (simulated, does not fit in memory) | invalid (inputs invalid after substitution) |
//         infeasible (no plan found) | limit (--max-events or --max-wall-seconds reached) |
//         error (anything else, a bug). Failed points leave the metric cells empty (CSV) or null (JSONL).
#ifndef HETSIM_SERVICE_SWEEP_ROW_H_
#define HETSIM_SERVICE_SWEEP_ROW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "service/sweep/space.h"

namespace hetsim::sweep {

enum class RowFormat { kCsv, kJsonl };

// .jsonl and .ndjson are JSON Lines, anything else CSV.
RowFormat RowFormatForPath(absl::string_view path);
absl::StatusOr<RowFormat> RowFormatFromName(absl::string_view name);  // "csv" or "jsonl"

// "ok", "oom", "invalid", "infeasible", "limit" or "error" for a point's outcome.
std::string PointStatusName(const absl::StatusOr<hetsim::v1::Report>& result);
// The message of a point that does not fit: which stages exceed their memory, and by how much.
std::string OomMessage(const hetsim::v1::Report& r);

class RowFormatter {
 public:
  RowFormatter(RowFormat format, const SweepSpace& space);

  RowFormat format() const { return format_; }
  // The CSV header line (with '\n'); empty for JSON Lines.
  std::string Header() const;
  // The start of the row of `point`: its number and axis values, up to and including the separator
  // after the last axis. A resumed or merged file is checked against it.
  std::string Key(int64_t point) const;
  // The whole row of `point`, ending with '\n'.
  std::string Row(int64_t point, const absl::StatusOr<hetsim::v1::Report>& result) const;
  // InvalidArgument when `line` (a row without its '\n') does not end with this sweep's fingerprint.
  absl::Status CheckFingerprint(absl::string_view line) const;

 private:
  std::string FingerprintCell() const;  // the last cell, in the row's format

  enum class Kind { kNumber, kBool, kString };
  RowFormat format_;
  const SweepSpace* space_;
  std::vector<Kind> kinds_;
};

// The point number a row starts with; InvalidArgument when the line is not a row.
absl::StatusOr<int64_t> RowPoint(RowFormat format, absl::string_view line);
// The sweep fingerprint a row (without its '\n') ends with; InvalidArgument when it ends otherwise.
absl::StatusOr<std::string> RowFingerprint(RowFormat format, absl::string_view line);

}  // namespace hetsim::sweep

#endif  // HETSIM_SERVICE_SWEEP_ROW_H_
