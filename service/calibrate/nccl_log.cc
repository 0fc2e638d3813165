#include "service/calibrate/nccl_log.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "service/calibrate/csv_table_internal.h"
#include "service/calibrate/nccl_log_lines_internal.h"

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
                               {"alltoall", hetsim::CollectiveOp::kAllToAll},
                               {"broadcast", hetsim::CollectiveOp::kBroadcast}};
// nccl-tests' other tests: named so that a log of one is refused for what it is.
constexpr const char* kUnmodelledTests[] = {"alltoallv", "reduce", "gather", "scatter", "hypercube"};

const TestName* FindTest(absl::string_view name) {
  for (const TestName& t : kTests) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

bool IsUnmodelledTest(absl::string_view name) { return absl::c_linear_search(kUnmodelledTests, name); }

// The test a file name names, spelled with or without underscores ("all_reduce_perf.log",
// "nccl_allreduce.log"); "alltoallv" before "alltoall", and the rooted tests hetsim does not model
// ("nccl_reduce.log") after the collectives whose names contain theirs.
std::string TestInFileName(absl::string_view file) {
  constexpr std::pair<const char*, const char*> kSpellings[] = {
      {"alltoallv", "alltoallv"},  {"allreduce", "all_reduce"},
      {"allgather", "all_gather"}, {"reducescatter", "reduce_scatter"},
      {"sendrecv", "sendrecv"},    {"alltoall", "alltoall"},
      {"broadcast", "broadcast"},  {"reduce", "reduce"},
      {"gather", "gather"},        {"scatter", "scatter"},
      {"hypercube", "hypercube"}};
  const std::string name =
      absl::StrReplaceAll(absl::AsciiStrToLower(file.substr(file.find_last_of('/') + 1)), {{"_", ""}, {"-", ""}});
  for (const auto& [spelled, test] : kSpellings) {
    if (absl::StrContains(name, spelled)) return test;
  }
  return "";
}

// The test a wrapper script on a command line names, as a file name would ("NCCL_X=0
// /scripts/run-allgather.sh 8 eth1 8M 8GB 2", dstack's GCP page), or "".
std::string TestInScriptName(absl::string_view text) {
  for (absl::string_view token : absl::StrSplit(text, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
    if (!absl::EndsWith(token, ".sh")) continue;
    if (std::string test = TestInFileName(token); !test.empty()) return test;
  }
  return "";
}

// Collects what the lines of one log say, then checks it as a whole.
class LogScanner {
 public:
  LogScanner(absl::string_view file, const NcclLogShape& shape) : file_(file), shape_(shape) {}

  absl::Status Line(absl::string_view raw, int line_no);
  absl::StatusOr<NcclLog> Finish(int first_line, int last_line);
  // A row that is none of nccl-tests' formats: the file is broken, not a run to skip.
  bool bad_row() const { return bad_row_; }

 private:
  absl::Status RankLineSeen(const RankLine& rank, int line_no);
  absl::Status HeaderSeen(std::vector<std::string> names, int line_no);
  absl::Status RowSeen(const std::vector<absl::string_view>& tokens, int line_no);
  void TestSeen(absl::string_view text, int line_no);
  void CommandLineSeen(absl::string_view text, int line_no);
  absl::Status CheckRanks(NcclLog& log) const;
  absl::Status ShapeFromUser(NcclLog& log) const;
  absl::Status ResolveTest(NcclLog& log) const;
  std::string TestFromColumns(int ranks) const;
  int ImpliedRanks(hetsim::CollectiveOp op) const;
  absl::Status CheckImpliedRanks(const NcclLog& log) const;
  absl::Status InNetworkAlgorithm(NcclLog& log) const;

  std::string file_;
  NcclLogShape shape_;
  std::vector<RankLine> ranks_;
  absl::flat_hash_map<int, int> rank_line_;  // rank -> its line
  int header_line_ = 0;
  TableLayout layout_;
  std::vector<NcclRow> rows_;
  int empty_rows_ = 0;
  size_t row_tokens_ = 0;  // the tokens of the last row read: a malformed row has as many
  int table_end_ = 0;      // the trailer's line
  std::string test_;       // named before the table
  int test_line_ = 0;
  bool test_from_header_ = false;
  std::string in_network_;  // what shows in-network reduction, and where
  int in_network_line_ = 0;
  std::string algorithm_;  // NCCL_ALGO, the first the lines give
  bool bad_row_ = false;
  std::optional<CommandShape> command_shape_;  // the last nccl-tests command before the rows that says it
  int command_line_ = 0;
  std::string command_;
  std::string pending_command_;  // a command continued with '\' on the lines so far
  int pending_line_ = 0;
  int first_line_ = 1;  // the run's first line: where a refusal of the whole run points
  // For telling the test from the table: the first row's reduction and root, the row of largest algbw.
  std::string redop_;
  bool rooted_ = false;
  double algbw_ = 0, busbw_ = 0;
  int scope_header_line_ = 0;  // another tool's table: a header with a `scope` column (NVSHMEM's perftest)
};

absl::Status LogScanner::Line(absl::string_view raw, int line_no) {
  if (in_network_.empty()) {
    in_network_ = InNetworkReductionIn(raw);
    in_network_line_ = line_no;
  }
  // NCCL_ALGO as set for the run: in its command or environment, or NCCL's INFO lines of its setup, all
  // before its rows (a README's later prose about NCCL_ALGO is not the run's).
  if (algorithm_.empty() && rows_.empty()) algorithm_ = std::string(NcclAlgoIn(raw));
  const absl::string_view text = StripLauncherPrefix(raw);
  if (text.empty()) return absl::OkStatus();
  if (rows_.empty()) TestSeen(text, line_no);
  if (rows_.empty() && text[0] != '#') CommandLineSeen(text, line_no);
  if (std::optional<RankLine> rank = ParseRankLine(text)) return RankLineSeen(*rank, line_no);
  if (auto names = ParseColumnHeader(text)) return HeaderSeen(*std::move(names), line_no);
  if (IsTrailer(text)) {
    if (!rows_.empty() && table_end_ == 0) table_end_ = line_no;
    return absl::OkStatus();
  }
  const std::vector<absl::string_view> tokens = Tokens(text);
  // NVSHMEM's perftest prints "size(B) count type scope latency(us) algbw(GB/s) busbw(GB/s)", the scope
  // the device API's (thread, warp, block): no nccl-tests column header has a scope.
  if (scope_header_line_ == 0 && tokens.size() >= 5 && tokens[0] == "size(B)" &&
      std::find(tokens.begin(), tokens.end(), "scope") != tokens.end()) {
    scope_header_line_ = line_no;
  }
  // Before a column header or Rank lines, a short row-like line is another tool's output.
  const bool in_log = header_line_ != 0 || !ranks_.empty();
  if (text[0] != '#' && LooksLikeRow(tokens) && (in_log || !IsShortRow(tokens))) {
    return RowSeen(tokens, line_no);
  }
  // Among the table's rows, a row whose size or count is no count is a measurement gone wrong, not
  // prose: skipping it dropped it without a word.
  // The first row too, once the column header says how many columns a row has (a first row of size
  // 2^64 was skipped as prose, session 33).
  const size_t row_tokens = !rows_.empty() ? row_tokens_ : header_line_ != 0 ? HeaderRowTokens(layout_) : 0;
  if (text[0] != '#' && row_tokens != 0 && table_end_ == 0 && tokens.size() == row_tokens) {
    if (std::optional<std::string> problem = MalformedRowProblem(tokens)) return LineError(file_, line_no, *problem);
  }
  return absl::OkStatus();  // prose, commands, NCCL's INFO lines, nccl-tests' other '#' lines
}

// A command before the rows, its lines continued with a backslash joined (mpirun, then -np 16 ...): the shape
// it gives, when it says it all.
void LogScanner::CommandLineSeen(absl::string_view text, int line_no) {
  absl::string_view part = absl::StripTrailingAsciiWhitespace(text);
  const bool continues = absl::ConsumeSuffix(&part, "\\");
  if (pending_command_.empty()) pending_line_ = line_no;
  absl::StrAppend(&pending_command_, pending_command_.empty() ? "" : " ", absl::StripAsciiWhitespace(part));
  if (continues) return;
  if (std::optional<CommandShape> shape = ShapeFromCommand(pending_command_)) {
    command_shape_ = shape;
    command_line_ = pending_line_;
    command_ = pending_command_;
  }
  pending_command_.clear();
}

void LogScanner::TestSeen(absl::string_view text, int line_no) {
  bool header = false;
  std::string name = TestNamedIn(text, &header);
  if (name.empty()) name = TestInScriptName(text);
  // Only nccl-tests' own names: "run_perf" in the prose is none.
  if ((FindTest(name) == nullptr && !IsUnmodelledTest(name)) || (test_from_header_ && !header)) return;
  test_ = std::move(name);
  test_line_ = line_no;
  test_from_header_ = header;
}

absl::Status LogScanner::RankLineSeen(const RankLine& rank, int line_no) {
  if (auto [it, inserted] = rank_line_.try_emplace(rank.rank, line_no); !inserted) {
    return LineError(file_, line_no,
                     absl::StrFormat("rank %d again (first at line %d): the processes ran as separate one-rank jobs "
                                     "(nccl-tests built without MPI=1 under mpirun?) or two logs are pasted together",
                                     rank.rank, it->second));
  }
  ranks_.push_back(rank);
  return absl::OkStatus();
}

absl::Status LogScanner::HeaderSeen(std::vector<std::string> names, int line_no) {
  if (header_line_ != 0 || !rows_.empty()) {
    return LineError(file_, line_no,
                     absl::StrFormat("a second table (the first starts at line %d): give one nccl-tests run per file",
                                     header_line_ != 0 ? header_line_ : rows_.front().line));
  }
  header_line_ = line_no;
  layout_ = LayoutFromHeader(std::move(names));
  return absl::OkStatus();
}

absl::Status LogScanner::RowSeen(const std::vector<absl::string_view>& tokens, int line_no) {
  if (table_end_ != 0) {
    return LineError(
        file_, line_no,
        absl::StrFormat("a table row after the table ended at line %d: give one nccl-tests run per file", table_end_));
  }
  const RowFigures row = ParseRow(tokens, layout_);
  if (!row.problem.empty()) {
    bad_row_ = true;
    return LineError(file_, line_no, row.problem);
  }
  row_tokens_ = tokens.size();
  if (rows_.empty() && empty_rows_ == 0) {
    redop_ = row.redop;
    rooted_ = row.rooted;
  }
  if (row.bytes == 0) {
    ++empty_rows_;
    return absl::OkStatus();
  }
  if (row.algbw > algbw_) {
    algbw_ = row.algbw;
    busbw_ = row.busbw;
  }
  if (rows_.size() >= static_cast<size_t>(kMaxNcclLogRows)) {  // every row is simulated once for the fit report
    return LineError(file_, line_no,
                     absl::StrFormat("more than %d table rows: nccl-tests writes one per size (doubling from 1 B "
                                     "to 1 PiB is 51); give one run per file",
                                     kMaxNcclLogRows));
  }
  rows_.push_back({line_no, row.bytes, row.time_us, row.busbw});
  return absl::OkStatus();
}

// nccl-tests' busbw is algbw times 2 (n - 1) / n for all-reduce and (n - 1) / n for reduce-scatter (and
// for all-gather and all-to-all, which cannot be told apart this way): with a reduction, no root and a
// row fast enough for two significant digits, the ratio tells the two reductions apart.
std::string LogScanner::TestFromColumns(int ranks) const {
  const double n = static_cast<double>(ranks);
  if (n < 2 || redop_.empty() || redop_ == "none" || rooted_ || algbw_ < 1.0) return "";
  const double ratio = busbw_ / algbw_;
  if (std::abs(ratio / (2 * (n - 1) / n) - 1) < 0.02) return "all_reduce";
  if (std::abs(ratio / ((n - 1) / n) - 1) < 0.02) return "reduce_scatter";
  return "";
}

absl::Status LogScanner::ResolveTest(NcclLog& log) const {
  log.test = test_;
  log.test_from = absl::StrFormat("line %d", test_line_);
  if (log.test.empty()) {
    log.test = TestInFileName(file_);
    log.test_from = "the file name";
  }
  if (log.test.empty()) {
    log.test = TestFromColumns(log.ranks);
    log.test_from = "the table's busbw / algbw";
  }
  if (log.test.empty()) {
    return LineError(file_, first_line_,
                     "cannot tell which nccl-tests test printed it (no \"# Collective test starting: X_perf\" line or "
                     "X_perf command before the table, the file name names none of all_reduce, all_gather, "
                     "reduce_scatter, sendrecv, alltoall, broadcast, and the table's busbw / algbw is no all-reduce's "
                     "or reduce-scatter's); name the file after the test (all_gather_perf.log) to say which");
  }
  const TestName* test = FindTest(log.test);
  if (test == nullptr) {
    return LineError(file_, log.test_from == "the file name" ? first_line_ : test_line_,
                     absl::StrFormat("%s_perf (from %s): hetsim models all_reduce, all_gather, reduce_scatter, "
                                     "sendrecv, alltoall and broadcast, not %s",
                                     log.test, log.test_from, IsUnmodelledTest(log.test) ? log.test : "this test"));
  }
  log.op = test->op;
  return absl::OkStatus();
}

absl::Status LogScanner::CheckRanks(NcclLog& log) const {
  if (ranks_.empty()) return ShapeFromUser(log);
  int max_rank = 0;
  std::set<std::string> hosts;
  for (const RankLine& r : ranks_) {
    max_rank = std::max(max_rank, r.rank);
    hosts.insert(r.host);
    if (r.gpu_model != ranks_.front().gpu_model) {
      return LineError(file_, rank_line_.at(r.rank),
                       absl::StrFormat("rank %d runs on \"%s\", rank %d on \"%s\": an island has one GPU model; "
                                       "calibrate each island from its own logs",
                                       r.rank, r.gpu_model, ranks_.front().rank, ranks_.front().gpu_model));
    }
  }
  if (max_rank + 1 != static_cast<int>(ranks_.size())) {
    return LineError(file_, rank_line_.at(max_rank),
                     absl::StrFormat("%d \"#  Rank\" lines, but rank %d: lines were cut (paste the log from "
                                     "nccl-tests' first line)",
                                     ranks_.size(), max_rank));
  }
  log.ranks = static_cast<int>(ranks_.size());
  log.hosts = static_cast<int>(hosts.size());
  log.gpu_model = ranks_.front().gpu_model;
  log.rank_line = rank_line_.at(ranks_.front().rank);
  if (log.ranks % log.hosts != 0) {
    return LineError(file_, rows_.front().line,
                     absl::StrFormat("%d ranks are not spread evenly over %d hosts", log.ranks, log.hosts));
  }
  if ((shape_.ranks > 0 && shape_.ranks != log.ranks) || (shape_.hosts > 0 && shape_.hosts != log.hosts)) {
    return LineError(file_, log.rank_line,
                     absl::StrFormat("the Rank lines show %d ranks on %d hosts, --log-ranks %d --log-hosts %d say "
                                     "otherwise (those are for tables pasted without Rank lines)",
                                     log.ranks, log.hosts, shape_.ranks, shape_.hosts));
  }
  return absl::OkStatus();
}

// A table pasted without its Rank lines: the GPU count and hosts only the user can give; the GPU
// model stays unknown (the island's is assumed, with a warning).
absl::Status LogScanner::ShapeFromUser(NcclLog& log) const {
  NcclLog named;  // the test as the lines or the file name tell it, for the hint and the check
  const bool known = ResolveTest(named).ok();
  const int implied = known ? ImpliedRanks(named.op) : 0;
  // The command's shape, unless the table's own bus bandwidth factor says another count (a command
  // whose launcher the log does not show, as a YAML list of mpirun's arguments).
  const bool command_agrees = command_shape_ && (implied == 0 || implied == command_shape_->ranks);
  if ((shape_.ranks <= 0 || shape_.hosts <= 0) && command_agrees) {
    log.ranks = command_shape_->ranks;
    log.hosts = command_shape_->hosts;
    log.rank_line = rows_.front().line;
    constexpr size_t kShown = 100;
    log.shape_from = absl::StrFormat("the command on line %d (%s%s)", command_line_, command_.substr(0, kShown),
                                     command_.size() > kShown ? " ..." : "");
    return absl::OkStatus();
  }
  if (shape_.ranks <= 0 || shape_.hosts <= 0) {
    return LineError(
        file_, rows_.front().line,
        absl::StrCat(
            "a table without \"#  Rank ... on HOST device ...\" lines before it: the GPU count is "
            "unknown (paste the log from nccl-tests' first line, or give the run's GPUs and hosts "
            "with --log-ranks N --log-hosts H",
            implied > 0 ? absl::StrFormat("; its busbw / algbw is %s's over %d ranks", named.test, implied) : "",
            command_shape_
                ? absl::StrFormat(", not the %d of its command on line %d", command_shape_->ranks, command_line_)
                : "",
            ")"));
  }
  if (shape_.ranks % shape_.hosts != 0) {
    return LineError(
        file_, rows_.front().line,
        absl::StrFormat("--log-ranks %d are not spread evenly over --log-hosts %d", shape_.ranks, shape_.hosts));
  }
  log.ranks = shape_.ranks;
  log.hosts = shape_.hosts;
  log.rank_line = rows_.front().line;
  log.shape_from = "--log-ranks / --log-hosts";
  return absl::OkStatus();
}

// The rank count that nccl-tests' bus bandwidth factor implies for `op` (busbw = algbw x 2 (n - 1) / n
// for all-reduce, x (n - 1) / n for reduce-scatter, all-gather and all-to-all), from the row of largest
// algbw; 0 when the table cannot tell (too slow a row for two significant digits, or no factor).
int LogScanner::ImpliedRanks(hetsim::CollectiveOp op) const {
  if (algbw_ < 1.0) return 0;
  const double ratio = busbw_ / algbw_;
  double numerator = 1;
  switch (op) {
    case hetsim::CollectiveOp::kAllReduce: numerator = 2; break;
    case hetsim::CollectiveOp::kReduceScatter:
    case hetsim::CollectiveOp::kAllGather:
    case hetsim::CollectiveOp::kAllToAll: break;
    case hetsim::CollectiveOp::kSendRecv:
    case hetsim::CollectiveOp::kBroadcast: return 0;
  }
  if (!(ratio < numerator)) return 0;
  const double n = numerator / (numerator - ratio);
  const double rounded = std::round(n);
  return rounded >= 2 && rounded <= 1e6 && std::abs(n - rounded) < 0.1 ? static_cast<int>(rounded) : 0;
}

// User-given ranks against what the table's own factor says.
absl::Status LogScanner::CheckImpliedRanks(const NcclLog& log) const {
  const int implied = ImpliedRanks(log.op);
  if (!ranks_.empty() || implied == 0 || implied == log.ranks) return absl::OkStatus();
  return LineError(file_, log.rank_line,
                   absl::StrFormat("%d ranks (from %s), but the table's busbw / algbw (%.4g) is %s's over %d ranks",
                                   log.ranks, log.shape_from, busbw_ / algbw_, log.test, implied));
}

// Which in-network algorithm the run's lines show NCCL ran (log.nvls, nvls_tree, collnet, collnet_chain), or why
// hetsim cannot price it. NVLink SHARP on one host is hetsim's NVLS algorithm; NCCL_ALGO=NVLSTree across hosts its
// NVLSTree; CollNet's all-reduce across hosts its CollNet (CollNetDirect) or, named, its CollNetChain
// (docs/network.md). NCCL runs NVLSTree and CollNetChain for all-reduce only, and NVLSTree only across nodes
// (src/graph/tuning.cc).
absl::Status LogScanner::InNetworkAlgorithm(NcclLog& log) const {
  const bool reduction_in_network = log.op == hetsim::CollectiveOp::kAllReduce ||
                                    log.op == hetsim::CollectiveOp::kAllGather ||
                                    log.op == hetsim::CollectiveOp::kReduceScatter;
  const std::string lower = absl::AsciiStrToLower(in_network_);
  const bool all_reduce_across = log.op == hetsim::CollectiveOp::kAllReduce && log.hosts > 1;
  const bool tree = absl::StrContains(lower, "nvlstree");
  const bool chain = absl::StrContains(lower, "collnetchain") && !absl::StrContains(lower, "collnetdirect");
  if (tree && reduction_in_network && !all_reduce_across) {
    return LineError(file_, in_network_line_,
                     absl::StrFormat("%s: NCCL runs NVLSTree (NVLink SHARP within each host, trees across hosts) for "
                                     "an all-reduce across hosts only (this run: %s on %d host(s))",
                                     in_network_, log.test, log.hosts));
  }
  if (chain && reduction_in_network && !all_reduce_across) {
    return LineError(file_, in_network_line_,
                     absl::StrFormat("%s: NCCL runs CollNetChain (a host's GPUs in a chain to a NIC into the "
                                     "switches) for an all-reduce across hosts only (this run: %s on %d host(s))",
                                     in_network_, log.test, log.hosts));
  }
  const bool collnet = absl::StrContains(lower, "collnet");
  log.nvls_tree = tree && all_reduce_across;
  log.collnet_chain = chain && all_reduce_across;
  log.nvls = absl::StrContains(lower, "nvls") && !tree && !collnet && reduction_in_network && log.hosts == 1;
  log.collnet = collnet && !chain && all_reduce_across;
  if (!in_network_.empty() && reduction_in_network && !log.nvls && !log.collnet && !log.nvls_tree &&
      !log.collnet_chain) {
    return LineError(file_, in_network_line_,
                     absl::StrFormat("%s: NCCL ran NVLink SHARP (NVLS) or CollNet in-network reductions, which "
                                     "hetsim models as NVLS on one host and CollNet all-reduce across hosts; "
                                     "rerun with NCCL_NVLS_ENABLE=0 NCCL_COLLNET_ENABLE=0",
                                     in_network_));
  }
  return absl::OkStatus();
}

absl::StatusOr<NcclLog> LogScanner::Finish(int first_line, int last_line) {
  first_line_ = first_line;
  if (rows_.empty() && empty_rows_ == 0 && scope_header_line_ != 0) {
    return LineError(file_, scope_header_line_,
                     "no nccl-tests table: this table's columns (size(B) count type scope latency(us) ...) are "
                     "NVSHMEM's perftest's (a device API's thread, warp or block scope), not nccl-tests' "
                     "(all_reduce_perf and the like), which calibrate reads");
  }
  if (rows_.empty()) {
    return LineError(file_, last_line, empty_rows_ > 0 ? "only 0-byte table rows" : "no table rows");
  }
  NcclLog log;
  log.file = file_;
  log.rows = rows_;
  log.empty_rows = empty_rows_;
  log.algorithm = algorithm_;
  log.first_line = first_line;
  log.last_line = last_line;
  if (absl::Status s = CheckRanks(log); !s.ok()) return s;
  if (absl::Status s = ResolveTest(log); !s.ok()) return s;
  if (absl::Status s = CheckImpliedRanks(log); !s.ok()) return s;
  if (absl::Status st = InNetworkAlgorithm(log); !st.ok()) return st;
  return log;
}

// One run's lines, 1-based and inclusive.
struct RunSpan {
  int first = 0, last = 0;
};

// Where a line starts the next run once the current one has rows: a column header, a "#  Rank" line or
// nccl-tests' "# Collective test starting" (a table without its trailer: the next run then starts after
// the last row); after the trailer, any line that is not part of it (the next run's command,
// environment and NCCL INFO lines are its own).
bool StartsNextRun(absl::string_view text, bool ended) {
  if (ended) return !IsTrailer(text) && !text.empty() && text != "#";
  bool header = false;
  TestNamedIn(text, &header);
  return header || ParseRankLine(text).has_value() || ParseColumnHeader(text).has_value();
}

// The runs of a file (nccl_log.h, ParseNcclLogRuns); lines after the last table join the last run.
// Spans without table rows are not runs: the text before the first table belongs to the first.
std::vector<RunSpan> RunSpans(const std::vector<absl::string_view>& lines) {
  std::vector<RunSpan> spans;
  RunSpan current{1, 0};
  bool rows = false, ended = false;
  int last_row = 0;
  for (int i = 1; i <= static_cast<int>(lines.size()); ++i) {
    const absl::string_view text = StripLauncherPrefix(lines[i - 1]);
    if (rows && StartsNextRun(text, ended)) {
      // Without a trailer, what follows the last row (a heading, the next command) is the next run's.
      current.last = ended ? i - 1 : last_row;
      spans.push_back(current);
      current = {current.last + 1, 0};
      rows = ended = false;
    }
    if (rows && IsTrailer(text)) ended = true;
    const std::vector<absl::string_view> tokens = Tokens(text);
    if (!text.empty() && text[0] != '#' && LooksLikeRow(tokens) && !IsShortRow(tokens)) {
      rows = true;
      last_row = i;
    }
  }
  current.last = static_cast<int>(lines.size()) - (!lines.empty() && lines.back().empty() ? 1 : 0);
  if (rows || spans.empty()) {
    spans.push_back(current);
  } else {
    spans.back().last = current.last;
  }
  return spans;
}

}  // namespace

absl::StatusOr<NcclLog> ParseNcclLog(absl::string_view pasted, absl::string_view file, const NcclLogShape& shape) {
  const std::string text = WithoutRepeatedRankTags(pasted);
  LogScanner scanner(file, shape);
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (absl::Status s = scanner.Line(line, line_no); !s.ok()) return s;
  }
  // The last line is the one before the final newline, if any.
  return scanner.Finish(1, absl::EndsWith(text, "\n") ? line_no - 1 : line_no);
}

std::string RunName(const NcclLog& log) {
  return absl::StrCat(log.test, " on ", log.ranks, " GPUs (", log.hosts, log.hosts == 1 ? " host" : " hosts", ")",
                      log.algorithm.empty() ? "" : absl::StrCat(", NCCL_ALGO=", log.algorithm), ", lines ",
                      log.first_line, "-", log.last_line);
}

absl::StatusOr<NcclLogRuns> ParseNcclLogRuns(absl::string_view pasted, absl::string_view file,
                                             const NcclLogShape& shape) {
  const std::string text = WithoutRepeatedRankTags(pasted);
  const std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  const std::vector<RunSpan> spans = RunSpans(lines);
  if (spans.size() <= 1) {
    HETSIM_ASSIGN_OR_RETURN(NcclLog log, ParseNcclLog(text, file, shape));
    return NcclLogRuns{{std::move(log)}, {}};
  }
  NcclLogRuns out;
  std::vector<std::string> reasons;
  for (const RunSpan& span : spans) {
    LogScanner scanner(file, shape);
    absl::Status status;
    for (int i = span.first; i <= span.last && status.ok(); ++i) status = scanner.Line(lines[i - 1], i);
    absl::StatusOr<NcclLog> log = status.ok() ? scanner.Finish(span.first, span.last) : status;
    if (scanner.bad_row()) return log.status();
    if (log.ok()) {
      out.runs.push_back(*std::move(log));
      continue;
    }
    out.skipped.push_back(std::string(log.status().message()));
    reasons.push_back(absl::StrFormat("lines %d-%d: %s", span.first, span.last,
                                      absl::StripPrefix(log.status().message(), absl::StrCat(file, ":"))));
  }
  if (out.runs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d nccl-tests runs, none read: %s", file, spans.size(), absl::StrJoin(reasons, "; ")));
  }
  return out;
}

}  // namespace hetsim::calibrate
