#include "proto/fabric_presets.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "base/check.h"

namespace hetsim::proto {

const std::vector<NcclFabricPreset>& NcclFabricPresets() {
  // name, Simple-protocol efficiency, launch ns, step ns LL / LL128 / Simple. Efficiencies are the
  // GTC 2024 large-message busbw over line rate; latencies fitted to published nccl-tests small-size
  // times (docs/network.md).
  static const std::vector<NcclFabricPreset> kPresets = {
      {"NVLINK2", 0.80, 8000, 300, 500, 1500},        // V100 (estimate: NVLINK3's latencies)
      {"NVLINK3", 0.775, 8000, 300, 500, 1500},       // A100 NVSwitch: 232 of 300 GB/s
      {"NVLINK4", 0.825, 8000, 300, 500, 1500},       // H100/H200 NVSwitch: 370 of 450 GB/s
      {"NVLINK5", 0.825, 8000, 300, 500, 1500},       // B200 (estimate: NVLINK4's)
      {"PCIE", 0.80, 8000, 800, 2000, 4500},          // NCCL's PCI step latencies
      {"INFINIBAND", 0.965, 8000, 1000, 1500, 3000},  // 192 of 200 (HDR), 380 of 400 (NDR) GB/s per node
      {"ROCE", 0.965, 8000, 1000, 1500, 3000},        // 400 Gb/s RDMA: 48 of 50 GB/s
      {"ETHERNET", 0.80, 8000, 10000, 15000, 20000},  // TCP sockets, 100 GbE: 10 of 12.5 GB/s
  };
  return kPresets;
}

const NcclFabricPreset* FindNcclFabricPreset(absl::string_view name) {
  for (const NcclFabricPreset& p : NcclFabricPresets()) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

const NcclFabricPreset& IntraNodeFabricPreset(hetsim::v1::IntraNodeFabric fabric, absl::string_view gpu_preset) {
  const char* name = "NVLINK4";
  if (fabric == hetsim::v1::PCIE || fabric == hetsim::v1::PCIE_TREE || fabric == hetsim::v1::NVLINK_BRIDGE) {
    name = "PCIE";  // a bridged pair's NVLink too: one preset per node type, and most of its pairs are PCIe
  } else if (absl::StartsWith(gpu_preset, "V100")) {
    name = "NVLINK2";
  } else if (absl::StartsWith(gpu_preset, "A100")) {
    name = "NVLINK3";
  } else if (absl::StartsWith(gpu_preset, "B200")) {
    name = "NVLINK5";
  }
  return *FindNcclFabricPreset(name);
}

const NcclFabricPreset& InterNodeFabricPreset(hetsim::v1::InterNodeFabric fabric) {
  switch (fabric) {
    case hetsim::v1::ROCE: return *FindNcclFabricPreset("ROCE");
    case hetsim::v1::ETHERNET: return *FindNcclFabricPreset("ETHERNET");
    case hetsim::v1::INTER_NODE_FABRIC_UNSPECIFIED:  // the schema's default fabric
    case hetsim::v1::INFINIBAND: return *FindNcclFabricPreset("INFINIBAND");
    case hetsim::v1::InterNodeFabric_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case hetsim::v1::InterNodeFabric_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  HETSIM_CHECK(false, "an InterNodeFabric number outside the schema (proto::Load refuses them)");
  return *FindNcclFabricPreset("INFINIBAND");
}

hetsim::v1::NcclFabric ResolveNcclFabric(const hetsim::v1::NcclFabric& given, const NcclFabricPreset& preset) {
  hetsim::v1::NcclFabric f = given;
  if (f.bandwidth_efficiency() == 0) f.set_bandwidth_efficiency(preset.bandwidth_efficiency);
  if (f.launch_latency_ns() == 0) f.set_launch_latency_ns(preset.launch_latency_ns);
  if (f.ll_step_latency_ns() == 0) f.set_ll_step_latency_ns(preset.ll_step_latency_ns);
  if (f.ll128_step_latency_ns() == 0) f.set_ll128_step_latency_ns(preset.ll128_step_latency_ns);
  if (f.simple_step_latency_ns() == 0) f.set_simple_step_latency_ns(preset.simple_step_latency_ns);
  return f;
}

std::string NcclFabricProblem(const hetsim::v1::NcclFabric& f) {
  // Zero is allowed here: a field as written takes the preset; a resolved one is never zero.
  if (!(f.bandwidth_efficiency() >= 0 && f.bandwidth_efficiency() <= 1)) {
    return absl::StrFormat("bandwidth_efficiency: %g is outside (0, 1]", f.bandwidth_efficiency());
  }
  constexpr int64_t kMaxNs = 1'000'000'000;
  for (auto [name, v] : {std::pair<const char*, int64_t>{"launch_latency_ns", f.launch_latency_ns()},
                         {"ll_step_latency_ns", f.ll_step_latency_ns()},
                         {"ll128_step_latency_ns", f.ll128_step_latency_ns()},
                         {"simple_step_latency_ns", f.simple_step_latency_ns()}}) {
    if (v < 0 || v > kMaxNs) return absl::StrFormat("%s: %d is outside [0, %d]", name, v, kMaxNs);
  }
  return "";
}

}  // namespace hetsim::proto
