// The fit report of `hetsim calibrate`: the fitted parameters (before -> after), every measured point
// with its prediction and relative residual, the mean absolute percentage error (MAPE), the warnings
// and the problems of a poor fit the user accepted.
#ifndef HETSIM_SERVICE_CALIBRATE_REPORT_H_
#define HETSIM_SERVICE_CALIBRATE_REPORT_H_

#include <string>
#include <vector>

#include "service/calibrate/source.h"

namespace hetsim::calibrate {

// MAPE in percent over every point of `fits` (0 without points).
double MeanAbsolutePercentError(const std::vector<SourceFit>& fits);

// Plain text, one section per source, deterministic; then the sources' warnings and (accepted) poor-fit
// problems, when there are any.
std::string FormatFitReport(const std::vector<SourceFit>& fits);

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_REPORT_H_
