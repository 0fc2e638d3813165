// The three on-disk encodings of every hetsim message, chosen by file extension.
#ifndef HETSIM_PROTO_FILE_FORMAT_H_
#define HETSIM_PROTO_FILE_FORMAT_H_

#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace hetsim::proto {

enum class FileFormat { kBinary, kText, kJson };

// .pb / .bin -> binary; .pbtxt / .textproto / .txtpb -> text format; .json -> JSON.
absl::StatusOr<FileFormat> FileFormatFromPath(absl::string_view path);

absl::string_view FileFormatName(FileFormat format);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_FILE_FORMAT_H_
