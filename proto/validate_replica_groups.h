// The checks of a mixed stage (Stage.replica_groups): each group's mesh, degrees and share, the
// shares adding up to the micro-batch, TP degrees dividing the largest (gradients reduce per shard of
// the finest split), routes between the groups, and what a mixed stage cannot hold yet.
#ifndef HETSIM_PROTO_VALIDATE_REPLICA_GROUPS_H_
#define HETSIM_PROTO_VALIDATE_REPLICA_GROUPS_H_

#include <string>

#include "proto/hetsim.pb.h"
#include "proto/plan_meshes_internal.h"
#include "proto/validate_problems.h"

namespace hetsim::proto {

// Adds every problem of stages[index]'s replica groups; `at` is "stages[i].". False when a group's
// mesh is unusable (the caller then skips the checks that need meshes).
bool CheckReplicaGroups(Problems& p, const hetsim::v1::Plan& plan, const hetsim::v1::Model& model, int index,
                        const IslandIndex& islands);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_VALIDATE_REPLICA_GROUPS_H_
