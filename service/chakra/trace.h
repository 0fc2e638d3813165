// A directory of Chakra execution traces, read and checked, as plain structs the replay runs
// (service/chakra/replay.h). Every problem names the rank file and the node id:
//   "dir/t.3.et: node 17: data_deps: node 99 is not in this file"
// Errors (InvalidArgument, exit 2): unreadable or truncated files, JSON files (named as such), a missing
// rank in 0..N-1, more ranks than the cluster has GPUs, duplicate node ids, data dependencies on missing
// nodes, cycles, node types
// hetsim cannot run, communication nodes without their attributes or with peers out of range,
// COMM_COLL groups unknown to the groups file or not containing the rank, unmatched send/recv pairs
// and collectives that some member of the group never issues.
// Repairs (a warning saying what was assumed, docs/chakra.md): unknown attributes and unknown fields
// are ignored; a schema version other than 0.0.4 (or differing between files) is read with the 0.0.4
// layout; control dependencies on nodes not in the file (or on the node itself, or all of a file's
// when they close cycles) are dropped, as Chakra's feeder drops them; CPU-side communication nodes
// without comm_size are skipped (no time); METADATA / MEM_LOAD / MEM_STORE nodes take no time; a
// COMM_COLL without pg_name (or with "" or "0", unless the groups file names it) runs on every rank;
// fewer ranks than GPUs leave the rest idle; GPU kernels no node depends on run on the rank's compute
// stream in issue order and the rank ends when they end.
#ifndef HETSIM_SERVICE_CHAKRA_TRACE_H_
#define HETSIM_SERVICE_CHAKRA_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/collective_op.h"
#include "base/time.h"
#include "proto/chakra_groups.h"
#include "proto/chakra_stream.h"

namespace hetsim::chakra {

enum class TraceNodeType : uint8_t { kCompute, kSend, kRecv, kCollective, kNoOp };

struct TraceNode {
  uint64_t id = 0;  // the file's node id
  std::string name;
  TraceNodeType type = TraceNodeType::kNoOp;
  std::vector<int32_t> deps;  // indices into RankTrace::nodes (data and control alike)
  Time duration = 0;          // duration_micros
  bool is_cpu_op = false;
  double num_ops = 0;
  int64_t tensor_size = 0;
  // Communication: send/recv peer rank and tag, or the collective's operation and group.
  CollectiveOp op = CollectiveOp::kSendRecv;
  int64_t comm_bytes = 0;
  int32_t src = -1, dst = -1;
  int64_t tag = 0;
  int32_t group = -1;  // index into ChakraWorkload::groups
};

struct RankTrace {
  std::string file;
  std::vector<TraceNode> nodes;
  // What the reading dropped (a warning says each): control dependencies on nodes not in the file, on
  // the node itself, and all the others when they close a cycle the data dependencies do not; and
  // CPU-side communication nodes without comm_size (run as no-ops).
  int64_t skipped_ctrl_deps = 0;
  int64_t skipped_self_ctrl_deps = 0;
  int64_t skipped_cyclic_ctrl_deps = 0;
  int64_t skipped_cpu_comm_ops = 0;
};

struct ChakraWorkload {
  std::vector<RankTrace> ranks;                // index = rank
  std::vector<proto::ChakraCommGroup> groups;  // from the groups file, plus "(all ranks)" when assumed
  std::string dtype;                           // the metadata's dtype attribute, empty when absent
  std::vector<std::string> warnings;           // the repairs made, one line each
};

// Limits that keep a hostile trace from exhausting memory.
inline constexpr int kMaxRanks = 65536;
inline constexpr int64_t kMaxNodesPerRank = proto::kMaxChakraNodesPerRank;
inline constexpr uint64_t kMaxDurationMicros = uint64_t{1} << 40;  // ~12.7 days

// Checks one parsed rank file (everything that needs no other rank). `groups` resolves pg_name;
// a missing pg_name gets the group of every rank, added to `groups` (num_ranks members) once.
absl::StatusOr<RankTrace> ConvertRank(const proto::ChakraStream& stream, absl::string_view file, int rank,
                                      int num_ranks, std::vector<proto::ChakraCommGroup>* groups,
                                      std::vector<std::string>* warnings);

// Checks across ranks: every send has its recv (same src, dst, tag; as many of each), every member of
// a group issues as many collectives on it, with the same operations and sizes in the same order.
absl::Status CheckMatching(const ChakraWorkload& workload);

// Reads "<prefix>.<rank>.et" for every rank found in `dir` and the communicator groups from
// `groups_file` (ASTRA-sim's --comm-group-configuration file) or, when empty, "<prefix>.comm_groups.json"
// in `dir` when present; the prefix is found from the file names (one prefix per folder). `num_gpus` is
// the cluster's GPU count.
absl::StatusOr<ChakraWorkload> LoadChakraDir(absl::string_view dir, int num_gpus, absl::string_view groups_file = "");

}  // namespace hetsim::chakra

#endif  // HETSIM_SERVICE_CHAKRA_TRACE_H_
