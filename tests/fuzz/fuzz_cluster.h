// The small heterogeneous cluster the fuzzers run against: two islands (2 nodes of 2 A100, 1 node of
// 2 V100) joined by Ethernet, GPU presets applied. Aborts if it stops parsing (a fuzzer bug).
#ifndef HETSIM_FUZZ_FUZZ_CLUSTER_H_
#define HETSIM_FUZZ_FUZZ_CLUSTER_H_

#include <string>

#include "absl/strings/string_view.h"
#include "base/check.h"
#include "google/protobuf/text_format.h"
#include "proto/gpu_presets.h"
#include "proto/hetsim.pb.h"
#include "tests/topology/topology_clusters.h"

inline const hetsim::v1::Cluster& FuzzCluster() {
  static const hetsim::v1::Cluster* cluster = [] {
    auto* c = new hetsim::v1::Cluster;
    constexpr absl::string_view kText = R"pb(
      gpu_types { name: "a100" preset: "A100-80GB" }
      gpu_types { name: "v100" preset: "V100-32GB" }
      node_types {
        name: "fast"
        gpu_type: "a100"
        gpus_per_node: 2
        intra_node_fabric: NVSWITCH
        intra_node_bandwidth_gbps: 2400
        intra_node_latency_ns: 1000
      }
      node_types {
        name: "slow"
        gpu_type: "v100"
        gpus_per_node: 2
        intra_node_fabric: NVSWITCH
        intra_node_bandwidth_gbps: 1200
        intra_node_latency_ns: 1000
      }
      inter_island_links {
        island_a: "slow"
        island_b: "fast"
        fabric: ETHERNET
        bandwidth_gbps: 100
        latency_ns: 5000
        count: 1
      }
    )pb";
    HETSIM_CHECK(google::protobuf::TextFormat::ParseFromString(std::string(kText), c),
                 "the fuzz cluster does not parse");
    // Each island on one InfiniBand switch (130 ns), one 200 Gb/s NIC per node (1 us).
    hetsim::testing::AddIslandsOfNodeTypes(*c, {{"fast", 2}, {"slow", 1}}, 1, 200, 1000, 130);
    HETSIM_CHECK(hetsim::proto::ApplyGpuPresets(c, "fuzz").ok(), "the fuzz cluster's GPU presets");
    return c;
  }();
  return *cluster;
}

#endif  // HETSIM_FUZZ_FUZZ_CLUSTER_H_
