// `hetsim calibrate --gemm CSV`: GEMM timings fit one GPU type's kernel-model parameters
// (efficiency.max_efficiency, tile_overhead_k, kernel_launch_us; service/calibrate/gemm_fit.h).
#ifndef HETSIM_SERVICE_CALIBRATE_GEMM_SOURCE_H_
#define HETSIM_SERVICE_CALIBRATE_GEMM_SOURCE_H_

#include <string>
#include <vector>

#include "service/calibrate/gemm_fit.h"
#include "service/calibrate/nccl_fit_guards.h"
#include "service/calibrate/source.h"

namespace hetsim::calibrate {

class GemmSource : public CalibrationSource {
 public:
  // `gpu_type`: the GpuType.name the timings were measured on ("" = the cluster's first).
  // A fit whose MAPE is above `max_mape_percent`, or whose efficiency ends at a bound, is poor.
  GemmSource(std::vector<GemmTiming> timings, std::string file, std::string gpu_type,
             double max_mape_percent = kDefaultMaxMapePercent)
      : timings_(std::move(timings)),
        file_(std::move(file)),
        gpu_type_(std::move(gpu_type)),
        max_mape_percent_(max_mape_percent) {}
  absl::StatusOr<SourceFit> Fit(hetsim::v1::Cluster& cluster) override;

 private:
  std::vector<GemmTiming> timings_;
  std::string file_;
  std::string gpu_type_;
  double max_mape_percent_;
};

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_GEMM_SOURCE_H_
