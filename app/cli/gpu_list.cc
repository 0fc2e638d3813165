#include "app/cli/gpu_list.h"

#include <cstdint>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace hetsim::cli {

absl::StatusOr<std::vector<GpuId>> ParseGpuList(absl::string_view text, absl::string_view flag) {
  std::vector<GpuId> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> ends = absl::StrSplit(part, absl::MaxSplits('-', 1));
    int64_t lo = 0, hi = 0;
    if (!absl::SimpleAtoi(ends[0], &lo) || (ends.size() == 2 && !absl::SimpleAtoi(ends[1], &hi))) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: \"%s\" is not a GPU id or range like 0-511", flag, part));
    }
    if (ends.size() == 1) hi = lo;
    if (lo < 0 || hi < lo) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: \"%s\" is an empty or negative range", flag, part));
    }
    if (hi > std::numeric_limits<int32_t>::max() || hi - lo >= (int64_t{1} << 24)) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: \"%s\" is out of range", flag, part));
    }
    for (int64_t g = lo; g <= hi; ++g) out.push_back(static_cast<GpuId>(g));
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrFormat("%s: empty list", flag));
  return out;
}

absl::StatusOr<std::vector<GpuId>> GpuIdsOf(const std::vector<int64_t>& ids, absl::string_view name) {
  std::vector<GpuId> out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s[%d]: %d is not a GPU id", name, i, ids[i]));
    }
    out.push_back(static_cast<GpuId>(ids[i]));
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrFormat("%s: empty list", name));
  return out;
}

}  // namespace hetsim::cli
