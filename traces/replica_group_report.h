// The report's view of a mixed stage (Stage.replica_groups): a line per replica group with its GPU
// type, TP, share, pass times, busy time and the time it waits for the slowest group, and the memory
// of each group's GPUs (the stage's own memory line is its tightest group's).
#ifndef HETSIM_TRACES_REPLICA_GROUP_REPORT_H_
#define HETSIM_TRACES_REPLICA_GROUP_REPORT_H_

#include <cstdint>
#include <string>

#include "base/spec/plan.h"
#include "base/time.h"
#include "proto/hetsim.pb.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"

namespace hetsim::traces {

// Peak memory of one GPU of stage s (of its replica group `group`; -1: the stage's own cost).
int64_t PeakMemory(const executor::ExecutionSetup& setup, const executor::ExecutionResult& r, int s, int group);

// The group of a mixed stage whose peak memory is the largest share of its GPU's capacity; -1 for a
// plain stage.
int TightestGroup(const executor::ExecutionSetup& setup, const executor::ExecutionResult& r, int s);

// How long one replica of group g of stage s waited for the slowest group over the iteration: the
// difference of their passes, every pass that ran, as stretched by faults or jitter (GroupWaitIn).
Time GroupIdle(const executor::ExecutionSetup& setup, const executor::ExecutionResult& r, int s, int g);

// "a100+l40s", and "a100 node 0, GPUs 0-3 + l40s node 0, GPUs 0-3".
std::string MixedIslands(const executor::ExecutionSetup& setup, int s);
std::string MixedMeshName(const spec::StageSpec& stage);
std::string MeshName(const spec::MeshSpec& m);

// One StageReport.replica_groups line per group of mixed stage s; `busy` is the stage's compute time.
void AddReplicaGroupReports(const executor::ExecutionSetup& setup, const executor::ExecutionResult& r, int s, Time busy,
                            hetsim::v1::StageReport& out);

}  // namespace hetsim::traces

#endif  // HETSIM_TRACES_REPLICA_GROUP_REPORT_H_
