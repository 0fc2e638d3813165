// The collective operations: what a layer's tensor/expert parallelism issues (the workload), what the
// planner prices, and what the collectives model simulates. One enum for all of them.
#ifndef HETSIM_BASE_COLLECTIVE_OP_H_
#define HETSIM_BASE_COLLECTIVE_OP_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hetsim {

enum class CollectiveOp : uint8_t { kSendRecv, kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast };

absl::string_view CollectiveOpName(CollectiveOp op);  // "all-reduce", ... (nccl-tests' spelling)
absl::StatusOr<CollectiveOp> ParseCollectiveOp(absl::string_view name);

}  // namespace hetsim

#endif  // HETSIM_BASE_COLLECTIVE_OP_H_
