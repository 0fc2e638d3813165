#include "proto/io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"

namespace hetsim::proto {
namespace {

namespace pb = google::protobuf;

// Collects the text parser's complaints as "file:line:col: message" (1-based line and column)
// instead of letting protobuf log them.
class TextErrorCollector : public pb::io::ErrorCollector {
 public:
  TextErrorCollector(absl::string_view file, absl::string_view text)
      : file_(file), lines_(absl::StrSplit(text, '\n')) {}
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    const std::string field = FieldBefore(line, column);
    // A value the parser refuses ("Integer out of range (2)", "Expected identifier, got: -") is named by its
    // position only: say which field it was given to, unless protobuf's message already does.
    const bool named = field.empty() || absl::StrContains(message, absl::StrCat("\"", field, "\""));
    errors_.push_back(absl::StrFormat("%s:%d:%d: %s%s", file_, line + 1, column + 1, message,
                                      named ? "" : absl::StrFormat(" (the value of field %s)", field)));
  }
  void AddWarning(int line, pb::io::ColumnNumber column, const std::string& message) override {
    AddError(line, column, message);  // strict: a warning (e.g. deprecated syntax) is an error too
  }
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  // The field name of `name: value` when the column is at the value (or past it on its line), else "".
  std::string FieldBefore(int line, pb::io::ColumnNumber column) const {
    if (line < 0 || static_cast<size_t>(line) >= lines_.size()) return "";
    absl::string_view before = lines_[line].substr(0, std::max<pb::io::ColumnNumber>(column, 0));
    const size_t colon = before.rfind(':');
    if (colon == absl::string_view::npos) return "";
    absl::string_view name = absl::StripTrailingAsciiWhitespace(before.substr(0, colon));
    size_t start = name.size();
    while (start > 0 && (absl::ascii_isalnum(static_cast<unsigned char>(name[start - 1])) || name[start - 1] == '_')) {
      --start;
    }
    name = name.substr(start);
    if (name.empty() || absl::ascii_isdigit(static_cast<unsigned char>(name[0]))) return "";
    return std::string(name);
  }

  std::string file_;
  std::vector<absl::string_view> lines_;
  std::vector<std::string> errors_;
};

void CheckMessage(const pb::Message& message, const std::string& prefix, std::vector<std::string>* problems);

void CheckField(const pb::Message& message, const pb::FieldDescriptor* field, const std::string& path,
                std::vector<std::string>* problems) {
  const pb::Reflection* reflection = message.GetReflection();
  const bool repeated = field->is_repeated();
  const int count = repeated ? reflection->FieldSize(message, field) : 1;
  for (int i = 0; i < count; ++i) {
    const std::string item = repeated ? absl::StrFormat("%s[%d]", path, i) : path;
    if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      const pb::Message& child =
          repeated ? reflection->GetRepeatedMessage(message, field, i) : reflection->GetMessage(message, field);
      CheckMessage(child, item + ".", problems);
    } else if (field->type() == pb::FieldDescriptor::TYPE_STRING) {
      // Text format takes any bytes in a string; binary output of them would not read back.
      const std::string value =
          repeated ? reflection->GetRepeatedString(message, field, i) : reflection->GetString(message, field);
      if (!pb::internal::IsStructurallyValidUTF8(value.data(), static_cast<int>(value.size()))) {
        problems->push_back(absl::StrFormat("%s: not valid UTF-8", item));
      }
    } else if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM) {
      const int value =
          repeated ? reflection->GetRepeatedEnumValue(message, field, i) : reflection->GetEnumValue(message, field);
      if (field->enum_type()->FindValueByNumber(value) == nullptr) {
        problems->push_back(absl::StrFormat("%s: %d is not a value of %s", item, value, field->enum_type()->name()));
      }
    }
  }
}

void CheckMessage(const pb::Message& message, const std::string& prefix, std::vector<std::string>* problems) {
  const pb::Reflection* reflection = message.GetReflection();
  const pb::UnknownFieldSet& unknown = reflection->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i) {
    problems->push_back(absl::StrFormat("%sfield number %d: unknown field (not in %s)", prefix,
                                        unknown.field(i).number(), message.GetDescriptor()->full_name()));
  }
  std::vector<const pb::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);  // set fields, in field-number order
  for (const pb::FieldDescriptor* field : fields) CheckField(message, field, prefix + field->name(), problems);
}

std::string StatusMessage(const pb::util::Status& status) { return std::string(status.message()); }

}  // namespace

uint64_t MaxInputBytes(InputKind kind) {
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  switch (kind) {
    case InputKind::kMessage: return 256 * kMiB;
    case InputKind::kReport: return 256 * kMiB;  // protobuf parses it whole, uninterruptibly: ~20 s at most
    case InputKind::kText: return 64 * kMiB;
    case InputKind::kRows: return 4096 * kMiB;
    case InputKind::kChakraTrace: return 1024 * kMiB;
  }
  return 0;  // unreachable: the switch names every kind (-Wswitch)
}

namespace {

const char* InputKindName(InputKind kind) {
  switch (kind) {
    case InputKind::kMessage: return "an input message";
    case InputKind::kReport: return "a report";
    case InputKind::kText: return "a text input";
    case InputKind::kRows: return "sweep rows";
    case InputKind::kChakraTrace: return "a Chakra trace";
  }
  return "";
}

// Closes a file descriptor on every path out of ReadInputFile.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

absl::StatusOr<std::string> ReadInputFile(absl::string_view path, InputKind kind) {
  // A NUL ends the name open() sees, and every message printed after it (Python's hetsim.run("a\0b"),
  // session 33): refused with the name escaped.
  if (path.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrFormat("\"%s\": a file name cannot hold a NUL byte", absl::CEscape(path)));
  }
  const std::string p(path);
  // Open without blocking so that a FIFO with no writer cannot hang us before the type check.
  const FdCloser file{::open(p.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) {
    if (errno == EISDIR) return absl::InvalidArgumentError(absl::StrFormat("%s: is a folder, not a file", path));
    return absl::NotFoundError(absl::StrFormat("%s: cannot open: %s", path, std::strerror(errno)));
  }
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) {
    return absl::DataLossError(absl::StrFormat("%s: cannot stat: %s", path, std::strerror(errno)));
  }
  if (S_ISDIR(info.st_mode)) return absl::InvalidArgumentError(absl::StrFormat("%s: is a folder, not a file", path));
  if (!S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: not a regular file (a device, FIFO or socket): hetsim reads only files", path));
  }
  const uint64_t limit = MaxInputBytes(kind);
  const auto too_large = [&](uint64_t bytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d bytes is larger than %d MiB, the limit for %s (docs/reliability.md)", path, bytes,
                        limit >> 20, InputKindName(kind)));
  };
  if (static_cast<uint64_t>(info.st_size) > limit) return too_large(static_cast<uint64_t>(info.st_size));
  std::string contents;
  contents.reserve(static_cast<size_t>(info.st_size));
  char buffer[1 << 16];
  for (;;) {  // a file that grows while we read stops at the limit, too
    const ssize_t n = ::read(file.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::DataLossError(absl::StrFormat("%s: read error: %s", path, std::strerror(errno)));
    if (n == 0) break;
    contents.append(buffer, static_cast<size_t>(n));
    if (contents.size() > limit) return too_large(contents.size());
  }
  if (kind == InputKind::kText || kind == InputKind::kRows) return NormalizeTextInput(std::move(contents));
  return contents;
}

absl::StatusOr<std::string> ReadFileToString(absl::string_view path) { return ReadInputFile(path, InputKind::kReport); }

std::string NormalizeTextInput(std::string text) {
  if (absl::StartsWith(text, "\xEF\xBB\xBF")) text.erase(0, 3);
  if (text.find('\r') == std::string::npos) return text;
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
    out.push_back(text[i]);
  }
  return out;
}

absl::Status ParseMessage(absl::string_view contents, FileFormat format, absl::string_view file, pb::Message* message) {
  message->Clear();
  // Protobuf logs some parse failures (invalid UTF-8 in a string) to stderr; we report them ourselves.
  const pb::LogSilencer silence_protobuf_logs;
  switch (format) {
    case FileFormat::kBinary: {
      if (contents.size() > static_cast<size_t>(INT32_MAX)) {
        return absl::InvalidArgumentError(absl::StrFormat("%s: file too large for a binary message", file));
      }
      if (!message->ParseFromArray(contents.data(), static_cast<int>(contents.size()))) {
        return absl::InvalidArgumentError(absl::StrFormat("%s: not a binary %s (the bytes do not parse)", file,
                                                          message->GetDescriptor()->full_name()));
      }
      break;
    }
    case FileFormat::kText: {
      const std::string normalized = NormalizeTextInput(std::string(contents));
      TextErrorCollector collector(file, normalized);
      pb::TextFormat::Parser parser;
      parser.RecordErrorsTo(&collector);
      const bool parsed = parser.ParseFromString(normalized, message);
      if (!parsed || !collector.errors().empty()) {
        std::string text = collector.errors().empty() ? absl::StrFormat("%s: not a text-format %s", file,
                                                                        message->GetDescriptor()->full_name())
                                                      : absl::StrJoin(collector.errors(), "\n");
        return absl::InvalidArgumentError(text);
      }
      break;
    }
    case FileFormat::kJson: {
      pb::util::JsonParseOptions options;
      options.ignore_unknown_fields = false;
      const pb::util::Status status =
          pb::util::JsonStringToMessage(NormalizeTextInput(std::string(contents)), message, options);
      if (!status.ok()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: not a JSON %s: %s", file, message->GetDescriptor()->full_name(), StatusMessage(status)));
      }
      break;
    }
  }
  return CheckKnownFieldsAndEnums(*message, file);
}

bool IsValidUtf8(absl::string_view text) {
  return pb::internal::IsStructurallyValidUTF8(text.data(), static_cast<int>(text.size()));
}

absl::Status CheckKnownFieldsAndEnums(const pb::Message& message, absl::string_view file) {
  std::vector<std::string> problems;
  CheckMessage(message, "", &problems);
  if (problems.empty()) return absl::OkStatus();
  for (std::string& p : problems) p = absl::StrCat(file, ": ", p);
  return absl::InvalidArgumentError(absl::StrJoin(problems, "\n"));
}

absl::Status Load(absl::string_view path, pb::Message* message) {
  HETSIM_ASSIGN_OR_RETURN(FileFormat format, FileFormatFromPath(path));
  const bool report = message->GetDescriptor()->name() == "Report";
  HETSIM_ASSIGN_OR_RETURN(std::string contents, ReadInputFile(path, report ? InputKind::kReport : InputKind::kMessage));
  return ParseMessage(contents, format, path, message);
}

absl::StatusOr<std::string> SerializeMessage(const pb::Message& message, FileFormat format) {
  std::string out;
  switch (format) {
    case FileFormat::kBinary: {
      pb::io::StringOutputStream stream(&out);
      pb::io::CodedOutputStream coded(&stream);
      coded.SetSerializationDeterministic(true);
      if (!message.SerializeToCodedStream(&coded)) {
        return absl::InternalError(absl::StrFormat("cannot serialize %s", message.GetDescriptor()->full_name()));
      }
      break;  // `coded` flushes into `out` when it goes out of scope
    }
    case FileFormat::kText: {
      if (!pb::TextFormat::PrintToString(message, &out)) {
        return absl::InternalError(absl::StrFormat("cannot print %s", message.GetDescriptor()->full_name()));
      }
      break;
    }
    case FileFormat::kJson: {
      pb::util::JsonPrintOptions options;
      options.add_whitespace = true;
      options.preserve_proto_field_names = true;
      options.always_print_primitive_fields = false;  // like the text format: only fields that are set
      const pb::util::Status status = pb::util::MessageToJsonString(message, &out, options);
      if (!status.ok()) return absl::InternalError(StatusMessage(status));
      break;
    }
  }
  return out;
}

absl::Status Save(absl::string_view path, const pb::Message& message) {
  HETSIM_ASSIGN_OR_RETURN(FileFormat format, FileFormatFromPath(path));
  absl::StatusOr<std::string> bytes = SerializeMessage(message, format);
  if (!bytes.ok()) return absl::Status(bytes.status().code(), absl::StrCat(path, ": ", bytes.status().message()));
  return WriteFileAtomically(path, *bytes);
}

absl::StatusOr<std::string> WriteTempBeside(absl::string_view path, absl::string_view contents) {
  static std::atomic<int> counter{0};
  const std::filesystem::path target{std::string(path)};
  if (target.filename().empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: not a file name", path));
  }
  std::filesystem::path folder = target.parent_path();
  if (folder.empty()) folder = ".";
  // The temporary name keeps at most 200 bytes of the file's name, so that every name the file system
  // allows (255 bytes) can be written; the process id, the counter and O_EXCL keep it unique.
  const std::string name = target.filename().string();
  const std::filesystem::path temp =
      folder / absl::StrFormat(".%s.tmp-%d-%d", name.substr(0, 200), getpid(), counter.fetch_add(1));
  auto fail = [&](const char* what, int error) {
    ::unlink(temp.c_str());
    return absl::PermissionDeniedError(absl::StrFormat("%s: cannot %s: %s", path, what, std::strerror(error)));
  };
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int error = errno;
    return absl::PermissionDeniedError(absl::StrFormat("%s: cannot write: %s", path, std::strerror(error)));
  }
  size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      return fail("write", error);
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    return fail("flush", error);
  }
  if (::close(fd) != 0) return fail("close", errno);
  return temp.string();
}

absl::Status RenameIntoPlace(const std::string& temp, absl::string_view path) {
  if (::rename(temp.c_str(), std::string(path).c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    return absl::PermissionDeniedError(absl::StrFormat("%s: cannot rename into place: %s", path, std::strerror(error)));
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(absl::string_view path, absl::string_view contents) {
  HETSIM_ASSIGN_OR_RETURN(std::string temp, WriteTempBeside(path, contents));
  return RenameIntoPlace(temp, path);
}

}  // namespace hetsim::proto
