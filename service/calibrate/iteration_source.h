// `hetsim calibrate --iterations CSV`: measured iteration times of real runs fit the framework
// overheads of the kernel model (ComputeEfficiency.pass_overhead_us and iteration_overhead_ms, on every
// GPU type of the cluster: the framework is the cluster's). The CSV lists the runs:
//
//   plan,time_ms
//   runs/gpt-7b-tp2.pbtxt,5321.0
//
// (plan paths relative to the CSV's folder, every plan on the calibrated cluster). Each run is
// simulated without the two overheads (t0) and with a 1 ms pass overhead (t1): the iteration grows by
// a x (t1 - t0) / 1 ms with pass overhead a, and by b with iteration overhead b, so the measured times
// fit t0 + a (t1 - t0) / 1 ms + b by least squares on relative residuals, with a, b >= 0. The runs are
// simulated through the driver (driver::SimulateReport), as `hetsim run` simulates them.
#ifndef HETSIM_SERVICE_CALIBRATE_ITERATION_SOURCE_H_
#define HETSIM_SERVICE_CALIBRATE_ITERATION_SOURCE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "service/calibrate/source.h"

namespace hetsim::calibrate {

struct MeasuredIteration {
  std::string plan_path;  // resolved against the CSV's folder
  double seconds = 0;
  int line = 0;
};

// InvalidArgument naming the file and line for a missing column, an empty plan or a bad time.
absl::StatusOr<std::vector<MeasuredIteration>> ParseIterationCsv(absl::string_view text, absl::string_view file);

class IterationSource : public calibrate::CalibrationSource {
 public:
  // `cluster_path`: the cluster file being calibrated (the plans are checked against it).
  IterationSource(std::vector<MeasuredIteration> runs, std::string file, std::string cluster_path)
      : runs_(std::move(runs)), file_(std::move(file)), cluster_path_(std::move(cluster_path)) {}
  absl::StatusOr<calibrate::SourceFit> Fit(hetsim::v1::Cluster& cluster) override;

 private:
  std::vector<MeasuredIteration> runs_;
  std::string file_;
  std::string cluster_path_;
};

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_ITERATION_SOURCE_H_
