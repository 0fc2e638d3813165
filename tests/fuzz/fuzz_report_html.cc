// libFuzzer target: a saved report drawn as an HTML page (`hetsim report R.json --html OUT`, issue 42's
// report-JSON door). The bytes are read as a Report in JSON, the format `run --report r.json` writes,
// through proto::ParseMessage (what LoadAs reads files with), checked as the command checks it
// (traces::html::CheckSavedReport) and rendered with traces::html::RunReportHtml. Every input must end
// in a page or an error status: a crash, a hang, a sanitizer report or an unbounded page is the finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "base/check.h"
#include "proto/file_format.h"
#include "proto/hetsim.pb.h"
#include "proto/io.h"
#include "traces/html/run_html.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view json(reinterpret_cast<const char*>(data), size);
  hetsim::v1::Report report;
  if (!hetsim::proto::ParseMessage(json, hetsim::proto::FileFormat::kJson, "fuzz.json", &report).ok()) return 0;
  if (!hetsim::traces::html::CheckSavedReport(report, "fuzz.json").ok()) return 0;
  const std::string html = hetsim::traces::html::RunReportHtml({nullptr, nullptr, &report, {}});
  // A page grows with the report's tables, never beyond: 64 bytes of page per byte of report (plus
  // 1 MiB) is far above what a real report draws (the HAPT case: 3.7 KB of JSON, a 7.7 KB page).
  HETSIM_CHECK(html.size() <= 64 * size + (1 << 20), "a %zu-byte page from a %zu-byte report", html.size(), size);
  return 0;
}
