#include "proto/validate_problems.h"

#include <cmath>

#include "absl/strings/str_join.h"

namespace hetsim::proto {

absl::Status Problems::ToStatus() const {
  if (lines_.empty()) return absl::OkStatus();
  std::string text;
  if (lines_.size() <= kMaxLines) {
    text = absl::StrJoin(lines_, "\n");
  } else {
    text = absl::StrCat(absl::StrJoin(lines_.begin(), lines_.begin() + kMaxLines, "\n"),
                        absl::StrFormat("\n%s: ... and %d more problems", file_, lines_.size() - kMaxLines));
  }
  return absl::InvalidArgumentError(text);
}

bool CheckRange(Problems& p, absl::string_view path, double value, double min, double max) {
  if (!std::isfinite(value)) {
    p.Add(path, "%g is not a finite number", value);
    return false;
  }
  if (value < min || value > max) {
    p.Add(path, "%g is outside [%g, %g]", value, min, max);
    return false;
  }
  return true;
}

bool CheckPositive(Problems& p, absl::string_view path, double value, double max) {
  if (value == 0) {
    p.Add(path, "required (must be > 0)");
    return false;
  }
  if (!std::isfinite(value)) {
    p.Add(path, "%g is not a finite number", value);
    return false;
  }
  if (value < 0 || value > max) {
    p.Add(path, "%g is outside (0, %g]", value, max);
    return false;
  }
  return true;
}

bool CheckFloor(Problems& p, absl::string_view path, double value, double floor) {
  if (!(value > 0) || value >= floor) return true;  // zero, negative and NaN are other checks' to refuse
  p.Add(path,
        "%g is below the floor %g, far from any hardware's: times derived from it would overflow int64 "
        "picoseconds",
        value, floor);
  return false;
}

}  // namespace hetsim::proto
