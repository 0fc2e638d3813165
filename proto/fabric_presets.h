// Built-in NCCL fabric profiles: what NCCL achieves on each kind of fabric (bus-bandwidth efficiency of
// the Simple protocol, per-collective launch latency, per-step latency per protocol). A NodeType,
// Island or InterIslandLink leaves NcclFabric fields at zero to take its fabric's preset; the topology
// resolves them once (proto::ResolveCluster, proto/resolve_cluster.cc). Sources and the fit to the GTC 2024
// nccl-tests figures: docs/network.md, "NCCL's achieved bandwidth and latency".
#ifndef HETSIM_PROTO_FABRIC_PRESETS_H_
#define HETSIM_PROTO_FABRIC_PRESETS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"

namespace hetsim::proto {

struct NcclFabricPreset {
  const char* name;  // "NVLINK3", "INFINIBAND", ...
  double bandwidth_efficiency;
  int64_t launch_latency_ns;
  int64_t ll_step_latency_ns;
  int64_t ll128_step_latency_ns;
  int64_t simple_step_latency_ns;
};

// Every preset, in the order docs/network.md lists them.
const std::vector<NcclFabricPreset>& NcclFabricPresets();
// Exact name match; nullptr when there is none.
const NcclFabricPreset* FindNcclFabricPreset(absl::string_view name);

// The preset of a node type's intra-node fabric: PCIE for PCIe switches, else the NVLink generation of
// the GPU preset `gpu_preset` (V100 NVLINK2, A100 NVLINK3, H100/H200 NVLINK4, B200 NVLINK5; a GPU
// without a preset takes NVLINK4).
const NcclFabricPreset& IntraNodeFabricPreset(hetsim::v1::IntraNodeFabric fabric, absl::string_view gpu_preset);
// The preset of an inter-node fabric (INFINIBAND, ROCE, ETHERNET over TCP sockets).
const NcclFabricPreset& InterNodeFabricPreset(hetsim::v1::InterNodeFabric fabric);

// `given` with every zero field taken from `preset`.
hetsim::v1::NcclFabric ResolveNcclFabric(const hetsim::v1::NcclFabric& given, const NcclFabricPreset& preset);

// Empty when `f` is usable, else "<field>: <problem>" (efficiency outside (0, 1], a latency outside
// [0, 1 s]); zero fields (the preset's) pass.
std::string NcclFabricProblem(const hetsim::v1::NcclFabric& f);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_FABRIC_PRESETS_H_
