#include "service/calibrate/iteration_source.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "proto/inputs.h"
#include "service/calibrate/csv_table.h"
#include "service/driver/simulate.h"

namespace hetsim::calibrate {

namespace {

namespace v1 = hetsim::v1;

std::string FolderOf(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? "" : std::string(path.substr(0, slash + 1));
}

// A tiny positive value: 0 in a ComputeEfficiency field means "take the preset's".
constexpr double kOff = 1e-9;

void SetOverheads(v1::Cluster& cluster, double pass_us, double iteration_ms) {
  for (v1::GpuType& g : *cluster.mutable_gpu_types()) {
    g.mutable_efficiency()->set_pass_overhead_us(std::max(pass_us, kOff));
    g.mutable_efficiency()->set_iteration_overhead_ms(std::max(iteration_ms, kOff));
  }
}

// One simulated iteration of `inputs` on `cluster`, in seconds.
absl::StatusOr<double> IterationSeconds(proto::PlanInputs inputs, const v1::Cluster& cluster) {
  inputs.cluster = cluster;
  if (absl::Status s = proto::ValidatePlanInputs(inputs); !s.ok()) return s;
  absl::StatusOr<v1::Report> report = driver::SimulateReport(inputs);
  if (!report.ok()) return report.status();
  return report->iteration_time_ms() * 1e-3;
}

struct Run {
  const MeasuredIteration* measured;
  double t0 = 0;     // seconds, without the two overheads
  double slope = 0;  // seconds of iteration per second of pass overhead
};

// Minimises sum(((t0 + a slope + b - m) / m)^2) over a, b >= 0 (a, b in seconds).
void FitOverheads(const std::vector<Run>& runs, double* a, double* b) {
  auto solve = [&](bool use_a, bool use_b) {
    double saa = 0, sab = 0, sbb = 0, sar = 0, sbr = 0;
    for (const Run& r : runs) {
      const double m = r.measured->seconds, w = 1 / (m * m), residual = m - r.t0;
      saa += w * r.slope * r.slope;
      sab += w * r.slope;
      sbb += w;
      sar += w * r.slope * residual;
      sbr += w * residual;
    }
    double x = 0, y = 0;
    const double det = saa * sbb - sab * sab;
    if (use_a && use_b && std::abs(det) > 1e-30 * saa * sbb) {
      x = (sar * sbb - sbr * sab) / det;
      y = (saa * sbr - sab * sar) / det;
    } else if (use_a && saa > 0) {
      x = sar / saa;
    } else if (use_b && sbb > 0) {
      y = sbr / sbb;
    }
    return std::pair{x, y};
  };
  auto [x, y] = solve(true, true);
  if (x < 0) std::tie(x, y) = solve(false, true);
  if (y < 0) std::tie(x, y) = solve(true, false);
  *a = std::max(0.0, x);
  *b = std::max(0.0, y);
}

}  // namespace

absl::StatusOr<std::vector<MeasuredIteration>> ParseIterationCsv(absl::string_view text, absl::string_view file) {
  absl::StatusOr<calibrate::CsvTable> table = calibrate::ParseCsvTable(text, file);
  if (!table.ok()) return table.status();
  const int col_plan = table->Column("plan"), col_time = table->Column("time_ms");
  if (col_plan < 0) return LineError(file, table->header_line, "header: no column \"plan\"");
  if (col_time < 0) return LineError(file, table->header_line, "header: no column \"time_ms\"");
  std::vector<MeasuredIteration> out;
  for (const calibrate::CsvRow& row : table->rows) {
    MeasuredIteration m;
    m.line = row.line;
    const std::string& plan = row.cells[col_plan];
    if (plan.empty()) return LineError(file, row.line, "plan: empty");
    m.plan_path = plan[0] == '/' ? plan : absl::StrCat(FolderOf(file), plan);
    double ms = 0;
    if (!absl::SimpleAtod(row.cells[col_time], &ms) || !std::isfinite(ms) || ms <= 0) {
      return LineError(file, row.line,
                       absl::StrFormat("time_ms: \"%s\" is not a positive number", row.cells[col_time]));
    }
    m.seconds = ms * 1e-3;
    out.push_back(std::move(m));
  }
  if (out.size() < 2) {
    return LineError(file, table->header_line,
                     "fewer than 2 runs: the two overheads need at least two runs of different pass counts");
  }
  return out;
}

absl::StatusOr<calibrate::SourceFit> IterationSource::Fit(v1::Cluster& cluster) {
  if (cluster.gpu_types_size() == 0)
    return absl::InvalidArgumentError(absl::StrCat(file_, ": the cluster has no GPU type"));
  const double before_pass = cluster.gpu_types(0).efficiency().pass_overhead_us();
  const double before_iteration = cluster.gpu_types(0).efficiency().iteration_overhead_ms();
  v1::Cluster off = cluster, probe = cluster;
  SetOverheads(off, kOff, kOff);
  SetOverheads(probe, 1000, kOff);  // a 1 ms pass overhead
  std::vector<Run> runs;
  for (const MeasuredIteration& m : runs_) {
    const std::string where = absl::StrFormat("%s:%d", file_, m.line);
    // Plan and model are loaded and checked against the cluster file as given, then simulated on
    // the cluster with the overheads set.
    absl::StatusOr<proto::PlanInputs> in = proto::LoadPlanInputs(m.plan_path, cluster_path_);
    if (!in.ok()) return absl::Status(in.status().code(), absl::StrCat(where, ": ", in.status().message()));
    absl::StatusOr<double> t0 = IterationSeconds(*in, off);
    if (!t0.ok()) return absl::Status(t0.status().code(), absl::StrCat(where, ": ", t0.status().message()));
    absl::StatusOr<double> t1 = IterationSeconds(*in, probe);
    if (!t1.ok()) return absl::Status(t1.status().code(), absl::StrCat(where, ": ", t1.status().message()));
    runs.push_back({&m, *t0, (*t1 - *t0) / 1e-3});
  }
  double a = 0, b = 0;
  FitOverheads(runs, &a, &b);
  SetOverheads(cluster, a * 1e6, b * 1e3);
  calibrate::SourceFit out;
  for (int i = 0; i < cluster.gpu_types_size(); ++i) {
    out.parameters.push_back({absl::StrFormat("gpu_types[%d].efficiency.pass_overhead_us", i), before_pass, a * 1e6});
    out.parameters.push_back(
        {absl::StrFormat("gpu_types[%d].efficiency.iteration_overhead_ms", i), before_iteration, b * 1e3});
  }
  for (const Run& r : runs) {
    out.points.push_back({absl::StrFormat("%s:%d", file_, r.measured->line),
                          absl::StrCat("iteration of ", r.measured->plan_path), r.measured->seconds,
                          r.t0 + a * r.slope + b});
  }
  return out;
}

}  // namespace hetsim::calibrate
