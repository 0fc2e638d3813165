// nccl-tests output logs as they are printed (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// sendrecv_perf, alltoall_perf): the '#' header with one "#  Rank r ... on HOST device d ..." line per
// GPU, the table "size count type redop root time algbw busbw #wrong time algbw busbw #wrong"
// (out-of-place, then in-place), and the '#' trailer. Which test printed it comes from the
// "# Collective test starting: X_perf" line or, failing that, the file name.
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
  int ranks = 0;  // "# Rank" lines
  int hosts = 0;  // distinct host names among them
  std::vector<NcclRow> rows;
};

// Parses `text` read from `file`. InvalidArgument "<file>:<line>: <problem>" for a table row that is
// not 13 columns of the right kinds, a log without Rank lines or rows, ranks not spread evenly over
// hosts, or a test that cannot be told.
absl::StatusOr<NcclLog> ParseNcclLog(absl::string_view text, absl::string_view file);

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_NCCL_LOG_H_
