#include "proto/output_files.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "proto/file_format.h"
#include "proto/io.h"

namespace hetsim::proto {
namespace {

namespace fs = std::filesystem;

// True when `a` and `b` name one existing file (also through links or different spellings).
bool SameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec) && !ec;
}

// One spelling per file, existing or not ("d/./x", "d//x" and a link to d/x are d/x): the key under which
// staged outputs are compared, so that staging n files costs n look-ups, not n^2 (an export of 16,384
// rank files compared every pair).
std::string CanonicalKey(const std::string& path) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(fs::path(path), ec);
  return ec ? fs::path(path).lexically_normal().string() : canonical.string();
}

}  // namespace

OutputFiles::OutputFiles(std::vector<std::string> inputs) {
  for (std::string& input : inputs) {
    if (!input.empty()) inputs_.push_back(std::move(input));
  }
}

absl::Status OutputFiles::Check(absl::string_view path) const {
  const std::string p(path);
  for (const std::string& input : inputs_) {
    if (p == input || SameFile(p, input)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: is also an input of this command: it would be overwritten; choose another name", p));
    }
  }
  if (staged_keys_.contains(CanonicalKey(p))) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: named for two outputs", p));
  }
  std::error_code ec;
  fs::path folder = fs::path(p).parent_path();
  if (folder.empty()) folder = ".";
  if (!fs::is_directory(folder, ec)) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: folder %s does not exist", p, folder.string()));
  }
  if (fs::is_directory(p, ec)) return absl::InvalidArgumentError(absl::StrFormat("%s: is a folder", p));
  // Checked here, not found at the rename: the outputs renamed before it would stand.
  const auto name_max = ::pathconf(folder.c_str(), _PC_NAME_MAX);
  const size_t name_bytes = fs::path(p).filename().string().size();
  if (name_max > 0 && name_bytes > static_cast<size_t>(name_max)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: the file name is %d bytes, more than the %d its folder allows", p, name_bytes, name_max));
  }
  return absl::OkStatus();
}

absl::Status OutputFiles::Add(absl::string_view path, std::string bytes) {
  if (path.empty()) return absl::OkStatus();
  HETSIM_RETURN_IF_ERROR(Check(path));
  staged_keys_.insert(CanonicalKey(std::string(path)));
  staged_.emplace_back(std::string(path), std::move(bytes));
  return absl::OkStatus();
}

absl::Status OutputFiles::AddMessage(absl::string_view path, const google::protobuf::Message& message) {
  if (path.empty()) return absl::OkStatus();
  HETSIM_ASSIGN_OR_RETURN(FileFormat format, FileFormatFromPath(path));
  HETSIM_ASSIGN_OR_RETURN(std::string bytes, SerializeMessage(message, format));
  return Add(path, std::move(bytes));
}

absl::Status OutputFiles::Commit() {
  std::vector<std::string> temps;
  for (const auto& [path, bytes] : staged_) {
    absl::StatusOr<std::string> temp = WriteTempBeside(path, bytes);
    if (!temp.ok()) {
      for (const std::string& t : temps) ::unlink(t.c_str());
      return temp.status();
    }
    temps.push_back(*std::move(temp));
  }
  for (size_t i = 0; i < staged_.size(); ++i) {
    if (absl::Status s = RenameIntoPlace(temps[i], staged_[i].first); !s.ok()) {
      for (size_t j = i + 1; j < temps.size(); ++j) ::unlink(temps[j].c_str());
      return s;  // the renames before this one stand: a rename in a folder we just wrote to rarely fails
    }
  }
  staged_.clear();
  staged_keys_.clear();
  return absl::OkStatus();
}

absl::Status WriteOutputFile(absl::string_view path, std::string bytes, std::vector<std::string> inputs) {
  OutputFiles files(std::move(inputs));
  HETSIM_RETURN_IF_ERROR(files.Add(path, std::move(bytes)));
  return files.Commit();
}

absl::Status SaveOutputFile(absl::string_view path, const google::protobuf::Message& message,
                            std::vector<std::string> inputs) {
  OutputFiles files(std::move(inputs));
  HETSIM_RETURN_IF_ERROR(files.AddMessage(path, message));
  return files.Commit();
}

}  // namespace hetsim::proto
