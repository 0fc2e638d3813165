#include "proto/file_format.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"

namespace hetsim::proto {

absl::StatusOr<FileFormat> FileFormatFromPath(absl::string_view path) {
  auto ends = [&](absl::string_view ext) { return absl::EndsWithIgnoreCase(path, ext); };
  if (ends(".pb") || ends(".bin")) return FileFormat::kBinary;
  if (ends(".pbtxt") || ends(".textproto") || ends(".txtpb")) return FileFormat::kText;
  if (ends(".json")) return FileFormat::kJson;
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: unknown file extension (expected .pb, .pbtxt, .textproto, .txtpb or .json)", path));
}

absl::string_view FileFormatName(FileFormat format) {
  switch (format) {
    case FileFormat::kBinary: return "binary";
    case FileFormat::kText: return "text";
    case FileFormat::kJson: return "json";
  }
  return "unknown";
}

}  // namespace hetsim::proto
