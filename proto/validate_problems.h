// Collects validation problems as "<file>: <field path>: <problem>" lines and turns them into one
// InvalidArgument status, so a user sees every mistake of a file at once instead of one per run.
#ifndef HETSIM_PROTO_VALIDATE_PROBLEMS_H_
#define HETSIM_PROTO_VALIDATE_PROBLEMS_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace hetsim::proto {

class Problems {
 public:
  // `file` names the file in every message; `prefix` is prepended to every field path (e.g. "model."
  // for a model given inline in a plan).
  explicit Problems(absl::string_view file, absl::string_view prefix = "") : file_(file), prefix_(prefix) {}
  // Every field path through `map_path` instead (a pipeline's plan: PipelineFieldPath).
  Problems(absl::string_view file, std::function<std::string(absl::string_view)> map_path)
      : file_(file), map_path_(std::move(map_path)) {}

  void Add(absl::string_view path, absl::string_view problem) {
    lines_.push_back(map_path_ ? absl::StrCat(file_, ": ", map_path_(path), ": ", problem)
                               : absl::StrCat(file_, ": ", prefix_, path, ": ", problem));
  }
  template <typename... Args>
  void Add(absl::string_view path, const absl::FormatSpec<Args...>& format, const Args&... args) {
    Add(path, absl::StrFormat(format, args...));
  }

  bool empty() const { return lines_.empty(); }
  size_t size() const { return lines_.size(); }

  // OK when empty; otherwise InvalidArgument with one line per problem (the first kMaxLines, then a
  // count of the rest).
  absl::Status ToStatus() const;

 private:
  static constexpr size_t kMaxLines = 25;
  std::string file_;
  std::string prefix_;
  std::function<std::string(absl::string_view)> map_path_;
  std::vector<std::string> lines_;
};

// Checks shared by the validators. Each adds a problem and returns false when the check fails.
// Finite and in [min, max].
bool CheckRange(Problems& p, absl::string_view path, double value, double min, double max);
// Finite and > 0 and <= max ("required" wording when zero).
bool CheckPositive(Problems& p, absl::string_view path, double value, double max);
// Not positive (unset, or refused by another check) or at least `floor`: a rate or share set far below any
// hardware's turns the times derived from it into inf or past int64 picoseconds.
bool CheckFloor(Problems& p, absl::string_view path, double value, double floor);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_VALIDATE_PROBLEMS_H_
