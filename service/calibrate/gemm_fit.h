// Fits a GPU type's GEMM parameters (ComputeEfficiency.max_efficiency, tile_overhead_k,
// kernel_launch_us) to measured GEMM timings, as any microbenchmark prints them:
//
//   m,n,k,dtype,time_us
//   8192,8192,8192,bf16,4210.5
//
// Columns are found by name (any order; extra columns are ignored; the time column may be time_us,
// time_ms or time_s). The model (docs/hardware.md) is linear in 1 / max_efficiency,
// tile_overhead_k / max_efficiency and the launch cost once each GEMM's tile plan is fixed, so the
// fit alternates: plan the tiles with the current parameters, solve the weighted least squares
// (weights 1 / time^2: relative error), until the plans stop changing.
#ifndef HETSIM_SERVICE_CALIBRATE_GEMM_FIT_H_
#define HETSIM_SERVICE_CALIBRATE_GEMM_FIT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"

namespace hetsim::calibrate {

struct GemmTiming {
  double m = 0, n = 0, k = 0;
  hetsim::v1::DType dtype = hetsim::v1::BF16;
  double seconds = 0;
  int line = 0;  // in the CSV, for the fit report
};

// InvalidArgument naming `file` and the line for a missing column, a non-number, a non-positive
// size or time, or an unknown dtype.
absl::StatusOr<std::vector<GemmTiming>> ParseGemmCsv(absl::string_view text, absl::string_view file);

struct GemmFitPoint {
  GemmTiming measured;
  double predicted_s = 0;
  double error = 0;  // (predicted - measured) / measured
};

struct GemmFit {
  double max_efficiency = 1;
  double tile_overhead_k = 0;
  double kernel_launch_us = 0;
  std::vector<GemmFitPoint> points;
  double mape = 0;  // mean |error|
  int iterations = 0;
};

// `gpu` must have its preset applied and sm_count > 0. Points that are memory-bound under the fitted
// parameters are predicted but do not pull the fit.
absl::StatusOr<GemmFit> FitGemm(const hetsim::v1::GpuType& gpu, const std::vector<GemmTiming>& timings,
                                absl::string_view where);

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_GEMM_FIT_H_
