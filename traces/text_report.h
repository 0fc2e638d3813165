// The report as a compact text table for a terminal: the headline figures, one row per stage, one
// per stage boundary and one per link class.
#ifndef HETSIM_TRACES_TEXT_REPORT_H_
#define HETSIM_TRACES_TEXT_REPORT_H_

#include <string>

#include "proto/hetsim.pb.h"

namespace hetsim::traces {

std::string FormatReportTable(const v1::Report& report);

}  // namespace hetsim::traces

#endif  // HETSIM_TRACES_TEXT_REPORT_H_
