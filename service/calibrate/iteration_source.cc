#include "service/calibrate/iteration_source.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/wall_limit.h"
#include "proto/inputs.h"
#include "proto/limits.h"
#include "service/calibrate/csv_table_internal.h"
#include "service/calibrate/overhead_probe.h"

namespace hetsim::calibrate {

namespace {

namespace v1 = hetsim::v1;

std::string FolderOf(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? "" : std::string(path.substr(0, slash + 1));
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
    // As nccl-tests and GEMM times: the fit divides by it (a denormal time pinned the fit at a bound
    // without naming the row), and no iteration outlasts what hetsim simulates.
    constexpr double kMinMs = 1e-6, kMaxMs = proto::limits::kMaxSimulatedPs * 1e-9;
    if (ms < kMinMs || ms > kMaxMs) {
      return LineError(file, row.line,
                       absl::StrFormat("time_ms: %s is outside [%g, %g] ms (1 ns to what hetsim simulates)",
                                       row.cells[col_time], kMinMs, kMaxMs));
    }
    m.seconds = ms * 1e-3;
    out.push_back(std::move(m));
  }
  if (out.empty()) return LineError(file, table->header_line, "no runs: at least one measured iteration is needed");
  return out;
}

absl::StatusOr<calibrate::SourceFit> IterationSource::Fit(v1::Cluster& cluster) {
  if (cluster.gpu_types_size() == 0)
    return absl::InvalidArgumentError(absl::StrCat(file_, ": the cluster has no GPU type"));
  std::vector<OverheadProbe> probes;
  std::vector<proto::PlanInputs> inputs;
  for (const MeasuredIteration& m : runs_) {
    const std::string where = absl::StrFormat("%s:%d", file_, m.line);
    auto located = [&where](const absl::Status& s) { return Prefixed(s, absl::StrCat(where, ": ")); };
    // Plan and model are loaded and checked against the cluster file as given, then simulated on
    // the cluster being calibrated (an earlier source may have moved it).
    absl::StatusOr<proto::PlanInputs> in = proto::LoadPlanInputs(m.plan_path, cluster_path_);
    if (!in.ok()) return located(in.status());
    in->cluster = cluster;
    absl::StatusOr<double> simulated = SimulatedSeconds(*in, {0, 0, 0, 0, 0, 0}, exact_);
    if (!simulated.ok()) return located(simulated.status());
    absl::StatusOr<OverheadProbe> probe = ProbeRun(*in, *simulated, m.seconds, exact_);
    if (!probe.ok()) return located(probe.status());
    probes.push_back(*probe);
  }
  const OverheadBounds bounds = BoundsOf(cluster);
  const OverheadFit fit = ChooseAndFit(probes, bounds);
  const v1::Cluster before = cluster;
  ApplyOverheadValues(cluster, fit.x);
  calibrate::SourceFit out;
  for (int i = 0; i < cluster.gpu_types_size(); ++i) {
    const v1::ComputeEfficiency &was = before.gpu_types(i).efficiency(), &is = cluster.gpu_types(i).efficiency();
    const std::string field = absl::StrFormat("gpu_types[%d].efficiency.", i);
    out.parameters.push_back({field + "max_efficiency", was.max_efficiency(), is.max_efficiency()});
    out.parameters.push_back(
        {field + "iteration_overhead_ms", was.iteration_overhead_ms(), is.iteration_overhead_ms()});
    out.parameters.push_back({field + "pass_overhead_us", was.pass_overhead_us(), is.pass_overhead_us()});
  }
  for (int i = 0; i < cluster.islands_size() && fit.x[3] != 0; ++i) {
    out.parameters.push_back({absl::StrFormat("islands[%d].nic_bandwidth_gbps", i),
                              before.islands(i).nic_bandwidth_gbps(), cluster.islands(i).nic_bandwidth_gbps()});
  }
  for (size_t i = 0; i < probes.size(); ++i) {
    out.points.push_back({absl::StrFormat("%s:%d", file_, runs_[i].line),
                          absl::StrCat("iteration of ", runs_[i].plan_path), probes[i].measured,
                          PredictWith(probes[i], fit.x)});
  }
  for (const std::string& concern : FitConcerns(fit, bounds))
    out.problems.push_back(absl::StrCat(file_, ": ", concern));
  return out;
}

}  // namespace hetsim::calibrate
