// `hetsim calibrate --iterations CSV`: measured iteration times of real runs calibrate the values a
// few runs can pin down, on every GPU type of the cluster (the framework is the cluster's): the GEMM
// efficiency (max_efficiency), the per-iteration and the per-pass overhead, the inter-node links'
// bandwidth, the memory-bound kernels' HBM efficiency and every collective's fixed cost
// (overhead_fit.h), those the runs' leave-one-out error chooses (ChooseAndFit). The CSV
// lists the runs:
//
//   plan,time_ms
//   runs/gpt-7b-tp2.pbtxt,5321.0
//
// (plan paths relative to the CSV's folder, every plan on the calibrated cluster). Each run is
// simulated six times through the driver, as `hetsim run` simulates it (overhead_probe.h), and the
// values fitted with the presets as prior (overhead_fit.h): a few runs move them as far as the runs
// agree. A value pinned at its bound, or a fit that explains little, is a problem (--accept-poor-fit).
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
  // `cluster_path`: the cluster file being calibrated (the plans are checked against it). `exact`:
  // every run simulated exactly (`--exact`), else at the fidelity `hetsim run` chooses.
  IterationSource(std::vector<MeasuredIteration> runs, std::string file, std::string cluster_path, bool exact = false)
      : runs_(std::move(runs)), file_(std::move(file)), cluster_path_(std::move(cluster_path)), exact_(exact) {}
  absl::StatusOr<calibrate::SourceFit> Fit(hetsim::v1::Cluster& cluster) override;

 private:
  std::vector<MeasuredIteration> runs_;
  std::string file_;
  std::string cluster_path_;
  bool exact_ = false;
};

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_ITERATION_SOURCE_H_
