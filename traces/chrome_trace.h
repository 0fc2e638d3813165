// An executed iteration as a Chrome Trace Event file (JSON object format), which Perfetto
// (ui.perfetto.dev), speedscope and the Chrome DevTools Performance panel open (docs/report.md):
//   - a process per cluster node holding traced GPUs, named "<island> node <n> (<GPU type>)", and one
//     "network" process for link counters and the iteration's milestones;
//   - threads per GPU: "GPU <l> compute" (F/B complete events named like "F12 s3", optimizer step),
//     "GPU <l> send", "GPU <l> recv" and "GPU <l> grad sync"; operations of one kind that overlap in
//     time (a send forward and one backward at once) go to extra lanes ("GPU <l> send #2"), so the
//     slices of a thread never partially overlap;
//   - flow arrows (ph "s" -> "f") from each boundary send to the compute it feeds on the receiving
//     GPU, when both are traced, bound to their slices (same ts, thread and category);
//   - counter tracks: memory per traced GPU (GiB), busy share of each sampled link (%), named with
//     the link id;
//   - instant events for the end of the pipeline and of the iteration, and fault transitions.
// Microbatches, stages and GPUs are numbered from 0, as in the report. Timestamps are microseconds
// in multiples of 1/1024 us printed exactly (traces/trace_events.h): slices that touch in
// picoseconds touch once parsed; identical inputs give identical bytes.
#ifndef HETSIM_TRACES_CHROME_TRACE_H_
#define HETSIM_TRACES_CHROME_TRACE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/time.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"

namespace hetsim::traces {

// Plans above this many GPUs trace one data-parallel replica unless told otherwise.
inline constexpr int kTraceAllGpusLimit = 64;

struct TraceSelection {
  std::optional<int> replica;  // every stage's replica K (K < DP; a stage with fewer: its last)
  std::vector<GpuId> gpus;     // explicit global GPU ids (used by the plan)
};

// Which GPUs a trace shows (flags per global GPU id). With neither a replica nor GPUs: every GPU of
// the plan when it has at most kTraceAllGpusLimit, else replica 0. InvalidArgument names the option
// ("--trace-replica", "--trace-gpus") for a replica beyond every stage's DP or a GPU outside the plan.
absl::StatusOr<std::vector<bool>> SelectTracedGpus(const executor::ExecutionSetup& setup,
                                                   const TraceSelection& selection);

// The links whose busy share the trace samples: each traced GPU's links to its NIC and the links
// between islands' gateways. Sorted, without repeats.
std::vector<LinkId> TraceLinks(const executor::ExecutionSetup& setup, const std::vector<bool>& traced);

// Sampling period for link counters: the static critical path / 200 (at least 1 ns).
Time TraceSamplePeriod(const executor::ExecutionSetup& setup);

// The trace JSON. `sampled_links` must be the ExecutorOptions::sampled_links of the run (may be
// empty); flow finish times are used when the run recorded them. `shown_links` (sorted, a subset of
// sampled_links) limits the link counters to those links, when the run sampled more (--html).
std::string ChromeTraceJson(const executor::ExecutionSetup& setup, const executor::ExecutionResult& result,
                            const std::vector<bool>& traced, const std::vector<LinkId>& sampled_links,
                            const std::vector<LinkId>* shown_links = nullptr);

// One pipeline of a plan of pipelines (Plan.pipelines) as it ran, for PipelinesTraceJson.
struct PipelineTrace {
  std::string name;
  const executor::ExecutionSetup* setup = nullptr;
  const executor::ExecutionResult* result = nullptr;  // with the iteration's gradient sync
  std::vector<bool> traced;                           // SelectTracedGpus on its setup
  std::vector<LinkId> sampled_links;                  // its run's (TraceLinks)
};

// The trace of a plan of pipelines: each pipeline's processes (the nodes of its traced GPUs, its
// network with its link counters and milestones) named "<pipeline> (<n> samples in <m> microbatches of
// <b>): ...", its passes' args naming the pipeline, its share and the stage's GPU type, numbered after the previous
// pipeline's; each pipeline ran on a network of its own (docs/cost-model.md, "Pipelines of different
// shapes"), its layer ranges' all-reduces on its stages' "grad sync" rows ("bucket k" is range k).
// `faults` is the shared run's fault outcome (PipelinesSyncResult::faults): its transitions are drawn
// once, with the first pipeline.
std::string PipelinesTraceJson(const std::vector<PipelineTrace>& pipelines, const faults::FaultOutcome& faults);

}  // namespace hetsim::traces

#endif  // HETSIM_TRACES_CHROME_TRACE_H_
