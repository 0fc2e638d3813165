#include "service/calibrate/calibrate_command.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/validate_cluster.h"
#include "service/calibrate/gemm_source.h"
#include "service/calibrate/iteration_source.h"
#include "service/calibrate/nccl_fit.h"
#include "service/calibrate/report.h"

namespace hetsim::calibrate {
namespace {

using Sources = std::vector<std::unique_ptr<CalibrationSource>>;

absl::Status CheckRequest(const CalibrateRequest& r) {
  HETSIM_RETURN_IF_ERROR(CheckLogShape(r.log_shape));
  if (!(r.max_mape > 0) || !std::isfinite(r.max_mape)) {
    return absl::InvalidArgumentError(absl::StrFormat("--max-mape: %g is not a positive percentage", r.max_mape));
  }
  if (r.logs.empty() && r.gemms.empty() && r.iterations.empty()) {
    return absl::InvalidArgumentError("nothing to fit: give nccl-tests logs, --gemm CSV and/or --iterations CSV");
  }
  return absl::OkStatus();
}

// The fit's sources in the order they fit: every run of the nccl-tests logs, the GEMM timings, then the
// measured iterations (the overheads are what remains once the kernels and the collectives are calibrated).
// `plan_files`: gains the plans the iteration files name and their models (`--out` over one replaced a
// measured plan with the calibrated cluster).
absl::StatusOr<Sources> LoadSources(const CalibrateRequest& r, std::vector<std::string>* plan_files) {
  Sources sources;
  std::vector<NcclLog> parsed;
  std::vector<std::string> skipped_runs;
  for (const std::string& path : r.logs) {
    HETSIM_ASSIGN_OR_RETURN(std::string text, proto::ReadInputFile(path, proto::InputKind::kText));
    HETSIM_ASSIGN_OR_RETURN(NcclLogRuns runs, ParseNcclLogRuns(text, path, r.log_shape));
    for (NcclLog& log : runs.runs) parsed.push_back(std::move(log));
    for (std::string& why : runs.skipped) skipped_runs.push_back(std::move(why));
  }
  if (!parsed.empty())
    sources.push_back(std::make_unique<NcclTestsSource>(std::move(parsed),
                                                        NcclFitOptions{r.island, r.max_mape, std::move(skipped_runs)}));
  for (const std::string& path : r.gemms) {
    HETSIM_ASSIGN_OR_RETURN(std::string text, proto::ReadInputFile(path, proto::InputKind::kText));
    HETSIM_ASSIGN_OR_RETURN(std::vector<GemmTiming> timings, ParseGemmCsv(text, path));
    sources.push_back(std::make_unique<GemmSource>(std::move(timings), path, r.gpu_type, r.max_mape));
  }
  for (const std::string& path : r.iterations) {
    HETSIM_ASSIGN_OR_RETURN(std::string text, proto::ReadInputFile(path, proto::InputKind::kText));
    HETSIM_ASSIGN_OR_RETURN(std::vector<MeasuredIteration> runs, ParseIterationCsv(text, path));
    for (const MeasuredIteration& run : runs) {
      for (std::string& f : proto::PlanFilesRead(run.plan_path)) plan_files->push_back(std::move(f));
    }
    sources.push_back(std::make_unique<IterationSource>(std::move(runs), path, r.cluster_path, r.exact));
  }
  return sources;
}

// The fits' warnings; a poor fit is refused (the user acts on the measurements or the cluster) unless
// accepted, then its problems are warnings too.
void JudgeFits(const std::vector<SourceFit>& fits, bool accept, CalibrateResponse* out) {
  std::vector<std::string> problems;
  for (const SourceFit& f : fits) {
    out->warnings.insert(out->warnings.end(), f.warnings.begin(), f.warnings.end());
    problems.insert(problems.end(), f.problems.begin(), f.problems.end());
  }
  if (problems.empty()) return;
  if (accept) {
    for (const std::string& p : problems) out->warnings.push_back(absl::StrCat("poor fit: ", p));
    return;
  }
  out->refusal = absl::InvalidArgumentError(
      absl::StrCat("poor fit, nothing written (--accept-poor-fit writes it):\n", absl::StrJoin(problems, "\n")));
}

}  // namespace

absl::Status CheckLogShape(const NcclLogShape& shape) {
  if (shape.ranks < 0 || shape.hosts < 0 || (shape.ranks == 0) != (shape.hosts == 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--log-ranks %d --log-hosts %d: give both, each at least 1", shape.ranks, shape.hosts));
  }
  return absl::OkStatus();
}

absl::StatusOr<LoadedCalibration> LoadCalibration(const CalibrateRequest& request) {
  HETSIM_RETURN_IF_ERROR(CheckRequest(request));
  LoadedCalibration loaded;
  HETSIM_ASSIGN_OR_RETURN(loaded.cluster, proto::LoadCluster(request.cluster_path));
  loaded.input_files = {request.cluster_path};
  HETSIM_ASSIGN_OR_RETURN(loaded.sources, LoadSources(request, &loaded.input_files));
  for (const auto* list : {&request.logs, &request.gemms, &request.iterations}) {
    loaded.input_files.insert(loaded.input_files.end(), list->begin(), list->end());
  }
  return loaded;
}

absl::StatusOr<CalibrateResponse> FitCalibration(LoadedCalibration loaded, const CalibrateRequest& request) {
  CalibrateResponse out;
  for (auto& source : loaded.sources) {
    HETSIM_ASSIGN_OR_RETURN(SourceFit fit, source->Fit(loaded.cluster));
    out.fits.push_back(std::move(fit));
  }
  JudgeFits(out.fits, request.accept_poor_fit, &out);
  if (!out.refusal.ok()) return out;
  HETSIM_RETURN_IF_ERROR(proto::ValidateCluster(loaded.cluster, request.output_name));
  out.cluster = std::move(loaded.cluster);
  out.fit_report = FormatFitReport(out.fits);
  out.mape_percent = MeanAbsolutePercentError(out.fits);
  return out;
}

absl::StatusOr<CalibrateResponse> Calibrate(const CalibrateRequest& request) {
  const WallLimit wall_limit(request.max_wall_seconds);  // every fit's simulations check it
  const WallLimitScope wall_scope(wall_limit);
  HETSIM_ASSIGN_OR_RETURN(LoadedCalibration loaded, LoadCalibration(request));
  return FitCalibration(std::move(loaded), request);
}

}  // namespace hetsim::calibrate
