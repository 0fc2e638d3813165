// A predicted-vs-reference scatter chart as a self-contained SVG (no scripts, fonts or external
// references) whose bytes depend only on its points, so it can be committed and diffed. Both axes in
// one unit, the identity line, shaded bands of +-inner% and +-outer%, every point labelled and
// coloured by how far it is from its reference (green within inner, orange within outer, red beyond).
// `hetsim fidelity --chart` (predicted vs measured) and `hetsim validate --chart` (a planner's
// prediction vs the simulation) both draw through here.
#ifndef HETSIM_SERVICE_EVALUATION_SCATTER_CHART_H_
#define HETSIM_SERVICE_EVALUATION_SCATTER_CHART_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hetsim::evaluation {

struct ScatterPoint {
  std::string label;
  double reference = 0;      // x: measured or simulated
  double predicted = 0;      // y
  double error_percent = 0;  // (predicted - reference) / reference x 100, for the colour and tooltip
};

struct ScatterChart {
  std::string reference_name = "measured";  // the x axis: "measured", "simulated"
  std::string unit;                         // both axes: "TFLOP/s per GPU", "iteration time (ms)"
  std::vector<std::string> summaries;       // up to two grey lines under the title
  std::vector<ScatterPoint> points;
  double inner_band_percent = 3, outer_band_percent = 6;
};

// InvalidArgument when there is no point.
absl::StatusOr<std::string> ScatterChartSvg(const ScatterChart& chart);

}  // namespace hetsim::evaluation

#endif  // HETSIM_SERVICE_EVALUATION_SCATTER_CHART_H_
