// The predicted-vs-measured scatter chart of `hetsim fidelity --chart`: a self-contained SVG (no
// scripts, fonts or external references) whose bytes depend only on the results, so it can be
// committed (docs/validation.md) and diffed. Both axes in the sets' unit, the identity line, shaded
// +-3% and +-6% bands, every case a labelled point coloured by how far it is from its measurement.
#ifndef HETSIM_SERVICE_FIDELITY_CHART_H_
#define HETSIM_SERVICE_FIDELITY_CHART_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/hetsim.pb.h"

namespace hetsim::fidelity {

// InvalidArgument when the cases do not share one unit (a chart has one pair of axes) or there are none.
absl::StatusOr<std::string> FidelityChartSvg(const hetsim::v1::FidelityReport& report);

}  // namespace hetsim::fidelity

#endif  // HETSIM_SERVICE_FIDELITY_CHART_H_
