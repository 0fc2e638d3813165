// The nccl-tests calibration source: fits the NcclFabric parameters (docs/network.md) of one island's
// node type from single-host logs and of the island's inter-node fabric from multi-host logs (intra
// first, so the inter fit sees the fitted NVLink), by least squares on the relative time residual
// (t_hetsim - t_measured) / t_measured of every row (out-of-place time), each row simulated with
// `hetsim collective`'s algorithm and protocol choice on the first hosts x GPUs of the island.
#ifndef HETSIM_SERVICE_CALIBRATE_NCCL_FIT_H_
#define HETSIM_SERVICE_CALIBRATE_NCCL_FIT_H_

#include <string>
#include <vector>

#include "service/calibrate/nccl_log.h"
#include "service/calibrate/source.h"

namespace hetsim::calibrate {

class NcclTestsSource : public CalibrationSource {
 public:
  NcclTestsSource(std::vector<NcclLog> logs, std::string island) : logs_(std::move(logs)), island_(std::move(island)) {}
  absl::StatusOr<SourceFit> Fit(hetsim::v1::Cluster& cluster) override;

 private:
  std::vector<NcclLog> logs_;
  std::string island_;  // empty: the first island
};

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_NCCL_FIT_H_
