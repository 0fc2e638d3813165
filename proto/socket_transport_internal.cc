#include "proto/socket_transport_internal.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_format.h"
#include "proto/limits.h"

namespace hetsim::proto {

uint32_t SocketThreads(const hetsim::v1::Island& is) { return std::max<uint32_t>(1, is.nccl_socket_threads()); }
uint32_t SocketsPerThread(const hetsim::v1::Island& is) { return std::max<uint32_t>(1, is.nccl_sockets_per_thread()); }

double SocketStreamsShare(const hetsim::v1::Island& is) {
  if (is.fabric() != hetsim::v1::ETHERNET || !(is.tcp_stream_gbps() > 0) || !(is.nic_bandwidth_gbps() > 0)) {
    return std::numeric_limits<double>::infinity();
  }
  return SocketThreads(is) * SocketsPerThread(is) * is.tcp_stream_gbps() / is.nic_bandwidth_gbps();
}

std::vector<std::pair<std::string, std::string>> SocketTransportProblems(const hetsim::v1::Island& is) {
  std::vector<std::pair<std::string, std::string>> out;
  const bool set = is.nccl_socket_threads() != 0 || is.nccl_sockets_per_thread() != 0 || is.tcp_stream_gbps() != 0;
  if (set && is.fabric() != hetsim::v1::ETHERNET) {
    out.emplace_back(is.tcp_stream_gbps() != 0 ? "tcp_stream_gbps" : "nccl_socket_threads",
                     "only meaningful with fabric ETHERNET (NCCL's socket transport; RDMA fabrics use IB verbs)");
    return out;
  }
  if (is.nccl_socket_threads() > kMaxSocketThreads) {
    out.emplace_back("nccl_socket_threads",
                     absl::StrFormat("%d is more than NCCL's %d", is.nccl_socket_threads(), kMaxSocketThreads));
  } else if (SocketThreads(is) * SocketsPerThread(is) > kMaxSocketStreams) {
    out.emplace_back("nccl_sockets_per_thread",
                     absl::StrFormat("%d threads x %d sockets is more than NCCL's %d streams per connection",
                                     SocketThreads(is), SocketsPerThread(is), kMaxSocketStreams));
  }
  const double g = is.tcp_stream_gbps();
  if (g != 0 && !(g >= limits::kMinBandwidthGbps && g <= limits::kMaxBandwidthGbps)) {
    out.emplace_back("tcp_stream_gbps", absl::StrFormat("%g is outside [%g, %g]", g, limits::kMinBandwidthGbps,
                                                        limits::kMaxBandwidthGbps));
  }
  if (g == 0 && (is.nccl_socket_threads() != 0 || is.nccl_sockets_per_thread() != 0)) {
    out.emplace_back("tcp_stream_gbps",
                     "required with nccl_socket_threads or nccl_sockets_per_thread (what one "
                     "TCP stream carries)");
  }
  return out;
}

}  // namespace hetsim::proto
