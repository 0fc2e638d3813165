#include "service/calibrate/nccl_fit_guards.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "base/check.h"
#include "sim/collectives/collective.h"

namespace hetsim::calibrate {
namespace {

// The fit's bounds and the range a fabric can have, of the parameter `field` names.
struct Ranges {
  double min, max;                      // the fit's bounds
  double plausible_min, plausible_max;  // what a fabric does
  const char* unit;
};

Ranges RangesOf(absl::string_view field) {
  // Fitted as the rings' efficiency x NCCL's NVLS share (nccl_fit.cc, FitNvlsEfficiency).
  if (absl::EndsWith(field, "nvls_bandwidth_efficiency")) {
    constexpr double kLow = kMinBandwidthEfficiency * collectives::kNvlsRingShare;
    constexpr double kHigh = kMaxBandwidthEfficiency * collectives::kNvlsRingShare;
    return {kLow, kHigh, kLow, kHigh, ""};
  }
  if (absl::EndsWith(field, "bandwidth_efficiency")) {
    return {kMinBandwidthEfficiency, kMaxBandwidthEfficiency, kMinBandwidthEfficiency, kMaxBandwidthEfficiency, ""};
  }
  if (absl::EndsWith(field, "launch_latency_ns")) {
    return {kMinFittedLatencyNs, kMaxFittedLatencyNs, kMinLaunchLatencyNs, kMaxLaunchLatencyNs, " ns"};
  }
  return {kMinFittedLatencyNs, kMaxFittedLatencyNs, kMinStepLatencyNs, kMaxStepLatencyNs, " ns"};
}

bool AtBound(double value, double bound) { return std::abs(value - bound) <= 1e-6 * std::max(1.0, std::abs(bound)); }

}  // namespace

std::vector<std::string> NcclFitProblems(const std::vector<FittedParameter>& fitted, double mape_percent,
                                         double max_mape_percent) {
  std::vector<std::string> problems;
  for (const FittedParameter& p : fitted) {
    const Ranges r = RangesOf(p.field);
    if (AtBound(p.after, r.min) || AtBound(p.after, r.max)) {
      problems.push_back(absl::StrFormat(
          "%s = %g%s is at the fit's bound [%g, %g]: the logs show what the model cannot (other hardware than the "
          "cluster's, an algorithm hetsim does not model)",
          p.field, p.after, r.unit, r.min, r.max));
    } else if (p.after < r.plausible_min || p.after > r.plausible_max) {
      problems.push_back(absl::StrFormat(
          "%s = %g%s is outside what a fabric does [%g, %g]%s: the fit absorbs what the model cannot explain", p.field,
          p.after, r.unit, r.plausible_min, r.plausible_max, r.unit));
    }
  }
  if (mape_percent > max_mape_percent) {
    problems.push_back(
        absl::StrFormat("MAPE %.2f %% is above %g %% (--max-mape): the calibrated cluster does not reproduce the logs",
                        mape_percent, max_mape_percent));
  }
  return problems;
}

std::vector<std::string> TimeFallingRows(const std::vector<const NcclLog*>& logs) {
  std::vector<std::string> problems;
  for (const NcclLog* log : logs) {
    // The fastest larger row after each row, from the largest down.
    const NcclRow* fastest_after = nullptr;
    const NcclRow* first = nullptr;
    const NcclRow* last = nullptr;
    const NcclRow* witness = nullptr;
    for (auto it = log->rows.rbegin(); it != log->rows.rend(); ++it) {
      if (fastest_after != nullptr && it->bytes < fastest_after->bytes && it->time_us > 2 * fastest_after->time_us) {
        first = &*it;
        if (last == nullptr) std::tie(last, witness) = std::pair(&*it, fastest_after);
      }
      if (fastest_after == nullptr || it->time_us < fastest_after->time_us) fastest_after = &*it;
    }
    if (first == nullptr) continue;
    problems.push_back(absl::StrFormat(
        "%s:%d-%d: %d to %d B take up to %g us, more than twice %d B's %g us (line %d): times that fall as the size "
        "grows are no NCCL algorithm's (the network transport's, e.g. its protocol for mid-size messages); fit the "
        "log without those rows",
        log->file, first->line, last->line, first->bytes, last->bytes, std::max(first->time_us, last->time_us),
        witness->bytes, witness->time_us, witness->line));
  }
  return problems;
}

std::vector<std::string> FloorRows(const std::vector<const NcclLog*>& logs, const std::vector<double>& preset_seconds) {
  std::vector<std::string> problems;
  size_t k = 0;  // the first row of `log` in preset_seconds
  for (const NcclLog* log : logs) {
    const size_t n = log->rows.size();
    HETSIM_CHECK(k + n <= preset_seconds.size(), "a preset time for each row of the logs");
    // The flat rows from the smallest size up: none of the log is faster, a floor (a plateau between faster smaller
    // and larger sizes is the transport's mid-size protocol, not this).
    size_t end = 0;
    while (end + 1 < n && log->rows[end + 1].bytes >= 2 * log->rows[end].bytes &&
           log->rows[end + 1].time_us < (1 + kFloorGrowth) * log->rows[end].time_us &&
           log->rows[end + 1].time_us * (1 + kFloorGrowth) > log->rows[end].time_us) {
      ++end;
    }
    ++end;
    // Far above the presets at the run's largest size, where the presets predict the most.
    if (end < 2 || log->rows[0].time_us * 1e-6 < kFloorOverPreset * preset_seconds[k + end - 1]) end = 0;
    if (end != 0) {
      const NcclRow& lo = log->rows[0];
      const NcclRow& hi = log->rows[end - 1];
      const double preset_us = preset_seconds[k + end - 1] * 1e6;
      // Where a row takes twice the floor or more, the bandwidth's term outweighs it: the rows to fit on.
      size_t above = end;
      while (above < n && log->rows[above].time_us < 2 * lo.time_us) ++above;
      std::string remedy = "the log has no row twice as slow as the floor: calibrate on a log of larger sizes";
      if (above < n) {
        remedy = absl::StrFormat("fit the log on its rows twice as slow as the floor or more, from %d B (line %d)",
                                 log->rows[above].bytes, log->rows[above].line);
      }
      problems.push_back(absl::StrFormat(
          "%s:%d-%d: %d to %d B take %g to %g us, within %g %% as the size doubles: a floor %.1f times the %.1f us the "
          "cluster's presets predict at %d B, which no term of the model has (the network transport's, e.g. its "
          "rendezvous protocol) and the fit absorbs into its latencies; %s, or write this fit with --accept-poor-fit",
          log->file, lo.line, hi.line, lo.bytes, hi.bytes, lo.time_us, hi.time_us, kFloorGrowth * 100,
          lo.time_us / preset_us, preset_us, hi.bytes, remedy));
    }
    k += n;
  }
  return problems;
}

std::vector<std::string> DisagreeingRuns(const std::vector<const NcclLog*>& logs) {
  std::vector<std::string> problems;
  for (size_t i = 0; i < logs.size(); ++i) {
    for (size_t j = i + 1; j < logs.size(); ++j) {
      const NcclLog& a = *logs[i];
      const NcclLog& b = *logs[j];
      if (a.op != b.op || a.ranks != b.ranks || a.hosts != b.hosts || a.algorithm != b.algorithm || a.nvls != b.nvls ||
          a.collnet != b.collnet || a.nvls_tree != b.nvls_tree || a.collnet_chain != b.collnet_chain) {
        continue;
      }
      // The largest size both runs have: bandwidth-bound, where a run's noise is smallest.
      const NcclRow* ra = nullptr;
      const NcclRow* rb = nullptr;
      for (const NcclRow& x : a.rows) {
        for (const NcclRow& y : b.rows) {
          if (x.bytes == y.bytes && (ra == nullptr || x.bytes > ra->bytes)) std::tie(ra, rb) = std::pair(&x, &y);
        }
      }
      if (ra == nullptr || ra->time_us <= 0 || rb->time_us <= 0) continue;
      const double ratio = std::max(ra->time_us, rb->time_us) / std::min(ra->time_us, rb->time_us);
      if (ratio <= 2) continue;
      problems.push_back(absl::StrFormat(
          "%s:%d-%d and %s:%d-%d: the same %s on %d GPUs (%d hosts) takes %g us and %g us at %d B (lines %d and %d, "
          "%.1f times): the runs ran under different conditions (the network transport, NCCL's settings), which one "
          "set of parameters cannot fit; calibrate each run alone",
          a.file, a.first_line, a.last_line, b.file, b.first_line, b.last_line, a.test, a.ranks, a.hosts, ra->time_us,
          rb->time_us, ra->bytes, ra->line, rb->line, ratio));
    }
  }
  return problems;
}

}  // namespace hetsim::calibrate
