#include "traces/text_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/counted.h"
#include "base/spec/plan.h"
#include "proto/validate_plan.h"
#include "traces/framework_report.h"
#include "traces/pipelines_report.h"

namespace hetsim::traces {

namespace {

// Plan.nccl_sm_contention: one line when NCCL's kernels beside the compute slowed some stage.
void AppendContention(const v1::Report& r, std::string& out) {
  std::string stages;
  for (const v1::StageReport& s : r.stages()) {
    if (s.overlap_contention_ms() > 0)
      absl::StrAppendFormat(&stages, "%s stage %d +%.1f ms", stages.empty() ? "" : ",", s.index(),
                            s.overlap_contention_ms());
  }
  if (!stages.empty()) absl::StrAppendFormat(&out, "NCCL beside the compute (SMs it held):%s\n", stages);
}

// ZeRO-3 in a plan of pipelines: one line when some stage's passes waited for their layer ranges' other
// holders to make the same gather call (StageReport.gather_call_wait_ms, over the iteration).
void AppendGatherCallWaits(const v1::Report& r, std::string& out) {
  std::string stages;
  for (const v1::StageReport& s : r.stages()) {
    if (s.gather_call_wait_ms() > 0)
      absl::StrAppendFormat(&stages, "%s stage %d +%.1f ms", stages.empty() ? "" : ",", s.index(),
                            s.gather_call_wait_ms());
  }
  if (!stages.empty())
    absl::StrAppendFormat(&out, "ZeRO-3 gather calls (waiting for the ranges' other holders):%s\n", stages);
}

// Mixed stages (replica groups on different GPU types): a line per group, what it computes and how
// long it waits for the stage's slowest group.
void AppendReplicaGroups(const v1::Report& r, std::string& out) {
  bool any = false;
  for (const v1::StageReport& s : r.stages()) any = any || s.replica_groups_size() > 0;
  if (!any) return;
  int type_width = 8;
  for (const v1::StageReport& s : r.stages()) {
    for (const v1::ReplicaGroupReport& g : s.replica_groups()) {
      type_width = std::max(type_width, static_cast<int>(g.gpu_type().size()));
    }
  }
  absl::StrAppend(&out, "\nreplica groups: stage  ", absl::StrFormat("%-*s", type_width, "gpu type"),
                  "  TPxDP  share  fwd ms  bwd ms   busy ms   idle ms  peak GiB\n");
  for (const v1::StageReport& s : r.stages()) {
    for (const v1::ReplicaGroupReport& g : s.replica_groups()) {
      absl::StrAppendFormat(&out, "%21d  %-*s  %2dx%-3d  %5d  %6.2f  %6.2f  %8.1f  %8.1f  %8.1f%s", s.index(),
                            type_width, g.gpu_type(), g.tensor_parallel(), g.data_parallel(), g.micro_batch_share(),
                            g.forward_ms_per_microbatch(), g.backward_ms_per_microbatch(), g.compute_busy_ms(),
                            g.idle_ms(), g.peak_memory_gib(), g.oom() ? "  OOM" : "");
      // MoE: the group's own expert layout.
      if (g.expert_parallel() > 0)
        absl::StrAppendFormat(&out, "  EP %d ETP %d", g.expert_parallel(), g.expert_tensor_parallel());
      out += "\n";
    }
  }
}

// Plan.pipelines: a line per pipeline (its stages are the report's, in order) and per layer range.
void AppendPipelines(const v1::Report& r, std::string& out) {
  if (r.pipelines().empty()) return;
  out += "\n";
  uint32_t first = 0;
  for (const v1::PipelineReport& p : r.pipelines()) {
    absl::StrAppendFormat(&out,
                          "pipeline %s: %s in %s of %d, stages %d-%d on %s, pipeline %.3f ms, ends %.3f ms, bubble "
                          "%.1f%%\n",
                          p.name(), Counted(p.batch_share(), "sample"), Counted(p.num_microbatches(), "microbatch"),
                          p.micro_batch_size(), first, first + p.num_stages() - 1, Counted(p.num_gpus(), "GPU"),
                          p.pipeline_ms(), p.end_ms(), 100 * p.bubble_ratio());
    if (p.context_parallel() > 1) {
      out.insert(out.size() - 1, absl::StrFormat(", context parallel %d", p.context_parallel()));
    }
    first += p.num_stages();
  }
  const int zero = LayerRangeZeroStage(r);
  out += LayerRangeSyncTitle(r) + ":\n";
  for (const v1::GradientGroupReport& g : r.gradient_groups()) {
    const std::string what =
        g.tied_embedding() ? "tied embedding"
                           : absl::StrFormat("layers %d-%d", g.first_layer(), g.first_layer() + g.num_layers() - 1);
    absl::StrAppendFormat(&out, "  %s  %s x %s  %.2f MB per GPU  %.3f-%.3f ms", what, Counted(g.num_gpus(), "GPU"),
                          Counted(g.shards(), "shard"), static_cast<double>(g.bytes_per_gpu()) / 1e6, g.start_ms(),
                          g.end_ms());
    if (zero == 3) {
      absl::StrAppendFormat(&out, ", gathers %.2f MB per GPU a pass",
                            static_cast<double>(g.param_bytes_per_gpu()) / 1e6);
    } else if (zero > 0) {
      absl::StrAppendFormat(&out, ", gather %.2f MB per GPU %.3f-%.3f ms",
                            static_cast<double>(g.param_bytes_per_gpu()) / 1e6, g.param_gather_start_ms(),
                            g.param_gather_end_ms());
    }
    if (g.expert_groups() > 0) {
      absl::StrAppendFormat(&out, ", experts %s x %s %.2f MB per GPU", Counted(g.expert_num_gpus(), "GPU"),
                            Counted(g.expert_groups(), "group"), static_cast<double>(g.expert_bytes_per_gpu()) / 1e6);
    }
    absl::StrAppendFormat(&out, "  %s\n", GradientGroupHolders(g, " + "));
  }
}

}  // namespace

std::string FormatReportTable(const v1::Report& r) {
  std::string out;
  absl::StrAppendFormat(&out, "plan %s: model %s on cluster %s, %s, %s, %s, %s\n", r.plan_name(), r.model_name(),
                        r.cluster_name(), Counted(r.num_gpus(), "GPU"), Counted(r.num_stages(), "stage"),
                        Counted(r.num_microbatches(), "microbatch"), r.schedule());
  absl::StrAppendFormat(&out, "network: %s\n", r.network_model());
  out += FormatFramework(r);
  absl::StrAppendFormat(
      &out, "iteration %.3f ms (pipeline %.3f ms, critical path %.3f ms)  %.1f samples/s  %.0f tokens/s\n",
      r.iteration_time_ms(), r.pipeline_ms(), r.critical_path_ms(), r.samples_per_s(), r.tokens_per_s());
  absl::StrAppendFormat(&out, "model %.1f TFLOP/s per GPU  MFU %.1f%%  bubble %.1f%%  eta %.1f%%%s\n",
                        r.model_tflops_per_gpu(), 100 * r.mfu(), 100 * r.bubble_ratio(), 100 * r.eta(),
                        r.oom() ? "  OUT OF MEMORY" : "");
  // The GPU-type column is as wide as its longest entry ("a100-80gb (A100-80GB)"), never cut.
  int type_width = 8;
  for (const v1::StageReport& s : r.stages()) type_width = std::max(type_width, static_cast<int>(s.gpu_type().size()));
  // An MoE model's stages also show their experts' layout, EP x ETP (dense tables print as before).
  const bool moe = !r.stages().empty() && r.stages(0).expert_parallel() > 0;
  absl::StrAppend(&out, "\nstage  layers   gpus  ", absl::StrFormat("%-*s", type_width, "gpu type"), "  TPxDP  ",
                  moe ? "EPxETP  " : "",
                  "warm-up  fwd ms  bwd ms   busy ms  comm ms  sync+opt   idle ms  peak GiB / cap\n");
  for (const v1::StageReport& s : r.stages()) {
    const std::string experts =
        moe ? absl::StrFormat("%-6s  ", absl::StrFormat("%dx%d", s.expert_parallel(), s.expert_tensor_parallel())) : "";
    absl::StrAppendFormat(
        &out, "%5d  %3d-%-3d  %4d  %-*s  %2dx%-3d  %s%7d  %6.2f  %6.2f  %8.1f  %7.1f  %8.1f  %8.1f  %6.1f / %.0f%s\n",
        s.index(), s.first_layer(), s.first_layer() + s.num_layers() - 1, s.num_gpus(), type_width, s.gpu_type(),
        s.tensor_parallel(), s.data_parallel(), experts, s.warmup_forwards(), s.forward_ms_per_microbatch(),
        s.backward_ms_per_microbatch(), s.compute_busy_ms(), s.exposed_comm_ms(), s.grad_sync_ms() + s.optimizer_ms(),
        s.idle_ms(), s.peak_memory_gib(), s.memory_capacity_gib(),
        s.oom() ? absl::StrFormat("  OOM by %.2f GiB", s.oom_excess_gib()) : "");
  }
  AppendReplicaGroups(r, out);
  AppendPipelines(r, out);
  if (r.context_parallel() > 1) {
    // Each value as wide as its column's label, whichever exchange names it.
    const std::string bytes_label = absl::StrCat(
        spec::ContextParallelExchangeName(proto::ContextParallelCommOf(r.cp_comm_type())), " MB/microbatch");
    const std::string time_label = r.cp_comm_type() == v1::CP_COMM_P2P ? "ring ms" : "exchange ms";
    const int stage_width =
        static_cast<int>(absl::StrFormat("context parallel %d: stage", r.context_parallel()).size());
    absl::StrAppendFormat(&out, "\ncontext parallel %d: stage  %s  %s  exposed ms\n", r.context_parallel(), bytes_label,
                          time_label);
    for (const v1::StageReport& s : r.stages()) {
      if (s.context_parallel() <= 1) continue;  // a plan of pipelines' stage of a pipeline without CP
      absl::StrAppendFormat(&out, "%*d  %*.2f  %*.2f  %10.3f\n", stage_width, s.index(),
                            static_cast<int>(bytes_label.size()),
                            static_cast<double>(s.cp_bytes_per_microbatch()) / 1e6, static_cast<int>(time_label.size()),
                            s.cp_exchange_ms(), s.cp_exposed_ms());
    }
  }
  AppendContention(r, out);
  AppendGatherCallWaits(r, out);
  if (r.has_approximation_choice()) {
    absl::StrAppendFormat(&out, "fidelity: %s\n", r.approximation_choice().note());
  } else {
    for (const std::string& a : r.approximations()) absl::StrAppendFormat(&out, "approximation: %s\n", a);
  }
  if (r.boundaries_size() > 0) {
    absl::StrAppend(&out, "\nboundary  MB/microbatch  transfer ms  hidden  slowest link\n");
    for (const v1::BoundaryReport& b : r.boundaries()) {
      absl::StrAppendFormat(&out, "%3d -> %-2d  %13.2f  %11.3f  %5.1f%%  %s\n", b.from_stage(), b.to_stage(),
                            static_cast<double>(b.bytes_per_microbatch()) / 1e6, b.transfer_ms(),
                            100 * b.overlap_ratio(), b.link_class());
    }
  }
  absl::StrAppend(&out, "\nlink class   links        GB moved  mean util  max util\n");
  for (const v1::LinkClassReport& l : r.links()) {
    absl::StrAppendFormat(&out, "%-10s  %6d  %14.2f  %8.1f%%  %7.1f%%\n", l.link_class(), l.links(), l.bytes() / 1e9,
                          100 * l.mean_utilization(), 100 * l.max_utilization());
  }
  absl::StrAppendFormat(&out, "\n%s, %s", Counted(r.events_processed(), "event"), Counted(r.flows(), "flow"));
  if (r.wall_time_s() > 0) absl::StrAppendFormat(&out, ", %.3f s wall", r.wall_time_s());
  absl::StrAppend(&out, "\n");
  return out;
}

}  // namespace hetsim::traces
