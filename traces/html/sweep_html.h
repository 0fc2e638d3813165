// The HTML report of a sweep (`hetsim sweep --html`, `hetsim sweep-merge --html`): for each metric,
// one chart against the first axis with one line per value of the second axis, and small multiples
// for the values of the other axes; then every row in a sortable table. Reads the sweep's CSV as
// written (app/cli/sweep_row.h: point, the axes, then the metrics from iteration_time_ms).
#ifndef HETSIM_TRACES_HTML_SWEEP_HTML_H_
#define HETSIM_TRACES_HTML_SWEEP_HTML_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hetsim::traces::html {

struct SweepTable {
  std::vector<std::string> axes;     // column names between "point" and "iteration_time_ms"
  std::vector<std::string> columns;  // every column
  std::vector<std::vector<std::string>> rows;
};

// Parses a sweep's CSV (RFC 4180 quoting). `expected_header` (without '\n'), when given, is the
// header of the sweep the file must come from. InvalidArgument "FILE: line N: problem" for a file
// that is not a sweep's output, a header of another sweep, or a row with the wrong number of cells.
absl::StatusOr<SweepTable> ParseSweepCsv(absl::string_view text, absl::string_view file,
                                         std::optional<std::string> expected_header = std::nullopt);

std::string SweepReportHtml(const SweepTable& table, const std::string& title);

}  // namespace hetsim::traces::html

#endif  // HETSIM_TRACES_HTML_SWEEP_HTML_H_
