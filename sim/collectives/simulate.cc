#include "sim/collectives/simulate.h"

#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "sim/collectives/execution.h"
#include "sim/engine/simulator.h"

namespace hetsim::collectives {

std::vector<network::LinkSpec> NetworkLinks(const topology::Topology& topology) {
  std::vector<network::LinkSpec> out;
  out.reserve(topology.links().size());
  for (const topology::Link& l : topology.links()) out.push_back({l.bandwidth, l.latency});
  return out;
}

absl::Status RunWithinWallLimit(engine::Simulator& simulator, absl::string_view during) {
  constexpr uint64_t kSlice = 1 << 10;  // an event of a 16,384-GPU collective can take milliseconds
  for (;;) {
    simulator.set_max_events(simulator.events_processed() + kSlice);
    const engine::RunOutcome outcome = simulator.Run();
    simulator.set_max_events(0);
    if (outcome != engine::RunOutcome::kEventLimit) return absl::OkStatus();
    HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check(during));
  }
}

absl::StatusOr<CollectiveResult> SimulateCollective(const topology::Topology& topology, topology::Router& router,
                                                    const CollectiveRequest& request, network::NetworkMode mode) {
  if (auto s = ValidateRequest(topology, request); !s.ok()) return s;
  auto choice = ChooseShape(topology, router, request);
  if (!choice.ok()) return choice.status();
  const TransferGraph graph = BuildTransferGraph(topology, request, choice->shape);
  HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check("building a collective's transfers"));

  engine::Simulator simulator;
  auto network = network::Network::Create(&simulator, NetworkLinks(topology), mode);
  if (!network.ok()) return network.status();
  CollectiveExecution execution(network->get(), &router, &graph);
  if (auto s = execution.Start(&simulator); !s.ok()) return s;
  HETSIM_RETURN_IF_ERROR(RunWithinWallLimit(simulator, "simulating the collective"));
  if (!execution.done()) return absl::InternalError("collective did not complete: a transfer never became ready");

  CollectiveResult r;
  r.shape = choice->shape;
  r.estimates = choice->estimates;
  r.time = execution.finish_time() - execution.start_time();
  const double seconds = TimeToSeconds(r.time);
  r.algbw_bytes_per_s = seconds > 0 ? static_cast<double>(request.bytes) / seconds : 0;
  r.busbw_bytes_per_s = r.algbw_bytes_per_s * BusBandwidthFactor(request.op, static_cast<int64_t>(request.gpus.size()));
  r.flows = execution.flows();
  r.events = simulator.events_processed();
  r.network = (*network)->stats();
  r.network_mode = mode;
  return r;
}

}  // namespace hetsim::collectives
