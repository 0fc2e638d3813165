// `hetsim collective` for every front end (the command line and app/api, so Python): one collective
// alone on a cluster's network. The network is built once (with --ideal's line rate), the request is
// checked against it, then each size is simulated; CollectiveReportOf is the answer the API returns.
//
//   CollectiveCommand c{.cluster = cluster, .cluster_file = "cluster.pbtxt", .request = request};
//   absl::StatusOr<CollectiveSession> s = CollectiveSession::Open(std::move(c));
//   absl::StatusOr<collectives::CollectiveResult> r = s->Simulate(1 << 20);
#ifndef HETSIM_SERVICE_DRIVER_COLLECTIVE_COMMAND_H_
#define HETSIM_SERVICE_DRIVER_COLLECTIVE_COMMAND_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "base/wall_limit.h"
#include "proto/hetsim.pb.h"
#include "service/driver/cluster_topology.h"
#include "sim/collectives/collective.h"
#include "sim/collectives/simulate.h"
#include "sim/network/network.h"

namespace hetsim::driver {

struct CollectiveCommand {
  hetsim::v1::Cluster cluster = {};  // valid, presets applied
  std::string cluster_file = {};     // names the cluster in messages
  bool ideal = false;                // --ideal: Cluster.ideal (line rate, no protocol latency)
  collectives::CollectiveRequest request = {};
  network::NetworkMode mode = network::NetworkMode::kMaxMinFair;
  // --max-wall-seconds (0 = no limit), from Open: every size simulated, route building included, stops
  // with a run limit once it has passed (a 16,384-GPU all-reduce runs for minutes).
  double max_wall_seconds = 0;
};

class CollectiveSession {
 public:
  // Builds the cluster's network (BuildClusterNetwork's errors); the request is not checked yet.
  static absl::StatusOr<CollectiveSession> Open(CollectiveCommand command);

  // collectives::ValidateRequest of the request at `bytes` against the cluster: InvalidArgument naming the
  // request's field ("gpus: ...").
  absl::Status Check(int64_t bytes) const;
  // The request at `bytes`, simulated (Check's errors included).
  absl::StatusOr<collectives::CollectiveResult> Simulate(int64_t bytes);

  const hetsim::v1::Cluster& cluster() const { return command_.cluster; }
  const collectives::CollectiveRequest& request() const { return command_.request; }
  network::NetworkMode mode() const { return command_.mode; }
  const topology::Topology& topology() const { return *network_.topology; }

 private:
  CollectiveSession(CollectiveCommand command, ClusterNetwork network)
      : command_(std::move(command)), network_(std::move(network)), wall_limit_(command_.max_wall_seconds) {}
  CollectiveCommand command_;
  ClusterNetwork network_;
  WallLimit wall_limit_;
};

// One size's result as the CollectiveReport message.
hetsim::v1::CollectiveReport CollectiveReportOf(const collectives::CollectiveRequest& request,
                                                const collectives::CollectiveResult& result);

}  // namespace hetsim::driver

#endif  // HETSIM_SERVICE_DRIVER_COLLECTIVE_COMMAND_H_
