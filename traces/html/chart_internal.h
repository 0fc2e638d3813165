// Static SVG charts for the HTML reports: lines, steps and markers on linear axes, with axis labels
// (units in the label), ticks, a grid, a legend, optional horizontal reference lines and error bars.
// Hover on a marker shows its value (SVG <title>).
#ifndef HETSIM_TRACES_HTML_CHART_INTERNAL_H_
#define HETSIM_TRACES_HTML_CHART_INTERNAL_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hetsim::traces::html {

struct Point {
  Point(double x, double y, double y_low = 0, double y_high = 0, std::string label = "")
      : x(x), y(y), y_low(y_low), y_high(y_high), label(std::move(label)) {}
  double x, y;
  double y_low, y_high;  // error bar when y_low < y_high
  std::string label;     // hover text; empty: "series: x, y"
};

enum class SeriesStyle { kLine, kStep, kMarkers, kDashed };

struct Series {
  Series(std::string name, std::string color, SeriesStyle style, std::vector<Point> points = {}, std::string dash = "")
      : name(std::move(name)),
        color(std::move(color)),
        style(style),
        points(std::move(points)),
        dash(std::move(dash)) {}
  std::string name;  // in the legend; empty: not listed
  std::string color;
  SeriesStyle style = SeriesStyle::kLine;
  std::vector<Point> points;
  std::string dash;  // stroke-dasharray of a line ("6 3"), so that lines drawn on top of each other show
};

struct ChartSpec {
  ChartSpec(std::string title, std::string x_label, std::string y_label, int width, int height)
      : title(std::move(title)),
        x_label(std::move(x_label)),
        y_label(std::move(y_label)),
        width(width),
        height(height) {}
  std::string title;
  std::string x_label, y_label;  // with units, e.g. "time (ms)"
  int width = 760, height = 320;
  std::optional<double> x_min, x_max, y_min, y_max;
  bool identity_line = false;  // y = x, for predicted vs simulated
  bool legend = true;
  bool integer_x = false;  // x ticks only at integers (stages, counts)
  // A categorical x axis (GPU presets, schedules): point i of a series sits at x = i and the tick
  // there reads x_categories[i].
  std::vector<std::string> x_categories;
};

std::string ChartSvg(const ChartSpec& spec, const std::vector<Series>& series);

}  // namespace hetsim::traces::html

#endif  // HETSIM_TRACES_HTML_CHART_INTERNAL_H_
