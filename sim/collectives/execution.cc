#include "sim/collectives/execution.h"

#include <cmath>
#include <limits>
#include <utility>

#include "sim/collectives/nccl_model.h"
#include "sim/collectives/representative.h"

namespace hetsim::sim {
namespace {

// OnEvent payload of the launch latency's end (transfer indices are int32).
constexpr uint64_t kLaunchDone = std::numeric_limits<uint64_t>::max();

Time SaturatingMultiply(int64_t times, Time t) { return t > 0 && times > kTimeMax / t ? kTimeMax : times * t; }

}  // namespace

CollectiveExecution::CollectiveExecution(Network* network, topology::Router* router, const TransferGraph* graph,
                                         std::function<void(Time)> on_done)
    : network_(network), router_(router), graph_(graph), on_done_(std::move(on_done)) {}

absl::Status CollectiveExecution::Start(Simulator* simulator) {
  simulator_ = simulator;
  routes_.clear();
  route_latency_.clear();
  step_latency_.clear();
  const topology::Topology& topology = router_->topology();
  wire_bytes_per_byte_ = graph_->nccl() ? 1.0 / ProtocolBandwidthFraction(graph_->protocol()) : 1.0;
  routes_.reserve(graph_->paths().size());
  route_latency_.reserve(graph_->paths().size());
  for (const TransferPath& p : graph_->paths()) {
    auto route = router_->GpuRoute(p.src, p.dst, p.flow_key);
    if (!route.ok()) return route.status();
    routes_.emplace_back((*route)->data(), (*route)->size());
    Time latency = 0;
    for (LinkId l : routes_.back()) latency += network_->link(l).latency;
    route_latency_.push_back(latency);
    step_latency_.push_back(graph_->nccl() ? RouteStepLatency(topology, routes_.back(), graph_->protocol()) : 0);
  }
  // Representatives run on their classes' canonical links; latencies stay the physical route's.
  representative_ = RouteRepresentatives(topology, routes_, graph_->multiplicities(), graph_->group());
  for (size_t p = 0; p < routes_.size(); ++p) {
    if (representative_.is_representative(p)) routes_[p] = representative_.route(p);
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
  if (graph_->nccl() && graph_->launch_latency() > 0) {
    simulator->ScheduleAfter(graph_->launch_latency(), this, kLaunchDone);
    return absl::OkStatus();
  }
  LaunchRoots();
  return absl::OkStatus();
}

void CollectiveExecution::LaunchRoots() {
  const auto n = static_cast<TransferIndex>(graph_->size());
  size_t roots = 0;
  for (TransferIndex t = 0; t < n; ++t) roots += graph_->num_deps(t) == 0 ? 1 : 0;
  network_->ReserveFlows(roots);
  for (TransferIndex t = 0; t < n; ++t) {
    if (graph_->num_deps(t) == 0) Launch(t);
  }
}

void CollectiveExecution::Launch(TransferIndex t) {
  const int32_t path = graph_->path_of(t);
  if (path == kNoPath) {  // a join: nothing to move
    Finish(t);
    return;
  }
  const int32_t repeats = graph_->latency_repeats(t);
  // Saturating (repeats - 1) x latency + repeats x step latency: an absurd latency ends at kTimeMax
  // instead of wrapping.
  const Time wire = SaturatingMultiply(repeats - 1, route_latency_[path]);
  const Time step = SaturatingMultiply(repeats, step_latency_[path]);
  const Time extra = wire > kTimeMax - step ? kTimeMax : wire + step;
  if (extra > 0) {
    simulator_->ScheduleAfter(extra, this, static_cast<uint64_t>(t));
    return;
  }
  StartFlow(t);
}

void CollectiveExecution::OnEvent(uint64_t payload) {
  if (payload == kLaunchDone) {
    LaunchRoots();
    return;
  }
  StartFlow(static_cast<TransferIndex>(payload));
}

void CollectiveExecution::StartFlow(TransferIndex t) {
  ++flows_;
  int64_t bytes = graph_->bytes_of(t);
  if (wire_bytes_per_byte_ != 1.0)
    bytes = static_cast<int64_t>(std::ceil(static_cast<double>(bytes) * wire_bytes_per_byte_));
  const int32_t path = graph_->path_of(t);
  if (representative_.is_representative(path)) {
    network_->StartWeightedFlow(routes_[path], representative_.route_weights(path), bytes, this,
                                static_cast<uint64_t>(t));
    return;
  }
  network_->StartFlow(routes_[path], bytes, this, static_cast<uint64_t>(t));
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
