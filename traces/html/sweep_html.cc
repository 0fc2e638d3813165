#include "traces/html/sweep_html.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/counted.h"
#include "base/wall_limit.h"
#include "traces/html/chart_internal.h"
#include "traces/html/page_internal.h"
#include "traces/html/svg_internal.h"

namespace hetsim::traces::html {
namespace {

// The metric columns charted, with their axis labels.
struct Metric {
  const char* column;
  const char* label;
  double scale;  // shares to percent
};
constexpr Metric kMetrics[] = {{"tokens_per_s", "throughput (tokens/s)", 1},
                               {"iteration_time_ms", "iteration time (ms)", 1},
                               {"mfu", "MFU (%)", 100},
                               {"bubble_ratio", "pipeline bubble (%)", 100},
                               {"eta", "eta (%)", 100},
                               {"peak_memory_gib", "peak memory per GPU (GiB)", 1}};

// One line of CSV into cells; false when a quoted cell does not close.
bool SplitCsvLine(absl::string_view line, std::vector<std::string>* cells) {
  cells->clear();
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells->push_back(std::move(cell));
      cell.clear();
    } else {
      cell += c;
    }
  }
  cells->push_back(std::move(cell));
  return !quoted;
}

int ColumnOf(const SweepTable& t, absl::string_view name) {
  const auto it = std::find(t.columns.begin(), t.columns.end(), name);
  return it == t.columns.end() ? -1 : static_cast<int>(it - t.columns.begin());
}

// Axis value -> position on x: the number itself, or the value's rank when an axis is not numeric.
// Ranks are looked up in a hash map: a sweep of 10^6 distinct values must not cost 10^12 comparisons.
struct AxisValues {
  std::vector<std::string> values;                // distinct, in first-seen order (the sweep's order)
  absl::flat_hash_map<std::string, size_t> rank;  // value -> its index in `values`
  bool numeric = true;
  size_t Rank(const std::string& v) const {
    const auto it = rank.find(v);
    return it == rank.end() ? values.size() : it->second;
  }
  double X(const std::string& v) const {
    double d = 0;
    if (numeric && absl::SimpleAtod(v, &d)) return d;
    return static_cast<double>(Rank(v));
  }
};

AxisValues ValuesOf(const SweepTable& t, int column) {
  AxisValues a;
  for (const auto& row : t.rows) {
    if (a.rank.emplace(row[column], a.values.size()).second) a.values.push_back(row[column]);
    double d = 0;
    if (!absl::SimpleAtod(row[column], &d)) a.numeric = false;
  }
  return a;
}

AxisValues SingleLine() {
  AxisValues a;
  a.values = {""};
  a.rank[""] = 0;
  a.numeric = false;
  return a;
}

// The GPUs' memory capacity under the peak-memory chart's points (the rows' memory_capacity_gib): one
// flat line when every point has the same, else one line per line of points (a step on categories);
// none in rows written before the column existed.
std::vector<Series> CapacityLines(const SweepTable& t, const std::vector<const std::vector<std::string>*>& rows,
                                  const AxisValues& x_axis, int line_col) {
  const int capacity = ColumnOf(t, "memory_capacity_gib");
  const int x_col = ColumnOf(t, t.axes[0]);
  std::map<std::string, std::vector<Point>> by_line;  // line value -> (x, capacity)
  std::set<double> capacities;
  for (const auto* row : rows) {
    double c = 0;
    if (capacity < 0 || !absl::SimpleAtod((*row)[capacity], &c) || c <= 0) continue;
    by_line[line_col >= 0 ? (*row)[line_col] : ""].push_back(
        {x_axis.X((*row)[x_col]), c, 0, 0, absl::StrFormat("capacity %s GiB", Num(c))});
    capacities.insert(c);
  }
  std::vector<Series> out;
  if (capacities.size() == 1) {
    std::vector<Point> all;
    for (auto& [line, points] : by_line) all.insert(all.end(), points.begin(), points.end());
    std::sort(all.begin(), all.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
    out.emplace_back(absl::StrFormat("GPU memory (%s GiB)", Num(*capacities.begin())), "#7f7f7f", SeriesStyle::kDashed,
                     std::vector<Point>{all.front(), all.back()});
    return out;
  }
  // Between two categories (GPU presets) nothing lies: a step holds each category's capacity up to the
  // next tick, where a slope would draw capacities no GPU has.
  for (auto& [line, points] : by_line) {
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
    out.emplace_back(line.empty() ? "GPU memory" : absl::StrCat("GPU memory, ", t.axes[1], " = ", line), "#7f7f7f",
                     x_axis.numeric ? SeriesStyle::kDashed : SeriesStyle::kStep, std::move(points),
                     x_axis.numeric ? "" : "5 3");
  }
  return out;
}

std::string MetricCharts(const SweepTable& t, const Metric& m) {
  const int metric = ColumnOf(t, m.column);
  const int x_col = ColumnOf(t, t.axes[0]);
  const int line_col = t.axes.size() > 1 ? ColumnOf(t, t.axes[1]) : -1;
  const AxisValues x_axis = ValuesOf(t, x_col);
  const AxisValues lines = line_col >= 0 ? ValuesOf(t, line_col) : SingleLine();
  // The other axes: one small chart per combination of their values, in first-seen order.
  std::vector<std::string> panels;
  std::map<std::string, std::vector<const std::vector<std::string>*>> rows_of;
  for (const auto& row : t.rows) {
    if (WallLimitPassed()) break;  // the page is dropped: the command checks its limit after drawing
    std::vector<std::string> key;
    for (size_t a = 2; a < t.axes.size(); ++a)
      key.push_back(absl::StrCat(t.axes[a], " = ", row[ColumnOf(t, t.axes[a])]));
    const std::string k = absl::StrJoin(key, ", ");
    if (!rows_of.count(k)) panels.push_back(k);
    rows_of[k].push_back(&row);
  }
  const bool multiples = panels.size() > 1;
  const int status = ColumnOf(t, "status");
  auto point_label = [&](const std::vector<std::string>& row, double y) {
    return absl::StrFormat("%s = %s%s: %s", t.axes[0], row[x_col],
                           line_col >= 0 ? absl::StrCat(", ", t.axes[1], " = ", row[line_col]) : "", Num(y * m.scale));
  };
  std::string out = multiples ? "<div class=\"multiples\">" : "";
  for (const std::string& panel : panels) {
    std::vector<Series> series;
    // Points that do not fit in memory: markers of their own, off the lines of the points that run.
    Series oom("out of memory", "#d62728", SeriesStyle::kMarkers);
    std::vector<std::vector<const std::vector<std::string>*>> rows_of_line(lines.values.size());
    for (const auto* row : rows_of[panel]) {
      if (WallLimitPassed()) break;  // the page is dropped: the command checks its limit after drawing
      rows_of_line[line_col >= 0 ? lines.Rank((*row)[line_col]) : 0].push_back(row);
    }
    for (size_t l = 0; l < lines.values.size(); ++l) {
      static constexpr const char* kDashes[] = {"", "7 3", "2 2", "9 3 2 3"};
      Series s(line_col >= 0 ? absl::StrCat(t.axes[1], " = ", lines.values[l]) : m.column,
               SeriesColor(static_cast<int>(l)), SeriesStyle::kLine, {}, kDashes[l % 4]);
      for (const auto* row : rows_of_line[l]) {
        double y = 0;
        if (!absl::SimpleAtod((*row)[metric], &y)) continue;  // a failed point has no metrics
        const bool out_of_memory = status >= 0 && (*row)[status] == "oom";
        (out_of_memory ? oom : s)
            .points.push_back({x_axis.X((*row)[x_col]), y * m.scale, 0, 0,
                               absl::StrCat(point_label(*row, y), out_of_memory ? " (out of memory)" : "")});
      }
      std::sort(s.points.begin(), s.points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
      if (!s.points.empty()) series.push_back(std::move(s));
    }
    if (!oom.points.empty()) series.push_back(std::move(oom));
    if (std::string(m.column) == "peak_memory_gib") {
      for (Series& c : CapacityLines(t, rows_of[panel], x_axis, line_col)) series.push_back(std::move(c));
    }
    ChartSpec spec(panel.empty() ? m.label : panel, t.axes[0], m.label, multiples ? 500 : 740, multiples ? 280 : 330);
    if (!x_axis.numeric) spec.x_categories = x_axis.values;
    spec.legend = line_col >= 0 || series.size() > 1;
    out += ChartSvg(spec, series);
  }
  return multiples ? out + "</div>" : out;
}

// "3 points not simulated (2 infeasible, 1 limit): their rows say why", or "".
std::string NotSimulated(const SweepTable& t) {
  const int status = ColumnOf(t, "status");
  if (status < 0) return "";
  std::map<std::string, int> counts;
  int total = 0;
  for (const auto& row : t.rows) {
    if (row[status] == "ok" || row[status] == "oom") continue;
    ++counts[row[status]];
    ++total;
  }
  if (total == 0) return "";
  std::vector<std::string> parts;
  for (const auto& [name, n] : counts) parts.push_back(absl::StrFormat("%d %s", n, name));
  return absl::StrFormat("%s not simulated (%s): no marker on the charts; the table's message says why.",
                         Counted(total, "point"), absl::StrJoin(parts, ", "));
}

// Two rows' metric cells (from column `first` of t) read as the same result: equal text, or numbers
// within kNoEffectShare of each other (of the larger; for the shares, mfu, bubble_ratio and eta, within
// kNoEffectShare itself, 0.1 percentage points). Idle GPUs added under a fixed plan still reshape the
// fabric (its switch counts), which moves an iteration by parts in 10^4 (the bundled 512-GPU plan with
// 32 -> 40 H100 nodes: 2957.31 -> 2957.05 ms, bubble 21.540% -> 21.570%): no chart shows that, and exact
// equality would hide the sentence below.
constexpr double kNoEffectShare = 1e-3;
bool SameMetrics(const SweepTable& t, size_t first, const std::vector<std::string>& a,
                 const std::vector<std::string>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    double x = 0, y = 0;
    if (a[i] == b[i]) continue;
    if (!absl::SimpleAtod(a[i], &x) || !absl::SimpleAtod(b[i], &y)) return false;
    const std::string& column = t.columns[first + i];
    const bool share = column == "mfu" || column == "bubble_ratio" || column == "eta";
    if (std::abs(x - y) > kNoEffectShare * (share ? 1 : std::max(std::abs(x), std::abs(y)))) return false;
  }
  return true;
}

// The axes along which no metric moves (by more than kNoEffectShare): a cluster grown under a fixed
// plan, whose meshes never reach the new GPUs, gives the same iteration at every value. Said on the
// page, or the flat line is read as a finding.
std::vector<std::string> AxesWithoutEffect(const SweepTable& t) {
  const int first_metric = 1 + static_cast<int>(t.axes.size());
  const int status = ColumnOf(t, "status");
  std::vector<std::string> out;
  for (size_t a = 0; a < t.axes.size(); ++a) {
    const int column = ColumnOf(t, t.axes[a]);
    std::map<std::vector<std::string>, std::vector<std::string>> metrics_of;  // the other axes -> metrics
    std::map<std::vector<std::string>, std::set<std::string>> values_of;
    bool moves = false;
    for (const auto& row : t.rows) {
      if (WallLimitPassed()) break;  // the page is dropped: the command checks its limit after drawing
      if (status >= 0 && row[status] != "ok" && row[status] != "oom") continue;
      std::vector<std::string> others;
      for (int c = 1; c < first_metric; ++c) {
        if (c != column) others.push_back(row[c]);
      }
      const std::vector<std::string> metrics(row.begin() + first_metric, row.end());
      values_of[others].insert(row[column]);
      auto [it, inserted] = metrics_of.emplace(others, metrics);
      if (!inserted && !SameMetrics(t, first_metric, it->second, metrics)) moves = true;
    }
    const bool varied =
        std::any_of(values_of.begin(), values_of.end(), [](const auto& v) { return v.second.size() > 1; });
    if (varied && !moves) out.push_back(t.axes[a]);
  }
  return out;
}

}  // namespace

absl::StatusOr<SweepTable> ParseSweepCsv(absl::string_view text, absl::string_view file,
                                         std::optional<std::string> expected_header) {
  SweepTable t;
  int line_no = 0;
  std::vector<std::string> cells;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (line.empty()) continue;
    if (!SplitCsvLine(line, &cells)) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: line %d: a quoted cell does not end", file, line_no));
    }
    if (t.columns.empty()) {
      if (expected_header && line != *expected_header) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: line 1: header \"%s\" is not this sweep's (\"%s\"): the file comes from another sweep",
                            file, line, *expected_header));
      }
      const auto metrics = std::find(cells.begin(), cells.end(), "iteration_time_ms");
      if (cells.empty() || cells[0] != "point" || metrics == cells.end() || metrics == cells.begin() + 1 ||
          std::find(cells.begin(), cells.end(), "status") == cells.end()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: line %d: not a sweep's output (the header must start with point, the axes, then iteration_time_ms)",
            file, line_no));
      }
      t.columns = cells;
      t.axes.assign(cells.begin() + 1, metrics);
      continue;
    }
    if (cells.size() != t.columns.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: line %d: %d cells, the header has %d", file, line_no, cells.size(), t.columns.size()));
    }
    t.rows.push_back(cells);
  }
  if (t.columns.empty()) return absl::InvalidArgumentError(absl::StrFormat("%s: empty: not a sweep's output", file));
  return t;
}

namespace {

// The rows as the page's table: the sweep's fingerprint (the same in every row) becomes a sentence.
Table TableWithoutFingerprint(const SweepTable& t) {
  Table table{t.columns, t.rows, true, "points"};
  const int column = ColumnOf(t, "sweep_fingerprint");
  if (column < 0) return table;
  table.header.erase(table.header.begin() + column);
  for (auto& row : table.rows) row.erase(row.begin() + column);
  return table;
}

}  // namespace

std::string SweepReportHtml(const SweepTable& t, const std::string& title) {
  int ok = 0;
  const int status = ColumnOf(t, "status");
  for (const auto& row : t.rows) ok += status >= 0 && (row[status] == "ok" || row[status] == "oom");
  const size_t slash = title.find_last_of('/');
  Page page(
      absl::StrCat("hetsim sweep: ", slash == std::string::npos ? title : title.substr(slash + 1)),
      absl::StrFormat("%s over %s; %d simulated", Counted(t.rows.size(), "point"), absl::StrJoin(t.axes, " x "), ok));
  if (t.axes.size() > 1) {
    page.AddParagraph(absl::StrFormat("x: %s; one line per %s%s. Hover a point for its value.", t.axes[0], t.axes[1],
                                      t.axes.size() > 2 ? "; one chart per value of the other axes" : ""));
  }
  for (const std::string& axis : AxesWithoutEffect(t)) {
    page.AddParagraph(
        absl::StrFormat("No result changes with %s (none by more than %g%%): the plan does not use what this axis "
                        "varies (a plan fixed on a larger "
                        "cluster leaves the added GPUs idle; sweep the planner, or the plan's meshes, with it).",
                        axis, kNoEffectShare * 100));
  }
  if (const std::string skipped = NotSimulated(t); !skipped.empty()) page.AddParagraph(skipped);
  if (const int f = ColumnOf(t, "sweep_fingerprint"); f >= 0 && !t.rows.empty()) {
    page.AddParagraph(absl::StrFormat("Sweep fingerprint %s.", t.rows[0][f]));
  }
  // Up to two axes: one chart per metric, side by side; more: a heading and small multiples each.
  const bool grid = t.axes.size() <= 2;
  if (grid) page.AddRaw("<div class=\"multiples\">");
  for (const Metric& m : kMetrics) {
    if (ColumnOf(t, m.column) < 0) continue;
    if (!grid) page.AddHeading(m.label);
    page.AddRaw(MetricCharts(t, m));
  }
  if (grid) page.AddRaw("</div>");
  page.AddHeading("Every point (click a column to sort)");
  Table table = TableWithoutFingerprint(t);
  for (auto& row : table.rows) {
    for (size_t c = 1 + t.axes.size(); c < row.size(); ++c) {  // metrics to 6 significant digits
      double v = 0;
      if (absl::SimpleAtod(row[c], &v) && row[c].find_first_of(".eE") != std::string::npos) row[c] = Num(v, 6);
    }
  }
  page.AddTable(table);
  return page.Finish();
}

}  // namespace hetsim::traces::html
