// The HTML report of one simulated iteration (`hetsim run --html FILE`): header figures, the pipeline
// schedule as a zoomable Gantt chart (one row per stage: forwards and backwards numbered by
// microbatch, transfers and gradient synchronisation on their own lanes, faults marked), memory per
// stage against capacity, link utilisation per class over time, the stage, boundary and fault tables.
// docs/report.md shows it.
//
//   auto sim = driver::SimulatePlan(inputs, {.sample_all_links = true});
//   std::string html = traces::html::RunReportHtml({sim->setup.get(), &sim->result, &sim->report, sim->sampled_links});
#ifndef HETSIM_TRACES_HTML_RUN_HTML_H_
#define HETSIM_TRACES_HTML_RUN_HTML_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/ids.h"
#include "proto/hetsim.pb.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"

namespace hetsim::traces::html {

// One pipeline of a plan of pipelines of different shapes (Plan.pipelines): its own schedule and
// memory charts; its stages are the report's from `first_stage` on (stages are numbered across
// pipelines in order).
struct PipelineHtmlInputs {
  std::string name;
  const executor::ExecutionSetup* setup = nullptr;
  const executor::ExecutionResult* result = nullptr;
  int first_stage = 0;
};

// Without the setup and result (a saved Report alone: `hetsim report`), the page has the figures and
// tables but no schedule, memory or link chart. With `pipelines`, a schedule and memory section per
// pipeline (the link chart is `setup`'s and `result`'s: the first pipeline's, which samples the one
// network they share) and the pipelines' and layer ranges' tables.
struct RunHtmlInputs {
  const executor::ExecutionSetup* setup = nullptr;
  const executor::ExecutionResult* result = nullptr;
  const v1::Report* report = nullptr;
  std::vector<LinkId> sampled_links;  // the run's ExecutorOptions::sampled_links (may be empty)
  std::vector<PipelineHtmlInputs> pipelines;
  // With `pipelines`: the shared run's fault transitions (PipelinesSyncResult::faults), drawn on every
  // pipeline's schedule; null: none.
  const faults::FaultOutcome* pipeline_faults = nullptr;
};

std::string RunReportHtml(const RunHtmlInputs& in);

// InvalidArgument naming `file` unless `report` is what `hetsim run --report` writes (stages, one per
// num_stages): a message that parses as a Report without them is another file (JSON "{}", an empty
// file). `hetsim report` and its fuzz target check saved reports with it before drawing them.
absl::Status CheckSavedReport(const v1::Report& report, absl::string_view file);

}  // namespace hetsim::traces::html

#endif  // HETSIM_TRACES_HTML_RUN_HTML_H_
