// Runs a TransferGraph on the flow-level network: every transfer becomes a flow on its route as soon
// as the transfers it depends on have completed. Several executions may share one network (their
// flows then contend), which is how the executor overlaps collectives with each other.
#ifndef HETSIM_SIM_COLLECTIVES_EXECUTION_H_
#define HETSIM_SIM_COLLECTIVES_EXECUTION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "sim/collectives/representative.h"
#include "sim/collectives/transfer_graph_internal.h"
#include "sim/network/network.h"
#include "topology/routing.h"

namespace hetsim::collectives {

// What an execution reads of its graph's paths on one network and router: their routes, latencies
// and route summaries (Network::SummarizeRoute), and the representatives' routes.
struct RoutedPaths {
  std::vector<std::span<const LinkId>> routes;            // per path (a representative's on canonical links)
  std::vector<Time> route_latency;                        // per path: the sum of its links' latencies
  std::vector<Time> step_latency;                         // per path: the NCCL protocol's step latency (or 0)
  std::vector<network::Network::RouteSummary> summaries;  // per path: its route as StartFlow reads it
  RepresentativeRoutes representative;                    // representatives' routes and weights (representative.h)
};

// Routed paths shared by the executions of one graph on one network and router: an iteration runs
// each of its few hundred graphs several times (a gradient bucket per model chunk), and routing and
// summarizing every path again was a cache miss per hop and path (issue 43). Routes depend on the
// graph and the router only; summaries older than the network's last capacity change are redone when
// an execution starts. Not thread-safe (one per run).
class RoutedPathsCache {
 public:
  absl::flat_hash_map<const TransferGraph*, std::unique_ptr<RoutedPaths>>& entries() { return entries_; }

 private:
  absl::flat_hash_map<const TransferGraph*, std::unique_ptr<RoutedPaths>> entries_;
};

// Joins (transfers without a path) complete at once; a transfer that repeats its route's latency k times
// waits (k - 1) route latencies on the engine, then starts its flow (which pays the last one). A graph
// run with an NCCL protocol (TransferGraph::nccl()) first waits its launch latency, every transfer
// also waits k step latencies of its route, and moves bytes / ProtocolBandwidthFraction on the wire.
// A representative path (TransferGraph::SetMultiplicity) runs as weighted flows (representative.h).
class CollectiveExecution : private network::FlowObserver, private engine::EventHandler {
 public:
  // `graph` must outlive the execution. `on_done` runs inside the engine when the last transfer ends.
  // `cache` (may be null: the execution routes for itself) must be used with this network and router
  // only, and outlive the execution.
  CollectiveExecution(network::Network* network, topology::Router* router, const TransferGraph* graph,
                      std::function<void(Time)> on_done = {}, RoutedPathsCache* cache = nullptr);

  // Resolves every route (NotFound names the GPUs when there is none) and starts the transfers that
  // depend on nothing, at the simulator's current time. An empty graph completes at once.
  absl::Status Start(engine::Simulator* simulator);

  bool done() const { return remaining_ == 0 && started_; }
  Time start_time() const { return start_time_; }
  Time finish_time() const { return finish_time_; }
  uint64_t flows() const { return flows_; }  // network flows started (joins and timed transfers are not)
  // The routes of the graph's paths (link ids; a representative's on canonical links), once Start has run.
  const std::vector<std::span<const LinkId>>& routes() const { return paths_->routes; }

 private:
  void OnFlowCompleted(network::FlowId flow, uint64_t tag) override;
  void PrefetchCompletion(uint64_t tag) const override;
  void OnEvent(uint64_t payload) override;  // a delayed transfer's flow starts now
  void LaunchRoots();                       // the transfers that depend on nothing
  void Launch(TransferIndex t);
  void StartFlow(TransferIndex t);
  uint64_t FlowTag(TransferIndex t) const;  // the tag of transfer t's flow (execution.cc)
  void Finish(TransferIndex t);
  void TransferDone();  // a transfer ended and its successors were told
  // Routes, latencies and summaries of the graph's paths, into `paths`.
  absl::Status RoutePaths(RoutedPaths& paths) const;
  std::span<const double> WeightsOf(int32_t path) const;  // a representative's per-hop weights, else empty
  int64_t WireBytes(TransferIndex t) const;               // its bytes on the wire (NCCL's protocol)
  void PriceTimed();
  void HoldTimed(TransferIndex t, double sign);

  network::Network* network_;
  topology::Router* router_;
  const TransferGraph* graph_;
  std::function<void(Time)> on_done_;
  engine::Simulator* simulator_ = nullptr;
  RoutedPathsCache* cache_;
  RoutedPaths own_paths_;                   // without a cache
  const RoutedPaths* paths_ = &own_paths_;  // own_paths_ or the cache's entry for graph_
  // Timed transfers (TransferGraph::SetTimed) held now: per link, their rate x weight and weight; per
  // transfer, the rate it holds.
  std::vector<double> timed_load_, timed_weight_, timed_rate_;
  std::vector<TransferIndex> pending_timed_;  // timed transfers whose bytes start now, not yet priced
  std::vector<double> pending_weight_;        // per link, scratch of PriceTimed
  std::vector<uint8_t> timed_as_flow_;        // per transfer: timed, but run as a flow (a link was down)
  double wire_bytes_per_byte_ = 1;            // channel cap factor / ProtocolBandwidthFraction (1 without NCCL)
  std::vector<int32_t> pending_;              // unfinished dependencies per transfer
  size_t remaining_ = 0;
  bool started_ = false;
  Time start_time_ = 0;
  Time finish_time_ = 0;
  uint64_t flows_ = 0;
};

}  // namespace hetsim::collectives

#endif  // HETSIM_SIM_COLLECTIVES_EXECUTION_H_
