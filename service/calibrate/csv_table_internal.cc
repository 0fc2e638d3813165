#include "service/calibrate/csv_table_internal.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace hetsim::calibrate {

absl::Status LineError(absl::string_view file, int line, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrFormat("%s:%d: %s", file, line, problem));
}

int CsvTable::Column(absl::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

absl::StatusOr<CsvTable> ParseCsvTable(absl::string_view text, absl::string_view file) {
  CsvTable table;
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    const int line = static_cast<int>(i) + 1;
    absl::string_view l = absl::StripAsciiWhitespace(lines[i]);
    if (l.empty() || l[0] == '#') continue;
    // A NUL or another control byte is binary data, not a table (and would be printed raw in messages).
    if (const auto bad =
            std::find_if(l.begin(), l.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 && c != '\t'; });
        bad != l.end()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s:%d: byte %d is the control character 0x%02x: not a text table", file, line,
                          bad - l.begin() + 1, static_cast<unsigned char>(*bad)));
    }
    std::vector<std::string> cells;
    for (absl::string_view c : absl::StrSplit(l, ',')) cells.emplace_back(absl::StripAsciiWhitespace(c));
    if (table.header_line == 0) {
      for (std::string& c : cells) table.header.push_back(absl::AsciiStrToLower(c));
      table.header_line = line;
      continue;
    }
    // Trailing empty cells (a trailing comma) are no values; any other extra cell is: "4,210" read as
    // 4 with 210 dropped gave a time 1000 times too short.
    while (cells.size() > table.header.size() && cells.back().empty()) cells.pop_back();
    if (cells.size() != table.header.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s:%d: %d columns, the header has %d%s", file, line, cells.size(), table.header.size(),
                          cells.size() > table.header.size() ? " (a comma inside a value? cells are not quoted)" : ""));
    }
    table.rows.push_back({line, std::move(cells)});
  }
  if (table.header_line == 0) return absl::InvalidArgumentError(absl::StrFormat("%s:1: no header line", file));
  return table;
}

}  // namespace hetsim::calibrate
