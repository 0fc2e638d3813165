#include "service/evaluation/scatter_chart.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "traces/html/html_escape.h"

namespace hetsim::evaluation {
namespace {

using traces::html::HtmlEscape;

constexpr double kLeft = 90, kTop = 70, kSize = 560;  // plot square, pixels
constexpr double kWidth = kLeft + kSize + 40, kHeight = kTop + kSize + 70;

// 1, 2 or 5 x 10^k: the tick step giving about six ticks over `span`.
double NiceStep(double span) {
  const double raw = span / 6;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * magnitude >= raw) return m * magnitude;
  }
  return 10 * magnitude;
}

struct Axis {
  double lo, hi, step;
  double X(double v) const { return kLeft + (v - lo) / (hi - lo) * kSize; }
  double Y(double v) const { return kTop + kSize - (v - lo) / (hi - lo) * kSize; }
};

Axis MakeAxis(const std::vector<ScatterPoint>& points) {
  double lo = points.front().reference, hi = lo;
  for (const ScatterPoint& c : points) {
    lo = std::min({lo, c.reference, c.predicted});
    hi = std::max({hi, c.reference, c.predicted});
  }
  if (hi <= lo) hi = lo + std::max(1.0, std::fabs(lo) * 0.1);
  const double step = NiceStep((hi - lo) * 1.1);
  return {std::floor((lo - (hi - lo) * 0.05) / step) * step, std::ceil((hi + (hi - lo) * 0.05) / step) * step, step};
}

// The band between y = x (1 - f) and y = x (1 + f) over the axis range, clipped to the plot.
std::string Band(const Axis& a, double f, absl::string_view fill) {
  return absl::StrFormat(
      "<polygon clip-path=\"url(#plot)\" fill=\"%s\" points=\"%.2f,%.2f %.2f,%.2f %.2f,%.2f %.2f,%.2f\"/>\n", fill,
      a.X(a.lo), a.Y(a.lo * (1 - f)), a.X(a.hi), a.Y(a.hi * (1 - f)), a.X(a.hi), a.Y(a.hi * (1 + f)), a.X(a.lo),
      a.Y(a.lo * (1 + f)));
}

std::string Ticks(const Axis& a) {
  std::string out;
  const int count = static_cast<int>(std::lround((a.hi - a.lo) / a.step));
  for (int i = 0; i <= count; ++i) {
    const double v = a.lo + i * a.step;
    absl::StrAppendFormat(&out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e0e0e0\"/>\n", a.X(v),
                          kTop, a.X(v), kTop + kSize);
    absl::StrAppendFormat(&out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e0e0e0\"/>\n", kLeft,
                          a.Y(v), kLeft + kSize, a.Y(v));
    absl::StrAppendFormat(&out, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%g</text>\n", a.X(v),
                          kTop + kSize + 18, v);
    absl::StrAppendFormat(&out, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%g</text>\n", kLeft - 6, a.Y(v) + 4,
                          v);
  }
  return out;
}

std::string Legend(const ScatterChart& chart) {
  std::string out;
  const double x = kLeft + 12, y = kTop + 14;
  absl::StrAppendFormat(&out, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#333\"/>\n", x, y, x + 24,
                        y);
  absl::StrAppendFormat(&out, "<text x=\"%.0f\" y=\"%.0f\">predicted = %s</text>\n", x + 30, y + 4,
                        HtmlEscape(chart.reference_name));
  absl::StrAppendFormat(&out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"24\" height=\"10\" fill=\"#9ecae1\"/>\n", x, y + 12);
  absl::StrAppendFormat(&out, "<text x=\"%.0f\" y=\"%.0f\">within %g%%</text>\n", x + 30, y + 21,
                        chart.inner_band_percent);
  absl::StrAppendFormat(&out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"24\" height=\"10\" fill=\"#deebf7\"/>\n", x, y + 29);
  absl::StrAppendFormat(&out, "<text x=\"%.0f\" y=\"%.0f\">within %g%%</text>\n", x + 30, y + 38,
                        chart.outer_band_percent);
  return out;
}

const char* PointColour(const ScatterChart& chart, double error_percent) {
  const double e = std::fabs(error_percent);
  return e <= chart.inner_band_percent ? "#2ca02c" : e <= chart.outer_band_percent ? "#ff7f0e" : "#d62728";
}

}  // namespace

absl::StatusOr<std::string> ScatterChartSvg(const ScatterChart& chart) {
  if (chart.points.empty()) return absl::InvalidArgumentError("--chart: no point to chart");
  const Axis a = MakeAxis(chart.points);
  const std::string unit = HtmlEscape(chart.unit);
  const std::string reference = HtmlEscape(chart.reference_name);

  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n",
      kWidth, kHeight, kWidth, kHeight);
  absl::StrAppendFormat(&svg, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", kWidth, kHeight);
  absl::StrAppendFormat(&svg,
                        "<defs><clipPath id=\"plot\"><rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\"/>"
                        "</clipPath></defs>\n",
                        kLeft, kTop, kSize, kSize);
  absl::StrAppendFormat(&svg, "<text x=\"%.0f\" y=\"24\" font-size=\"15\">hetsim: predicted vs %s %s</text>\n", kLeft,
                        reference, unit);
  for (size_t i = 0; i < chart.summaries.size() && i < 2; ++i) {
    absl::StrAppendFormat(&svg, "<text x=\"%.0f\" y=\"%d\" fill=\"#555\">%s</text>\n", kLeft,
                          42 + 16 * static_cast<int>(i), HtmlEscape(chart.summaries[i]));
  }
  svg += Ticks(a);
  svg += Band(a, chart.outer_band_percent / 100, "#deebf7");
  svg += Band(a, chart.inner_band_percent / 100, "#9ecae1");
  absl::StrAppendFormat(&svg,
                        "<line clip-path=\"url(#plot)\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                        "stroke=\"#333\"/>\n",
                        a.X(a.lo), a.Y(a.lo), a.X(a.hi), a.Y(a.hi));
  absl::StrAppendFormat(&svg,
                        "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#333\"/>\n",
                        kLeft, kTop, kSize, kSize);
  absl::StrAppendFormat(&svg, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s %s</text>\n", kLeft + kSize / 2,
                        kTop + kSize + 42, reference, unit);
  absl::StrAppendFormat(&svg,
                        "<text transform=\"translate(%.0f %.0f) rotate(-90)\" text-anchor=\"middle\">predicted "
                        "%s</text>\n",
                        kLeft - 52, kTop + kSize / 2, unit);
  svg += Legend(chart);
  for (size_t i = 0; i < chart.points.size(); ++i) {
    const ScatterPoint& c = chart.points[i];
    const double x = a.X(c.reference), y = a.Y(c.predicted);
    absl::StrAppendFormat(&svg,
                          "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\"><title>%s: %s %g, predicted "
                          "%.1f (%+.1f%%)</title></circle>\n",
                          x, y, PointColour(chart, c.error_percent), HtmlEscape(c.label), reference, c.reference,
                          c.predicted, c.error_percent);
    // Labels alternate above and below their point: neighbours in a table sit close on the chart.
    absl::StrAppendFormat(&svg, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"10\">%s</text>\n", x + 6,
                          y + (i % 2 == 0 ? -4 : 12), HtmlEscape(c.label));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace hetsim::evaluation
