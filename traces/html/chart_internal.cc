#include "traces/html/chart_internal.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/wall_limit.h"
#include "traces/html/svg_internal.h"

namespace hetsim::traces::html {
namespace {

constexpr int kLeft = 64, kRight = 16, kTop = 30, kBottom = 44;

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  void Fix(std::optional<double> min, std::optional<double> max) {
    if (min) lo = *min;
    if (max) hi = *max;
    if (!std::isfinite(lo)) lo = 0;
    if (!std::isfinite(hi)) hi = lo + 1;
    if (hi <= lo) {  // one value: centre it
      const double d = lo == 0 ? 1 : std::fabs(lo) * 0.05;
      lo -= d;
      hi += d;
    }
    if (!max) hi += (hi - lo) * 0.06;  // headroom: a line at the top stays off the frame
  }
};

std::string Legend(const std::vector<Series>& series, int x, int y, int width) {
  std::string out;
  int cx = x;
  int row = 0;
  for (const Series& s : series) {
    if (s.name.empty()) continue;
    const int w = 28 + 7 * static_cast<int>(s.name.size());
    if (cx + w > x + width && cx > x) {
      cx = x;
      ++row;
    }
    const int cy = y + 14 * row;
    if (s.style == SeriesStyle::kMarkers) {
      absl::StrAppendFormat(&out, R"(<circle cx="%d" cy="%d" r="4" fill="%s"/>)", cx + 8, cy - 4, s.color);
    } else {
      absl::StrAppendFormat(&out, R"(<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>)", cx,
                            cy - 4, cx + 18, cy - 4, s.color,
                            s.style == SeriesStyle::kDashed ? R"( stroke-dasharray="5 3")"
                            : s.dash.empty()                ? ""
                                                            : absl::StrCat(" stroke-dasharray=\"", s.dash, "\""));
    }
    absl::StrAppendFormat(&out, R"(<text x="%d" y="%d">%s</text>)", cx + 22, cy, HtmlEscape(s.name));
    cx += w + 10;
  }
  return out;
}

// One series: its line (unless markers only) and, for markers or short lines, a marker per point.
template <typename ToX, typename ToY>
std::string SeriesSvg(const Series& s, const ToX& X, const ToY& Y) {
  std::string out;
  if (s.points.empty()) return "";
  if (s.style != SeriesStyle::kMarkers) {
    std::string path;
    for (size_t i = 0; i < s.points.size() && !WallLimitPassed(); ++i) {
      const Point& p = s.points[i];
      if (s.style == SeriesStyle::kStep && i > 0)
        absl::StrAppend(&path, " ", Coord(X(p.x)), ",", Coord(Y(s.points[i - 1].y)));
      absl::StrAppend(&path, i == 0 ? "" : " ", Coord(X(p.x)), ",", Coord(Y(p.y)));
    }
    absl::StrAppendFormat(&out, R"(<polyline class="series" points="%s" stroke="%s"%s><title>%s</title></polyline>)",
                          path, s.color,
                          s.style == SeriesStyle::kDashed ? R"( stroke-dasharray="5 3")"
                          : s.dash.empty()                ? ""
                                                          : absl::StrCat(" stroke-dasharray=\"", s.dash, "\""),
                          HtmlEscape(s.name));
  }
  const bool markers = s.style == SeriesStyle::kMarkers || (s.style == SeriesStyle::kLine && s.points.size() <= 40);
  if (!markers) return out;
  for (const Point& p : s.points) {
    if (WallLimitPassed()) break;  // the page is dropped: the command checks its limit after drawing
    if (p.y_low < p.y_high) {
      absl::StrAppendFormat(&out, R"(<line class="errorbar" x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s"/>)",
                            Coord(X(p.x)), Coord(X(p.x)), Coord(Y(p.y_low)), Coord(Y(p.y_high)), s.color);
    }
    const std::string label = p.label.empty() ? absl::StrCat(s.name, ": ", Num(p.x), ", ", Num(p.y)) : p.label;
    absl::StrAppendFormat(&out, R"(<circle class="marker" cx="%s" cy="%s" r="%d" fill="%s"><title>%s</title></circle>)",
                          Coord(X(p.x)), Coord(Y(p.y)), s.style == SeriesStyle::kMarkers ? 5 : 3, s.color,
                          HtmlEscape(label));
  }
  return out;
}

}  // namespace

std::string ChartSvg(const ChartSpec& spec, const std::vector<Series>& series) {
  Range xr, yr;
  for (const Series& s : series) {
    for (const Point& p : s.points) {
      xr.Add(p.x);
      yr.Add(p.y);
      if (p.y_low < p.y_high) {
        yr.Add(p.y_low);
        yr.Add(p.y_high);
      }
    }
  }
  if (spec.identity_line) {
    xr.Add(yr.lo), xr.Add(yr.hi), yr.Add(xr.lo), yr.Add(xr.hi);
  }
  const bool categorical = !spec.x_categories.empty();
  if (categorical) {
    xr.lo = -0.5;
    xr.hi = static_cast<double>(spec.x_categories.size()) - 0.5;
  } else {
    xr.Fix(spec.x_min, spec.x_max);
  }
  yr.Fix(spec.y_min, spec.y_max);
  const std::vector<double> xt = NiceTicks(xr.lo, xr.hi), yt = NiceTicks(yr.lo, yr.hi, 5);
  if (!spec.y_max && yt.back() > yr.hi) yr.hi = yt.back();
  const int legend_rows = spec.legend ? 1 + static_cast<int>(series.size()) / 6 : 0;
  const int top = kTop + 14 * legend_rows;
  const double pw = spec.width - kLeft - kRight, ph = spec.height - top - kBottom;
  auto X = [&](double x) { return kLeft + (x - xr.lo) / (xr.hi - xr.lo) * pw; };
  auto Y = [&](double y) { return top + ph - (y - yr.lo) / (yr.hi - yr.lo) * ph; };

  std::string out = absl::StrFormat(
      R"(<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img">)",
      spec.width, spec.height, spec.width, spec.height);
  absl::StrAppendFormat(&out, R"(<text class="title" x="%d" y="16">%s</text>)", kLeft, HtmlEscape(spec.title));
  if (spec.legend) out += Legend(series, kLeft, 16 + 14, static_cast<int>(pw));
  for (double t : yt) {
    if (t < yr.lo || t > yr.hi) continue;
    absl::StrAppendFormat(&out, R"(<line class="grid" x1="%d" x2="%s" y1="%s" y2="%s"/>)", kLeft, Coord(kLeft + pw),
                          Coord(Y(t)), Coord(Y(t)));
    absl::StrAppendFormat(&out, R"(<text class="tick" x="%d" y="%s" text-anchor="end">%s</text>)", kLeft - 4,
                          Coord(Y(t) + 4), Num(t));
  }
  for (size_t i = 0; i < spec.x_categories.size(); ++i) {
    const double t = static_cast<double>(i);
    absl::StrAppendFormat(&out, R"(<line class="grid" x1="%s" x2="%s" y1="%d" y2="%s"/>)", Coord(X(t)), Coord(X(t)),
                          top, Coord(top + ph));
    absl::StrAppendFormat(&out, R"(<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>)", Coord(X(t)),
                          Coord(top + ph + 14), HtmlEscape(spec.x_categories[i]));
  }
  for (double t : xt) {
    if (categorical) break;
    if (t < xr.lo || t > xr.hi || (spec.integer_x && t != std::floor(t))) continue;
    absl::StrAppendFormat(&out, R"(<line class="grid" x1="%s" x2="%s" y1="%d" y2="%s"/>)", Coord(X(t)), Coord(X(t)),
                          top, Coord(top + ph));
    absl::StrAppendFormat(&out, R"(<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>)", Coord(X(t)),
                          Coord(top + ph + 14), Num(t));
  }
  absl::StrAppendFormat(&out, R"(<rect class="frame" x="%d" y="%d" width="%s" height="%s"/>)", kLeft, top, Coord(pw),
                        Coord(ph));
  absl::StrAppendFormat(&out, R"(<text class="axis" x="%s" y="%d" text-anchor="middle">%s</text>)",
                        Coord(kLeft + pw / 2), spec.height - 8, HtmlEscape(spec.x_label));
  absl::StrAppendFormat(
      &out, R"x(<text class="axis" transform="translate(14 %s) rotate(-90)" text-anchor="middle">%s</text>)x",
      Coord(top + ph / 2), HtmlEscape(spec.y_label));
  if (spec.identity_line) {
    const double lo = std::max(xr.lo, yr.lo), hi = std::min(xr.hi, yr.hi);
    absl::StrAppendFormat(&out, R"(<line class="identity" x1="%s" y1="%s" x2="%s" y2="%s"><title>y = x</title></line>)",
                          Coord(X(lo)), Coord(Y(lo)), Coord(X(hi)), Coord(Y(hi)));
  }
  for (const Series& s : series) out += SeriesSvg(s, X, Y);
  out += "</svg>";
  return out;
}

}  // namespace hetsim::traces::html
