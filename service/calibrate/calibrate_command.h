// `hetsim calibrate` as a request and its response, for the command line and the API alike: which
// measurements to fit, the fit of each source in order on one cluster, the verdict on a poor fit and
// the calibrated cluster. The caller prints or returns the response; writing files is its own.
//
//   CalibrateRequest req{.cluster_path = "cluster.pbtxt", .logs = {"ar.txt"}};
//   auto loaded = LoadCalibration(req);       // checks the request, reads every input
//   auto fitted = FitCalibration(*std::move(loaded), req);
//   if (!fitted->refusal.ok()) ...           // a poor fit: write nothing
#ifndef HETSIM_SERVICE_CALIBRATE_CALIBRATE_COMMAND_H_
#define HETSIM_SERVICE_CALIBRATE_CALIBRATE_COMMAND_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/hetsim.pb.h"
#include "service/calibrate/nccl_fit_guards.h"
#include "service/calibrate/nccl_log.h"
#include "service/calibrate/source.h"

namespace hetsim::calibrate {

struct CalibrateRequest {
  std::string cluster_path;             // the cluster to calibrate (measured iterations' plans run on it)
  std::vector<std::string> logs;        // nccl-tests logs
  std::vector<std::string> gemms;       // GEMM timings, m,n,k,dtype,time_us
  std::vector<std::string> iterations;  // measured iterations, plan,time_ms
  std::string island;                   // the logs' island (empty: the first)
  std::string gpu_type;                 // the GEMMs' GPU type (empty: the first)
  double max_mape = kDefaultMaxMapePercent;
  bool accept_poor_fit = false;
  bool exact = false;  // every measured iteration simulated in full
  NcclLogShape log_shape;
  double max_wall_seconds = 0;  // Calibrate() installs it (0: no limit); the two steps run under the caller's
  // The name the calibrated cluster is checked under ("calibrated.pbtxt"; the API: "calibrated").
  std::string output_name = "calibrated";
};

// InvalidArgument for --log-ranks / --log-hosts that do not go together (a usage error on the command line).
absl::Status CheckLogShape(const NcclLogShape& shape);

// The cluster and the fit's sources, read and checked, before the (long) fit.
struct LoadedCalibration {
  hetsim::v1::Cluster cluster;
  std::vector<std::unique_ptr<CalibrationSource>> sources;
  // The cluster, the plans (and their models) the iteration files name, every log, GEMM and iteration file.
  std::vector<std::string> input_files;
};

// Checks the request (log shape, MAPE threshold, something to fit) and reads its files.
absl::StatusOr<LoadedCalibration> LoadCalibration(const CalibrateRequest& request);

struct CalibrateResponse {
  hetsim::v1::Cluster cluster;  // calibrated and checked (not when refused)
  std::vector<SourceFit> fits;  // in the sources' order
  // The fits' warnings, then a poor fit's problems as "poor fit: ..." when accepted; one line each.
  std::vector<std::string> warnings;
  // A poor fit not accepted: InvalidArgument listing its problems; nothing is to be written then.
  absl::Status refusal;
  std::string fit_report;   // FormatFitReport
  double mape_percent = 0;  // over every point
};

// Fits every source in order (under the request's wall limit) and judges the fit.
absl::StatusOr<CalibrateResponse> FitCalibration(LoadedCalibration loaded, const CalibrateRequest& request);

// LoadCalibration then FitCalibration.
absl::StatusOr<CalibrateResponse> Calibrate(const CalibrateRequest& request);

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_CALIBRATE_COMMAND_H_
