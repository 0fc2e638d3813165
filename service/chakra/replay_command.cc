#include "service/chakra/replay_command.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "service/chakra/replay_report.h"
#include "service/driver/cluster_topology.h"

namespace hetsim::chakra {

absl::StatusOr<LoadedReplay> LoadReplay(const ReplayRequest& request) {
  LoadedReplay loaded;
  loaded.start = std::chrono::steady_clock::now();
  HETSIM_ASSIGN_OR_RETURN(loaded.cluster, proto::LoadCluster(request.cluster));
  if (request.ideal) loaded.cluster.set_ideal(true);
  HETSIM_ASSIGN_OR_RETURN(loaded.topology, driver::BuildTopology(loaded.cluster, request.cluster.label()));
  HETSIM_ASSIGN_OR_RETURN(loaded.workload,
                          LoadChakraDir(request.dir, loaded.topology->num_gpus(), request.comm_groups));
  return loaded;
}

absl::StatusOr<ReplayResponse> RunReplay(const LoadedReplay& loaded, const ReplayRequest& request) {
  ReplayOptions options = request.options;
  const ChakraWorkload& workload = loaded.workload;
  if (options.retime_compute && !workload.dtype.empty()) {
    v1::DType dtype;
    if (!v1::DType_Parse(workload.dtype, &dtype) || dtype == v1::DTYPE_UNSPECIFIED) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: GlobalMetadata attribute dtype: \"%s\" is not a hetsim DType", workload.ranks[0].file, workload.dtype));
    }
    options.dtype = dtype;
  }
  ReplayResponse out;
  HETSIM_ASSIGN_OR_RETURN(out.result, ReplayChakra(workload, *loaded.topology, options));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - loaded.start).count();
  out.report = BuildReplayReport(workload, out.result, request.dir, loaded.cluster, options.network_mode,
                                 request.record_wall_time ? wall : -1);
  return out;
}

}  // namespace hetsim::chakra
