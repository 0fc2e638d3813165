// proto/plan_meshes_internal: GpuClaims finds the first GPU two meshes share, whoever claimed it first.
#include <catch2/catch.hpp>

#include "proto/hetsim.pb.h"
#include "proto/plan_meshes_internal.h"

namespace hetsim::testing {
namespace {

v1::Mesh MeshOf(const char* island, uint32_t first_node, uint32_t nodes, uint32_t first_gpu, uint32_t gpus) {
  v1::Mesh m;
  m.set_island(island);
  m.set_first_node(first_node);
  m.set_node_count(nodes);
  m.set_first_gpu(first_gpu);
  m.set_gpus_per_node(gpus);
  return m;
}

}  // namespace

TEST_CASE("GpuClaims: disjoint meshes claim freely, an overlap names the first owner", "[validate][meshes]") {
  proto::GpuClaims claims;
  // Nodes 0-1, GPUs 0-3 of island "a"; the same GPUs of island "b" and GPUs 4-7 of "a" are other GPUs.
  CHECK_FALSE(claims.Claim(MeshOf("a", 0, 2, 0, 4), {.pipeline = 0, .stage = 0}).has_value());
  CHECK_FALSE(claims.Claim(MeshOf("b", 0, 2, 0, 4), {.pipeline = 1, .stage = 0}).has_value());
  CHECK_FALSE(claims.Claim(MeshOf("a", 0, 2, 4, 4), {.pipeline = 0, .stage = 1}).has_value());
  // Node 1, GPUs 6-7 of "a": held by pipeline 0's stage 1.
  const auto owner = claims.Claim(MeshOf("a", 1, 1, 6, 2), {.pipeline = 2, .stage = 0, .group = 1});
  REQUIRE(owner.has_value());
  CHECK(owner->pipeline == 0);
  CHECK(owner->stage == 1);
  CHECK(owner->group == -1);
  // A mesh keeps the GPUs it claimed before its first shared one, and none after it.
  CHECK_FALSE(claims.Claim(MeshOf("c", 0, 1, 2, 1), {.stage = 5}).has_value());
  CHECK(claims.Claim(MeshOf("c", 0, 1, 0, 4), {.stage = 6})->stage == 5);
  CHECK(claims.Claim(MeshOf("c", 0, 1, 1, 1), {.stage = 7})->stage == 6);
  CHECK_FALSE(claims.Claim(MeshOf("c", 0, 1, 3, 1), {.stage = 8}).has_value());
}

TEST_CASE("GpuClaims: 10,000 one-GPU meshes on one GPU each find the first claim", "[validate][meshes]") {
  proto::GpuClaims claims;
  CHECK_FALSE(claims.Claim(MeshOf("a", 0, 1, 0, 1), {.pipeline = 0}).has_value());
  int refused = 0;
  for (int p = 1; p < 10000; ++p) {
    const auto owner = claims.Claim(MeshOf("a", 0, 1, 0, 1), {.pipeline = p});
    refused += owner.has_value() && owner->pipeline == 0 ? 1 : 0;
  }
  CHECK(refused == 9999);
}

}  // namespace hetsim::testing
