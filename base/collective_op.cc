#include "base/collective_op.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace hetsim {
namespace {

constexpr CollectiveOp kOps[] = {CollectiveOp::kSendRecv,      CollectiveOp::kAllReduce, CollectiveOp::kAllGather,
                                 CollectiveOp::kReduceScatter, CollectiveOp::kAllToAll,  CollectiveOp::kBroadcast};

}  // namespace

absl::string_view CollectiveOpName(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kSendRecv: return "send-recv";
    case CollectiveOp::kAllReduce: return "all-reduce";
    case CollectiveOp::kAllGather: return "all-gather";
    case CollectiveOp::kReduceScatter: return "reduce-scatter";
    case CollectiveOp::kAllToAll: return "all-to-all";
    case CollectiveOp::kBroadcast: return "broadcast";
  }
  return "?";
}

absl::StatusOr<CollectiveOp> ParseCollectiveOp(absl::string_view name) {
  for (CollectiveOp op : kOps) {
    if (name == CollectiveOpName(op)) return op;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("op: unknown operation \"%s\" (expected send-recv, all-reduce, all-gather, reduce-scatter, "
                      "all-to-all or broadcast)",
                      name));
}

}  // namespace hetsim
