#include "traces/metrics.h"

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_format.h"
#include "base/spec/plan.h"
#include "base/units.h"
#include "proto/validate_plan.h"
#include "sim/executor/link_counters.h"
#include "sim/pipeline/dag.h"
#include "sim/pipeline/iteration_metrics.h"
#include "sim/pipeline/schedule.h"
#include "traces/framework_report.h"
#include "traces/replica_group_report.h"

namespace hetsim::traces {
namespace {

using pipeline::NodeId;
using pipeline::NodeKind;

bool IsTransfer(NodeKind k) { return k == NodeKind::kCommForward || k == NodeKind::kCommBackward; }

// Per stage and per boundary: how long compute waited on a transfer that was still running. A
// compute node that starts after the stage's previous operation ended waited; when the predecessor
// that released it last is a transfer, the part of the wait during which that transfer ran is
// exposed communication (the rest was the upstream stage being late: a bubble).
struct Exposure {
  std::vector<Time> stage;     // per physical stage
  std::vector<Time> boundary;  // per virtual boundary
};

Exposure ComputeExposure(const executor::ExecutionSetup& setup, const executor::ExecutionResult& r) {
  const auto& dag = *setup.dag;
  Exposure e{std::vector<Time>(setup.num_stages(), 0), std::vector<Time>(setup.boundaries.size(), 0)};
  absl::flat_hash_map<NodeId, absl::InlinedVector<std::pair<Time, Time>, 2>> waits;  // per transfer waited on
  for (int s = 0; s < setup.num_stages(); ++s) {
    Time previous_end = 0;
    for (NodeId id : dag.stage_compute_order()[s]) {
      const Time start = r.node_start[id];
      NodeId binding = -1;
      for (NodeId p : dag.predecessors(id)) {
        if (binding < 0 || r.node_finish[p] > r.node_finish[binding] ||
            (r.node_finish[p] == r.node_finish[binding] && IsTransfer(dag.node(binding).kind) &&
             !IsTransfer(dag.node(p).kind))) {
          binding = p;
        }
      }
      if (binding >= 0 && IsTransfer(dag.node(binding).kind) && start > previous_end) {
        const Time waited_from = std::max(previous_end, r.node_start[binding]);
        if (start > waited_from) {
          e.stage[s] += start - waited_from;
          waits[binding].emplace_back(waited_from, std::min(start, r.node_finish[binding]));
        }
      }
      previous_end = r.node_finish[id];
    }
  }
  // A boundary's exposed time is, per transfer, the union of the waits on it while it ran: under
  // interleaving the sender (its batched send blocks) and the receiver may both wait on one
  // transfer, which counts once, so exposed <= transfer time and the hidden share is >= 0.
  for (auto& [transfer, intervals] : waits) {
    std::sort(intervals.begin(), intervals.end());
    Time covered = 0, reach = kTimeMin;
    for (auto [from, to] : intervals) {
      from = std::max(from, reach);
      if (to > from) covered += to - from;
      reach = std::max(reach, to);
    }
    e.boundary[dag.node(transfer).virtual_stage] += covered;
  }
  return e;
}

}  // namespace

const char* NetworkModelDescription(network::NetworkMode mode) {
  return mode == network::NetworkMode::kMaxMinFair ? "flow (max-min fair)" : "analytical (contention-free)";
}

namespace {

using executor::ExecutionResult;
using executor::ExecutionSetup;

// Busy compute time of stage s: the sum of its forward and backward nodes' durations.
Time StageBusy(const ExecutionSetup& setup, const ExecutionResult& r, int s) {
  Time busy = 0;
  for (NodeId id : setup.dag->stage_compute_order()[s]) busy += r.node_finish[id] - r.node_start[id];
  return busy;
}

pipeline::IterationMetrics MetricsOf(const ExecutionSetup& setup, const ExecutionResult& r) {
  return pipeline::ComputeIterationMetrics(IterationFiguresOf(setup, r));
}

// Names, sizes, iteration time, throughput, MFU, bubble ratio and eta.
void AddIterationFigures(const ExecutionSetup& setup, const ExecutionResult& r, v1::Report& report) {
  const auto& dag = *setup.dag;
  report.set_plan_name(setup.spec.plan.name);
  report.set_cluster_name(setup.spec.cluster.name);
  report.set_model_name(setup.model->name());
  report.set_schedule(std::string(pipeline::ScheduleName(dag.schedule().kind)));
  report.set_network_model(NetworkModelDescription(setup.network_mode));
  report.set_num_gpus(setup.num_gpus());
  if (setup.num_stages() > 0 && setup.stages[0].layout.context_parallel > 1) {
    report.set_context_parallel(static_cast<uint32_t>(setup.stages[0].layout.context_parallel));
    report.set_cp_comm_type(proto::ContextParallelCommProto(setup.spec.plan.cp_comm));
  }
  report.set_num_stages(setup.num_stages());
  report.set_num_microbatches(static_cast<uint32_t>(setup.microbatches));

  report.set_iteration_time_ms(TimeToMilliseconds(r.iteration_time));
  report.set_pipeline_ms(TimeToMilliseconds(r.pipeline_end - r.pipeline_start));
  report.set_critical_path_ms(TimeToMilliseconds(pipeline::AnalyzeLongestPath(dag, setup.durations).iteration_time));
  const pipeline::IterationMetrics m = MetricsOf(setup, r);
  report.set_samples_per_s(m.samples_per_s);
  report.set_tokens_per_s(m.tokens_per_s);
  report.set_model_flop_per_iteration(m.model_flop);
  report.set_mfu(m.mfu);
  report.set_model_tflops_per_gpu(m.model_tflops_per_gpu);
  report.set_bubble_ratio(m.bubble_ratio);
  report.set_eta(m.eta);
}

// Peak memory of one GPU of stage s (of replica group `group` of a mixed stage, -1 for a plain one),
// what it holds, and OOM against its capacity.
void AddStageMemory(const ExecutionSetup& setup, const ExecutionResult& r, int s, int group, v1::StageReport& out,
                    v1::Report& report) {
  const auto& st = setup.stages[s];
  const workload::StageCost& cost = group < 0 ? st.cost : st.replica_groups[group].cost;
  const double capacity = group < 0 ? st.memory_capacity_bytes : st.replica_groups[group].memory_capacity_bytes;
  // What one microbatch keeps: its chunks' activations (each chunk recomputes its own first N blocks).
  int64_t per_microbatch = 0;
  for (size_t k = static_cast<size_t>(s); k < setup.virtual_stages.size(); k += setup.stages.size()) {
    const auto& vs = setup.virtual_stages[k];
    per_microbatch += (group < 0 ? vs.cost : vs.replica_groups[group].cost).memory.activation_bytes_per_microbatch;
  }
  const int64_t peak = PeakMemory(setup, r, s, group);
  const int64_t states = cost.memory.ModelStateBytes();
  out.set_peak_memory_gib(BytesToGib(static_cast<double>(peak)));
  out.set_memory_capacity_gib(BytesToGib(capacity));
  out.set_param_memory_gib(BytesToGib(static_cast<double>(states)));
  out.set_activation_memory_gib(BytesToGib(static_cast<double>(peak - states)));
  if (per_microbatch > 0) {
    out.set_num_microbatches_in_flight(static_cast<uint32_t>(
        (peak - states - (peak > states ? cost.memory.recompute_working_bytes : 0)) / per_microbatch));
  }
  if (static_cast<double>(peak) > capacity) {
    out.set_oom(true);
    out.set_oom_excess_gib(BytesToGib(static_cast<double>(peak) - capacity));
    report.set_oom(true);
  }
}

// Per stage: time breakdown and memory.
// Context parallelism's ring and ZeRO-3's exposed parameter gathers of physical stage s, per
// microbatch (its virtual stages summed); left unset when zero, so plans without them read as before.
void AddStageCommDetail(const ExecutionSetup& setup, int s, v1::StageReport& out) {
  Time exchange = 0, exposed = 0, gather = 0;
  int64_t bytes = 0;
  for (size_t k = static_cast<size_t>(s); k < setup.virtual_stages.size(); k += setup.stages.size()) {
    const auto& vs = setup.virtual_stages[k];
    exchange += vs.cp_forward_exchange_time + vs.cp_backward_exchange_time;
    exposed += vs.cp_forward_exposed_time + vs.cp_backward_exposed_time;
    gather += vs.forward_gather_exposed_time + vs.backward_gather_exposed_time;
    bytes += vs.cp_bytes;
  }
  if (setup.stages[s].layout.context_parallel > 1) {
    out.set_context_parallel(static_cast<uint32_t>(setup.stages[s].layout.context_parallel));
    out.set_cp_exchange_ms(TimeToMilliseconds(exchange));
    out.set_cp_exposed_ms(TimeToMilliseconds(exposed));
    out.set_cp_bytes_per_microbatch(static_cast<uint64_t>(bytes));
  }
  if (gather > 0) out.set_param_gather_exposed_ms(TimeToMilliseconds(gather));
}

// Plan.nccl_sm_contention: what the NCCL kernels beside stage s's compute added to it over the iteration
// (the passes' hidden collectives, the paired MoE all-to-alls, the stage's own buckets and gathers in
// flight); left unset when zero. Likewise ZeRO-3 across pipelines' waits for the gather calls.
void AddStageContention(const ExecutionSetup& setup, const ExecutionResult& r, int s, v1::StageReport& out) {
  const auto& dag = *setup.dag;
  Time total = setup.stages[s].moe_pair_contention_time;
  if (static_cast<size_t>(s) < r.overlap_contention.size()) total += r.overlap_contention[s];
  for (NodeId id : dag.stage_compute_order()[s]) {
    const pipeline::DagNode& node = dag.node(id);
    const executor::VirtualStageCost& vs = setup.virtual_stages[node.virtual_stage];
    total += node.kind == pipeline::NodeKind::kForward ? vs.forward_contention_time : vs.backward_contention_time;
  }
  if (total > 0) out.set_overlap_contention_ms(TimeToMilliseconds(total));
  // ZeRO-3 across pipelines: the stage's passes' waits for their ranges' other holders' gather calls.
  if (static_cast<size_t>(s) < r.gather_call_wait.size() && r.gather_call_wait[s] > 0)
    out.set_gather_call_wait_ms(TimeToMilliseconds(r.gather_call_wait[s]));
}

void AddStages(const ExecutionSetup& setup, const ExecutionResult& r, const Exposure& exposure, v1::Report& report) {
  const auto& dag = *setup.dag;
  const spec::PlanSpec& plan = setup.spec.plan;
  const int S = setup.num_stages();
  for (int s = 0; s < S; ++s) {
    const auto& st = setup.stages[s];
    const spec::StageSpec& ps = plan.stages[s];
    const Time busy = StageBusy(setup, r, s);
    Time forward = 0, backward = 0;
    for (int k = s; k < dag.num_virtual_stages(); k += S) {
      forward += setup.virtual_stages[k].forward_time();
      backward += setup.virtual_stages[k].backward_time();
    }
    const Time optimizer = st.optimizer_time;
    const Time sync = (r.grad_sync_end[s] - r.last_backward_end[s]) +
                      (r.stage_end[s] - r.optimizer_start[s] - optimizer) + executor::EarlyGatherWait(setup, r, s);
    v1::StageReport* out = report.add_stages();
    out->set_index(s);
    out->set_first_layer(ps.first_layer);
    out->set_num_layers(ps.num_layers);
    out->set_island(ps.mesh.island);
    out->set_mesh(MeshName(ps.mesh));
    out->set_gpu_type(st.gpu_type_name);
    out->set_num_gpus(static_cast<uint32_t>(st.layout.gpus.size()));
    out->set_tensor_parallel(st.layout.tensor_parallel);
    out->set_data_parallel(st.layout.data_parallel);
    if (setup.model->num_experts() > 1) {
      out->set_expert_parallel(static_cast<uint32_t>(st.layout.expert_parallel));
      out->set_expert_tensor_parallel(static_cast<uint32_t>(st.layout.ExpertTensorParallel()));
    }
    AddStageCommDetail(setup, s, *out);
    AddStageContention(setup, r, s, *out);
    out->set_warmup_forwards(dag.schedule().warmup_forwards[s]);
    out->set_forward_ms_per_microbatch(TimeToMilliseconds(forward));
    out->set_backward_ms_per_microbatch(TimeToMilliseconds(backward));
    out->set_compute_busy_ms(TimeToMilliseconds(busy));
    out->set_exposed_comm_ms(TimeToMilliseconds(exposure.stage[s]));
    out->set_grad_sync_ms(TimeToMilliseconds(sync));
    out->set_optimizer_ms(TimeToMilliseconds(optimizer));
    out->set_idle_ms(std::max(0.0, TimeToMilliseconds(r.iteration_time - busy - exposure.stage[s] - sync - optimizer)));
    AddStageMemory(setup, r, s, TightestGroup(setup, r, s), *out, report);
    if (st.layout.mixed()) {
      out->set_island(MixedIslands(setup, s));
      out->set_mesh(MixedMeshName(ps));
      AddReplicaGroupReports(setup, r, s, busy, *out);
    }
  }
}

// Per boundary: transfer time actually spent, and how much of it compute did not hide.
void AddBoundaries(const ExecutionSetup& setup, const ExecutionResult& r, const Exposure& exposure,
                   v1::Report& report) {
  const auto& dag = *setup.dag;
  std::vector<Time> transfer_total(setup.boundaries.size(), 0);
  for (NodeId id = 0; id < dag.num_nodes(); ++id) {
    if (IsTransfer(dag.node(id).kind))
      transfer_total[dag.node(id).virtual_stage] += r.node_finish[id] - r.node_start[id];
  }
  for (size_t k = 0; k < setup.boundaries.size(); ++k) {
    const auto& bt = setup.boundaries[k];
    v1::BoundaryReport* out = report.add_boundaries();
    out->set_from_stage(bt.from_stage);
    out->set_to_stage(bt.to_stage);
    out->set_bytes_per_microbatch(static_cast<uint64_t>(bt.bytes_per_microbatch));
    out->set_transfer_ms(TimeToMilliseconds(std::max(bt.forward_time, bt.backward_time)));
    out->set_overlap_ratio(transfer_total[k] > 0 ? 1.0 - TimeToPicosecondsDouble(exposure.boundary[k]) /
                                                             TimeToPicosecondsDouble(transfer_total[k])
                                                 : 1.0);
    out->set_link_class(std::string(topology::LinkClassName(bt.slowest_link_class)));
  }
}

// One link class's figures, links added in id order.
struct LinkClassSums {
  uint32_t used = 0;
  double bytes = 0, utilization_sum = 0, utilization_max = 0;

  void Add(const network::LinkCounters& counters, Time iteration_time) {
    bytes += static_cast<double>(counters.bytes);
    if (counters.busy_time > 0 && iteration_time > 0) {
      const double u =
          std::min(1.0, TimeToPicosecondsDouble(counters.busy_time) / TimeToPicosecondsDouble(iteration_time));
      ++used;
      utilization_sum += u;
      utilization_max = std::max(utilization_max, u);
    }
  }
};

// Per link class, in the enum's order; tensor-parallel collectives (timed in closed form) included.
// A run without the network's counters (a later pipeline on a shared network: its flows are the first
// run's) visits only the links its collectives load: the same sums, since the others add zero.
void AddLinkClasses(const ExecutionSetup& setup, const ExecutionResult& r, v1::Report& report) {
  const auto& links = setup.topology->links();
  std::array<LinkClassSums, topology::kNumLinkClasses> sums;
  if (r.link_counters.empty()) {
    for (const auto& [l, counters] : executor::CollectiveLinkCounters(setup, r)) {
      sums[static_cast<int>(links[l].link_class)].Add(counters, r.iteration_time);
    }
  } else {
    const std::vector<network::LinkCounters> link_counters = executor::LinkCountersWithCollectives(setup, r);
    for (size_t l = 0; l < links.size(); ++l) {
      sums[static_cast<int>(links[l].link_class)].Add(link_counters[l], r.iteration_time);
    }
  }
  for (int c = 0; c < topology::kNumLinkClasses; ++c) {
    const auto cls = static_cast<topology::LinkClass>(c);
    const uint32_t count = setup.topology->links_of_class(cls);
    if (count == 0) continue;
    const LinkClassSums& s = sums[c];
    v1::LinkClassReport* out = report.add_links();
    out->set_link_class(std::string(topology::LinkClassName(cls)));
    out->set_links(count);
    out->set_bytes(s.bytes);
    out->set_mean_utilization(s.used > 0 ? s.utilization_sum / s.used : 0);
    out->set_max_utilization(s.utilization_max);
  }
}

}  // namespace

pipeline::IterationFigures IterationFiguresOf(const ExecutionSetup& setup, const ExecutionResult& r) {
  pipeline::IterationFigures f;
  const uint64_t samples = setup.spec.plan.global_batch_size;
  f.work = {samples, setup.model->seq_length(), setup.model->ModelFlopPerIteration(samples)};
  f.iteration_time = r.iteration_time;
  f.span = r.pipeline_end - r.pipeline_start;
  for (int s = 0; s < setup.num_stages(); ++s) {
    const auto& st = setup.stages[s];
    pipeline::StageLoad& load =
        f.stages.emplace_back(StageBusy(setup, r, s), static_cast<int>(st.layout.gpus.size()), st.peak_flop_per_s);
    // A mixed stage's groups each busy only for their own passes: eta sees the wait as idle GPU time.
    for (int g = 0; g < static_cast<int>(st.replica_groups.size()); ++g) {
      load.replica_groups.push_back({std::max<Time>(0, load.busy - GroupIdle(setup, r, s, g)),
                                     static_cast<int>(st.layout.replica_groups[g].gpus.size()),
                                     st.replica_groups[g].peak_flop_per_s});
    }
  }
  return f;
}

v1::Report BuildReport(const executor::ExecutionSetup& setup, const executor::ExecutionResult& r,
                       const ReportOptions& options) {
  v1::Report report;
  AddIterationFigures(setup, r, report);
  AddFrameworkProfile(setup.spec, report);
  const Exposure exposure = ComputeExposure(setup, r);
  AddStages(setup, r, exposure, report);
  AddBoundaries(setup, r, exposure, report);
  AddLinkClasses(setup, r, report);
  report.set_events_processed(r.events);
  report.set_flows(r.flows);
  if (options.wall_time_s) report.set_wall_time_s(*options.wall_time_s);
  for (const std::string& a : options.approximations) report.add_approximations(a);
  return report;
}

}  // namespace hetsim::traces
