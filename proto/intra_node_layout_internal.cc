#include "proto/intra_node_layout_internal.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "proto/limits.h"

namespace hetsim::proto {

using hetsim::v1::NodeType;

bool IsPcieTreeFabric(hetsim::v1::IntraNodeFabric fabric) {
  return fabric == hetsim::v1::PCIE_TREE || fabric == hetsim::v1::NVLINK_BRIDGE ||
         fabric == hetsim::v1::HYBRID_CUBE_MESH;
}

namespace {

using LayoutProblems = std::vector<std::pair<std::string, std::string>>;

void CheckPcieTree(const NodeType& n, LayoutProblems& out) {
  const hetsim::v1::PcieTree& p = n.pcie();
  const uint32_t gpus = n.gpus_per_node();
  const uint32_t sockets = std::max<uint32_t>(1, p.sockets());
  if (p.sockets() > limits::kMaxSockets) {
    out.emplace_back("pcie.sockets", absl::StrFormat("%d is more than %d", p.sockets(), limits::kMaxSockets));
    return;
  }
  if (gpus % sockets != 0) {
    out.emplace_back("pcie.sockets", absl::StrFormat("%d GPUs do not split evenly over %d sockets", gpus, sockets));
    return;
  }
  const uint32_t per_socket = gpus / sockets;
  if (p.gpus_per_switch() > 1 && per_socket % p.gpus_per_switch() != 0) {
    out.emplace_back("pcie.gpus_per_switch",
                     absl::StrFormat("%d does not divide the %d GPUs of a socket", p.gpus_per_switch(), per_socket));
  }
  const double socket_gbps = p.inter_socket_bandwidth_gbps();
  if (sockets > 1 && !(socket_gbps >= limits::kMinBandwidthGbps && socket_gbps <= limits::kMaxBandwidthGbps)) {
    out.emplace_back("pcie.inter_socket_bandwidth_gbps",
                     absl::StrFormat("%g is outside [%g, %g] (required with %d sockets)", socket_gbps,
                                     limits::kMinBandwidthGbps, limits::kMaxBandwidthGbps, sockets));
  }
  if (p.inter_socket_latency_ns() < 0 || p.inter_socket_latency_ns() > limits::kMaxRouteLatencyNs) {
    out.emplace_back("pcie.inter_socket_latency_ns",
                     absl::StrFormat("%d is outside [0, %d]", p.inter_socket_latency_ns(), limits::kMaxRouteLatencyNs));
  }
  // Both rates become links of the host-bounced hops: at least 10 Mb/s, as every link (1e-300 GB/s passed
  // and its transfers overflowed int64 ps: an internal error, session 36).
  const double min_gbytes = limits::kMinBandwidthGbps / 8;
  const double mem = p.host_memory_bandwidth_gbytes_per_s();
  if (p.no_p2p() && !(mem >= min_gbytes && mem <= limits::kMaxHbmGbytesPerS)) {
    out.emplace_back(
        "pcie.host_memory_bandwidth_gbytes_per_s",
        absl::StrFormat("%g is outside [%g, %g] (required with no_p2p)", mem, min_gbytes, limits::kMaxHbmGbytesPerS));
  }
  const double shm = p.shm_connection_gbytes_per_s();
  if (!(shm == 0 || (shm >= min_gbytes && shm <= limits::kMaxHbmGbytesPerS))) {
    out.emplace_back(
        "pcie.shm_connection_gbytes_per_s",
        absl::StrFormat("%g is outside [%g, %g] (0: NCCL's SHM default)", shm, min_gbytes, limits::kMaxHbmGbytesPerS));
  } else if (shm > 0 && !p.no_p2p()) {
    out.emplace_back("pcie.shm_connection_gbytes_per_s",
                     absl::StrFormat("%g is set without no_p2p (only host-bounced hops use SHM connections)", shm));
  }
}

void CheckNvlinks(const NodeType& n, LayoutProblems& out) {
  const uint32_t gpus = n.gpus_per_node();
  if (n.intra_node_fabric() == hetsim::v1::NVLINK_BRIDGE && gpus % 2 != 0) {
    out.emplace_back("gpus_per_node", absl::StrFormat("%d GPUs cannot be bridged in pairs (NVLINK_BRIDGE joins GPUs "
                                                      "2k and 2k+1)",
                                                      gpus));
  }
  if (n.intra_node_fabric() == hetsim::v1::HYBRID_CUBE_MESH && gpus != 8) {
    out.emplace_back("gpus_per_node", absl::StrFormat("%d GPUs: a hybrid cube-mesh (DGX-1) has exactly 8", gpus));
  }
  const double gbps = n.nvlink_bandwidth_gbps();
  if (!(gbps >= limits::kMinBandwidthGbps && gbps <= limits::kMaxBandwidthGbps)) {
    out.emplace_back("nvlink_bandwidth_gbps", absl::StrFormat("%g is outside [%g, %g] (required with %s)", gbps,
                                                              limits::kMinBandwidthGbps, limits::kMaxBandwidthGbps,
                                                              hetsim::v1::IntraNodeFabric_Name(n.intra_node_fabric())));
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> IntraNodeLayoutProblems(const NodeType& n) {
  LayoutProblems out;
  const bool tree = IsPcieTreeFabric(n.intra_node_fabric());
  const bool nvlinks =
      n.intra_node_fabric() == hetsim::v1::NVLINK_BRIDGE || n.intra_node_fabric() == hetsim::v1::HYBRID_CUBE_MESH;
  if (!tree && n.has_pcie()) {
    out.emplace_back("pcie", "only meaningful with PCIE_TREE, NVLINK_BRIDGE or HYBRID_CUBE_MESH");
  }
  if (!nvlinks && n.nvlink_bandwidth_gbps() != 0) {
    out.emplace_back("nvlink_bandwidth_gbps", "only meaningful with NVLINK_BRIDGE or HYBRID_CUBE_MESH");
  }
  if (n.nvlink_sharp() && n.intra_node_fabric() != hetsim::v1::NVSWITCH) {
    out.emplace_back("nvlink_sharp", "only meaningful with NVSWITCH (the reduction runs in the NVSwitch)");
  }
  const double nvls = n.nvls_bandwidth_efficiency();
  if (nvls != 0 && !n.nvlink_sharp()) {
    out.emplace_back("nvls_bandwidth_efficiency", "only meaningful with nvlink_sharp");
  } else if (!(nvls >= 0 && nvls <= 1)) {
    out.emplace_back("nvls_bandwidth_efficiency",
                     absl::StrFormat("%g is outside [0, 1] (a share of the link's line rate)", nvls));
  }
  if (tree) CheckPcieTree(n, out);
  if (nvlinks) CheckNvlinks(n, out);
  return out;
}

}  // namespace hetsim::proto
