#include "traces/html/validate_html.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "traces/html/chart_internal.h"
#include "traces/html/page_internal.h"
#include "traces/html/svg_internal.h"

namespace hetsim::traces::html {
namespace {

double RelErrPct(double predicted, double simulated) {
  return simulated != 0 ? 100 * (predicted - simulated) / simulated : 0;
}
std::string ErrCell(double predicted, double simulated) {
  return absl::StrFormat("%+.1f%%", RelErrPct(predicted, simulated));
}

std::string Scatter(const std::vector<Series>& series, const std::string& title) {
  ChartSpec spec(title, "simulated (ms)", "predicted (ms)", 520, 400);
  spec.identity_line = true;
  return ChartSvg(spec, series);
}

}  // namespace

std::string ValidateReportHtml(const ValidateData& d) {
  Page page(absl::StrCat("hetsim validate: ", d.plan_name),
            absl::StrFormat("the planner's cost model against the simulation, on cluster %s; iteration predicted %.1f "
                            "ms, simulated %.1f ms (%s)",
                            d.cluster_name, d.iteration_pred_ms, d.iteration_sim_ms,
                            ErrCell(d.iteration_pred_ms, d.iteration_sim_ms)));
  page.AddHeading("Predicted vs simulated");
  page.AddParagraph("On the dashed line y = x the prediction is exact; above it the cost model is pessimistic.");
  std::string charts = "<div class=\"multiples\">";
  std::vector<Point> stages;
  for (const ValidateStage& s : d.stages) {
    stages.push_back({s.compute_sim_ms, s.compute_pred_ms, 0, 0,
                      absl::StrFormat("stage %d: predicted %.3f ms, simulated %.3f ms (%s)", s.stage, s.compute_pred_ms,
                                      s.compute_sim_ms, ErrCell(s.compute_pred_ms, s.compute_sim_ms))});
  }
  charts +=
      Scatter({{"stage", kBlue, SeriesStyle::kMarkers, stages}}, "stage compute per microbatch (forward + backward)");
  Series plan{
      "this plan",
      kVermillion,
      SeriesStyle::kMarkers,
      {{d.iteration_sim_ms, d.iteration_pred_ms, 0, 0,
        absl::StrFormat("this plan: predicted %.1f ms, simulated %.1f ms", d.iteration_pred_ms, d.iteration_sim_ms)}}};
  Series top("the planner's top plans", kBlue, SeriesStyle::kMarkers);
  for (const ValidatePlan& p : d.top_plans) {
    top.points.push_back(
        {p.simulated_ms, p.predicted_ms, 0, 0,
         absl::StrFormat("%s: predicted %.1f ms, simulated %.1f ms", p.label, p.predicted_ms, p.simulated_ms)});
  }
  charts += Scatter({top, plan}, d.kendall_tau
                                     ? absl::StrFormat("iteration time, this plan and the top %d (Kendall tau %.2f)",
                                                       d.top_plans.size(), *d.kendall_tau)
                                     : "iteration time");
  page.AddRaw(charts + "</div>");

  page.AddHeading("Relative error per stage");
  std::vector<Series> errors = {{"compute", kBlue, SeriesStyle::kMarkers},
                                {"communication", kGreen, SeriesStyle::kMarkers},
                                {"peak memory", kOrange, SeriesStyle::kMarkers}};
  for (const ValidateStage& s : d.stages) {
    const double values[3] = {RelErrPct(s.compute_pred_ms, s.compute_sim_ms), RelErrPct(s.comm_pred_ms, s.comm_sim_ms),
                              RelErrPct(s.memory_pred_gib, s.memory_sim_gib)};
    for (int k = 0; k < 3; ++k) {
      const double x = s.stage + (k - 1) * 0.2;  // side by side around the stage number
      errors[k].points.push_back({x, values[k], std::min(0.0, values[k]), std::max(0.0, values[k]),
                                  absl::StrFormat("stage %d %s: %+.1f%%", s.stage, errors[k].name, values[k])});
    }
  }
  ChartSpec spec("(predicted - simulated) / simulated, per stage", "stage", "relative error (%)", 900, 320);
  spec.x_min = -0.5;
  spec.x_max = d.stages.empty() ? 0.5 : static_cast<double>(d.stages.size()) - 0.5;
  spec.integer_x = true;
  page.AddRaw(ChartSvg(spec, errors));

  Table t{{"stage", "compute pred ms", "compute sim ms", "err", "comm pred ms", "comm sim ms", "err", "memory pred GiB",
           "memory sim GiB", "err"},
          {},
          true,
          "stages"};
  for (const ValidateStage& s : d.stages) {
    t.rows.push_back({absl::StrCat(s.stage), absl::StrFormat("%.3f", s.compute_pred_ms),
                      absl::StrFormat("%.3f", s.compute_sim_ms), ErrCell(s.compute_pred_ms, s.compute_sim_ms),
                      absl::StrFormat("%.3f", s.comm_pred_ms), absl::StrFormat("%.3f", s.comm_sim_ms),
                      ErrCell(s.comm_pred_ms, s.comm_sim_ms), absl::StrFormat("%.2f", s.memory_pred_gib),
                      absl::StrFormat("%.2f", s.memory_sim_gib), ErrCell(s.memory_pred_gib, s.memory_sim_gib)});
  }
  page.AddTable(t);
  if (!d.top_plans.empty()) {
    Table p{{"plan", "predicted ms", "simulated ms", "err"}, {}, true, "plans"};
    for (const ValidatePlan& v : d.top_plans) {
      p.rows.push_back({v.label, absl::StrFormat("%.1f", v.predicted_ms), absl::StrFormat("%.1f", v.simulated_ms),
                        ErrCell(v.predicted_ms, v.simulated_ms)});
    }
    page.AddTable(p);
  }
  return page.Finish();
}

}  // namespace hetsim::traces::html
