// A list of global GPU ids on the command line, "0,1,8-15" (ids and inclusive ranges), shared by
// `collective --gpus` and `run --trace-gpus`.
#ifndef HETSIM_APP_CLI_GPU_LIST_H_
#define HETSIM_APP_CLI_GPU_LIST_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/ids.h"

namespace hetsim::cli {

// InvalidArgument starting "<flag>: " for a part that is not an id or a range a-b, a range that is
// empty or negative, ids beyond int32 or a range of more than 2^24 GPUs, and an empty list.
absl::StatusOr<std::vector<GpuId>> ParseGpuList(absl::string_view text, absl::string_view flag);

// The same GPU ids given as numbers (the Python API's list): each must be a GPU id ParseGpuList would
// accept (0 to 2^31 - 1), named in the error as `name`[i]; the list must not be empty.
absl::StatusOr<std::vector<GpuId>> GpuIdsOf(const std::vector<int64_t>& ids, absl::string_view name);

}  // namespace hetsim::cli

#endif  // HETSIM_APP_CLI_GPU_LIST_H_
