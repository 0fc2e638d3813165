// NCCL's socket transport on an ETHERNET island (Island.nccl_socket_threads, nccl_sockets_per_thread,
// tcp_stream_gbps): how many TCP streams a connection stripes its messages over, the share of the
// NIC's line rate they can carry, and the checks of the fields. NCCL's src/transport/net_socket.cc:
// NCCL_SOCKET_NTHREADS (at most 16) x NCCL_NSOCKS_PERTHREAD streams, at most 64 (docs/network.md).
#ifndef HETSIM_PROTO_SOCKET_TRANSPORT_INTERNAL_H_
#define HETSIM_PROTO_SOCKET_TRANSPORT_INTERNAL_H_

#include <string>
#include <utility>
#include <vector>

#include "proto/hetsim.pb.h"

namespace hetsim::proto {

inline constexpr uint32_t kMaxSocketThreads = 16;  // NCCL's MAX_THREADS
inline constexpr uint32_t kMaxSocketStreams = 64;  // NCCL's MAX_SOCKETS

uint32_t SocketThreads(const hetsim::v1::Island& is);     // 0 -> 1
uint32_t SocketsPerThread(const hetsim::v1::Island& is);  // 0 -> 1

// streams x tcp_stream_gbps / nic_bandwidth_gbps: the share of the line rate a NIC carries each way;
// +infinity without tcp_stream_gbps (no per-stream limit) or on a fabric other than ETHERNET.
double SocketStreamsShare(const hetsim::v1::Island& is);

// (field under the island, problem) pairs.
std::vector<std::pair<std::string, std::string>> SocketTransportProblems(const hetsim::v1::Island& is);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_SOCKET_TRANSPORT_INTERNAL_H_
