// The comma-separated tables `hetsim calibrate` reads (GEMM timings, measured iterations): blank lines
// and lines starting with '#' are skipped, the first other line is the header, every later line a row
// that remembers its line number for error messages. Cells are trimmed; none may contain a comma, and a
// row has exactly the header's columns (empty trailing cells aside).
#ifndef HETSIM_SERVICE_CALIBRATE_CSV_TABLE_INTERNAL_H_
#define HETSIM_SERVICE_CALIBRATE_CSV_TABLE_INTERNAL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hetsim::calibrate {

struct CsvRow {
  int line = 0;
  std::vector<std::string> cells;
};

struct CsvTable {
  int header_line = 0;
  std::vector<std::string> header;  // lower-case
  std::vector<CsvRow> rows;         // each with as many cells as the header
  // Index of the column named `name` (lower-case), -1 when there is none.
  int Column(absl::string_view name) const;
};

// InvalidArgument "FILE:LINE: problem": how every calibration input names a bad line.
absl::Status LineError(absl::string_view file, int line, absl::string_view problem);

// InvalidArgument "FILE:LINE: problem" for a missing header or a row shorter than the header.
absl::StatusOr<CsvTable> ParseCsvTable(absl::string_view text, absl::string_view file);

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_CSV_TABLE_INTERNAL_H_
