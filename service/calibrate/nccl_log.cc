#include "service/calibrate/nccl_log.h"

#include <cmath>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "service/calibrate/csv_table.h"

namespace hetsim::calibrate {
namespace {

struct TestName {
  const char* name;  // as in "all_reduce_perf"
  hetsim::CollectiveOp op;
};
constexpr TestName kTests[] = {{"all_reduce", hetsim::CollectiveOp::kAllReduce},
                               {"all_gather", hetsim::CollectiveOp::kAllGather},
                               {"reduce_scatter", hetsim::CollectiveOp::kReduceScatter},
                               {"sendrecv", hetsim::CollectiveOp::kSendRecv},
                               {"alltoall", hetsim::CollectiveOp::kAllToAll}};

bool FindTest(absl::string_view text, hetsim::CollectiveOp* op) {
  for (const TestName& t : kTests) {
    if (absl::StrContains(text, t.name)) {
      *op = t.op;
      return true;
    }
  }
  return false;
}

// A #wrong column: a count, or N/A when nccl-tests ran without validation (-c 0).
bool IsWrongCount(absl::string_view s) {
  int64_t v = 0;
  return s == "N/A" || absl::SimpleAtoi(s, &v);
}

}  // namespace

absl::StatusOr<NcclLog> ParseNcclLog(absl::string_view text, absl::string_view file) {
  NcclLog log;
  log.file = std::string(file);
  bool op_known = false;
  std::set<std::string> hosts;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    std::vector<absl::string_view> t = absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (line[0] == '#') {
      if (absl::StrContains(line, "Collective test starting:")) op_known = FindTest(line, &log.op);
      if (t.size() >= 2 && (t[1] == "Rank" || (t[0] == "#Rank"))) {
        ++log.ranks;
        for (size_t i = 0; i + 1 < t.size(); ++i) {
          if (t[i] == "on") hosts.insert(std::string(t[i + 1]));
        }
      }
      continue;
    }
    if (t.size() != 13) {
      return LineError(file, line_no,
                       absl::StrFormat("expected a table row of 13 columns (size count type redop root time algbw "
                                       "busbw #wrong time algbw busbw #wrong), got %d",
                                       t.size()));
    }
    NcclRow row;
    row.line = line_no;
    int64_t count = 0, root = 0;
    double algbw = 0, in_time = 0, in_algbw = 0, in_busbw = 0;
    if (!absl::SimpleAtoi(t[0], &row.bytes) || row.bytes < 0) return LineError(file, line_no, "size: not a byte count");
    if (!absl::SimpleAtoi(t[1], &count)) return LineError(file, line_no, "count: not an element count");
    if (!absl::SimpleAtoi(t[4], &root)) return LineError(file, line_no, "root: not a rank");
    // At least 1 ns: a smaller time is no measurement, and the fit divides by it (MAPE inf %).
    if (!absl::SimpleAtod(t[5], &row.time_us) || !(row.time_us >= 1e-3) || !std::isfinite(row.time_us)) {
      return LineError(file, line_no, absl::StrFormat("time: \"%s\" is not a time of at least 0.001 us", t[5]));
    }
    if (!absl::SimpleAtod(t[6], &algbw) || !absl::SimpleAtod(t[7], &row.busbw_gbytes_per_s) ||
        !absl::SimpleAtod(t[9], &in_time) || !absl::SimpleAtod(t[10], &in_algbw) ||
        !absl::SimpleAtod(t[11], &in_busbw)) {
      return LineError(file, line_no, "time, algbw and busbw columns must be numbers");
    }
    if (!IsWrongCount(t[8]) || !IsWrongCount(t[12])) {
      return LineError(file, line_no, "#wrong: not a count or N/A");
    }
    log.rows.push_back(row);
  }
  if (!op_known && !FindTest(file, &log.op)) {
    return LineError(
        file, 1,
        "cannot tell which nccl-tests test printed it (no \"# Collective test starting: X_perf\" line, and "
        "the file name names none of all_reduce, all_gather, reduce_scatter, sendrecv, alltoall)");
  }
  if (log.rows.empty()) return LineError(file, line_no, "no table rows");
  if (log.ranks == 0) {
    return LineError(file, log.rows.front().line,
                     "a table without \"#  Rank ... on HOST device ...\" lines before it: the GPU count is unknown");
  }
  log.hosts = std::max<int>(1, static_cast<int>(hosts.size()));
  if (log.ranks % log.hosts != 0) {
    return LineError(file, line_no,
                     absl::StrFormat("%d ranks are not spread evenly over %d hosts", log.ranks, log.hosts));
  }
  return log;
}

}  // namespace hetsim::calibrate
