// The meshes of a plan's stages against the cluster: islands by name, one mesh inside its island, two
// meshes sharing GPUs, an island's GPU able to run the model's dtype. Shared by the checks of plain
// stages (validate_plan.cc) and of mixed stages' replica groups (validate_replica_groups.cc).
#ifndef HETSIM_PROTO_PLAN_MESHES_INTERNAL_H_
#define HETSIM_PROTO_PLAN_MESHES_INTERNAL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "proto/hetsim.pb.h"
#include "proto/validate_problems.h"

namespace hetsim::proto {

struct IslandInfo {
  const hetsim::v1::Island* island;
  const hetsim::v1::NodeType* node;
  const hetsim::v1::GpuType* gpu;
};
using IslandIndex = absl::flat_hash_map<std::string, IslandInfo>;

// The cluster's islands by name (the cluster is validated: every name resolves).
IslandIndex IndexIslands(const hetsim::v1::Cluster& c);

// The mesh lies inside its island; false when the island is unknown or the mesh is outside. `at` ends
// with "mesh.".
bool CheckMesh(Problems& p, const hetsim::v1::Mesh& m, const std::string& at, const IslandIndex& islands);

// TP, CP and DP split the mesh: a TP group is `tp` consecutive GPUs of the mesh (node-major), within a
// node or whole nodes (its collectives then cross the inter-node fabric), and tp x cp x dp is the
// mesh's GPU count. `at` is the stage's or replica group's path ("stages[1].").
void CheckMeshDegrees(Problems& p, const hetsim::v1::Mesh& m, uint32_t tp, uint32_t cp, uint32_t dp,
                      const std::string& at);

// The two meshes hold a GPU in common.
bool MeshesOverlap(const hetsim::v1::Mesh& a, const hetsim::v1::Mesh& b);

// The island's GPU has peak FLOP/s for `dtype` (and 16-bit ones under FP8), unless the stage's times
// are measured. `at` names the mesh's island field.
void CheckIslandGpu(Problems& p, const IslandInfo& island, const std::string& at, hetsim::v1::DType dtype,
                    bool measured);

// A stage's meshes with their field paths ("stages[2].mesh", "stages[2].replica_groups[1].mesh"): its
// own, or its replica groups'.
std::vector<std::pair<const hetsim::v1::Mesh*, std::string>> StageMeshes(const hetsim::v1::Stage& s, int index);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_PLAN_MESHES_INTERNAL_H_
