// nccl-tests logs as users paste them (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// sendrecv_perf, alltoall_perf): whatever surrounds the table (markdown and prose, the mpirun / srun /
// kubectl command and its chatter, NCCL's "NCCL version" and "NCCL INFO" lines), launcher prefixes on
// every line, and every table format since nccl-tests 2.0 (nccl_log_lines.h). Read from it: the test,
// the "#  Rank r ... on HOST device d [busid] MODEL" lines (GPU count, hosts, GPU model) and the
// out-of-place time of every row of the one table.
#ifndef HETSIM_SERVICE_CALIBRATE_NCCL_LOG_H_
#define HETSIM_SERVICE_CALIBRATE_NCCL_LOG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sim/collectives/collective.h"

namespace hetsim::calibrate {

struct NcclRow {
  int line = 0;        // 1-based line number in the log
  int64_t bytes = 0;   // nccl-tests' size column
  double time_us = 0;  // out-of-place time
  double busbw_gbytes_per_s = 0;
};

struct NcclLog {
  std::string file;
  hetsim::CollectiveOp op = hetsim::CollectiveOp::kAllReduce;
  std::string test;       // "all_reduce"
  std::string test_from;  // where the test was read: "line 2", "the file name", "the table's busbw / algbw"
  int ranks = 0;          // "# Rank" lines
  int hosts = 0;          // distinct host names among them
  std::string gpu_model;  // as the Rank lines print it: "NVIDIA A100-SXM4-80GB"; "" without Rank lines
  int rank_line = 0;      // the first "#  Rank" line (without Rank lines: the first row's)
  // Without Rank lines, where the GPU count and hosts were read: "--log-ranks / --log-hosts" or "the
  // command on line 12 (mpirun -np 16 -npernode 8 ... -g 1)"; "" with Rank lines.
  std::string shape_from;
  std::vector<NcclRow> rows;
  int empty_rows = 0;  // 0-byte rows (nothing moves, nothing to fit): left out of `rows`
  // NCCL_ALGO as the run's lines give it (environment, command, NCCL's "NCCL_ALGO set by environment
  // to" line): "Ring", "Tree", "Ring,Tree"; "" when NCCL chose.
  std::string algorithm;
  // NCCL ran NVLink SHARP (its INFO lines, NCCL_ALGO=NVLS) for this one-host all-reduce: fitted as
  // collectives::CollectiveAlgorithm::kNvls on a node type with nvlink_sharp.
  bool nvls = false;
  // NCCL ran CollNet (InfiniBand SHARP: NCCL_ALGO naming CollNet, NCCL_COLLNET_ENABLE=1) for this
  // multi-host all-reduce: fitted as collectives::CollectiveAlgorithm::kCollNet on an island with infiniband_sharp.
  bool collnet = false;
  // NCCL_ALGO named NVLSTree for this multi-host all-reduce (NVLink SHARP inside each host, trees across hosts):
  // fitted as collectives::CollectiveAlgorithm::kNvlsTree on a node type with nvlink_sharp.
  bool nvls_tree = false;
  // NCCL_ALGO named CollNetChain for this multi-host all-reduce: fitted as
  // collectives::CollectiveAlgorithm::kCollNetChain on an island with infiniband_sharp.
  bool collnet_chain = false;
  int first_line = 0, last_line = 0;  // the run's lines in the file
};

// How a run is named in messages and the fit report: "all_reduce on 16 GPUs (2 hosts), NCCL_ALGO=Ring,
// lines 12-45".
std::string RunName(const NcclLog& log);

// What the user says of a run whose log has no "#  Rank" lines (a table pasted without nccl-tests'
// header, as READMEs and docs often show it): its GPU count and hosts (`calibrate --log-ranks N
// --log-hosts H`); 0 = not given. A log with Rank lines must agree with them. Not given, the run's own
// nccl-tests command before its table gives them when it says them all (ShapeFromCommand: "-g 2" by
// hand, "mpirun -np 16 -npernode 8"); the GPU model stays unknown either way.
struct NcclLogShape {
  int ranks = 0;
  int hosts = 0;
};

// The most table rows a log may have: the fit thins a log to kMaxFitRowsPerLog rows, but the fit report
// predicts every row once (10,000 rows are seconds; 400,000 were minutes).
inline constexpr int kMaxNcclLogRows = 10000;

// Parses `text` read from `file`. InvalidArgument "<file>:<line>: <problem>" for a table row that is
// not one of nccl-tests' formats, a log without Rank lines or rows, more than one table (one run per
// file), Rank lines cut or repeated (separate one-rank jobs), ranks on different GPU models or not
// spread evenly over hosts, a test that cannot be told or that hetsim does not model, and a log that
// shows NVLink SHARP or CollNet reductions (NCCL_ALGO, NCCL's INFO lines), which hetsim does not model,
// except NVLink SHARP in a one-host all-reduce: read, with `nvls` set.
absl::StatusOr<NcclLog> ParseNcclLog(absl::string_view text, absl::string_view file, const NcclLogShape& shape = {});

// A file of several nccl-tests runs, one after another (a sweep of -g or of NCCL_ALGO, or all_reduce
// then all_gather pasted together): a run ends at its table's trailer ("# Avg bus bandwidth"), or where
// a column header, a "#  Rank" line or "# Collective test starting" follows its rows, and each run is
// read as ParseNcclLog reads a file, from its own lines only (its Rank lines, test and NCCL_ALGO).
struct NcclLogRuns {
  std::vector<NcclLog> runs;         // the runs hetsim reads, in the file's order
  std::vector<std::string> skipped;  // "<file>:<line>: <why>": runs refused for what they are
};
// A file of one run gives ParseNcclLog's result or error. With several, a run refused for what it is
// (a test or an in-network reduction hetsim does not model, no Rank lines, ...) is skipped with its
// reason; InvalidArgument when a row is not one of nccl-tests' formats, or when no run can be read
// ("<file>: N nccl-tests runs, none read: <each run's reason>").
absl::StatusOr<NcclLogRuns> ParseNcclLogRuns(absl::string_view text, absl::string_view file,
                                             const NcclLogShape& shape = {});

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_NCCL_LOG_H_
