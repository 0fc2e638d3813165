// The pipeline schedule as an SVG Gantt chart: one row per stage with a compute lane (forwards and
// backwards, numbered by microbatch, and the optimizer step), lanes for the transfers the stage sends
// and for its gradient synchronisation (as many lanes as operations overlap), faults as dashed lines.
// Every block carries its times (data-t, ms) for the page's zoom and pan, and a hover title.
#ifndef HETSIM_TRACES_HTML_GANTT_INTERNAL_H_
#define HETSIM_TRACES_HTML_GANTT_INTERNAL_H_

#include <string>
#include <vector>

#include "sim/executor/executor.h"
#include "sim/executor/setup.h"

namespace hetsim::traces::html {

// The legend (HTML) and the chart (SVG, id "gantt").
std::string GanttLegendHtml();
// `fault_events`: the transitions to draw (the run's own, or a plan of pipelines' shared run's).
std::string GanttSvg(const executor::ExecutionSetup& setup, const executor::ExecutionResult& result,
                     const std::vector<faults::FaultEvent>& fault_events);

}  // namespace hetsim::traces::html

#endif  // HETSIM_TRACES_HTML_GANTT_INTERNAL_H_
