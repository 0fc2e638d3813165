#include "service/sweep/output_internal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "proto/io.h"

namespace hetsim::sweep {
namespace {

absl::Status Errno(absl::string_view what, absl::string_view path) {
  const int e = errno;
  const std::string message = absl::StrFormat("%s: cannot %s: %s", path, what, std::strerror(e));
  return e == ENOENT || e == EACCES || e == EISDIR || e == ENOTDIR || e == EROFS ? absl::InvalidArgumentError(message)
                                                                                 : absl::InternalError(message);
}

absl::StatusOr<int> OpenForAppend(const std::string& path, bool truncate) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0644);
  if (fd < 0) return Errno("open for writing", path);
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RowFile>> RowFile::Create(const std::string& path, absl::string_view header) {
  std::unique_ptr<RowFile> file;
  if (path.empty()) {
    file.reset(new RowFile(STDOUT_FILENO, "standard output", false));
  } else {
    HETSIM_ASSIGN_OR_RETURN(int fd, OpenForAppend(path, true));
    file.reset(new RowFile(fd, path, true));
  }
  if (!header.empty()) {
    HETSIM_RETURN_IF_ERROR(file->WriteAll(header));
  }
  return file;
}

absl::StatusOr<std::unique_ptr<RowFile>> RowFile::Resume(const std::string& path, absl::string_view header,
                                                         const RowCheck& check, int64_t* rows) {
  *rows = 0;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Create(path, header);
    return Errno("read", path);
  }
  HETSIM_ASSIGN_OR_RETURN(std::string contents, proto::ReadInputFile(path, proto::InputKind::kRows));
  const absl::string_view text = contents;
  const size_t last_newline = text.rfind('\n');
  const size_t complete = last_newline == absl::string_view::npos ? 0 : last_newline + 1;
  size_t pos = 0;
  if (!header.empty()) {
    if (text.size() < header.size() && absl::StartsWith(header, text))
      return Create(path, header);  // killed mid-header
    if (!absl::StartsWith(text, header)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: --resume: the first line is not this sweep's header (%s): the file comes from another sweep; "
          "remove it or write elsewhere",
          path, absl::StripSuffix(header, "\n")));
    }
    pos = header.size();
  }
  for (int64_t k = 0; pos < complete; ++k) {
    const size_t end = text.find('\n', pos);
    if (absl::Status s = check(k, text.substr(pos, end - pos)); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: --resume: row %d (line %d): %s", path, k, k + (header.empty() ? 1 : 2), s.message()));
    }
    ++*rows;
    pos = end + 1;
  }
  HETSIM_ASSIGN_OR_RETURN(int fd, OpenForAppend(path, false));
  std::unique_ptr<RowFile> file(new RowFile(fd, path, true));
  // Drop an incomplete last line (the row being written when the process died).
  if (complete < text.size() && ::ftruncate(fd, static_cast<off_t>(std::max(complete, pos))) != 0) {
    return Errno("truncate", path);
  }
  return file;
}

RowFile::~RowFile() {
  if (owned_ && fd_ >= 0) ::close(fd_);
}

absl::Status RowFile::WriteAll(absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("write", path_);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status RowFile::Sync() {
  last_sync_ = absl::Now();
  // Pipes and terminals cannot be synced; that is not an error.
  if (::fdatasync(fd_) != 0 && errno != EINVAL && errno != EROFS) return Errno("flush", path_);
  return absl::OkStatus();
}

absl::Status RowFile::Append(absl::string_view line) {
  HETSIM_RETURN_IF_ERROR(WriteAll(line));
  if (absl::Now() - last_sync_ >= absl::Seconds(1)) return Sync();
  return absl::OkStatus();
}

absl::Status RowFile::Close() {
  if (fd_ < 0) return absl::OkStatus();
  absl::Status s = Sync();
  if (owned_ && ::close(fd_) != 0 && s.ok()) s = Errno("close", path_);
  fd_ = -1;
  return s;
}

}  // namespace hetsim::sweep
