// proto/validate_cluster and proto/gpu_presets: one test per rule.
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "proto/gpu_presets.h"
#include "proto/validate_cluster.h"
#include "tests/proto/validate_test_util.h"

namespace hetsim::testing {
namespace {

using proto::ValidateCluster;
using v1::Cluster;

}  // namespace

TEST_CASE("bundled clusters are valid", "[validate]") {
  CHECK(ValidateCluster(BigCluster(), "c.pbtxt").ok());
  CHECK(ValidateCluster(HaptCluster(), "c.pbtxt").ok());
}

TEST_CASE("cluster: the three lists are required", "[validate]") {
  CHECK_PROBLEM(ValidateCluster(Cluster(), "c.pbtxt"), "c.pbtxt: gpu_types: required");
  CHECK_PROBLEM(ValidateCluster(Cluster(), "c.pbtxt"), "c.pbtxt: node_types: required");
  CHECK_PROBLEM(ValidateCluster(Cluster(), "c.pbtxt"), "c.pbtxt: islands: required");
}

TEST_CASE("cluster: names are required and unique", "[validate]") {
  Cluster c = BigCluster();
  c.mutable_gpu_types(1)->set_name("a100-80gb");
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"),
                "c.pbtxt: gpu_types[1].name: duplicate name \"a100-80gb\" (also gpu_types[0])");
  c = BigCluster();
  c.mutable_islands(0)->clear_name();
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"), "c.pbtxt: islands[0].name: required");
}

TEST_CASE("cluster: an unknown GPU preset is named with the known ones", "[validate]") {
  Cluster c = BigCluster();
  c.mutable_gpu_types(0)->set_preset("A100-90GB");
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"),
                "c.pbtxt: gpu_types[0].preset: unknown GPU preset \"A100-90GB\" (known: V100-32GB");
}

TEST_CASE("GPU presets fill only the fields left at zero", "[validate]") {
  hetsim::v1::GpuType g;
  g.set_preset("H100-SXM");
  g.set_hbm_gib(64);
  REQUIRE(hetsim::proto::ApplyGpuPreset(&g, "c", "gpu").ok());
  CHECK(g.hbm_gib() == 64);
  CHECK(g.peak_tflops_bf16() == Approx(989.5));
  CHECK(g.hbm_bandwidth_gbytes_per_s() == 3350);
  CHECK(g.efficiency().max_efficiency() > 0);
  for (const auto& p : hetsim::proto::GpuPresets()) {
    INFO(p.name);
    CHECK(hetsim::proto::FindGpuPreset(p.name) == &p);
    CHECK(p.peak_tflops_fp16 > 0);
    CHECK(p.hbm_gib > 0);
    CHECK((p.max_efficiency > 0 && p.max_efficiency <= 1));
  }
  CHECK(hetsim::proto::GpuPresets().size() == 27);  // docs/hardware.md lists each
}

TEST_CASE("cluster: a GPU type without a preset needs a peak, HBM and an efficiency", "[validate]") {
  Cluster c = HaptCluster();
  c.mutable_gpu_types(1)->clear_preset();
  const auto s = ValidateCluster(c, "c.pbtxt");
  CHECK_PROBLEM(s, "c.pbtxt: gpu_types[1].peak_tflops_bf16: required: at least one peak_tflops_* must be > 0");
  CHECK_PROBLEM(s, "c.pbtxt: gpu_types[1].hbm_gib: required");
  CHECK_PROBLEM(s, "c.pbtxt: gpu_types[1].hbm_bandwidth_gbytes_per_s: required");
  CHECK_PROBLEM(s, "c.pbtxt: gpu_types[1].efficiency.max_efficiency: required");
}

TEST_CASE("cluster: peaks and efficiencies are finite and in range", "[validate]") {
  Cluster c = HaptCluster();
  c.mutable_gpu_types(0)->set_peak_tflops_fp8(std::numeric_limits<double>::quiet_NaN());
  c.mutable_gpu_types(0)->mutable_efficiency()->set_max_efficiency(1.5);
  c.mutable_gpu_types(1)->set_peak_tflops_fp32(-1);
  const auto s = ValidateCluster(c, "c.pbtxt");
  CHECK_PROBLEM(s, "c.pbtxt: gpu_types[0].peak_tflops_fp8: nan is not a finite number");
  CHECK_PROBLEM(s, "c.pbtxt: gpu_types[0].efficiency.max_efficiency: 1.5 is outside (0, 1]");
  CHECK_PROBLEM(s, "c.pbtxt: gpu_types[1].peak_tflops_fp32: -1 is outside [0, 1e+06]");
}

// Below a floor, far from any GPU's, each refused at its own field: a peak of 1e-320 made every pass inf
// and was caught only by the plan's "one iteration could last inf s" on a stage (session 41).
TEST_CASE("cluster: rates and shares set below their floor are refused at the field", "[validate]") {
  Cluster c = HaptCluster();
  v1::GpuType& g = *c.mutable_gpu_types(0);
  g.set_peak_tflops_fp16(0.05);  // floor 0.1 TFLOP/s
  g.set_sustained_clock_fraction(1e-320);
  g.set_hbm_bandwidth_gbytes_per_s(0.5);             // floor 1 GB/s
  g.mutable_efficiency()->set_max_efficiency(5e-4);  // shares: floor 1e-3
  g.mutable_efficiency()->set_hbm_efficiency(1e-4);
  g.mutable_efficiency()->set_unfused_softmax_speed(9e-4);
  const auto s = ValidateCluster(c, "c.pbtxt");
  CHECK_PROBLEM(s, "c.pbtxt: gpu_types[0].peak_tflops_fp16: 0.05 is below the floor 0.1,");
  CHECK_PROBLEM(s, "c.pbtxt: gpu_types[0].sustained_clock_fraction: 9.99989e-321 is below the floor 0.001,");
  CHECK_PROBLEM(s, "c.pbtxt: gpu_types[0].hbm_bandwidth_gbytes_per_s: 0.5 is below the floor 1,");
  CHECK_PROBLEM(s, "c.pbtxt: gpu_types[0].efficiency.max_efficiency: 0.0005 is below the floor 0.001,");
  CHECK_PROBLEM(s, "c.pbtxt: gpu_types[0].efficiency.hbm_efficiency: 0.0001 is below the floor 0.001,");
  CHECK_PROBLEM(s, "c.pbtxt: gpu_types[0].efficiency.unfused_softmax_speed: 0.0009 is below the floor 0.001,");
  // At the floor is accepted; zero means unset (a preset's, or the full rate) and stays so.
  g.set_peak_tflops_fp16(0.1);
  g.set_sustained_clock_fraction(1e-3);
  g.set_hbm_bandwidth_gbytes_per_s(1);
  g.mutable_efficiency()->set_max_efficiency(1e-3);
  g.mutable_efficiency()->set_hbm_efficiency(0);
  g.mutable_efficiency()->set_unfused_softmax_speed(1e-3);
  CHECK(ValidateCluster(c, "c.pbtxt").ok());
}

TEST_CASE("cluster: node types reference a known GPU type", "[validate]") {
  Cluster c = BigCluster();
  c.mutable_node_types(1)->set_gpu_type("h100");
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"), "c.pbtxt: node_types[1].gpu_type: unknown GPU type \"h100\"");
}

TEST_CASE("cluster: gpus_per_node is required and bounded", "[validate]") {
  Cluster c = BigCluster();
  c.mutable_node_types(0)->set_gpus_per_node(0);
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"), "c.pbtxt: node_types[0].gpus_per_node: required");
  c.mutable_node_types(0)->set_gpus_per_node(5000);
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"), "c.pbtxt: node_types[0].gpus_per_node: 5000 is more than 1024");
}

TEST_CASE("cluster: a multi-GPU node needs an intra-node fabric and bandwidth", "[validate]") {
  Cluster c = BigCluster();
  c.mutable_node_types(0)->clear_intra_node_fabric();
  c.mutable_node_types(0)->clear_intra_node_bandwidth_gbps();
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"), "c.pbtxt: node_types[0].intra_node_fabric: required");
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"), "c.pbtxt: node_types[0].intra_node_bandwidth_gbps: required");
}

TEST_CASE("cluster: bandwidths below 10 Mb/s are rejected (they would overflow picoseconds)", "[validate]") {
  Cluster c = BigCluster();
  c.mutable_inter_island_links(0)->set_bandwidth_gbps(0.001);
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"),
                "c.pbtxt: inter_island_links[0].bandwidth_gbps: 0.001 is outside [0.01, 1e+07]");
}

TEST_CASE("cluster: latencies are non-negative and bounded", "[validate]") {
  Cluster c = BigCluster();
  c.mutable_islands(1)->set_switch_latency_ns(-5);
  c.mutable_node_types(0)->set_intra_node_latency_ns(int64_t{1} << 62);
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"), "c.pbtxt: islands[1].switch_latency_ns: -5 is outside");
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"),
                "c.pbtxt: node_types[0].intra_node_latency_ns: 4611686018427387904 is outside");
}

TEST_CASE("cluster: islands reference a known node type and have nodes", "[validate]") {
  Cluster c = BigCluster();
  c.mutable_islands(0)->set_node_type("dgx-b200");
  c.mutable_islands(1)->set_node_count(0);
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"), "c.pbtxt: islands[0].node_type: unknown node type \"dgx-b200\"");
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"), "c.pbtxt: islands[1].node_count: required");
}

TEST_CASE("cluster: a multi-node island needs a fabric, a topology and NICs", "[validate]") {
  Cluster c = BigCluster();
  c.mutable_islands(0)->clear_fabric();
  c.mutable_islands(0)->clear_topology();
  c.mutable_islands(0)->clear_nics_per_node();
  c.mutable_islands(0)->clear_nic_bandwidth_gbps();
  const auto s = ValidateCluster(c, "c.pbtxt");
  CHECK_PROBLEM(s, "c.pbtxt: islands[0].fabric: required with more than one node");
  CHECK_PROBLEM(s, "c.pbtxt: islands[0].topology: required with more than one node");
  CHECK_PROBLEM(s, "c.pbtxt: islands[0].nics_per_node: required");
  CHECK_PROBLEM(s, "c.pbtxt: islands[0].nic_bandwidth_gbps: required");
  // A single-node island needs none of them.
  Cluster h = HaptCluster();
  h.mutable_islands(1)->clear_fabric();
  h.mutable_islands(1)->clear_topology();
  h.mutable_islands(1)->clear_nics_per_node();
  h.mutable_islands(1)->clear_nic_bandwidth_gbps();
  CHECK(ValidateCluster(h, "c.pbtxt").ok());
}

TEST_CASE("cluster: fat-tree settings are checked and only allowed on fat trees", "[validate]") {
  Cluster c = BigCluster();
  c.mutable_islands(0)->set_oversubscription(0.5);
  c.mutable_islands(1)->set_nodes_per_leaf(33);
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"), "c.pbtxt: islands[0].oversubscription: 0.5 is outside [1, 1024]");
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"),
                "c.pbtxt: islands[1].nodes_per_leaf: 33 is more than the island's 32 nodes");
  Cluster h = HaptCluster();
  h.mutable_islands(0)->set_oversubscription(2);
  CHECK_PROBLEM(ValidateCluster(h, "c.pbtxt"),
                "c.pbtxt: islands[0].oversubscription: only meaningful with topology FAT_TREE");
}

TEST_CASE("cluster: inter-island links name two different known islands, once per pair", "[validate]") {
  Cluster c = BigCluster();
  c.mutable_inter_island_links(0)->set_island_b("h200");
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"), "c.pbtxt: inter_island_links[0].island_b: unknown island \"h200\"");
  c = BigCluster();
  c.mutable_inter_island_links(0)->set_island_b("a100");
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"),
                "c.pbtxt: inter_island_links[0].island_b: links island \"a100\" to itself");
  c = BigCluster();
  auto* dup = c.add_inter_island_links();
  *dup = c.inter_island_links(0);
  dup->set_island_a("h100");
  dup->set_island_b("a100");
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"),
                "c.pbtxt: inter_island_links[1].island_b: islands \"h100\" and \"a100\" are already linked");
  c = BigCluster();
  c.mutable_inter_island_links(0)->clear_fabric();
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"), "c.pbtxt: inter_island_links[0].fabric: required");
}

TEST_CASE("cluster: islands must be connected", "[validate]") {
  Cluster c = BigCluster();
  c.clear_inter_island_links();
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"),
                "c.pbtxt: islands[1]: island \"h100\" is not connected to island \"a100\"");
}

TEST_CASE("cluster: more than a million GPUs is rejected", "[validate]") {
  Cluster c = BigCluster();
  c.mutable_node_types(0)->set_gpus_per_node(1024);
  c.mutable_islands(0)->set_node_count(100'000);
  c.mutable_islands(0)->clear_nodes_per_leaf();
  CHECK_PROBLEM(ValidateCluster(c, "c.pbtxt"), "c.pbtxt: islands: 102400256 GPUs in total, more than 1000000");
}

}  // namespace hetsim::testing
