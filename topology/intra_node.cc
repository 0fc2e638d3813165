// Nodes laid out as a PCIe tree (spec::PcieTreeSpec), with NVLink bridges or DGX-1's hybrid cube-mesh,
// and the route between every pair of their GPUs, as NCCL's transports take them (docs/network.md,
// "Intra-node topologies"): an NVLink when the pair has one, else peer-to-peer over PCIe (under one
// switch, or up to the socket's root complex, across the socket link, and down), else (no_p2p)
// through the receiving socket's memory, NCCL's SHM connection (spec::kNcclPcieChannels) the bound.
#include <algorithm>
#include <array>
#include <utility>

#include "base/check.h"
#include "topology/topology_builder_internal.h"

namespace hetsim::topology {
namespace {

// DGX-1 with V100 (NVIDIA DGX-1 with Tesla V100 system architecture whitepaper, Fig. 2; `nvidia-smi
// topo -m` on DGX-1V): each GPU's six NVLinks go to three GPUs of its quad and one of the other quad,
// two of the four doubled. {GPU a, GPU b, NVLinks}.
constexpr std::array<std::array<int, 3>, 16> kCubeMesh = {{{0, 1, 1},
                                                           {0, 2, 1},
                                                           {0, 3, 2},
                                                           {0, 4, 2},
                                                           {1, 2, 2},
                                                           {1, 3, 1},
                                                           {1, 5, 2},
                                                           {2, 3, 2},
                                                           {2, 6, 1},
                                                           {3, 7, 1},
                                                           {4, 5, 1},
                                                           {4, 6, 1},
                                                           {4, 7, 2},
                                                           {5, 6, 2},
                                                           {5, 7, 1},
                                                           {6, 7, 2}}};

// What the routes of one node are composed from (local indices, link ids).
struct TreeLinks {
  int32_t per_socket = 1;
  int32_t per_switch = 0;                   // 0: GPUs on root ports
  std::vector<LinkId> gpu_up;               // per GPU: to its switch or socket (the reverse is + 1)
  std::vector<LinkId> switch_up;            // per switch: to its socket (the reverse is + 1)
  std::vector<LinkId> memory_write;         // per socket, no_p2p: socket -> memory
  std::vector<std::vector<LinkId>> shm;     // no_p2p, [a][b]: GPU a's SHM connection to GPU b (memory -> b)
  std::vector<std::vector<LinkId>> socket;  // [a][b]: socket a -> socket b
  std::vector<std::vector<LinkId>> nvlink;  // [a][b]: GPU a -> GPU b, kNoLink without one
};

std::vector<LinkId> TreeRoute(const TreeLinks& l, bool no_p2p, int32_t g, int32_t h) {
  if (l.nvlink[g][h] != kNoLink) return {l.nvlink[g][h]};
  const int32_t sg = g / l.per_socket, sh = h / l.per_socket;
  const int32_t wg = l.per_switch > 0 ? g / l.per_switch : -1, wh = l.per_switch > 0 ? h / l.per_switch : -1;
  if (!no_p2p && wg >= 0 && wg == wh) return {l.gpu_up[g], ReverseLink(l.gpu_up[h])};
  std::vector<LinkId> r = {l.gpu_up[g]};
  if (wg >= 0) r.push_back(l.switch_up[wg]);
  if (sg != sh) r.push_back(l.socket[sg][sh]);
  if (no_p2p) {
    // Stored into the receiver's socket memory (NCCL_SHM_LOCALITY = 2), loaded by the receiver over its
    // connection, which stands for the DRAM read, the way down and the loads' own limit.
    r.push_back(l.memory_write[sh]);
    r.push_back(l.shm[g][h]);
    return r;
  }
  if (wh >= 0) r.push_back(ReverseLink(l.switch_up[wh]));
  r.push_back(ReverseLink(l.gpu_up[h]));
  return r;
}

}  // namespace

void Topology::Builder::BuildTreeNode(int32_t island, int32_t node, const std::vector<DeviceId>& node_nics) {
  const spec::IslandSpec& isl = t_.cluster_.islands[island];
  const spec::NodeTypeSpec& nt = isl.node;
  const spec::PcieTreeSpec& p = nt.pcie;
  const int32_t gpus = nt.gpus_per_node;
  HETSIM_CHECK(p.sockets >= 1 && gpus % p.sockets == 0, "a node's GPUs split evenly over its sockets");
  TreeLinks l;
  l.per_socket = gpus / p.sockets;
  l.per_switch = p.gpus_per_switch;
  HETSIM_CHECK(l.per_switch == 0 || l.per_socket % l.per_switch == 0, "PCIe switches do not straddle sockets");
  const double pcie = nt.bandwidth.bytes_per_second();
  const Time half = nt.latency / 2;
  fabric_ = t_.node_fabric(island);
  std::vector<DeviceId> cpu;
  for (int32_t s = 0; s < p.sockets; ++s) cpu.push_back(AddDevice(DeviceKind::kCpu, island, node, s));
  // DRAM serves the copy's write and its read: the writes get half of its bandwidth, which is exact
  // when writes and reads balance (every GPU of a ring sends and receives).
  for (int32_t s = 0; p.no_p2p && s < p.sockets; ++s) {
    const DeviceId mem = AddDevice(DeviceKind::kHostMemory, island, node, s);
    l.memory_write.push_back(
        AddDuplex(cpu[s], mem, p.host_memory_bandwidth.bytes_per_second() / 2, 0, 0, LinkClass::kPcie));
  }
  l.socket.assign(p.sockets, std::vector<LinkId>(p.sockets, kNoLink));
  for (int32_t a = 0; a < p.sockets; ++a) {
    for (int32_t b = a + 1; b < p.sockets; ++b) {
      l.socket[a][b] = AddDuplex(cpu[a], cpu[b], p.socket_bandwidth.bytes_per_second(), p.socket_latency,
                                 p.socket_latency, LinkClass::kPcie);
      l.socket[b][a] = ReverseLink(l.socket[a][b]);
    }
  }
  std::vector<DeviceId> gpu_device;
  for (int32_t g = 0; g < gpus; ++g) {
    DeviceId parent = cpu[g / l.per_socket];
    if (l.per_switch > 0) {
      if (g % l.per_switch == 0) {
        const DeviceId sw = AddDevice(DeviceKind::kPcieSwitch, island, node, g / l.per_switch);
        l.switch_up.push_back(AddDuplex(sw, parent, pcie, 0, 0, LinkClass::kPcie));
      }
      parent = t_.link(l.switch_up.back()).src;
    }
    const DeviceId gpu = AddDevice(DeviceKind::kGpu, island, node, g);
    gpu_device.push_back(gpu);
    fabric_ = t_.node_fabric(island);
    l.gpu_up.push_back(AddDuplex(gpu, parent, pcie, half, nt.latency - half, LinkClass::kPcie));
    t_.gpu_devices_.push_back(gpu);
    t_.gpu_switch_.push_back(cpu[0]);  // the node's identity: GPUs of one node share it
    t_.gpu_up_.push_back(l.gpu_up.back());
    t_.gpu_down_.push_back(ReverseLink(l.gpu_up.back()));
    fabric_ = t_.island_fabric(island);
    AttachNic(gpu, g, node_nics, isl.nic_bandwidth.bytes_per_second());
  }
  fabric_ = t_.node_fabric(island);
  l.nvlink.assign(gpus, std::vector<LinkId>(gpus, kNoLink));
  auto add_nvlink = [&](int32_t a, int32_t b, int32_t links) {
    l.nvlink[a][b] = AddDuplex(gpu_device[a], gpu_device[b], links * nt.nvlink_bandwidth.bytes_per_second(), nt.latency,
                               nt.latency, LinkClass::kNvlink);
    l.nvlink[b][a] = ReverseLink(l.nvlink[a][b]);
  };
  if (nt.fabric == spec::IntraNodeFabric::kNvlinkBridge) {
    for (int32_t g = 0; g + 1 < gpus; g += 2) add_nvlink(g, g + 1, 1);
  } else if (nt.fabric == spec::IntraNodeFabric::kHybridCubeMesh) {
    HETSIM_CHECK(gpus == 8, "a hybrid cube-mesh node has 8 GPUs");
    for (const auto& [a, b, links] : kCubeMesh) add_nvlink(a, b, links);
  }
  // A GPU's loads of what a peer stored: per connection at most the PCIe link and NCCL's SHM rate,
  // an achieved figure that the fabric's efficiency (applied by AddLink) must not derate again.
  const double efficiency = fabric_ >= 0 ? t_.nccl_fabrics_[fabric_].bandwidth_efficiency : 1.0;
  const double shm = std::min(pcie, p.shm_connection.bytes_per_second() / efficiency);
  l.shm.assign(p.no_p2p ? gpus : 0, std::vector<LinkId>(gpus, kNoLink));
  for (int32_t g = 0; p.no_p2p && g < gpus; ++g) {
    for (int32_t h = 0; h < gpus; ++h) {
      if (g == h || l.nvlink[g][h] != kNoLink) continue;
      const DeviceId mem = t_.link(l.memory_write[h / l.per_socket]).dst;
      l.shm[g][h] = AddDuplex(mem, gpu_device[h], shm, nt.latency - half, 0, LinkClass::kPcie);
    }
  }
  for (int32_t g = 0; g < gpus; ++g) {
    t_.intra_route_base_.push_back(static_cast<int64_t>(t_.intra_routes_.size()));
    for (int32_t h = 0; h < gpus; ++h) {
      t_.intra_routes_.push_back(g == h ? std::vector<LinkId>{} : TreeRoute(l, p.no_p2p, g, h));
    }
  }
}

}  // namespace hetsim::topology
