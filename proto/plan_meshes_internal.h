// The meshes of a plan's stages against the cluster: islands by name, one mesh inside its island, two
// meshes sharing GPUs, an island's GPU able to run the model's dtype. Shared by the checks of plain
// stages (validate_plan.cc) and of mixed stages' replica groups (validate_replica_groups.cc).
#ifndef HETSIM_PROTO_PLAN_MESHES_INTERNAL_H_
#define HETSIM_PROTO_PLAN_MESHES_INTERNAL_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
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

// A stage's or replica group's field as the file holds it (uint32, or a sum of them), with the largest
// value the spec's `int` may take for it.
struct DegreeField {
  const char* name;  // "tensor_parallel"; a sum: the field its problem is reported on
  uint64_t value;
  uint64_t max;  // limits::kMaxDegree for a degree, 3 for zero_stage
};

// True when every field is at most its max; otherwise adds "FIELD: V is outside [0, MAX]" for each
// one above it (`at` is the stage's or group's path, "stages[1].") and returns false, before anything
// narrows the values to int.
bool CheckDegreeRanges(Problems& p, const std::string& at, std::initializer_list<DegreeField> fields);

// Who holds each GPU of the meshes claimed so far: finds the GPUs two stages (or a stage's replica
// groups, or two pipelines) share in time linear in the GPUs claimed, which the cluster bounds (10^6).
// Comparing meshes pairwise was quadratic in the meshes and kept a problem per overlapping pair:
// 10,000 one-GPU pipelines on one GPU ran for minutes, 5,000 replica groups on one GPU took 25 s.
class GpuClaims {
 public:
  struct Owner {
    int pipeline = -1;  // Plan.pipelines index; -1 for a plan's own stages
    int stage = 0;
    int group = -1;  // Stage.replica_groups index; -1 for the stage's own mesh
  };
  // Claims the GPUs of `mesh` (inside its island: CheckMesh passed) for `owner`, in order. Returns the
  // owner of the first GPU claimed before, if any; the rest of the mesh is then left unclaimed, so each
  // mesh costs its new GPUs plus one.
  std::optional<Owner> Claim(const hetsim::v1::Mesh& mesh, const Owner& owner);

 private:
  // By island name, then node << 32 | GPU.
  absl::flat_hash_map<std::string, absl::flat_hash_map<uint64_t, Owner>> owners_;
};

// The island's GPU has peak FLOP/s for `dtype` (and 16-bit ones under FP8), unless the stage's times
// are measured. `at` names the mesh's island field.
void CheckIslandGpu(Problems& p, const IslandInfo& island, const std::string& at, hetsim::v1::DType dtype,
                    bool measured);

// A stage's meshes with their field paths ("stages[2].mesh", "stages[2].replica_groups[1].mesh"): its
// own, or its replica groups'.
std::vector<std::pair<const hetsim::v1::Mesh*, std::string>> StageMeshes(const hetsim::v1::Stage& s, int index);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_PLAN_MESHES_INTERNAL_H_
