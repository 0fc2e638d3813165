// `hetsim report R.json --html OUT.html`: a saved Report (run --report) drawn as an HTML page.
#include <string>

#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "proto/io.h"
#include "proto/output_files.h"
#include "traces/html/run_html.h"

namespace hetsim::cli {
namespace {

const CommandInfo kReportInfo = {
    "report", "hetsim report REPORT --html OUT.html [--max-wall-seconds S]",
    "Draws a Report saved by `hetsim run --report` (any encoding) as a self-contained HTML page: the\n"
    "header figures and the stage, boundary, link and fault tables (docs/report.md). The schedule, memory\n"
    "and link charts need the simulated iteration itself: `hetsim run ... --html` draws them. A file that\n"
    "is not a Report exits 2 and nothing is written, as does OUT.html naming REPORT itself.\n"
    "--max-wall-seconds S bounds the drawing (0 = no limit)."};

int Render(const Args& args) {
  po::options_description options("options");
  std::string in, html_path;
  double max_wall_seconds = 0;
  options.add_options()("max-wall-seconds", po::value(&max_wall_seconds)->value_name("S"),
                        "stop drawing after S seconds (0 = no limit)")(
      "html", po::value(&html_path)->required()->value_name("OUT.html"), "the page to write")(
      "report", po::value(&in)->required(), "report file");
  po::positional_options_description positional;
  positional.add("report", 1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kReportInfo, args, options, positional, &vm)) return *exit;
  if (auto exit = CheckRunLimitFlags(kReportInfo, 0, max_wall_seconds)) return *exit;
  const WallLimit wall_limit(max_wall_seconds);
  proto::OutputFiles outputs({in});  // the page may not overwrite the report it draws
  if (absl::Status s = outputs.Check(html_path); !s.ok()) return ReportFailure(kReportInfo, s);
  absl::StatusOr<v1::Report> report = proto::LoadAs<v1::Report>(in);
  if (!report.ok()) return ReportFailure(kReportInfo, report.status());
  if (absl::Status s = traces::html::CheckSavedReport(*report, in); !s.ok()) return ReportFailure(kReportInfo, s);
  absl::StatusOr<std::string> page = DrawPageWithin(wall_limit, [&] {
    return traces::html::RunReportHtml({nullptr, nullptr, &*report, {}, {}});
  });
  if (!page.ok()) return ReportFailure(kReportInfo, page.status());
  if (absl::Status s = outputs.Add(html_path, *std::move(page)); !s.ok()) return ReportFailure(kReportInfo, s);
  if (absl::Status s = outputs.Commit(); !s.ok()) return ReportFailure(kReportInfo, s);
  return kExitOk;
}

}  // namespace

int RunReport(const Args& args) {
  return RunGuarded(kReportInfo, [&] { return Render(args); });
}

}  // namespace hetsim::cli
