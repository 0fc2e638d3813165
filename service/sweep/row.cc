#include "service/sweep/row.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "service/sweep/fingerprint.h"
#include "sim/executor/run_limit.h"

namespace hetsim::sweep {
namespace {

namespace pb = google::protobuf;
using hetsim::v1::Report;

constexpr const char* kMetricColumns[] = {"iteration_time_ms",
                                          "tokens_per_s",
                                          "samples_per_s",
                                          "mfu",
                                          "bubble_ratio",
                                          "eta",
                                          "peak_memory_gib",
                                          "memory_capacity_gib",
                                          "oom",
                                          "num_gpus",
                                          "num_stages",
                                          "num_microbatches",
                                          "schedule",
                                          "status",
                                          "message"};
constexpr const char kFingerprintColumn[] = "sweep_fingerprint";
constexpr const char kJsonPointPrefix[] = "{\"point\":";

std::string Csv(absl::string_view cell) {
  if (cell.find_first_of(",\"\r\n") == absl::string_view::npos) return std::string(cell);
  return absl::StrCat("\"", absl::StrReplaceAll(cell, {{"\"", "\"\""}}), "\"");
}

std::string Json(absl::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string Number(double x) { return std::isfinite(x) ? ShortestDouble(x) : ""; }

// One line: multi-line messages (a validator's list of problems) are joined with "; ".
std::string OneLine(absl::string_view message) {
  std::vector<absl::string_view> lines = absl::StrSplit(message, absl::ByAnyChar("\r\n"), absl::SkipWhitespace());
  return absl::StrJoin(lines, "; ");
}

}  // namespace

std::string OomMessage(const Report& r) {
  std::vector<std::string> parts;
  for (const hetsim::v1::StageReport& s : r.stages()) {
    if (!s.oom()) continue;
    parts.push_back(absl::StrFormat("stage %d (%s, %s): peak %.2f GiB exceeds %.2f GiB", s.index(), s.island(),
                                    s.gpu_type(), s.peak_memory_gib(), s.memory_capacity_gib()));
  }
  return parts.empty() ? "out of memory" : absl::StrJoin(parts, "; ");
}

RowFormat RowFormatForPath(absl::string_view path) {
  const std::string lower = absl::AsciiStrToLower(path);
  return absl::EndsWith(lower, ".jsonl") || absl::EndsWith(lower, ".ndjson") ? RowFormat::kJsonl : RowFormat::kCsv;
}

absl::StatusOr<RowFormat> RowFormatFromName(absl::string_view name) {
  if (name == "csv") return RowFormat::kCsv;
  if (name == "jsonl") return RowFormat::kJsonl;
  return absl::InvalidArgumentError(absl::StrFormat("--format \"%s\": expected csv or jsonl", name));
}

std::string PointStatusName(const absl::StatusOr<Report>& result) {
  if (result.ok()) return result->oom() ? "oom" : "ok";
  if (executor::IsRunLimit(result.status())) return "limit";
  switch (result.status().code()) {
    case absl::StatusCode::kInvalidArgument: return "invalid";
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kNotFound: return "infeasible";
    case absl::StatusCode::kOk:  // never here: result was not ok
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kUnauthenticated: return "error";
    // Abseil's placeholder for codes it may add; it is never a status's code.
    case absl::StatusCode::kDoNotUseReservedForFutureExpansionUseDefaultInSwitchInstead_: break;
  }
  return "error";  // a code newer than this build's Abseil
}

RowFormatter::RowFormatter(RowFormat format, const SweepSpace& space) : format_(format), space_(&space) {
  for (const SweepAxisBinding& axis : space.axes()) {
    Kind kind = Kind::kString;
    if (axis.root != SweepAxisBinding::Root::kPlanner) {
      switch (axis.target.field()->cpp_type()) {
        case pb::FieldDescriptor::CPPTYPE_BOOL: kind = Kind::kBool; break;
        case pb::FieldDescriptor::CPPTYPE_ENUM:
        case pb::FieldDescriptor::CPPTYPE_STRING:
        case pb::FieldDescriptor::CPPTYPE_MESSAGE: kind = Kind::kString; break;
        case pb::FieldDescriptor::CPPTYPE_INT32:
        case pb::FieldDescriptor::CPPTYPE_INT64:
        case pb::FieldDescriptor::CPPTYPE_UINT32:
        case pb::FieldDescriptor::CPPTYPE_UINT64:
        case pb::FieldDescriptor::CPPTYPE_DOUBLE:
        case pb::FieldDescriptor::CPPTYPE_FLOAT: kind = Kind::kNumber; break;
      }
    }
    kinds_.push_back(kind);
  }
}

std::string RowFormatter::Header() const {
  if (format_ == RowFormat::kJsonl) return "";
  std::vector<std::string> cells = {"point"};
  for (const SweepAxisBinding& axis : space_->axes()) cells.push_back(Csv(axis.path));
  for (const char* c : kMetricColumns) cells.push_back(c);
  cells.push_back(kFingerprintColumn);
  return absl::StrCat(absl::StrJoin(cells, ","), "\n");
}

std::string RowFormatter::Key(int64_t point) const {
  const std::vector<const AxisValue*> values = space_->Values(point);
  std::string key = format_ == RowFormat::kCsv ? absl::StrCat(point, ",") : absl::StrCat(kJsonPointPrefix, point, ",");
  for (size_t a = 0; a < values.size(); ++a) {
    if (format_ == RowFormat::kCsv) {
      absl::StrAppend(&key, Csv(values[a]->text), ",");
    } else {
      absl::StrAppend(&key, Json(space_->axes()[a].path), ":",
                      kinds_[a] == Kind::kString ? Json(values[a]->text) : values[a]->text, ",");
    }
  }
  return key;
}

std::string RowFormatter::Row(int64_t point, const absl::StatusOr<Report>& result) const {
  std::vector<std::string> cells;  // metric cells as JSON literals; CSV drops the quotes of strings
  std::vector<bool> is_string;
  auto add = [&](std::string value, bool string) {
    cells.push_back(std::move(value));
    is_string.push_back(string);
  };
  if (result.ok()) {
    const Report& r = *result;
    // The largest per-GPU peak, and the capacity of the GPUs of the stage that has it.
    double peak = 0, capacity = 0;
    for (const hetsim::v1::StageReport& s : r.stages()) {
      if (s.peak_memory_gib() > peak || capacity == 0) capacity = s.memory_capacity_gib();
      peak = std::max(peak, s.peak_memory_gib());
    }
    for (double x : {r.iteration_time_ms(), r.tokens_per_s(), r.samples_per_s(), r.mfu(), r.bubble_ratio(), r.eta(),
                     peak, capacity}) {
      add(Number(x), false);
    }
    add(r.oom() ? "true" : "false", false);
    add(absl::StrCat(r.num_gpus()), false);
    add(absl::StrCat(r.num_stages()), false);
    add(absl::StrCat(r.num_microbatches()), false);
    add(r.schedule(), true);
    add(PointStatusName(result), true);
    add(r.oom() ? OomMessage(r) : "", true);
  } else {
    for (int i = 0; i < 13; ++i) add("", false);
    add(PointStatusName(result), true);
    add(OneLine(result.status().message()), true);
  }
  std::string row = Key(point);
  for (size_t i = 0; i < cells.size(); ++i) {
    if (format_ == RowFormat::kCsv) {
      absl::StrAppend(&row, Csv(cells[i]), ",");
    } else {
      const std::string value = is_string[i] ? Json(cells[i]) : cells[i].empty() ? "null" : cells[i];
      absl::StrAppend(&row, Json(kMetricColumns[i]), ":", value, ",");
    }
  }
  absl::StrAppend(&row, FingerprintCell(), format_ == RowFormat::kJsonl ? "}\n" : "\n");
  return row;
}

std::string RowFormatter::FingerprintCell() const {
  return format_ == RowFormat::kCsv ? space_->fingerprint()
                                    : absl::StrCat(Json(kFingerprintColumn), ":", Json(space_->fingerprint()));
}

absl::Status RowFormatter::CheckFingerprint(absl::string_view line) const {
  HETSIM_ASSIGN_OR_RETURN(std::string found, RowFingerprint(format_, line));
  if (found != space_->fingerprint()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the row is of sweep %s, not of this one (%s): the sweep, a file it names or its points "
                        "changed since",
                        found, space_->fingerprint()));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> RowPoint(RowFormat format, absl::string_view line) {
  absl::string_view rest = line;
  if (format == RowFormat::kJsonl && !absl::ConsumePrefix(&rest, kJsonPointPrefix)) {
    return absl::InvalidArgumentError("not a sweep row (expected {\"point\":N,...})");
  }
  const size_t comma = rest.find(',');
  int64_t point = -1;
  if (comma == absl::string_view::npos || !absl::SimpleAtoi(rest.substr(0, comma), &point) || point < 0) {
    return absl::InvalidArgumentError("not a sweep row (it does not start with a point number)");
  }
  return point;
}

absl::StatusOr<std::string> RowFingerprint(RowFormat format, absl::string_view line) {
  absl::string_view cell;
  if (format == RowFormat::kCsv) {
    const size_t comma = line.rfind(',');
    if (comma != absl::string_view::npos) cell = line.substr(comma + 1);
  } else {
    const std::string prefix = absl::StrCat(",", Json(kFingerprintColumn), ":\"");
    const size_t start = line.rfind(prefix);
    if (start != absl::string_view::npos) {
      cell = line.substr(start + prefix.size());
      if (!absl::ConsumeSuffix(&cell, "\"}")) cell = {};
    }
  }
  if (!IsSweepFingerprint(cell)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the row does not end with its sweep's fingerprint (column %s): not a sweep row, or written "
                        "by a hetsim before session 27",
                        kFingerprintColumn));
  }
  return std::string(cell);
}

}  // namespace hetsim::sweep
