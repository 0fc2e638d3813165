// Chakra execution traces of a plan: what each GPU (rank) does in one iteration as hetsim would run
// it, for ASTRA-sim and the other Chakra consumers (docs/chakra.md).
//
// Derived from the execution setup (sim/executor/setup.h), never from a second cost model: every
// compute node of the HAPT DAG becomes a COMP node on each GPU of its stage with the DAG node's
// duration (the GPU type's kernel model, tensor-parallel collectives included), every boundary
// transfer a COMM_SEND / COMM_RECV pair per resharding flow, every gradient bucket and ZeRO parameter
// all-gather a COMM_COLL node on each member of its data-parallel group, and the optimizer step a
// COMP node. The DAG's edges become each rank's dependencies: an edge u -> v gives the rank's first
// nodes of v a dependency on its last nodes of u (data when v consumes u's result, control when it
// only follows it). An overlapped gradient reduction splits the stage's last backward into one COMP
// node per bucket so that bucket j starts (j+1)/n of the way through it, as the executor does.
//
// Ranks are the cluster's global GPU ids; a GPU the plan does not use gets a trace of one COMP node of
// no time (ASTRA-sim refuses a trace without a node it can start: docs/chakra.md).
#ifndef HETSIM_SERVICE_CHAKRA_EXPORT_H_
#define HETSIM_SERVICE_CHAKRA_EXPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/spec/plan.h"
#include "proto/chakra_groups.h"
#include "proto/chakra_stream.h"
#include "sim/executor/setup.h"

namespace hetsim::chakra {

struct ChakraExport {
  std::vector<proto::ChakraStream> ranks;           // index = rank = global GPU id
  std::vector<proto::ChakraCommGroup> comm_groups;  // pg_name "1", "2", ... of the COMM_COLL nodes
};

// Microseconds, rounded to the nearest (Chakra's duration_micros).
uint64_t RoundToMicros(Time t);

ChakraExport ExportChakra(const executor::ExecutionSetup& setup);

// A plan of pipelines (Plan.pipelines): setups[p] is pipeline p's (driver::BuildPipelineSetup, on one
// cluster), each exported as above without its own gradient reduction, then every layer range's
// all-reduce (executor::LayerRangeGroups) as a COMM_COLL node on each GPU of each of its shard groups
// (a communicator of its own), after that GPU's stage's last backward; a stage's optimizer step waits
// for its ranges. Under ZeRO-1/2 a range reduce-scatters instead and, after each GPU's step, all-gathers
// its parameters over the same communicator (the caller shards the steps first:
// executor::ShardStatesOverRanges); with Plan.overlap_param_gather the all-gathers open the trace instead,
// without dependencies, and each GPU's stage's first forward depends on its own. Boundary tags are unique
// across the pipelines.
ChakraExport ExportChakraPipelines(const std::vector<const executor::ExecutionSetup*>& setups);

// The most nodes an export may hold, counted as ExportNodesLowerBound counts them: the export is built
// whole in memory before the first file is written (all or nothing), about 3 KB per counted pass
// (the 512-GPU example: 131,072 counted, 361,472 written, 401 MB peak), so 2,000,000 is about 6 GB.
// The 100,000-GPU Llama 3 example (3,200,000) ran out of memory after a minute of setup.
inline constexpr int64_t kMaxExportNodes = 2'000'000;
// A lower bound of the nodes ExportChakra writes, from the resolved plan alone (before the setup, which
// for 100,000 GPUs is a minute): every GPU of a stage runs each of the stage's forward and backward
// passes. Checked against kMaxExportNodes first.
int64_t ExportNodesLowerBound(const spec::PlanSpec& plan);

// The file names of rank `rank` and of the communicator groups under prefix P: "P.<rank>.et",
// "P.comm_groups.json".
std::string RankFileName(absl::string_view prefix, int rank);
std::string CommGroupsFileName(absl::string_view prefix);

// Writes every rank file and the groups file into `dir` (created if missing), all or none: on failure
// nothing is left, not even the folders this call created. A file that is one of `inputs` (the plan,
// the cluster, the model) is refused before anything is written.
absl::Status WriteChakraExport(const ChakraExport& out, absl::string_view dir, absl::string_view prefix,
                               std::vector<std::string> inputs = {});

}  // namespace hetsim::chakra

#endif  // HETSIM_SERVICE_CHAKRA_EXPORT_H_
