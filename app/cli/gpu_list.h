// A list of global GPU ids on the command line, "0,1,8-15" (ids and inclusive ranges), shared by
// `collective --gpus` and `run --trace-gpus`.
#ifndef HETSIM_APP_CLI_GPU_LIST_H_
#define HETSIM_APP_CLI_GPU_LIST_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/ids.h"

namespace hetsim::app {

// InvalidArgument starting "<flag>: " for a part that is not an id or a range a-b, a range that is
// empty or negative, ids beyond int32 or a range of more than 2^24 GPUs, and an empty list.
absl::StatusOr<std::vector<GpuId>> ParseGpuList(absl::string_view text, absl::string_view flag);

}  // namespace hetsim::app

#endif  // HETSIM_APP_CLI_GPU_LIST_H_
