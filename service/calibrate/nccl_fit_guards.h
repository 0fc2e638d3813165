// When a fit of NCCL parameters (nccl_fit.h) is too poor to write without the user's say-so
// (`hetsim calibrate --accept-poor-fit`), and the bounds the fit keeps the parameters in.
//
// - A parameter at the fit's bound: the least squares wanted it further, so the logs show something
//   the model does not have (other hardware than the cluster's, an algorithm hetsim does not model).
// - A latency no fabric has: a launch latency outside [1 us, 1 ms] (a kernel launch and NCCL's host
//   work alone take microseconds; a millisecond is a stalled proxy, not a fabric) or a step latency
//   outside [50 ns, 100 us] (below one NVLink hop and NCCL's flag polling; above TCP sockets' 20 us
//   preset fivefold): the fit absorbs into it what the model cannot explain otherwise.
// - A MAPE above the threshold, 15 % by default: the presets reproduce published nccl-tests tables
//   within 5 % at 1 GiB and hand-written DGX logs fit to ~5 %; real logs of healthy clusters fit to
//   ~5-12 % (docs/network.md, tests/calibrate_data/real/); above 15 % the calibrated cluster predicts
//   the logs worse than the presets' own error band, so it would mislead.
#ifndef HETSIM_SERVICE_CALIBRATE_NCCL_FIT_GUARDS_H_
#define HETSIM_SERVICE_CALIBRATE_NCCL_FIT_GUARDS_H_

#include <string>
#include <vector>

#include "service/calibrate/nccl_log.h"
#include "service/calibrate/source.h"

namespace hetsim::calibrate {

// The fit's bounds.
inline constexpr double kMinBandwidthEfficiency = 0.01;
inline constexpr double kMaxBandwidthEfficiency = 1.0;
inline constexpr double kMinFittedLatencyNs = 1;    // zero would mean "the preset"
inline constexpr double kMaxFittedLatencyNs = 1e9;  // the cluster check's limit (1 s)
// What a fabric can do.
inline constexpr double kMinLaunchLatencyNs = 1e3;
inline constexpr double kMaxLaunchLatencyNs = 1e6;
inline constexpr double kMinStepLatencyNs = 50;
inline constexpr double kMaxStepLatencyNs = 1e5;

inline constexpr double kDefaultMaxMapePercent = 15;

// One line per problem of the fitted NcclFabric parameters `fitted` (fields "...nccl.<name>") and of
// the fit's MAPE (percent) against `max_mape_percent`; empty for a good fit.
std::vector<std::string> NcclFitProblems(const std::vector<FittedParameter>& fitted, double mape_percent,
                                         double max_mape_percent);

// Where a log's time falls as its size grows, what no NCCL algorithm does (doubling the bytes never halves the
// time, whichever algorithm and protocol each size runs): one line per log naming its rows that take more than
// twice as long as a larger size of the same log, and that larger size; a poor fit's cause the fit cannot name
// (the Alps GH200 logs over Slingshot, boeschf/nccl-benchmark-on-alps-2025: 1 MiB in 889.6 us, 2 MiB in 162.2 us,
// docs/corpus.md). Empty when no row does.
std::vector<std::string> TimeFallingRows(const std::vector<const NcclLog*>& logs);

// Where a log's time stays flat as its size doubles from its smallest size up (within kFloorGrowth either way each
// time, over two rows or more) at kFloorOverPreset times or more what the cluster's presets predict there
// (`preset_seconds`: per row, logs in order): a floor no term of the model has (the transport's, e.g. a rendezvous
// protocol), which the fit absorbs into its latencies and so misses the larger sizes' bandwidth (CSCS's Sarus page, 2 x
// 1 GH200 over Slingshot with
// `--network=disable_rdzv_get`: 1 MiB in 339.6 us, 2 MiB in 355.5 us, docs/corpus.md). One line per log naming the
// rows; a poor fit's cause. A latency-bound log's small sizes are flat too, but near what the presets predict.
inline constexpr double kFloorGrowth = 0.10;
inline constexpr double kFloorOverPreset = 3;
std::vector<std::string> FloorRows(const std::vector<const NcclLog*>& logs, const std::vector<double>& preset_seconds);

// Runs of the same test on the same GPUs (and the same NCCL_ALGO) whose times at the largest size both have differ
// more than twofold: they ran under different conditions, which one set of NCCL parameters cannot fit (CSCS's NCCL
// page pastes an all-reduce over Slingshot with the CXI hook, 1916 us at 128 MiB, beside the same run without it,
// 43293 us). One line per such pair; a poor fit's cause.
std::vector<std::string> DisagreeingRuns(const std::vector<const NcclLog*>& logs);

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_NCCL_FIT_GUARDS_H_
