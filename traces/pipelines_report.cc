#include "traces/pipelines_report.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "traces/fault_report.h"
#include "traces/metrics.h"

namespace hetsim::traces {
namespace {

using executor::LayerRangeGroup;
using executor::PipelinesSyncResult;

// Each pipeline's stages (named by it) and boundaries (renumbered into the merged stages).
void AddStagesAndBoundaries(const std::vector<PipelineReportInput>& pipelines, v1::Report& out) {
  uint32_t first_stage = 0;
  for (const PipelineReportInput& p : pipelines) {
    for (const v1::StageReport& s : p.report.stages()) {
      v1::StageReport* stage = out.add_stages();
      *stage = s;
      stage->set_index(first_stage + s.index());
      stage->set_pipeline(p.name);
      out.set_oom(out.oom() || s.oom());
    }
    for (const v1::BoundaryReport& b : p.report.boundaries()) {
      v1::BoundaryReport* boundary = out.add_boundaries();
      *boundary = b;
      boundary->set_from_stage(first_stage + b.from_stage());
      boundary->set_to_stage(first_stage + b.to_stage());
    }
    first_stage += static_cast<uint32_t>(p.report.stages_size());
  }
}

// Link classes: links and bytes summed, utilisation the largest of the pipelines' (they share one
// network, whose counters the first pipeline's result carries: sums count each byte once).
void AddLinkClasses(const std::vector<PipelineReportInput>& pipelines, v1::Report& out) {
  std::map<std::string, v1::LinkClassReport> classes;
  for (const PipelineReportInput& p : pipelines) {
    for (const v1::LinkClassReport& l : p.report.links()) {
      auto [it, added] = classes.emplace(l.link_class(), l);
      if (added) continue;
      it->second.set_bytes(it->second.bytes() + l.bytes());
      it->second.set_links(std::max(it->second.links(), l.links()));
      it->second.set_mean_utilization(std::max(it->second.mean_utilization(), l.mean_utilization()));
      it->second.set_max_utilization(std::max(it->second.max_utilization(), l.max_utilization()));
    }
  }
  for (const auto& [name, l] : classes) *out.add_links() = l;
}

// MoE: stage `s` of `setup`'s expert layout, "EP e x ETP t"; a mixed stage's groups' each, joined by " / ".
std::string HolderExpertLayout(const executor::ExecutionSetup& setup, int s) {
  const executor::StageLayout& l = setup.stages[s].layout;
  const auto one = [](const executor::StageLayout& g) {
    return absl::StrFormat("EP %d x ETP %d", g.expert_parallel, g.ExpertTensorParallel());
  };
  if (!l.mixed()) return one(l);
  std::vector<std::string> groups;
  for (const executor::StageLayout& g : l.replica_groups) groups.push_back(one(g));
  return absl::StrJoin(groups, " / ");
}

void AddPipelines(const std::vector<PipelineReportInput>& pipelines, const PipelinesSyncResult& sync, v1::Report& out) {
  for (size_t p = 0; p < pipelines.size(); ++p) {
    const PipelineReportInput& in = pipelines[p];
    v1::PipelineReport* r = out.add_pipelines();
    r->set_name(in.name);
    r->set_batch_share(in.setup->spec.plan.global_batch_size);
    r->set_micro_batch_size(in.setup->spec.plan.micro_batch_size);
    r->set_num_stages(in.report.num_stages());
    r->set_num_gpus(in.report.num_gpus());
    r->set_num_microbatches(in.report.num_microbatches());
    r->set_pipeline_ms(in.report.pipeline_ms());
    r->set_end_ms(TimeToMilliseconds(sync.pipeline_end[p]));
    r->set_bubble_ratio(in.report.bubble_ratio());
    if (in.setup->spec.plan.context_parallel > 1) {
      r->set_context_parallel(static_cast<uint32_t>(in.setup->spec.plan.context_parallel));
    }
  }
  for (const LayerRangeGroup& g : sync.groups) {
    v1::GradientGroupReport* r = out.add_gradient_groups();
    r->set_first_layer(g.first_layer);
    r->set_num_layers(g.num_layers);
    r->set_tied_embedding(g.tied);
    for (const auto& h : g.holders) r->add_holders(absl::StrFormat("%s stage %d", pipelines[h.pipeline].name, h.stage));
    r->set_num_gpus(static_cast<uint32_t>(g.groups.empty() ? 0 : g.groups[0].size()));
    r->set_shards(g.shards);
    r->set_bytes_per_gpu(g.bytes);
    if (g.start >= 0) r->set_start_ms(TimeToMilliseconds(g.start));  // -1: a failure stopped it first
    if (g.finish >= 0) r->set_end_ms(TimeToMilliseconds(g.finish));
    if (!executor::ExpertBuckets(g).empty()) {
      r->set_expert_groups(static_cast<uint32_t>(g.expert_groups.size()));
      r->set_expert_num_gpus(static_cast<uint32_t>(g.expert_groups.front().size()));
      r->set_expert_bytes_per_gpu(static_cast<uint64_t>(g.expert_bytes));
      r->set_expert_param_bytes_per_gpu(static_cast<uint64_t>(g.expert_param_bytes));
      r->set_expert_parallel(static_cast<uint32_t>(g.expert_parallel));
      r->set_expert_tensor_parallel(static_cast<uint32_t>(g.expert_tensor_parallel));
      for (const auto& h : g.holders)
        r->add_holder_expert_layouts(HolderExpertLayout(*pipelines[h.pipeline].setup, h.stage));
    }
    if (g.zero_stage == 0) continue;
    r->set_zero_stage(static_cast<uint32_t>(g.zero_stage));
    r->set_param_bytes_per_gpu(g.param_bytes);
    if (g.gather_start >= 0) r->set_param_gather_start_ms(TimeToMilliseconds(g.gather_start));
    if (g.gather_finish >= 0) r->set_param_gather_end_ms(TimeToMilliseconds(g.gather_finish));
  }
}

// The faults' part (docs/faults.md), from each pipeline's report (traces::AddFaultsToReport): the
// pipelines ran under one set of faults, whose outcome names stages as the merged report numbers them,
// so each fault's effect is the same in every pipeline's report but for a fault on GPUs a pipeline does
// not use: the first pipeline's that ran something on them. A failure stopped every pipeline: what each
// lost, named by pipeline, and no throughput.
void AddFaults(const std::vector<PipelineReportInput>& pipelines, v1::Report& out) {
  const v1::Report& first = pipelines.front().report;
  for (int i = 0; i < first.faults_size(); ++i) {
    v1::FaultReport* f = out.add_faults();
    *f = first.faults(i);
    for (const PipelineReportInput& p : pipelines) {
      if (!absl::StartsWith(p.report.faults(i).effect(), kNothingOnItsGpus)) {
        f->set_effect(p.report.faults(i).effect());
        break;
      }
    }
  }
  if (!first.failed()) return;
  out.set_failed(true);
  out.set_failed_at_ms(first.failed_at_ms());
  std::vector<std::string> lost;
  for (const PipelineReportInput& p : pipelines)
    lost.push_back(absl::StrCat("pipeline ", p.name, ": ", p.report.lost()));
  out.set_lost(absl::StrJoin(lost, "; "));
  out.set_tokens_per_s(0);
  out.set_samples_per_s(0);
  out.set_model_tflops_per_gpu(0);
  out.set_mfu(0);
  out.set_bubble_ratio(0);
}

}  // namespace

v1::Report MergePipelineReports(const std::vector<PipelineReportInput>& pipelines, const PipelinesSyncResult& sync) {
  const v1::Report& first = pipelines.front().report;
  v1::Report out;
  out.set_plan_name(first.plan_name());
  out.set_cluster_name(first.cluster_name());
  out.set_model_name(first.model_name());
  out.set_schedule(first.schedule());
  out.set_network_model(first.network_model());
  out.set_framework(first.framework());
  *out.mutable_framework_behaviours() = first.framework_behaviours();
  *out.mutable_approximations() = first.approximations();

  // The whole iteration as one set of figures: every pipeline's work and stages, the slowest end.
  pipeline::IterationFigures all;
  all.iteration_time = sync.iteration_time;
  uint64_t events = 0, flows = 0;  // the shared network's (the ranges' too), counted by the first pipeline
  uint32_t gpus = 0, stages = 0, microbatches = 0;
  double critical_path = 0, pipeline_ms = 0;
  for (size_t p = 0; p < pipelines.size(); ++p) {
    const PipelineReportInput& in = pipelines[p];
    const pipeline::IterationFigures f = IterationFiguresOf(*in.setup, *in.result);
    all.work.samples += f.work.samples;
    all.work.seq_length = f.work.seq_length;
    all.work.model_flop += f.work.model_flop;
    all.span = std::max(all.span, f.span);
    all.stages.insert(all.stages.end(), f.stages.begin(), f.stages.end());
    gpus += in.report.num_gpus();
    stages += in.report.num_stages();
    microbatches += in.report.num_microbatches();
    critical_path = std::max(critical_path, in.report.critical_path_ms());
    pipeline_ms = std::max(pipeline_ms, in.report.pipeline_ms());
    events += in.report.events_processed();
    flows += in.report.flows();
    // Context parallelism (Pipeline.context_parallel, each pipeline its own): the largest degree, and
    // the exchange every pipeline runs (Plan.cp_comm_type); each stage's report has its own degree.
    if (in.report.context_parallel() > out.context_parallel()) {
      out.set_context_parallel(in.report.context_parallel());
      out.set_cp_comm_type(in.report.cp_comm_type());
    }
  }
  const pipeline::IterationMetrics m = pipeline::ComputeIterationMetrics(all);
  out.set_num_gpus(gpus);
  out.set_num_stages(stages);
  out.set_num_microbatches(microbatches);
  out.set_iteration_time_ms(TimeToMilliseconds(sync.iteration_time));
  out.set_pipeline_ms(pipeline_ms);
  out.set_critical_path_ms(critical_path);
  out.set_samples_per_s(m.samples_per_s);
  out.set_tokens_per_s(m.tokens_per_s);
  out.set_model_flop_per_iteration(m.model_flop);
  out.set_mfu(m.mfu);
  out.set_model_tflops_per_gpu(m.model_tflops_per_gpu);
  out.set_bubble_ratio(m.bubble_ratio);
  out.set_eta(m.eta);
  out.set_events_processed(events);
  out.set_flows(flows);
  AddStagesAndBoundaries(pipelines, out);
  AddLinkClasses(pipelines, out);
  AddPipelines(pipelines, sync, out);
  AddFaults(pipelines, out);
  return out;
}

int LayerRangeZeroStage(const v1::Report& report) {
  return report.gradient_groups().empty() ? 0 : report.gradient_groups(0).zero_stage();
}

std::string LayerRangeSyncTitle(const v1::Report& report) {
  const int zero_stage = LayerRangeZeroStage(report);
  if (zero_stage == 3) {
    return "gradient reduce-scatter per layer range, its parameters gathered before every forward and backward "
           "(ZeRO-3)";
  }
  return zero_stage > 0
             ? absl::StrFormat("gradient reduce-scatter and parameter all-gather per layer range (ZeRO-%d)", zero_stage)
             : std::string("gradient all-reduce per layer range");
}

std::string GradientGroupHolders(const v1::GradientGroupReport& group, std::string_view separator) {
  const auto& layouts = group.holder_expert_layouts();
  const bool differ =
      layouts.size() == group.holders().size() &&
      std::any_of(layouts.begin(), layouts.end(), [&](const std::string& l) { return l != layouts[0]; });
  std::vector<std::string> out;
  for (int h = 0; h < group.holders_size(); ++h) {
    out.push_back(differ ? absl::StrFormat("%s (%s)", group.holders(h), layouts[h]) : group.holders(h));
  }
  return absl::StrJoin(out, std::string(separator));
}

}  // namespace hetsim::traces
