// The user's run limits (--max-events, --max-wall-seconds): a simulation that reaches one stops and
// returns a status marked with a payload, so that commands tell it from a bug (exit 2, not 1) and a
// sweep records the point as "limit" instead of "error".
#ifndef HETSIM_SIM_EXECUTOR_RUN_LIMIT_H_
#define HETSIM_SIM_EXECUTOR_RUN_LIMIT_H_

#include "absl/status/status.h"
#include "base/wall_limit.h"
#include "sim/engine/limited_run.h"

namespace hetsim::executor {

using ::hetsim::IsRunLimit;
using ::hetsim::kRunLimitPayloadUrl;
using ::hetsim::RunLimitError;
using ::hetsim::engine::EventLimitError;
using ::hetsim::engine::WallLimitError;

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_RUN_LIMIT_H_
