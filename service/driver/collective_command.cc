#include "service/driver/collective_command.h"

#include <optional>

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/collective_op.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "sim/collectives/nccl_model.h"

namespace hetsim::driver {

absl::StatusOr<CollectiveSession> CollectiveSession::Open(CollectiveCommand command) {
  if (command.ideal) command.cluster.set_ideal(true);  // a cluster file's own `ideal: true` stays
  HETSIM_RETURN_IF_ERROR(ValidateMaxWallSeconds(command.max_wall_seconds, "max-wall-seconds"));
  HETSIM_ASSIGN_OR_RETURN(ClusterNetwork network, BuildClusterNetwork(command.cluster, command.cluster_file));
  return CollectiveSession(std::move(command), std::move(network));
}

absl::Status CollectiveSession::Check(int64_t bytes) const {
  collectives::CollectiveRequest request = command_.request;
  request.bytes = bytes;
  return collectives::ValidateRequest(*network_.topology, request);
}

absl::StatusOr<collectives::CollectiveResult> CollectiveSession::Simulate(int64_t bytes) {
  command_.request.bytes = bytes;
  std::optional<WallLimitScope> scope;
  if (wall_limit_.limited()) scope.emplace(wall_limit_);
  return collectives::SimulateCollective(*network_.topology, *network_.router, command_.request, command_.mode);
}

hetsim::v1::CollectiveReport CollectiveReportOf(const collectives::CollectiveRequest& request,
                                                const collectives::CollectiveResult& result) {
  hetsim::v1::CollectiveReport out;
  out.set_op(std::string(CollectiveOpName(request.op)));
  out.set_bytes(static_cast<uint64_t>(request.bytes));
  out.set_num_gpus(static_cast<uint32_t>(request.gpus.size()));
  out.set_algorithm(
      absl::StrCat(collectives::AlgorithmName(result.shape.algorithm), result.shape.aggregated ? "-agg" : ""));
  out.set_protocol(std::string(collectives::ProtocolName(result.shape.protocol)));
  out.set_time_us(TimeToSeconds(result.time) * 1e6);
  out.set_alg_bandwidth_gbytes_per_s(result.algbw_bytes_per_s / 1e9);
  out.set_bus_bandwidth_gbytes_per_s(result.busbw_bytes_per_s / 1e9);
  return out;
}

}  // namespace hetsim::driver
