#include <catch2/catch.hpp>

#include "base/units.h"
#include "proto/resolve_cluster.h"
#include "tests/topology/topology_clusters.h"
#include "topology/gpu_islands.h"

namespace hetsim::topology {
namespace {

using testing::AddGpuType;
using testing::AddInterIslandLink;
using testing::AddIsland;
using testing::AddNodeType;

// Algorithm 1 on a hand-built cluster, resolved as every caller resolves it.
absl::StatusOr<IslandFormation> Form(const v1::Cluster& c, const IslandThresholds& t = {}) {
  absl::StatusOr<spec::ClusterSpec> resolved = proto::ResolveCluster(c, "");
  if (!resolved.ok()) return resolved.status();
  return FormGpuIslands(*resolved, t);
}

// Tangram's worked example (seed 000): H100 SXM, H100 NVL, A100 and H200 nodes.
v1::Cluster WorkedExample() {
  v1::Cluster c;
  AddGpuType(c, "H100-SXM", 989, 80, 3350);
  AddGpuType(c, "H100-NVL", 989, 94, 3900);
  AddGpuType(c, "A100-80GB", 312, 80, 2039);
  AddGpuType(c, "H200", 1979, 141, 4800);
  AddNodeType(c, "sxm", "H100-SXM", 8, 3600, 1000);
  AddNodeType(c, "nvl", "H100-NVL", 8, 4800, 1000);
  AddNodeType(c, "a100", "A100-80GB", 8, 2400, 1000);
  AddNodeType(c, "h200", "H200", 8, 3600, 1000);
  AddIsland(c, {.name = "sxm", .node_type = "sxm", .nodes = 64});
  AddIsland(c, {.name = "a100", .node_type = "a100", .nodes = 128});
  AddIsland(c, {.name = "h200", .node_type = "h200", .nodes = 32});
  AddIsland(c, {.name = "nvl", .node_type = "nvl", .nodes = 16, .nics = 4, .nic_gbps = 200});
  AddInterIslandLink(c, "sxm", "a100", 400, 5000);
  AddInterIslandLink(c, "a100", "h200", 400, 5000);
  AddInterIslandLink(c, "sxm", "nvl", 400, 5000);
  return c;
}

TEST_CASE("Tangram worked example: H100 SXM and NVL merge, A100/H100/H200 stay apart", "[topology][islands]") {
  auto f = Form(WorkedExample());
  REQUIRE(f.ok());
  CHECK(f->initial_islands == 3);
  REQUIRE(f->islands.size() == 3);
  const GpuIsland& h100 = f->islands[0];
  CHECK(h100.members == std::vector<int32_t>{0, 3});
  CHECK(h100.gpu_types == std::vector<std::string>{"H100-SXM", "H100-NVL"});
  CHECK(h100.nodes == 80);
  CHECK(h100.gpus == 640);
  CHECK(h100.peak_flop_per_s == Approx(640 * 989e12));
  CHECK(h100.effective_hbm_bytes_per_gpu == GibToBytes(80));  // conservative: the smaller HBM
  CHECK(h100.hbm_bytes == Approx(GibToBytes(512 * 80.0 + 128 * 94.0)));
  CHECK(h100.inter_node_bytes_per_s_per_node == Approx(GbpsToBytesPerSecond(800)));  // the NVL nodes' 4 x 200
  CHECK(f->islands[1].members == std::vector<int32_t>{1});
  CHECK(f->islands[1].peak_flop_per_s == Approx(1024 * 312e12));
  CHECK(f->islands[2].members == std::vector<int32_t>{2});
  CHECK(f->islands[2].effective_hbm_bytes_per_gpu == GibToBytes(141));
}

TEST_CASE("phase 1 thresholds are relative to the cluster maximum", "[topology][islands]") {
  // |989 - 312| / 1979 = 0.34: separate at tau_C = 0.2, joined at tau_C = 0.35 (if memory agrees).
  v1::Cluster c = WorkedExample();
  IslandThresholds loose;
  loose.compute = 0.35;
  loose.memory_bandwidth = 0.5;
  auto f = Form(c, loose);
  REQUIRE(f.ok());
  CHECK(f->initial_islands == 2);  // H200 differs by 0.50 in compute
}

TEST_CASE("phase 2 merges while the bottleneck stays within the merge factor", "[topology][islands]") {
  v1::Cluster c;
  AddGpuType(c, "A100-40GB", 312, 40, 1555);
  AddGpuType(c, "A100-80GB", 312, 80, 2039);
  AddNodeType(c, "n40", "A100-40GB", 8, 2400, 1000);
  AddNodeType(c, "n80", "A100-80GB", 8, 2400, 1000);
  AddIsland(c, {.name = "x", .node_type = "n40", .nodes = 4});
  AddIsland(c, {.name = "y", .node_type = "n80", .nodes = 4});
  AddInterIslandLink(c, "x", "y", 400, 5000);
  // HBM capacity differs by 40/80 = 0.5 > 0.2: two initial islands. Merged, the HBM-bandwidth
  // bottleneck is (1555 + 2039) / (2 x 1555) = 1.156.
  auto strict = Form(c);
  REQUIRE(strict.ok());
  CHECK(strict->initial_islands == 2);
  CHECK(strict->islands.size() == 2);
  CHECK(strict->bottleneck == Approx(1.0));
  IslandThresholds t;
  t.merge_factor = 1.2;
  auto merged = Form(c, t);
  REQUIRE(merged.ok());
  REQUIRE(merged->islands.size() == 1);
  CHECK(merged->bottleneck == Approx((1555.0 + 2039.0) / (2 * 1555.0)));
  CHECK(merged->islands[0].effective_hbm_bytes_per_gpu == GibToBytes(40));
  CHECK(merged->islands[0].effective_flop_per_s == Approx(64 * 312e12));
}

TEST_CASE("islands: GPU types without figures are rejected by field", "[topology][islands]") {
  v1::Cluster c = WorkedExample();
  c.mutable_gpu_types(2)->set_hbm_gib(0);
  auto f = Form(c);
  REQUIRE_FALSE(f.ok());
  CHECK(std::string(f.status().message()) == "gpu_types[\"A100-80GB\"].hbm_gib: must be > 0");
}

TEST_CASE("islands: a GPU without BF16 is compared at its FP16 peak", "[topology][islands]") {
  v1::Cluster c = WorkedExample();
  c.mutable_gpu_types(2)->set_peak_tflops_bf16(0);  // an A100 that gives only FP16, as a V100 does
  c.mutable_gpu_types(2)->set_peak_tflops_fp16(312);
  auto same = Form(c);
  REQUIRE(same.ok());
  auto before = Form(WorkedExample());
  REQUIRE(before.ok());
  CHECK(same->islands.size() == before->islands.size());
  CHECK(same->bottleneck == before->bottleneck);
  c.mutable_gpu_types(2)->set_peak_tflops_fp16(0);  // neither: named by the dtype it lacks
  auto none = Form(c);
  REQUIRE_FALSE(none.ok());
  CHECK(std::string(none.status().message()) == "gpu_types[\"A100-80GB\"].peak_tflops_fp16: must be > 0");
}

}  // namespace
}  // namespace hetsim::topology
