#include "service/calibrate/nccl_log_lines_internal.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <initializer_list>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace hetsim::calibrate {
namespace {

// "[...]", "(...)" or "<...>" at the start of `s`, and a ':' right after it.
bool StripGroup(absl::string_view& s) {
  if (s.empty()) return false;
  const char close = s[0] == '[' ? ']' : s[0] == '(' ? ')' : s[0] == '<' ? '>' : '\0';
  if (close == '\0') return false;
  const size_t end = s.find(close);
  if (end == absl::string_view::npos) return false;
  s.remove_prefix(end + 1);
  absl::ConsumePrefix(&s, ":");
  return true;
}

// A date or a time of day: digits with '-', ':' or '/' between them ("2024-05-06", "12:34:56,789",
// "2024-05-06T12:34:56.789Z"). A size, a count or a root (-1) is none.
bool IsTimestampPart(absl::string_view t) {
  bool digit = false, separator = false;
  for (char c : t) {
    if (absl::ascii_isdigit(c)) {
      digit = true;
    } else if (c == ':' || c == '-' || c == '/') {
      separator = true;
    } else if (c != 'T' && c != 'Z' && c != '.' && c != ',' && c != '+') {
      return false;
    }
  }
  return digit && separator && t[0] != '-';
}

// The first token of `s` when it is a launcher's label ("0:", "node01:"), part of a timestamp, or the
// ">" of a quoted paste or the "|" of docker compose.
bool StripLabel(absl::string_view& s) {
  const absl::string_view first = s.substr(0, s.find_first_of(" \t"));
  const bool label =
      (first.size() > 1 && absl::EndsWith(first, ":")) || IsTimestampPart(first) || first == ">" || first == "|";
  if (!label) return false;
  s.remove_prefix(first.size());
  return true;
}

absl::string_view WithoutHashes(absl::string_view text) {
  while (absl::ConsumePrefix(&text, "#")) {
  }
  return absl::StripLeadingAsciiWhitespace(text);
}

bool IsCount(absl::string_view t) {
  int64_t v = 0;
  return absl::SimpleAtoi(t, &v) && v >= 0;
}

// A #wrong column: a count, "N/A" without validation (-c 0), or before 2.13 the largest deviation
// ("5e-07").
bool IsWrong(absl::string_view t) {
  double v = 0;
  return t == "N/A" || absl::SimpleAtod(t, &v);
}

// A #wrong count above 0 (nccl-tests 2.13 on, -c 1): the run's result was checked and elements were
// wrong, a broken run rather than a measurement (a deviation such as "5e-07" is no count).
bool WrongElements(absl::string_view t) {
  int64_t v = 0;
  return absl::SimpleAtoi(t, &v) && v > 0;
}

// Where the out-of-place time is in a row of `n` tokens, or a problem.
int TimeColumn(int n, const TableLayout& layout, std::string* problem) {
  const int named = static_cast<int>(layout.names.size()) - (layout.timestamp ? 1 : 0);
  const bool blank_redop_allowed = absl::c_linear_search(layout.names, "redop") &&
                                   !absl::c_linear_search(layout.names, "root");  // alltoall before 2.13
  if (!layout.names.empty() && n != named && !(blank_redop_allowed && n == named - 1)) {
    *problem = absl::StrFormat("expected a table row of %d columns (%s) as the column header names, got %d", named,
                               absl::StrJoin(layout.names.begin(), layout.names.begin() + named, " "), n);
    return -1;
  }
  if (layout.names.empty() && (n < 11 || n > 13)) {
    *problem = absl::StrFormat(
        "expected a table row of 11 to 13 columns (size count type [redop] [root] time algbw busbw #wrong time "
        "algbw busbw #wrong), got %d",
        n);
    return -1;
  }
  if (layout.per_iteration) {
    auto it = absl::c_find(layout.names, "time");
    if (it == layout.names.end()) it = absl::c_find(layout.names, "cputime");
    const int ti = static_cast<int>(it - layout.names.begin());
    // time algbw busbw #wrong i_min i_max i_p99 i_cv%, out-of-place then in-place.
    if (ti < 3 || ti + 16 > n) {
      *problem =
          "the column header's per-iteration columns are not time algbw busbw #wrong i_min i_max i_p99 i_cv% "
          "out-of-place and in-place";
      return -1;
    }
    return ti;
  }
  // One time, algbw, busbw and #wrong where nccl-tests prints them out-of-place and in-place: a table cut down
  // after printing (a write-up's one row of a 1 x 8 H200 NVL run), whose remaining columns are not known to be
  // the out-of-place ones.
  if (absl::c_count(layout.names, "time") == 1 && absl::c_count(layout.names, "busbw") == 1) {
    *problem =
        "the column header names one time, algbw, busbw and #wrong, where nccl-tests prints them out-of-place and "
        "in-place: a table cut down after printing; paste the log as nccl-tests printed it";
    return -1;
  }
  return n - 8;
}

// The columns between count and time: type, then a reduction's name and/or a root rank.
void ReadMiddleColumns(const std::vector<absl::string_view>& t, int time_column, RowFigures& row) {
  for (int i = 3; i < time_column; ++i) {
    int64_t root = 0;
    if (absl::SimpleAtoi(t[i], &root)) {
      row.rooted = root >= 0;
    } else {
      row.redop = std::string(t[i]);
    }
  }
}

void ReadFigures(const std::vector<absl::string_view>& t, int ti, const TableLayout& layout, RowFigures& row) {
  const int in_place = ti + (layout.per_iteration ? 8 : 4);
  double in_time = 0, in_algbw = 0, in_busbw = 0;
  // At least 1 ns: a smaller time is no measurement, and the fit divides by it (MAPE inf %).
  if (!absl::SimpleAtod(t[ti], &row.time_us) || !(row.time_us >= 1e-3) || !std::isfinite(row.time_us)) {
    row.problem = absl::StrFormat("time: \"%s\" is not a time of at least 0.001 us", t[ti]);
  } else if (!absl::SimpleAtod(t[ti + 1], &row.algbw) || !absl::SimpleAtod(t[ti + 2], &row.busbw) ||
             !absl::SimpleAtod(t[in_place], &in_time) || !absl::SimpleAtod(t[in_place + 1], &in_algbw) ||
             !absl::SimpleAtod(t[in_place + 2], &in_busbw)) {
    row.problem = "time, algbw and busbw columns must be numbers";
  } else if (!IsWrong(t[ti + 3]) || !IsWrong(t[in_place + 3])) {
    row.problem = "#wrong: not a count or N/A";
  } else if (WrongElements(t[ti + 3]) || WrongElements(t[in_place + 3])) {
    row.problem = absl::StrFormat(
        "#wrong: %s out-of-place and %s in-place elements wrong: nccl-tests found the run's result wrong, so its "
        "time measures a broken run; rerun it",
        t[ti + 3], t[in_place + 3]);
  }
}

}  // namespace

absl::string_view StripLauncherPrefix(absl::string_view line) {
  for (;;) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') return absl::StripTrailingAsciiWhitespace(line);
    if (!StripGroup(line) && !StripLabel(line)) return absl::StripTrailingAsciiWhitespace(line);
  }
}

namespace {

// The rank tag `line` starts with ("[0]", "[1,0]", with a "<stdout>:" after it), or "".
absl::string_view LeadingRankTag(absl::string_view line) {
  const absl::string_view s = absl::StripLeadingAsciiWhitespace(line);
  if (!absl::StartsWith(s, "[")) return "";
  const size_t close = s.find(']');
  if (close == absl::string_view::npos || close == 1) return "";
  for (char c : s.substr(1, close - 1)) {
    if (!absl::ascii_isdigit(c) && c != ',') return "";
  }
  absl::string_view rest = s.substr(close + 1);
  absl::string_view tag = s.substr(0, close + 1);
  if (absl::StartsWith(rest, "<")) {
    const size_t end = rest.find('>');
    if (end != absl::string_view::npos) tag = s.substr(0, close + 1 + end + 1 + (rest.substr(end + 1, 1) == ":"));
  }
  return tag;
}

}  // namespace

std::string WithoutRepeatedRankTags(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool first = true;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!first) out += '\n';
    first = false;
    const absl::string_view tag = LeadingRankTag(line);
    if (tag.empty()) {
      absl::StrAppend(&out, line);
      continue;
    }
    // The first tag stays for StripLauncherPrefix; the later ones become a blank between figures.
    const size_t start = line.find(tag) + tag.size();
    absl::StrAppend(&out, line.substr(0, start), absl::StrReplaceAll(line.substr(start), {{tag, " "}}));
  }
  return out;
}

std::vector<absl::string_view> Tokens(absl::string_view text) {
  return absl::StrSplit(text, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
}

std::optional<RankLine> ParseRankLine(absl::string_view text) {
  const std::vector<absl::string_view> t = Tokens(WithoutHashes(text));
  RankLine r;
  if (t.size() < 6 || t[0] != "Rank" || !absl::SimpleAtoi(t[1], &r.rank)) return std::nullopt;
  const size_t on = static_cast<size_t>(std::find(t.begin() + 2, t.end(), "on") - t.begin());
  if (on + 3 >= t.size() || t[on + 2] != "device") return std::nullopt;
  r.host = std::string(t[on + 1]);
  size_t model = on + 4;  // after "device d"
  if (model < t.size() && absl::StartsWith(t[model], "[")) ++model;
  r.gpu_model = absl::StrJoin(t.begin() + std::min(model, t.size()), t.end(), " ");
  return r;
}

std::optional<std::vector<std::string>> ParseColumnHeader(absl::string_view text) {
  const std::vector<absl::string_view> t = Tokens(WithoutHashes(text));
  if (t.size() < 8 || t[0] != "size" || t[1] != "count" || t[2] != "type") return std::nullopt;
  return std::vector<std::string>(t.begin(), t.end());
}

TableLayout LayoutFromHeader(std::vector<std::string> names) {
  TableLayout layout;
  layout.per_iteration = absl::c_linear_search(names, "i_min");
  layout.timestamp = !names.empty() && names.back() == "timestamp";
  layout.names = std::move(names);
  return layout;
}

size_t HeaderRowTokens(const TableLayout& layout) {
  return layout.names.size() - (layout.timestamp && !layout.names.empty() ? 1 : 0);
}

bool LooksLikeRow(const std::vector<absl::string_view>& tokens) {
  return tokens.size() >= 2 && IsCount(tokens[0]) && IsCount(tokens[1]);
}

bool IsShortRow(const std::vector<absl::string_view>& tokens) { return tokens.size() < 8; }

std::optional<std::string> MalformedRowProblem(const std::vector<absl::string_view>& tokens) {
  auto numeric = [](absl::string_view t) {
    return !t.empty() &&
           (absl::ascii_isdigit(static_cast<unsigned char>(t[0])) || t[0] == '-' || t[0] == '+' || t[0] == '.');
  };
  if (IsShortRow(tokens) || !numeric(tokens[0]) || !numeric(tokens[1]) || LooksLikeRow(tokens)) return std::nullopt;
  if (!IsCount(tokens[0])) return absl::StrFormat("size: \"%s\" is not a byte count", tokens[0]);
  return absl::StrFormat("count: \"%s\" is not an element count", tokens[1]);
}

RowFigures ParseRow(std::vector<absl::string_view> tokens, const TableLayout& layout) {
  while (!tokens.empty() && IsTimestampPart(tokens.back())) tokens.pop_back();  // nccl-tests -S 1
  RowFigures row;
  const int ti = TimeColumn(static_cast<int>(tokens.size()), layout, &row.problem);
  if (ti < 0) return row;
  if (ti < 3 || !absl::SimpleAtoi(tokens[0], &row.bytes)) {
    row.problem = "size: not a byte count";
    return row;
  }
  ReadMiddleColumns(tokens, ti, row);
  ReadFigures(tokens, ti, layout, row);
  return row;
}

bool IsTrailer(absl::string_view text) {
  return absl::StrContains(text, "Out of bounds values") || absl::StrContains(text, "Avg bus bandwidth");
}

std::string TestNamedIn(absl::string_view text, bool* header) {
  *header = absl::StrContains(text, "Collective test starting:");
  std::vector<absl::string_view> t = Tokens(text);
  for (auto it = t.rbegin(); it != t.rend(); ++it) {
    absl::string_view name = absl::StripSuffix(absl::StripSuffix(*it, ","), ".");
    name = name.substr(name.find_last_of('/') + 1);  // npos + 1 == 0
    name = absl::StripPrefix(absl::StripSuffix(name, "`"), "`");
    if (!absl::ConsumeSuffix(&name, "_perf_mpi") && !absl::ConsumeSuffix(&name, "_perf")) continue;
    if (!name.empty() && absl::c_all_of(name, [](char c) { return absl::ascii_islower(c) || c == '_'; })) {
      return std::string(name);
    }
  }
  return "";
}

absl::string_view NcclAlgoIn(absl::string_view line) {
  const size_t at = line.find("NCCL_ALGO");
  if (at == absl::string_view::npos) return "";
  absl::string_view rest = line.substr(at + 9);
  if (!absl::ConsumePrefix(&rest, "=") && !absl::ConsumePrefix(&rest, " set by environment to ")) return "";
  return rest.substr(0, rest.find_first_of(" \t\"'`,;"));
}

std::string InNetworkReductionIn(absl::string_view raw_line) {
  const absl::string_view algo = NcclAlgoIn(raw_line);
  const std::string lower = absl::AsciiStrToLower(algo);
  if (!algo.empty() && algo[0] != '^' && (absl::StrContains(lower, "nvls") || absl::StrContains(lower, "collnet"))) {
    return absl::StrCat("NCCL_ALGO=", algo);
  }
  if (absl::StrContains(raw_line, "NCCL_COLLNET_ENABLE=1") ||
      absl::StrContains(raw_line, "NCCL_COLLNET_ENABLE set by environment to 1")) {
    return "NCCL_COLLNET_ENABLE=1 (CollNet, InfiniBand SHARP)";
  }
  for (const char* phrase : {"NVLS comm 0x", "Connected NVLS"}) {
    if (absl::StrContains(raw_line, phrase)) return absl::StrCat("NCCL INFO \"", phrase, "\" (NVLink SHARP set up)");
  }
  const size_t at = raw_line.find(" nvls channels");
  int channels = 0;
  if (at != absl::string_view::npos) {
    const absl::string_view before = raw_line.substr(0, at);
    if (absl::SimpleAtoi(before.substr(before.find_last_of(" \t,") + 1), &channels) && channels > 0) {
      return absl::StrFormat("NCCL INFO \"%d nvls channels\" (NVLink SHARP set up)", channels);
    }
  }
  return "";
}

}  // namespace hetsim::calibrate

namespace hetsim::calibrate {
namespace {

// A count option's value: "-np 16", "-np=16", "--nodes=2", "-g2" (getopt's joined short option).
std::optional<int> CountOption(const std::vector<absl::string_view>& t, size_t& i,
                               std::initializer_list<absl::string_view> names) {
  for (absl::string_view name : names) {
    absl::string_view value;
    if (t[i] == name && i + 1 < t.size()) {
      value = t[++i];
    } else if (absl::StartsWith(t[i], name) && t[i].size() > name.size() &&
               (t[i][name.size()] == '=' || (name.size() == 2 && absl::ascii_isdigit(t[i][name.size()])))) {
      value = t[i].substr(name.size() + (t[i][name.size()] == '=' ? 1 : 0));
    } else {
      continue;
    }
    int n = 0;
    if (absl::SimpleAtoi(value, &n) && n > 0) return n;
    return std::nullopt;
  }
  return std::nullopt;
}

// The binary's own options: GPUs (-g) and threads (-t) a process drives.
int RanksPerProcess(const std::vector<absl::string_view>& t, size_t binary) {
  int gpus = 1, threads = 1;
  for (size_t i = binary + 1; i < t.size(); ++i) {
    if (std::optional<int> g = CountOption(t, i, {"-g", "--ngpus"})) gpus = *g;
    if (std::optional<int> n = CountOption(t, i, {"-t", "--nthreads"})) threads = *n;
  }
  return gpus * threads;
}

// What the launcher words before the binary say: processes, processes a host, hosts (0 = not said).
struct LauncherWords {
  bool mpi = false, slurm = false;
  int processes = 0, per_host = 0, hosts = 0;
};

void ReadLauncherWord(const std::vector<absl::string_view>& t, size_t& i, LauncherWords& w) {
  if (w.mpi) {
    if (std::optional<int> n = CountOption(t, i, {"-np", "--np", "-n", "-c"})) w.processes = *n;
    if (std::optional<int> n = CountOption(t, i, {"-npernode", "--npernode", "-N", "-ppn", "--ppn"})) w.per_host = *n;
    if ((t[i] == "--map-by" || t[i] == "-map-by") && i + 1 < t.size() && absl::StartsWith(t[i + 1], "ppr:")) {
      const std::vector<absl::string_view> ppr = absl::StrSplit(t[++i], ':');
      if (ppr.size() >= 3 && ppr[2] == "node") absl::SimpleAtoi(ppr[1], &w.per_host);
    }
    if ((t[i] == "-H" || t[i] == "-host" || t[i] == "--host") && i + 1 < t.size()) {
      const std::vector<absl::string_view> hosts = absl::StrSplit(t[++i], ',', absl::SkipEmpty());
      w.hosts = static_cast<int>(hosts.size());
    }
  }
  if (w.slurm) {
    if (std::optional<int> n = CountOption(t, i, {"-N", "--nodes"})) w.hosts = *n;
    if (std::optional<int> n = CountOption(t, i, {"-n", "--ntasks"})) w.processes = *n;
    if (std::optional<int> n = CountOption(t, i, {"--ntasks-per-node"})) w.per_host = *n;
  }
}

}  // namespace

std::optional<CommandShape> ShapeFromCommand(absl::string_view text) {
  const std::vector<absl::string_view> t = Tokens(text);
  size_t binary = t.size();
  for (size_t i = 0; i < t.size() && binary == t.size(); ++i) {
    bool header = false;
    if (!absl::StartsWith(t[i], "-") && !TestNamedIn(t[i], &header).empty()) binary = i;
  }
  if (binary == t.size() || binary + 1 == t.size() || !absl::StartsWith(t[binary + 1], "-")) return std::nullopt;
  LauncherWords w;
  for (size_t i = 0; i < binary; ++i) {
    const absl::string_view program = t[i].substr(t[i].find_last_of('/') + 1);
    if (program == "mpirun" || program == "mpiexec" || program == "orterun") w.mpi = true;
    if (program == "srun") w.slurm = true;
    ReadLauncherWord(t, i, w);
  }
  CommandShape shape;
  const int per_process = RanksPerProcess(t, binary);
  if (!w.mpi && !w.slurm) {
    // The binary run by hand (one process), after a prompt and the environment it is given only: a
    // sentence that names the binary is no command.
    const bool by_hand =
        std::all_of(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(binary), [](absl::string_view w) {
          return absl::StrContains(w, '=') || w == "$" || w == "#" || w == ">" || absl::EndsWith(w, "$") ||
                 absl::EndsWith(w, "#");
        });
    if (!by_hand) return std::nullopt;
    return CommandShape{per_process, 1};
  }
  if (w.processes == 0 && w.hosts > 0 && w.per_host > 0) w.processes = w.hosts * w.per_host;
  if (w.processes == 0) return std::nullopt;
  if (w.hosts == 0 && w.per_host > 0 && w.processes % w.per_host == 0) w.hosts = w.processes / w.per_host;
  if (w.hosts == 0) return std::nullopt;
  shape.ranks = w.processes * per_process;
  shape.hosts = w.hosts;
  return shape;
}

}  // namespace hetsim::calibrate
