// Runs Chakra execution traces (service/chakra/trace.h) on a hetsim cluster: each rank is the cluster GPU of
// the same global id; a node starts when all its dependencies have finished.
//   COMP      runs for its recorded duration (or, with retime_compute, the GPU type's kernel model on
//             num_ops FLOPs and tensor_size bytes: max(GemmSeconds(num_ops), MemorySeconds(tensor_size)))
//             on the rank's GPU stream (is_cpu_op: its CPU stream), one node at a time per stream in
//             the order they become ready.
//   SEND      starts a flow of comm_size bytes on the route to comm_dst at once (eager: no rendezvous)
//             and ends when its last byte arrives.
//   RECV      ends when it has been issued and the matching send (same src, dst, tag; n-th with n-th)
//             has arrived.
//   COLL      the n-th collective each member issues on a group is one collective: it starts when the
//             last member issues it and runs hetsim's algorithm for it (sim/collectives, automatic
//             choice) on the shared network; every member's node ends with it.
//   others    take no time.
// The iteration ends when the last node of any rank ends.
#ifndef HETSIM_SERVICE_CHAKRA_REPLAY_H_
#define HETSIM_SERVICE_CHAKRA_REPLAY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "base/time.h"
#include "proto/hetsim.pb.h"
#include "service/chakra/trace.h"
#include "sim/network/network.h"
#include "topology/device_graph.h"
#include "topology/routing.h"

namespace hetsim::chakra {

struct ReplayOptions {
  network::NetworkMode network_mode = network::NetworkMode::kMaxMinFair;
  bool retime_compute = false;
  v1::DType dtype = v1::BF16;  // for retime_compute: the peak FLOP/s used
  uint64_t max_events = 0;     // 0 = no limit (exit 2 when reached, as `run`)
  double max_wall_seconds = 0;
};

struct ReplayResult {
  std::vector<std::vector<Time>> node_start;  // [rank][node index]
  std::vector<std::vector<Time>> node_finish;
  std::vector<Time> rank_end;      // last finish per rank (0 for an empty trace)
  std::vector<Time> compute_busy;  // GPU-stream busy time per rank
  Time iteration_time = 0;
  uint64_t events = 0;
  uint64_t collectives = 0;
  network::NetworkStats network_stats;
  std::vector<network::LinkCounters> link_counters;
};

// Fails (InvalidArgument, naming the rank file and node) when the traces deadlock (a recv whose send
// never runs, a collective some member never reaches) or a collective has no route or algorithm;
// RunLimit statuses when a limit is reached.
absl::StatusOr<ReplayResult> ReplayChakra(const ChakraWorkload& workload, const topology::Topology& topology,
                                          const ReplayOptions& options);

}  // namespace hetsim::chakra

#endif  // HETSIM_SERVICE_CHAKRA_REPLAY_H_
