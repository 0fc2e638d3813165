#include "sim/collectives/execution.h"

#include <utility>

namespace hetsim::sim {

CollectiveExecution::CollectiveExecution(Network* network, topology::Router* router, const TransferGraph* graph,
                                         std::function<void(Time)> on_done)
    : network_(network), router_(router), graph_(graph), on_done_(std::move(on_done)) {}

absl::Status CollectiveExecution::Start(Simulator* simulator) {
  simulator_ = simulator;
  routes_.clear();
  route_latency_.clear();
  routes_.reserve(graph_->paths().size());
  route_latency_.reserve(graph_->paths().size());
  for (const TransferPath& p : graph_->paths()) {
    auto route = router_->GpuRoute(p.src, p.dst, p.flow_key);
    if (!route.ok()) return route.status();
    routes_.emplace_back((*route)->data(), (*route)->size());
    Time latency = 0;
    for (LinkId l : routes_.back()) latency += network_->link(l).latency;
    route_latency_.push_back(latency);
  }
  graph_->BuildSuccessors();
  const auto n = static_cast<TransferIndex>(graph_->size());
  pending_.resize(n);
  for (TransferIndex t = 0; t < n; ++t) pending_[t] = graph_->num_deps(t);
  remaining_ = n;
  started_ = true;
  start_time_ = finish_time_ = simulator->now();
  if (n == 0) {
    if (on_done_) on_done_(finish_time_);
    return absl::OkStatus();
  }
  for (TransferIndex t = 0; t < n; ++t) {
    if (graph_->num_deps(t) == 0) Launch(t);
  }
  return absl::OkStatus();
}

void CollectiveExecution::Launch(TransferIndex t) {
  const int32_t path = graph_->path_of(t);
  if (path == kNoPath) {  // a join: nothing to move
    Finish(t);
    return;
  }
  const int32_t repeats = graph_->latency_repeats(t);
  if (repeats > 1 && route_latency_[path] > 0) {
    // Saturating (repeats - 1) x latency: an absurd latency ends at kTimeMax instead of wrapping.
    const Time latency = route_latency_[path];
    const Time extra = repeats - 1 > kTimeMax / latency ? kTimeMax : (repeats - 1) * latency;
    simulator_->ScheduleAfter(extra, this, static_cast<uint64_t>(t));
    return;
  }
  StartFlow(t);
}

void CollectiveExecution::OnEvent(uint64_t payload) { StartFlow(static_cast<TransferIndex>(payload)); }

void CollectiveExecution::StartFlow(TransferIndex t) {
  ++flows_;
  network_->StartFlow(routes_[graph_->path_of(t)], graph_->bytes_of(t), this, static_cast<uint64_t>(t));
}

void CollectiveExecution::OnFlowCompleted(FlowId, uint64_t tag) { Finish(static_cast<TransferIndex>(tag)); }

void CollectiveExecution::Finish(TransferIndex t) {
  for (TransferIndex s : graph_->successors(t)) {
    if (--pending_[s] == 0) Launch(s);
  }
  if (--remaining_ == 0) {
    finish_time_ = simulator_->now();
    if (on_done_) on_done_(finish_time_);
  }
}

}  // namespace hetsim::sim
