// Reading and writing hetsim messages as binary (.pb), text format (.pbtxt) or JSON (.json), chosen by
// the file's extension, and writing any output file atomically.
//
// Reading is strict: text and JSON reject unknown field names, binary rejects bytes that do not parse
// and any unknown field (checked recursively), and every format rejects enum numbers the schema does
// not define. Errors name the file (text: file:line:col).
//
// Writing is deterministic (same message -> same bytes) and atomic: the contents go to a temporary file
// in the destination's folder that is then renamed over the destination, so a reader never sees a
// partial file and a failed write leaves no output file behind. JSON keeps the .proto field names
// (snake_case) and omits fields at their default value, exactly like the text format does, so the
// three formats carry the same information.
#ifndef HETSIM_PROTO_IO_H_
#define HETSIM_PROTO_IO_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "google/protobuf/message.h"
#include "proto/file_format.h"

namespace hetsim::proto {

// Reads `path` into `message` (cleared first), format from the extension.
absl::Status Load(absl::string_view path, google::protobuf::Message* message);

template <typename T>
absl::StatusOr<T> LoadAs(absl::string_view path) {
  T message;
  HETSIM_RETURN_IF_ERROR(Load(path, &message));
  return message;
}

// Writes `message` to `path` atomically, format from the extension.
absl::Status Save(absl::string_view path, const google::protobuf::Message& message);

// Parses `contents` in `format`; `file` only names the source in error messages.
absl::Status ParseMessage(absl::string_view contents, FileFormat format, absl::string_view file,
                          google::protobuf::Message* message);

// The bytes Save would write.
absl::StatusOr<std::string> SerializeMessage(const google::protobuf::Message& message, FileFormat format);

// Unknown fields (binary input), enum numbers outside the schema or strings that are not UTF-8 (text
// input; binary output of them would not read back) anywhere in `message`, reported as
// "<file>: <field path>: <problem>".
absl::Status CheckKnownFieldsAndEnums(const google::protobuf::Message& message, absl::string_view file);

// True when `text` is valid UTF-8: what every string field of a message must be to read back (a name
// given on the command line is checked before it lands in one).
bool IsValidUtf8(absl::string_view text);

// What an input file holds, which sets how large it may be (docs/reliability.md).
enum class InputKind {
  kMessage,      // a cluster, model, plan, sweep, faults or validation-set file: 256 MiB
  kReport,       // a run's report, or a message whose type is detected from its bytes: 256 MiB
  kText,         // launch lines, configs, nccl-tests logs, CSV tables, plan lists, JSON groups: 64 MiB
  kRows,         // a sweep's rows (CSV or JSON Lines), read to resume or merge: 4 GiB
  kChakraTrace,  // one rank's Chakra execution trace: 1 GiB
};

// The largest file of `kind` hetsim reads.
uint64_t MaxInputBytes(InputKind kind);

// The one way hetsim reads an input file. Only a regular file is read (a folder, a device such as
// /dev/zero, a FIFO or a socket is refused, also behind a symbolic link), and only when it is at most
// MaxInputBytes(kind), checked before reading; the error names the file, the limit and the kind.
// Text kinds (kText, kRows) come back as people save them read: a leading UTF-8 byte-order mark
// dropped and CRLF line ends turned into LF.
absl::StatusOr<std::string> ReadInputFile(absl::string_view path, InputKind kind);

// ReadInputFile with the largest message limit (kReport), bytes as they are: for tools and tests.
absl::StatusOr<std::string> ReadFileToString(absl::string_view path);

// `text` without a leading UTF-8 byte-order mark and with CRLF line ends as LF.
std::string NormalizeTextInput(std::string text);

// Writes `contents` to a temporary file beside `path`, flushes it and renames it to `path`. On any
// failure the temporary file is removed and `path` is left as it was.
absl::Status WriteFileAtomically(absl::string_view path, absl::string_view contents);

// The two halves of WriteFileAtomically, for writing several files all or none (output_files.h):
// `contents` flushed to a new temporary file beside `path` (its name returned; nothing left behind on
// failure), then that file renamed over `path` (removed on failure).
absl::StatusOr<std::string> WriteTempBeside(absl::string_view path, absl::string_view contents);
absl::Status RenameIntoPlace(const std::string& temp, absl::string_view path);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_IO_H_
