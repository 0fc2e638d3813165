// What `hetsim calibrate` is built from: each input kind (nccl-tests logs here; GEMM timings and
// measured iterations can be added the same way) is a CalibrationSource that fits its own parameters
// of the cluster and reports its measured points with the fitted predictions. The command runs the
// sources in order on one cluster, so a later source sees the parameters an earlier one fitted.
#ifndef HETSIM_SERVICE_CALIBRATE_SOURCE_H_
#define HETSIM_SERVICE_CALIBRATE_SOURCE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/hetsim.pb.h"

namespace hetsim::calibrate {

// One measurement and the calibrated cluster's prediction of it.
struct CalibrationPoint {
  std::string where;     // "logs/ar.txt:42"
  std::string what;      // "all-reduce 1048576 B on 16 GPUs (2 hosts)"
  double measured = 0;   // seconds
  double predicted = 0;  // seconds
};

// A fitted parameter: its field path in the cluster and its value before and after.
struct FittedParameter {
  std::string field;  // "node_types[0].nccl.bandwidth_efficiency"
  double before = 0;
  double after = 0;
};

struct SourceFit {
  std::vector<CalibrationPoint> points;
  std::vector<FittedParameter> parameters;
  // Worth knowing, the fit stands: printed on stderr and in the fit report.
  std::vector<std::string> warnings;
  // A poor fit (a parameter at its bound, one no hardware has, a MAPE above the threshold): the command
  // writes nothing unless told to accept it (--accept-poor-fit), then reports them as warnings do.
  std::vector<std::string> problems;
};

class CalibrationSource {
 public:
  virtual ~CalibrationSource() = default;
  // Fits this source's parameters into `cluster` (which it may only change in its own fields).
  // InvalidArgument naming the input file and line when a measurement does not fit the cluster.
  virtual absl::StatusOr<SourceFit> Fit(hetsim::v1::Cluster& cluster) = 0;
};

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_SOURCE_H_
