// NCCL's protocols on top of the flow-level network (docs/network.md, "NCCL's achieved bandwidth and
// latency"). The topology already derates every link to the bandwidth NCCL's Simple protocol reaches
// on its fabric; on top of that a collective run with protocol p
//   - moves bytes / ProtocolBandwidthFraction(p) on the wire (LL sends a flag with every 4 bytes of
//     data, LL128 one with every 120 of 128),
//   - pays its fabric's step latency of p once per algorithm step (a ring step, a tree hop, a pipeline
//     chunk), in addition to the route's wire latency (the largest over the fabrics the route crosses),
//   - and pays one launch latency per collective (the largest over the fabrics the group spans).
// The protocol is chosen as NCCL's tuner does: the one with the smallest estimated time. With
// Cluster.ideal (Topology::nccl_model() false) none of this applies: Simple, line rate, no latency.
#ifndef HETSIM_SIM_COLLECTIVES_NCCL_MODEL_H_
#define HETSIM_SIM_COLLECTIVES_NCCL_MODEL_H_

#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/time.h"
#include "topology/device_graph.h"

namespace hetsim::collectives {

using topology::NcclProtocol;

absl::string_view ProtocolName(NcclProtocol p);  // "LL", "LL128", "Simple"
// "auto" gives nullopt; InvalidArgument naming `proto` otherwise.
absl::StatusOr<std::optional<NcclProtocol>> ParseProtocol(absl::string_view name);

// Payload share of the wire bytes relative to Simple: LL 1/4 (NCCL's ring LL bandwidth: half the line
// is flags, and the flag polling halves it again), LL128 0.92 (NCCL's 120/128), Simple 1.
double ProtocolBandwidthFraction(NcclProtocol p);

// Whether NCCL enables LL128 by default for a collective over `gpus` (src/graph/tuning.cc, ncclTopoTuneModel,
// NVIDIA/nccl 5067397: `pEnable &= (graphs[a]->typeIntra <= PATH_NVB)`, and `minCompCap == maxCompCap || minCompCap >=
// 90`): the group's GPUs inside each node joined by NVLink (NVSwitch, the cube-mesh's NVLink rings, a bridged pair),
// not PCIe or host memory, and one compute capability unless all are Hopper or newer. A node holding one GPU of the
// group has no intra-node hop. hetsim does not model where a node's NICs sit on its PCIe tree, so NCCL's typeInter <=
// PATH_PXB test is taken as passed.
bool NcclEnablesLl128(const topology::Topology& topology, std::span<const GpuId> gpus);

// The protocols a collective may use on `topology`: all three with the NCCL model (LL and Simple where NCCL disables
// LL128 for the group `gpus`, NcclEnablesLl128; empty: all three), Simple alone when ideal; `forced` (when set and the
// model is on) alone.
std::vector<NcclProtocol> CandidateProtocols(const topology::Topology& topology, std::optional<NcclProtocol> forced,
                                             std::span<const GpuId> gpus = {});

// Step latency of protocol p on a route: the largest over the fabrics of its links; 0 when ideal.
Time RouteStepLatency(const topology::Topology& topology, std::span<const hetsim::LinkId> route, NcclProtocol p);

// Launch latency of one collective over `gpus`: the largest of their node types' fabrics, of their
// islands' inter-node fabrics when the group spans nodes, and of the inter-island links when it spans
// islands; 0 when ideal.
Time LaunchLatency(const topology::Topology& topology, std::span<const hetsim::GpuId> gpus);

}  // namespace hetsim::collectives

#endif  // HETSIM_SIM_COLLECTIVES_NCCL_MODEL_H_
