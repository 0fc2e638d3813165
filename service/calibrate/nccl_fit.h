// The nccl-tests calibration source: fits the NcclFabric parameters (docs/network.md) of one island's
// node type from single-host logs and of the island's inter-node fabric from multi-host logs (intra
// first, so the inter fit sees the fitted NVLink), by least squares on the relative time residual
// (t_hetsim - t_measured) / t_measured of every row (out-of-place time), each row simulated with
// `hetsim collective`'s algorithm and protocol choice on the first hosts x GPUs of the island (the
// log's NCCL_ALGO when it names one algorithm hetsim has for the collective: Ring, Tree). A file of
// several runs gives a log per run; the fit's warnings name each run of such a file and each skipped.
//
// Before fitting: each log against the island (nccl_cluster_match.h), and every row against the
// island's links at 100% efficiency with no latency: a log faster than that (by more than 3%, above
// nccl-tests' noise) ran in-network reductions (NVLink SHARP, CollNet) its lines do not show, and is
// refused, never fitted as an efficiency above 1. A one-host all-reduce whose lines show NVLink SHARP
// (NcclLog::nvls) is fitted as NVLS, its node type given nvlink_sharp (docs/network.md). After: the fit's guards
// (nccl_fit_guards.h).
#ifndef HETSIM_SERVICE_CALIBRATE_NCCL_FIT_H_
#define HETSIM_SERVICE_CALIBRATE_NCCL_FIT_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "service/calibrate/nccl_fit_guards.h"
#include "service/calibrate/nccl_log.h"
#include "service/calibrate/source.h"

namespace hetsim::calibrate {

// The most rows of one log a fit simulates at each step (evenly spaced over the log, first and last
// kept); every row is still predicted once afterwards for the fit report and its MAPE. nccl-tests'
// default doubling from 8 B to 8 GiB is 31 rows, under it.
inline constexpr size_t kMaxFitRowsPerLog = 64;

struct NcclFitOptions {
  std::string island;  // empty: the first island
  double max_mape_percent = kDefaultMaxMapePercent;
  // Runs of the logs' files that were not read (ParseNcclLogRuns' `skipped`): warnings of the fit.
  std::vector<std::string> skipped_runs;
};

class NcclTestsSource : public CalibrationSource {
 public:
  NcclTestsSource(std::vector<NcclLog> logs, NcclFitOptions options)
      : logs_(std::move(logs)), options_(std::move(options)) {}
  absl::StatusOr<SourceFit> Fit(hetsim::v1::Cluster& cluster) override;

 private:
  std::vector<NcclLog> logs_;
  NcclFitOptions options_;
};

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_NCCL_FIT_H_
