#include "traces/fault_report.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/counted.h"
#include "base/spec/faults.h"
#include "sim/pipeline/dag.h"

namespace hetsim::traces {
namespace {

using executor::ExecutionResult;
using executor::ExecutionSetup;
using pipeline::NodeKind;

std::string StageList(const std::vector<int>& stages) {
  return absl::StrCat(stages.size() == 1 ? "stage " : "stages ", absl::StrJoin(stages, ", "));
}

// Stages using any of `gpus`.
std::vector<int> StagesOn(const ExecutionSetup& setup, const std::vector<GpuId>& gpus) {
  std::vector<int> out;
  for (int s = 0; s < setup.num_stages(); ++s) {
    for (GpuId g : setup.stages[s].layout.gpus) {
      if (std::binary_search(gpus.begin(), gpus.end(), g)) {
        out.push_back(s);
        break;
      }
    }
  }
  return out;
}

std::string Effect(const ExecutionSetup& setup, const ExecutionResult& r, const faults::FaultOutcome& outcome,
                   const faults::ResolvedFault& f, int index) {
  const faults::FaultEffect& e = outcome.effects[index];
  const std::string ended = absl::StrFormat("the iteration %s at %.3f ms", r.faults.failed ? "failed" : "ended",
                                            TimeToMilliseconds(r.iteration_time));
  if (!e.started) return absl::StrCat("none: ", ended, " before it");
  switch (f.kind) {
    case spec::FaultKind::kSlow:
      if (f.compute()) {
        if (StagesOn(setup, f.gpus).empty()) return kNothingOnItsGpus;
        if (e.tasks_slowed == 0) return "none: no compute task ran on its GPUs while it lasted";
        return absl::StrFormat("%d compute tasks of %s took %.3f ms longer in total", e.tasks_slowed,
                               StageList(e.stages), TimeToMilliseconds(e.task_delay));
      }
      return absl::StrFormat("bandwidth divided by %g from %.3f ms", f.factor, TimeToMilliseconds(f.at));
    case spec::FaultKind::kFlap:
      return absl::StrFormat("down %s, %.3f ms in total", Counted(e.downs, "time"), TimeToMilliseconds(e.down_time));
    case spec::FaultKind::kFail:
      if (r.faults.failed_fault == index) {
        return absl::StrFormat("stopped the iteration at %.3f ms", TimeToMilliseconds(r.faults.failed_at));
      }
      return "none: an earlier failure stopped the iteration";
    case spec::FaultKind::kNone: break;  // does nothing (base/spec/faults.h)
  }
  return "";
}

void DescribePartialStages(const ExecutionSetup& setup, const ExecutionResult& r, v1::Report* report) {
  const Time t = r.faults.failed_at;
  for (int s = 0; s < setup.num_stages() && s < report->stages_size(); ++s) {
    if (r.stage_end[s] > 0) continue;  // finished before the failure: as computed
    v1::StageReport* out = report->mutable_stages(s);
    // The early parameter gathers count by what the first forwards waited for, as in a full run.
    Time sync = executor::EarlyGatherWait(setup, r, s);
    for (const auto& g : r.grad_syncs) {
      if (g.stage == s && !g.at_start) sync += g.finish - g.start;
    }
    const Time optimizer =
        r.optimizer_start[s] >= 0 ? std::min(setup.stages[s].optimizer_time, t - r.optimizer_start[s]) : 0;
    out->set_grad_sync_ms(TimeToMilliseconds(sync));
    out->set_optimizer_ms(TimeToMilliseconds(optimizer));
    out->set_idle_ms(
        std::max(0.0, TimeToMilliseconds(t - sync - optimizer) - out->compute_busy_ms() - out->exposed_comm_ms()));
  }
}

}  // namespace

std::string LostWork(const ExecutionSetup& setup, const ExecutionResult& r) {
  if (!r.faults.failed) return "";
  const auto& dag = *setup.dag;
  std::vector<bool> cut(dag.num_nodes(), false);
  for (int id : r.interrupted) cut[id] = true;
  const auto done = [&](int id) { return r.node_finish[id] >= 0 && !cut[id]; };
  int finished = 0;
  for (int mb = 0; mb < dag.num_microbatches(); ++mb) finished += done(dag.Backward(mb, 0)) ? 1 : 0;
  const int lost = dag.num_microbatches() - finished;
  std::string out =
      absl::StrFormat("%d of %d microbatches finished (%d lost, %d samples)", finished, dag.num_microbatches(), lost,
                      static_cast<int64_t>(lost) * static_cast<int64_t>(setup.spec.plan.micro_batch_size));
  std::vector<int> unsynced;
  for (int s = 0; s < setup.num_stages(); ++s) {
    int forwards = 0, backwards = 0, f_done = 0, b_done = 0, cuts = 0;
    for (int id : dag.stage_compute_order()[s]) {
      const bool forward = dag.node(id).kind == NodeKind::kForward;
      (forward ? forwards : backwards) += 1;
      if (done(id)) (forward ? f_done : b_done) += 1;
      cuts += cut[id] ? 1 : 0;
    }
    absl::StrAppendFormat(&out, "; stage %d: %d of %d forwards, %d of %d backwards", s, f_done, forwards, b_done,
                          backwards);
    if (cuts > 0) absl::StrAppendFormat(&out, " (%d cut at the failure)", cuts);
    if (r.stage_end[s] == 0) unsynced.push_back(s);
  }
  if (!unsynced.empty()) {
    absl::StrAppend(&out, "; gradient synchronisation and optimizer step not completed on ", StageList(unsynced));
  }
  return out;
}

void AddFaultsToReport(const ExecutionSetup& setup, const ExecutionResult& r, const faults::FaultSet& faults,
                       v1::Report* report) {
  AddFaultsToReport(setup, r, r.faults, faults, report);
}

void AddFaultsToReport(const ExecutionSetup& setup, const ExecutionResult& r, const faults::FaultOutcome& shared,
                       const faults::FaultSet& faults, v1::Report* report) {
  for (size_t i = 0; i < faults.faults.size(); ++i) {
    const faults::ResolvedFault& f = faults.faults[i];
    v1::FaultReport* out = report->add_faults();
    out->set_fault(f.text);
    out->set_description(f.description);
    out->set_at_ms(f.at_ms);
    out->set_gpus_affected(static_cast<uint32_t>(f.gpus.size()));
    out->set_links_affected(static_cast<uint32_t>(f.links.size()));
    out->set_effect(Effect(setup, r, shared, f, static_cast<int>(i)));
  }
  if (faults.jitter) {
    const spec::JitterSpec& j = *faults.jitter;
    v1::FaultReport* out = report->add_faults();
    out->set_fault(absl::StrCat("jitter { ", faults.jitter_text, "}"));
    out->set_description(absl::StrFormat("compute jitter %s, spread %g, seed %d, on %s",
                                         spec::JitterDistributionName(j.distribution), j.spread, j.seed,
                                         j.gpus.empty() ? "every GPU" : Counted(j.gpus.size(), "GPU")));
    out->set_gpus_affected(j.gpus.empty() ? static_cast<uint32_t>(setup.topology->num_gpus())
                                          : static_cast<uint32_t>(j.gpus.size()));
    out->set_effect("every compute task on these GPUs took its nominal time times an independent draw");
  }
  if (!r.faults.failed) return;
  report->set_failed(true);
  report->set_failed_at_ms(TimeToMilliseconds(r.faults.failed_at));
  report->set_lost(LostWork(setup, r));
  // No iteration completed: nothing was trained per second.
  report->set_tokens_per_s(0);
  report->set_samples_per_s(0);
  report->set_model_tflops_per_gpu(0);
  report->set_mfu(0);
  report->set_bubble_ratio(0);
  DescribePartialStages(setup, r, report);
}

std::string FormatFaultTable(const v1::Report& report) {
  if (report.faults_size() == 0 && !report.failed()) return "";
  std::string out = "\nfaults\n";
  for (int i = 0; i < report.faults_size(); ++i) {
    const v1::FaultReport& f = report.faults(i);
    absl::StrAppendFormat(&out, "%5d  %s\n       %s\n", i, f.description(), f.effect());
  }
  if (report.failed()) {
    absl::StrAppendFormat(&out, "ITERATION FAILED at %.3f ms: %s\n", report.failed_at_ms(), report.lost());
  }
  return out;
}

}  // namespace hetsim::traces
