#include "service/calibrate/gemm_fit.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "proto/resolve.h"
#include "service/calibrate/csv_table_internal.h"
#include "sim/workload/gpu_compute.h"

namespace hetsim::calibrate {

namespace {

constexpr double kMaxGemmDimension = 2147483647;  // cuBLAS's m, n, k are int
constexpr double kMaxGemmSeconds = 3600;

bool ParseDType(absl::string_view text, hetsim::v1::DType* out) {
  const std::string t = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  static const absl::flat_hash_map<std::string, hetsim::v1::DType> kNames = {
      {"fp32", hetsim::v1::FP32}, {"tf32", hetsim::v1::TF32}, {"bf16", hetsim::v1::BF16},
      {"fp16", hetsim::v1::FP16}, {"half", hetsim::v1::FP16}, {"fp8", hetsim::v1::FP8}};
  auto it = kNames.find(t);
  if (it == kNames.end()) return false;
  *out = it->second;
  return true;
}

// Solves the 3x3 system a x = b by Gaussian elimination with partial pivoting; false if singular.
bool Solve3(std::array<std::array<double, 3>, 3> a, std::array<double, 3> b, std::array<double, 3>* x) {
  for (int c = 0; c < 3; ++c) {
    int pivot = c;
    for (int r = c + 1; r < 3; ++r) {
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    }
    if (std::abs(a[pivot][c]) < 1e-300) return false;
    std::swap(a[c], a[pivot]);
    std::swap(b[c], b[pivot]);
    for (int r = c + 1; r < 3; ++r) {
      const double f = a[r][c] / a[c][c];
      for (int k = c; k < 3; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  for (int r = 2; r >= 0; --r) {
    double v = b[r];
    for (int k = r + 1; k < 3; ++k) v -= a[r][k] * (*x)[k];
    (*x)[r] = v / a[r][r];
  }
  return true;
}

hetsim::v1::GpuType WithParams(hetsim::v1::GpuType gpu, double eff, double tile_k, double launch_us) {
  auto* e = gpu.mutable_efficiency();
  e->set_max_efficiency(eff);
  e->set_tile_overhead_k(tile_k);
  e->set_kernel_launch_us(launch_us);
  e->set_host_op_us(0);  // a GEMM microbenchmark times back-to-back launches: the host is ahead
  return gpu;
}

// The compute model of `gpu` with the fit's parameters so far.
absl::StatusOr<workload::GpuCompute> FittedGpu(const hetsim::v1::GpuType& gpu, const GemmFit& fit,
                                               hetsim::v1::DType dtype, absl::string_view where) {
  const spec::GpuSpec spec =
      proto::ResolveGpu(WithParams(gpu, fit.max_efficiency, fit.tile_overhead_k, fit.kernel_launch_us));
  return workload::GpuCompute::Create(spec, proto::DTypeOf(dtype), where);
}

}  // namespace

absl::StatusOr<std::vector<GemmTiming>> ParseGemmCsv(absl::string_view text, absl::string_view file) {
  absl::StatusOr<CsvTable> table = ParseCsvTable(text, file);
  if (!table.ok()) return table.status();
  double time_scale = 0;
  int col_time = -1;
  for (auto [name, scale] : {std::pair{"time_us", 1e-6}, {"time_ms", 1e-3}, {"time_s", 1.0}}) {
    if (table->Column(name) >= 0) {
      col_time = table->Column(name);
      time_scale = scale;
    }
  }
  const int col_m = table->Column("m"), col_n = table->Column("n"), col_k = table->Column("k"),
            col_dtype = table->Column("dtype");
  for (auto [col, name] : {std::pair{col_m, "m"},
                           {col_n, "n"},
                           {col_k, "k"},
                           {col_dtype, "dtype"},
                           {col_time, "time_us (or time_ms, time_s)"}}) {
    if (col < 0) return LineError(file, table->header_line, absl::StrFormat("header: no column \"%s\"", name));
  }
  std::vector<GemmTiming> out;
  for (const CsvRow& row : table->rows) {
    GemmTiming t;
    t.line = row.line;
    double time = 0;
    const std::pair<int, double*> numbers[] = {{col_m, &t.m}, {col_n, &t.n}, {col_k, &t.k}, {col_time, &time}};
    for (auto [col, dst] : numbers) {
      const std::string& cell = row.cells[col];
      if (!absl::SimpleAtod(cell, dst) || !std::isfinite(*dst) || *dst <= 0) {
        return LineError(file, row.line, absl::StrFormat("\"%s\" is not a positive number", cell));
      }
    }
    // cuBLAS takes 32-bit dimensions: a larger one is no GEMM that ran (and their products overflow).
    for (auto [value, col] : {std::pair{t.m, col_m}, {t.n, col_n}, {t.k, col_k}}) {
      if (value != std::floor(value) || value > kMaxGemmDimension) {
        return LineError(file, row.line,
                         absl::StrFormat("\"%s\" is not a GEMM dimension (a whole number up to %d, cuBLAS's int)",
                                         row.cells[col], static_cast<int64_t>(kMaxGemmDimension)));
      }
    }
    if (!ParseDType(row.cells[col_dtype], &t.dtype)) {
      return LineError(file, row.line,
                       absl::StrFormat("unknown dtype \"%s\" (fp32, tf32, bf16, fp16, fp8)", row.cells[col_dtype]));
    }
    t.seconds = time * time_scale;
    if (!(t.seconds >= 1e-9)) {  // the fit divides by it: a smaller time is no measurement
      return LineError(file, row.line, absl::StrFormat("time %s: shorter than 1 ns", row.cells[col_time]));
    }
    if (t.seconds > kMaxGemmSeconds) {
      return LineError(file, row.line,
                       absl::StrFormat("time %s: longer than an hour, not one GEMM's", row.cells[col_time]));
    }
    out.push_back(t);
  }
  if (out.empty()) return LineError(file, table->header_line, "no timings after the header");
  return out;
}

absl::StatusOr<GemmFit> FitGemm(const hetsim::v1::GpuType& gpu, const std::vector<GemmTiming>& timings,
                                absl::string_view where) {
  if (gpu.efficiency().sm_count() == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.efficiency.sm_count: required to fit GEMM timings (set it or use a preset)", where));
  }
  if (timings.size() < 3) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d GEMM timings; the fit needs at least 3 of different shapes", where, timings.size()));
  }
  GemmFit fit;
  fit.max_efficiency = gpu.efficiency().max_efficiency() > 0 ? gpu.efficiency().max_efficiency() : 0.8;
  fit.tile_overhead_k = gpu.efficiency().tile_overhead_k();
  fit.kernel_launch_us = gpu.efficiency().kernel_launch_us();
  const double sms = gpu.efficiency().sm_count();
  std::vector<workload::TilePlan> previous;
  for (fit.iterations = 1; fit.iterations <= 20; ++fit.iterations) {
    // t = a X1 + b X2 + c with a = 1 / eff, b = tile_k / eff, c = launch, for compute-bound points.
    std::array<std::array<double, 3>, 3> normal{};
    std::array<double, 3> rhs{};
    std::vector<workload::TilePlan> plans;
    for (const GemmTiming& t : timings) {
      absl::StatusOr<workload::GpuCompute> g = FittedGpu(gpu, fit, t.dtype, where);
      if (!g.ok()) return g.status();
      const workload::GemmShape shape{t.m, t.n, t.k};
      const workload::TilePlan p = g->PlanTiles(shape);
      plans.push_back(p);
      const double unit = p.waves * 2 * p.tile_m * p.tile_n * sms / (g->peak_flop_per_s() * p.relative_throughput);
      const std::array<double, 3> x = {unit * t.k, unit, 1e-6};
      const double operands =
          (t.m * t.k + t.k * t.n + t.m * t.n) * (t.dtype == hetsim::v1::FP32 || t.dtype == hetsim::v1::TF32 ? 4 : 2);
      if (operands / g->hbm_bytes_per_s() >= t.seconds) continue;  // memory-bound: says nothing of the SMs
      const double w = 1 / (t.seconds * t.seconds);
      for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) normal[r][c] += w * x[r] * x[c];
        rhs[r] += w * x[r] * t.seconds;
      }
    }
    std::array<double, 3> sol{};
    if (!Solve3(normal, rhs, &sol)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the GEMM timings do not determine the fit (give shapes of different k and sizes)", where));
    }
    // a = 1 / eff, b = tile_k / eff, c = launch (us); keep each in its physical range.
    const double eff = std::clamp(1 / sol[0], 0.01, 1.0);
    fit.max_efficiency = eff;
    fit.tile_overhead_k = std::max(0.0, sol[1] * eff);
    fit.kernel_launch_us = std::max(0.0, sol[2]);
    bool same = plans.size() == previous.size();
    for (size_t i = 0; same && i < plans.size(); ++i) {
      same = plans[i].tile_m == previous[i].tile_m && plans[i].tile_n == previous[i].tile_n;
    }
    if (same) break;
    previous = std::move(plans);
  }
  double sum = 0;
  for (const GemmTiming& t : timings) {
    absl::StatusOr<workload::GpuCompute> g = FittedGpu(gpu, fit, t.dtype, where);
    if (!g.ok()) return g.status();
    GemmFitPoint p{t, g->GemmSeconds(workload::GemmShape{t.m, t.n, t.k}), 0};
    p.error = (p.predicted_s - t.seconds) / t.seconds;
    sum += std::abs(p.error);
    fit.points.push_back(p);
  }
  fit.mape = sum / static_cast<double>(timings.size());
  return fit;
}

}  // namespace hetsim::calibrate
