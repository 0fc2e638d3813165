// `hetsim fidelity [FILES...] [--chart C.svg] [--json R.json] [--check]`: predicts every case of the
// validation sets (validation/*.pbtxt by default) and compares the predictions with the published
// measurements: a table per set, MAPE, max |error| and Kendall's tau, and the set's bounds.
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "base/wall_limit.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/output_files.h"
#include "service/fidelity/chart.h"
#include "service/fidelity/fidelity_report.h"
#include "service/fidelity/table.h"
#include "service/fidelity/validation_set.h"

namespace hetsim::cli {
namespace {

namespace v1 = hetsim::v1;

// Exit code of --check when a set's bounds are not met (the prediction ran; the model is off).
constexpr int kExitBoundsNotMet = 1;

const CommandInfo kFidelityInfo = {
    "fidelity",
    "hetsim fidelity [FILES...] [--chart C.svg] [--json R.json] [--check] [--calibration] [--timing] [--quiet]\n"
    "                [--exact] [--max-wall-seconds S]",
    "Predicts every case of the validation sets FILES (ValidationSet messages, or .csv nccl-tests lists as\n"
    "validation/nccl/measured.csv; validation/README.md; by default the bundled sets, every *.pbtxt of the\n"
    "source tree's validation/ folder) and compares the\n"
    "predictions with the published measurements: per case the measured and predicted value and the error\n"
    "(predicted - measured) / measured, > 0 when hetsim is optimistic; per set the mean absolute error\n"
    "(MAPE), the largest |error| and Kendall's tau-b of the predicted ranking against the measured one.\n"
    "Training runs are simulated as `hetsim run` does and compared in TFLOP/s per GPU, FLOPs counted as\n"
    "the publication counted them; collectives as `hetsim collective` in nccl-tests' bus bandwidth.\n"
    "--chart writes a predicted-vs-measured scatter chart (SVG), --json the results (FidelityReport).\n"
    "--calibration also proves calibration from a few runs: for k = 1, 2, 3, every choice of k training\n"
    "runs of a set calibrates what `hetsim calibrate --iterations` fits (GEMM and memory-bound kernel\n"
    "efficiency, iteration, pass and per-collective overheads, inter-node bandwidth) and the other runs\n"
    "are predicted with it (five more simulations per case).\n"
    "Per set, also the signed mean error, and per group of plans (one model on one cluster) tau, whether\n"
    "hetsim's top plan is the measured top plan, and the measured cost of its pick.\n"
    "--check exits 1 when a set breaks its bounds (bounds in the set file) and prints which.\n"
    "--exact simulates every training run in full, whatever its size (by default each run gets the fidelity\n"
    "`hetsim run` chooses: exact while affordable, which every bundled set is).\n"
    "--timing prints each case's wall time on stderr. Bad input exits 2 naming the file and field, before\n"
    "anything is printed or written. --max-wall-seconds S stops every simulation and collective once S\n"
    "seconds have passed since the start (exit 2, nothing written)."};

// Every file the sets read, each once: the sets, and their cases' plans, models and clusters. No output
// may replace one of them.
std::vector<std::string> FilesRead(const std::vector<fidelity::LoadedValidationSet>& sets) {
  std::set<std::string> files, plans;
  for (const fidelity::LoadedValidationSet& set : sets) {
    files.insert(set.path);
    for (const v1::ValidationCase& c : set.set.cases()) {
      if (c.has_collective()) files.insert(c.collective().cluster());
      if (!c.has_training_run()) continue;
      files.insert(c.training_run().cluster());
      plans.insert(c.training_run().plan());
    }
  }
  for (const std::string& path : plans) {
    for (std::string& f : proto::PlanFilesRead(path)) files.insert(std::move(f));
  }
  return {files.begin(), files.end()};
}

struct Options {
  std::vector<std::string> files;
  std::string chart_path, json_path;
  bool check = false, timing = false, quiet = false, calibration = false, exact = false;
  double max_wall_seconds = 0;
};

int Fidelity(const Args& args) {
  po::options_description options("options");
  Options o;
  options.add_options()("chart", po::value(&o.chart_path)->value_name("C.svg"), "write the scatter chart (SVG)")(
      "json", po::value(&o.json_path)->value_name("R.json"), "write the results (FidelityReport)")(
      "check", "exit 1 when a set's bounds are not met")(
      "calibration", "also calibrate on k = 1, 2, 3 runs of each training set and predict the others")(
      "timing", "print each case's wall time on stderr")("quiet,q", "do not print the tables")(
      "exact", "simulate every training run in full, whatever its size")(
      "max-wall-seconds", po::value(&o.max_wall_seconds)->value_name("S"), "stop and exit 2 after S seconds")(
      "files", po::value(&o.files)->multitoken(), "validation sets");
  po::positional_options_description positional;
  positional.add("files", -1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kFidelityInfo, args, options, positional, &vm)) return *exit;
  if (auto exit = CheckRunLimitFlags(kFidelityInfo, 0, o.max_wall_seconds)) return *exit;
  // Every case's simulations and collectives check it (a 16,384-GPU all-reduce runs for minutes).
  const WallLimit wall_limit(o.max_wall_seconds);
  const WallLimitScope wall_scope(wall_limit);
  o.check = vm.count("check") > 0;
  o.timing = vm.count("timing") > 0;
  o.quiet = vm.count("quiet") > 0;
  o.calibration = vm.count("calibration") > 0;
  o.exact = vm.count("exact") > 0;
  if (!o.json_path.empty()) {
    if (absl::StatusOr<proto::FileFormat> f = proto::FileFormatFromPath(o.json_path); !f.ok()) {
      return ReportFailure(kFidelityInfo, f.status());
    }
  }
  absl::StatusOr<std::vector<fidelity::LoadedValidationSet>> loaded = fidelity::LoadValidationSets(o.files);
  if (!loaded.ok()) return ReportFailure(kFidelityInfo, loaded.status());
  const std::vector<fidelity::LoadedValidationSet>& sets = *loaded;
  // A chart has one pair of axes: refuse sets of different units before simulating anything.
  for (size_t i = 1; !o.chart_path.empty() && i < sets.size(); ++i) {
    if (sets[i].unit != sets.front().unit) {
      return ReportFailure(kFidelityInfo, absl::InvalidArgumentError(absl::StrFormat(
                                              "--chart: the cases measure different quantities (%s, %s); chart "
                                              "one kind of set at a time",
                                              sets.front().unit, sets[i].unit)));
    }
  }
  // The outputs are checked before the first simulation (a missing folder was found after minutes).
  proto::OutputFiles outputs(FilesRead(sets));  // the JSON and the chart, both or neither, never over an input
  for (const std::string* out : {&o.json_path, &o.chart_path}) {
    if (out->empty()) continue;
    if (absl::Status s = outputs.Check(*out); !s.ok()) return ReportFailure(kFidelityInfo, s);
  }
  if (!o.json_path.empty() && o.json_path == o.chart_path) {
    return UsageError(kFidelityInfo, absl::StrCat(o.json_path, ": named for two outputs (--json, --chart)"));
  }
  fidelity::CaseTimer timer;
  if (o.timing) {
    timer = [](const v1::ValidationCase& c, double seconds) {
      std::fprintf(stderr, "hetsim fidelity: %s: %.3f s\n", c.name().c_str(), seconds);
    };
  }
  absl::StatusOr<v1::FidelityReport> report = fidelity::PredictSets(sets, o.calibration, timer, o.exact);
  if (!report.ok()) return ReportFailure(kFidelityInfo, report.status());

  // Outputs are serialised before any is written, so a failure leaves none behind.
  std::string chart;
  if (!o.chart_path.empty()) {
    absl::StatusOr<std::string> svg = fidelity::FidelityChartSvg(*report);
    if (!svg.ok()) return ReportFailure(kFidelityInfo, svg.status());
    chart = *std::move(svg);
  }
  if (absl::Status s = outputs.AddMessage(o.json_path, *report); !s.ok()) return ReportFailure(kFidelityInfo, s);
  if (absl::Status s = outputs.Add(o.chart_path, chart); !s.ok()) return ReportFailure(kFidelityInfo, s);
  if (absl::Status s = outputs.Commit(); !s.ok()) return ReportFailure(kFidelityInfo, s);
  if (!o.quiet) std::fputs(fidelity::FormatFidelityTables(*report).c_str(), stdout);

  bool met = true;
  for (const v1::FidelitySet& set : report->sets()) {
    if (set.violations().empty()) continue;
    met = false;
    if (!o.check) continue;
    for (const std::string& v : set.violations()) {
      std::fprintf(stderr, "hetsim fidelity: %s: bounds not met: %s\n", set.file().c_str(), v.c_str());
    }
  }
  return o.check && !met ? kExitBoundsNotMet : kExitOk;
}

}  // namespace

int RunFidelity(const Args& args) {
  return RunGuarded(kFidelityInfo, [&] { return Fidelity(args); });
}

}  // namespace hetsim::cli
