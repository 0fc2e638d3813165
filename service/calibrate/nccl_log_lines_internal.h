// What one line of a pasted nccl-tests log is, line by line, with no state: the launcher's prefix
// taken off, then a column header, a "#  Rank" line, a table row, the trailer, a line naming the test,
// or a line showing in-network reduction. ParseNcclLog (nccl_log.h) puts them together.
//
// Formats read (nccl-tests' history, src/common.cu and src/util.cu):
// - since 2.13 (NCCL 2.13 resync): size count type redop root, then time algbw busbw #wrong out-of-place
//   and in-place (13 columns);
// - before 2.13: no root column, an "error" column (max deviation, 5e-07) for #wrong, and the tests
//   without a reduction print no redop (all_gather, sendrecv: 11 columns) or a blank one (alltoall);
// - since 2.17: "-S 1" adds a "YYYY-MM-DD HH:MM:SS" timestamp after each row, and per-iteration timing
//   adds i_min i_max i_p99 i_cv% after each #wrong (21 columns, named in the column header).
#ifndef HETSIM_SERVICE_CALIBRATE_NCCL_LOG_LINES_INTERNAL_H_
#define HETSIM_SERVICE_CALIBRATE_NCCL_LOG_LINES_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace hetsim::calibrate {

// `line` without what launchers put before nccl-tests' own text, repeatedly: "[1,0]<stdout>:" (Open
// MPI --tag-output), "(head, rank=0, pid=3808)" (SkyPilot, Ray), "0:" or "node01:" (srun -l, pdsh),
// "[pod/x/c]", timestamps ("2024-05-06T12:34:56.789Z", "2024-05-06 12:34:56,789"), "> " (a quoted
// paste), "|" (docker compose), and leading blanks.
absl::string_view StripLauncherPrefix(absl::string_view line);

// `text` with the rank tag a line starts with ("[0]", "[1,0]<stdout>:", Open MPI's --tag-output) taken
// out of the rest of that line too: mpirun tags every chunk a process writes, and nccl-tests writes a
// row in three chunks, so a row pasted from such a run reads "[0]  8192  2048  float  sum  -1[0]  75.4
// ...[0]  74.9 ..." (NVIDIA/nccl#1453). Line numbers are kept.
std::string WithoutRepeatedRankTags(absl::string_view text);

// The blank-separated tokens of `text`.
std::vector<absl::string_view> Tokens(absl::string_view text);

// "#  Rank  3 Group  0 Pid 123 on node01 device  3 [0x4e] NVIDIA A100-SXM4-80GB" (Group since 2.13; the
// '#' may have been lost in the paste).
struct RankLine {
  int rank = 0;
  std::string host;
  std::string gpu_model;  // the rest of the line after the PCI bus id: "NVIDIA A100-SXM4-80GB"
};
std::optional<RankLine> ParseRankLine(absl::string_view text);

// The column header "#  size count type redop root time algbw busbw #wrong ..." (any of the formats
// above, '#' optional): the column names, or nullopt when `text` is no column header.
std::optional<std::vector<std::string>> ParseColumnHeader(absl::string_view text);

// Where a row's out-of-place figures are: with per-iteration columns the header's positions, else
// counted from the row's end (the last eight columns are time algbw busbw #wrong twice in every
// format without them).
struct TableLayout {
  std::vector<std::string> names;  // the header's names; empty without a header
  bool per_iteration = false;      // i_min i_max i_p99 i_cv% after each #wrong
  bool timestamp = false;          // a "timestamp" column after the row (2 tokens)
};
TableLayout LayoutFromHeader(std::vector<std::string> names);

// The tokens of a table row as the column header names them (without a timestamp column).
size_t HeaderRowTokens(const TableLayout& layout);

// A table row's candidates: the first two tokens are non-negative integers (size and count).
bool LooksLikeRow(const std::vector<absl::string_view>& tokens);

// A line shaped as a row (not short, its first two tokens numbers) whose size or count is no
// non-negative integer ("-8", "1e308", 2^63): the problem naming the column, else nullopt.
std::optional<std::string> MalformedRowProblem(const std::vector<absl::string_view>& tokens);

// Fewer tokens than any nccl-tests row has less a column or three (rows have 11 to 13 figures, 21
// with per-iteration columns): before a column header or Rank lines such a line is another tool's output, as
// perftest's "65536 5000 92.42 92.40 0.176230" in a README beside an nccl-tests table, not a row.
bool IsShortRow(const std::vector<absl::string_view>& tokens);

// One table row's figures; `problem` says what is wrong when it is not a row of `layout`.
struct RowFigures {
  int64_t bytes = 0;
  std::string redop;    // "sum", "none", "" when the format has none
  bool rooted = false;  // a root column with a rank >= 0 (broadcast, reduce)
  double time_us = 0;   // out-of-place
  double algbw = 0;     // GB/s
  double busbw = 0;     // GB/s
  std::string problem;  // empty when the row is good
};
RowFigures ParseRow(std::vector<absl::string_view> tokens, const TableLayout& layout);

// "# Out of bounds values : 0 OK" and "# Avg bus bandwidth : ...": the table has ended.
bool IsTrailer(absl::string_view text);

// The test a line names: "# Collective test starting: all_reduce_perf" (`header` true), else the last
// token naming an nccl-tests binary ("/opt/nccl-tests/build/all_gather_perf", "all_reduce_perf_mpi"),
// as in the command line. Returns the name without "_perf" ("all_reduce"; any lower-case name), or "".
std::string TestNamedIn(absl::string_view text, bool* header);

// What in `raw_line` says the collectives ran as in-network reductions: NCCL_ALGO naming NVLS or
// CollNet (not excluded with '^'), NCCL_COLLNET_ENABLE=1, NCCL's INFO lines "NVLS comm ...",
// "Connected NVLS" or "N nvls channels" with N > 0. Empty when nothing.
std::string InNetworkReductionIn(absl::string_view raw_line);

// The value NCCL_ALGO is given on `raw_line` ("NCCL_ALGO=Ring", "-x NCCL_ALGO=Tree", "NCCL INFO NCCL_ALGO
// set by environment to Ring"), or "".
absl::string_view NcclAlgoIn(absl::string_view raw_line);

// The GPUs and hosts an nccl-tests command line runs its test on, when the line says them all:
// "./build/all_reduce_perf -b 8 -e 8G -f 2 -g 2" (one process of -g GPUs, -t threads, on one host),
// "mpirun -np 16 -npernode 8 ... all_reduce_perf -g 1" (-np processes, -npernode / -N / --map-by
// ppr:M:node / -ppn a host, or -H h1,h2 hosts), "srun -N 2 --ntasks-per-node=8 ... all_reduce_perf"
// (Slurm's -N / --nodes, -n / --ntasks, --ntasks-per-node). nullopt for a line that names no nccl-tests
// binary, or leaves the processes or hosts to a hostfile, the environment (an MPI operator's) or the
// allocation: `mpirun -np 16` alone says no hosts.
struct CommandShape {
  int ranks = 0;
  int hosts = 0;
};
std::optional<CommandShape> ShapeFromCommand(absl::string_view text);

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_NCCL_LOG_LINES_INTERNAL_H_
