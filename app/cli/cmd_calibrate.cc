// `hetsim calibrate LOG... --cluster C --out CALIBRATED [--fit-report FILE] [--island NAME]`: fits the
// cluster's NCCL fabric parameters to nccl-tests logs and writes the calibrated cluster and a fit
// report. Each input kind is a calibrate::CalibrationSource (service/calibrate/source.h).
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "app/cli/cli.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "proto/io.h"
#include "proto/output_files.h"
#include "proto/validate_cluster.h"
#include "service/calibrate/gemm_source.h"
#include "service/calibrate/iteration_source.h"
#include "service/calibrate/nccl_fit.h"
#include "service/calibrate/nccl_fit_guards.h"
#include "service/calibrate/nccl_log.h"
#include "service/calibrate/report.h"

namespace hetsim::cli {
namespace {

const CommandInfo kCalibrateInfo = {
    "calibrate",
    "hetsim calibrate [LOG...] [--gemm CSV [--gpu-type NAME]] [--iterations CSV] --cluster CLUSTER --out CALIBRATED\n"
    "                 [--fit-report FILE] [--island NAME] [--max-mape PCT] [--accept-poor-fit] [--max-wall-seconds S]\n"
    "                 [--log-ranks N --log-hosts H] [--exact]",
    "Fits the NCCL parameters of CLUSTER (docs/network.md: bandwidth efficiency, launch latency, LL / LL128 /\n"
    "Simple step latencies) to nccl-tests logs as pasted (all_reduce_perf, all_gather_perf, reduce_scatter_perf,\n"
    "sendrecv_perf, alltoall_perf, broadcast_perf; one run per file, with its \"#  Rank\" lines, or\n"
    "--log-ranks N --log-hosts H for a table pasted without them (the island's GPU is then assumed);\n"
    "markdown, the command line, NCCL's INFO lines and launcher prefixes around it are skipped): single-host\n"
    "logs fit the island's node type, multi-host logs its inter-node fabric, by least squares on the relative time "
    "residual\n"
    "of every row (out-of-place time). Each log runs on the first hosts x GPUs of the island (--island,\n"
    "default the first). Writes CALIBRATED (the cluster with the fitted nccl fields; format from the extension) and,\n"
    "with --fit-report, the parameters and every point's residual with the MAPE. --gemm CSV (columns m, n,\n"
    "k, dtype, time_us) fits the GPU type's max_efficiency, tile_overhead_k and kernel_launch_us\n"
    "(docs/hardware.md); --iterations CSV (columns plan, time_ms; plans relative to the CSV) moves every\n"
    "GPU type's GEMM efficiency and pass and iteration overheads towards measured iteration times, as far\n"
    "as the runs agree (the presets are the prior; docs/validation.md), each run simulated at the fidelity\n"
    "`hetsim run` chooses (--exact: in full, whatever its size). A malformed log, one of another GPU or more\n"
    "hosts than the island has, or one showing NVLink SHARP / CollNet exits 2 naming the file and line (a\n"
    "one-host all-reduce, all-gather or reduce-scatter showing NVLink SHARP is fitted as --algo nvls, its\n"
    "node type given nvlink_sharp and its own nvls_bandwidth_efficiency; a multi-host all-reduce showing\n"
    "CollNet as --algo collnet, its island given infiniband_sharp); so\n"
    "does a poor fit (a parameter at its bound or outside what a fabric does, MAPE above --max-mape, default\n"
    "15) unless --accept-poor-fit; nothing is written then. Warnings go to stderr and the fit report."};

// Prints the fits' warnings on stderr. A poor fit is refused (exit 2, like any input that does not
// calibrate the cluster: the user acts on the logs or the cluster) unless `accept`, then its problems
// are warnings too.
absl::Status CheckFitQuality(const std::vector<calibrate::SourceFit>& fits, bool accept) {
  std::vector<std::string> problems;
  for (const calibrate::SourceFit& f : fits) {
    for (const std::string& w : f.warnings) std::fprintf(stderr, "hetsim calibrate: warning: %s\n", w.c_str());
    problems.insert(problems.end(), f.problems.begin(), f.problems.end());
  }
  if (problems.empty()) return absl::OkStatus();
  if (accept) {
    for (const std::string& p : problems) std::fprintf(stderr, "hetsim calibrate: warning: poor fit: %s\n", p.c_str());
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("poor fit, nothing written (--accept-poor-fit writes it):\n", absl::StrJoin(problems, "\n")));
}

// --log-ranks and --log-hosts go together, and count something.
absl::Status CheckLogShape(const calibrate::NcclLogShape& shape) {
  if (shape.ranks < 0 || shape.hosts < 0 || (shape.ranks == 0) != (shape.hosts == 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--log-ranks %d --log-hosts %d: give both, each at least 1", shape.ranks, shape.hosts));
  }
  return absl::OkStatus();
}

// Every fitted parameter, before -> after, on stdout.
void PrintFittedParameters(const std::vector<calibrate::SourceFit>& fits) {
  for (const calibrate::SourceFit& f : fits) {
    for (const calibrate::FittedParameter& p : f.parameters) {
      std::printf("  %s: %.6g -> %.6g\n", p.field.c_str(), p.before, p.after);
    }
  }
}

using Sources = std::vector<std::unique_ptr<calibrate::CalibrationSource>>;

// What the fit reads, as the flags name it.
struct FitFiles {
  const std::vector<std::string>& logs;
  const std::vector<std::string>& gemms;
  const std::vector<std::string>& iterations;
  const std::string& island;
  const std::string& gpu_type;
  const std::string& cluster_path;
  double max_mape;
  bool exact;
  calibrate::NcclLogShape log_shape;
};

// The fit's sources in the order they fit: every run of the nccl-tests logs, the GEMM timings, then the
// measured iterations (the overheads are what remains once the kernels and the collectives are calibrated).
absl::StatusOr<Sources> LoadSources(const FitFiles& f) {
  Sources sources;
  std::vector<calibrate::NcclLog> parsed;
  std::vector<std::string> skipped_runs;
  for (const std::string& path : f.logs) {
    HETSIM_ASSIGN_OR_RETURN(std::string text, proto::ReadInputFile(path, proto::InputKind::kText));
    HETSIM_ASSIGN_OR_RETURN(calibrate::NcclLogRuns runs, calibrate::ParseNcclLogRuns(text, path, f.log_shape));
    for (calibrate::NcclLog& log : runs.runs) parsed.push_back(std::move(log));
    for (std::string& why : runs.skipped) skipped_runs.push_back(std::move(why));
  }
  if (!parsed.empty())
    sources.push_back(std::make_unique<calibrate::NcclTestsSource>(
        std::move(parsed), calibrate::NcclFitOptions{f.island, f.max_mape, std::move(skipped_runs)}));
  for (const std::string& path : f.gemms) {
    HETSIM_ASSIGN_OR_RETURN(std::string text, proto::ReadInputFile(path, proto::InputKind::kText));
    HETSIM_ASSIGN_OR_RETURN(std::vector<calibrate::GemmTiming> timings, calibrate::ParseGemmCsv(text, path));
    sources.push_back(std::make_unique<calibrate::GemmSource>(std::move(timings), path, f.gpu_type, f.max_mape));
  }
  for (const std::string& path : f.iterations) {
    HETSIM_ASSIGN_OR_RETURN(std::string text, proto::ReadInputFile(path, proto::InputKind::kText));
    HETSIM_ASSIGN_OR_RETURN(std::vector<calibrate::MeasuredIteration> runs, calibrate::ParseIterationCsv(text, path));
    sources.push_back(std::make_unique<calibrate::IterationSource>(std::move(runs), path, f.cluster_path, f.exact));
  }
  return sources;
}

int Calibrate(const Args& args) {
  po::options_description options("options");
  std::string cluster_path, out_path, report_path, island;
  std::vector<std::string> logs, gemms, iterations;
  std::string gpu_type;
  double max_mape = calibrate::kDefaultMaxMapePercent, max_wall_seconds = 0;
  bool accept_poor_fit = false, exact = false;
  calibrate::NcclLogShape log_shape;
  options.add_options()("cluster,c", po::value(&cluster_path)->required()->value_name("CLUSTER"), "cluster file")(
      "out,o", po::value(&out_path)->required()->value_name("CALIBRATED"), "calibrated cluster to write")(
      "fit-report", po::value(&report_path)->value_name("FILE"), "fit report to write")(
      "island", po::value(&island)->value_name("NAME"), "island the logs ran on (default: the first)")(
      "gemm", po::value(&gemms)->value_name("CSV"), "GEMM timings m,n,k,dtype,time_us (repeatable)")(
      "iterations", po::value(&iterations)->value_name("CSV"), "measured iterations plan,time_ms (repeatable)")(
      "gpu-type", po::value(&gpu_type)->value_name("NAME"), "GPU type the GEMMs ran on (default: the first)")(
      "log", po::value(&logs)->value_name("LOG"), "nccl-tests output log (repeatable)")(
      "max-mape", po::value(&max_mape)->value_name("PCT"),
      "largest MAPE of the nccl-tests and GEMM fits, percent (default 15)")(
      "accept-poor-fit", po::bool_switch(&accept_poor_fit), "write a poor fit anyway, its problems as warnings")(
      "log-ranks", po::value(&log_shape.ranks)->value_name("N"), "GPUs of logs pasted without their Rank lines")(
      "log-hosts", po::value(&log_shape.hosts)->value_name("H"), "hosts of logs pasted without their Rank lines")(
      "max-wall-seconds", po::value(&max_wall_seconds)->value_name("S"), "stop and exit 2 after S seconds (0 = none)")(
      "exact", po::bool_switch(&exact), "simulate every --iterations run in full, whatever its size");
  po::positional_options_description positional;
  positional.add("log", -1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kCalibrateInfo, args, options, positional, &vm)) return *exit;
  if (auto exit = CheckRunLimitFlags(kCalibrateInfo, 0, max_wall_seconds)) return *exit;
  const WallLimit wall_limit(max_wall_seconds);  // every fit's simulations check it
  const WallLimitScope wall_scope(wall_limit);
  if (absl::StatusOr<proto::FileFormat> f = proto::FileFormatFromPath(out_path); !f.ok()) {
    return ReportFailure(kCalibrateInfo, f.status());
  }
  if (absl::Status s = CheckLogShape(log_shape); !s.ok()) return UsageError(kCalibrateInfo, s.message());

  if (!(max_mape > 0) || !std::isfinite(max_mape)) {
    return ReportFailure(kCalibrateInfo, absl::InvalidArgumentError(
                                             absl::StrFormat("--max-mape: %g is not a positive percentage", max_mape)));
  }
  if (logs.empty() && gemms.empty() && iterations.empty()) {
    return ReportFailure(
        kCalibrateInfo,
        absl::InvalidArgumentError("nothing to fit: give nccl-tests logs, --gemm CSV and/or --iterations CSV"));
  }
  absl::StatusOr<v1::Cluster> cluster = proto::LoadCluster(cluster_path);
  if (!cluster.ok()) return ReportFailure(kCalibrateInfo, cluster.status());
  absl::StatusOr<Sources> sources =
      LoadSources({logs, gemms, iterations, island, gpu_type, cluster_path, max_mape, exact, log_shape});
  if (!sources.ok()) return ReportFailure(kCalibrateInfo, sources.status());
  std::vector<std::string> inputs = {cluster_path};
  for (const auto* list : {&logs, &gemms, &iterations}) inputs.insert(inputs.end(), list->begin(), list->end());
  proto::OutputFiles outputs(std::move(inputs));  // the cluster and the fit report, both or neither
  // Checked before the fit (seconds to minutes): an output over an input or in a missing folder.
  for (const std::string* path : {&out_path, &report_path}) {
    if (absl::Status s = path->empty() ? absl::OkStatus() : outputs.Check(*path); !s.ok()) {
      return ReportFailure(kCalibrateInfo, s);
    }
  }
  std::vector<calibrate::SourceFit> fits;
  for (auto& source : *sources) {
    absl::StatusOr<calibrate::SourceFit> fit = source->Fit(*cluster);
    if (!fit.ok()) return ReportFailure(kCalibrateInfo, fit.status());
    fits.push_back(*std::move(fit));
  }
  if (absl::Status s = CheckFitQuality(fits, accept_poor_fit); !s.ok()) return ReportFailure(kCalibrateInfo, s);
  if (absl::Status s = proto::ValidateCluster(*cluster, out_path); !s.ok()) return ReportFailure(kCalibrateInfo, s);
  const std::string report = calibrate::FormatFitReport(fits);
  if (absl::Status s = outputs.Add(report_path, report); !s.ok()) return ReportFailure(kCalibrateInfo, s);
  if (absl::Status s = outputs.AddMessage(out_path, *cluster); !s.ok()) return ReportFailure(kCalibrateInfo, s);
  if (absl::Status s = outputs.Commit(); !s.ok()) return ReportFailure(kCalibrateInfo, s);
  std::printf("calibrated %s -> %s: MAPE %.2f %% over %zu logs, %zu GEMM and %zu iteration files\n",
              cluster_path.c_str(), out_path.c_str(), calibrate::MeanAbsolutePercentError(fits), logs.size(),
              gemms.size(), iterations.size());
  PrintFittedParameters(fits);
  return kExitOk;
}

}  // namespace

int RunCalibrate(const Args& args) {
  return RunGuarded(kCalibrateInfo, [&] { return Calibrate(args); });
}

}  // namespace hetsim::cli
