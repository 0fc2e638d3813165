#include "traces/replica_group_report.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/units.h"
#include "sim/executor/replica_groups.h"

namespace hetsim::traces {

using executor::ExecutionResult;
using executor::ExecutionSetup;

int64_t PeakMemory(const ExecutionSetup& setup, const ExecutionResult& r, int s, int group) {
  int64_t peak = 0;
  for (const auto& [t, bytes] : executor::MemoryTimeline(setup, r, s, group)) peak = std::max(peak, bytes);
  return peak;
}

int TightestGroup(const ExecutionSetup& setup, const ExecutionResult& r, int s) {
  const auto& st = setup.stages[s];
  int tightest = -1;
  double most = -1;
  for (int g = 0; g < static_cast<int>(st.replica_groups.size()); ++g) {
    const double share =
        static_cast<double>(PeakMemory(setup, r, s, g)) / std::max(1.0, st.replica_groups[g].memory_capacity_bytes);
    if (share > most) {
      most = share;
      tightest = g;
    }
  }
  return tightest;
}

Time GroupIdle(const ExecutionSetup& setup, const ExecutionResult& r, int s, int g) {
  Time idle = 0;
  for (pipeline::NodeId id : setup.dag->stage_compute_order()[s]) idle += executor::GroupWaitIn(setup, r, id, g);
  return idle;
}

std::string MeshName(const spec::MeshSpec& m) {
  auto range = [](uint32_t first, uint32_t count) {
    return count == 1 ? absl::StrFormat("%d", first) : absl::StrFormat("%d-%d", first, first + count - 1);
  };
  return absl::StrFormat("%s node%s %s, GPU%s %s", m.island, m.node_count == 1 ? "" : "s",
                         range(m.first_node, m.node_count), m.gpus_per_node == 1 ? "" : "s",
                         range(m.first_gpu, m.gpus_per_node));
}

std::string MixedIslands(const ExecutionSetup& setup, int s) {
  std::string out;
  for (const auto& g : setup.stages[s].layout.replica_groups) {
    const std::string& name = setup.spec.cluster.islands[g.island].name;
    if (out.find(name) == std::string::npos) out += (out.empty() ? "" : "+") + name;
  }
  return out;
}

std::string MixedMeshName(const spec::StageSpec& stage) {
  std::string out;
  for (const spec::ReplicaGroupSpec& g : stage.replica_groups) out += (out.empty() ? "" : " + ") + MeshName(g.mesh);
  return out;
}

void AddReplicaGroupReports(const ExecutionSetup& setup, const ExecutionResult& r, int s, Time busy,
                            hetsim::v1::StageReport& out) {
  const auto& st = setup.stages[s];
  for (int g = 0; g < static_cast<int>(st.replica_groups.size()); ++g) {
    const executor::StageLayout& layout = st.layout.replica_groups[g];
    Time forward = 0, backward = 0;
    for (int k = s; k < static_cast<int>(setup.virtual_stages.size()); k += setup.num_stages()) {
      forward += setup.virtual_stages[k].replica_groups[g].forward_time();
      backward += setup.virtual_stages[k].replica_groups[g].backward_time();
    }
    const Time idle = GroupIdle(setup, r, s, g);
    const int64_t peak = PeakMemory(setup, r, s, g);
    hetsim::v1::ReplicaGroupReport* line = out.add_replica_groups();
    line->set_island(setup.spec.cluster.islands[layout.island].name);
    line->set_gpu_type(st.replica_groups[g].gpu_type_name);
    line->set_tensor_parallel(static_cast<uint32_t>(layout.tensor_parallel));
    line->set_data_parallel(static_cast<uint32_t>(layout.data_parallel));
    line->set_micro_batch_share(layout.micro_batch_share);
    if (setup.model->num_experts() > 1) {  // MoE: the group's own expert layout
      line->set_expert_parallel(static_cast<uint32_t>(layout.expert_parallel));
      line->set_expert_tensor_parallel(static_cast<uint32_t>(layout.ExpertTensorParallel()));
    }
    line->set_forward_ms_per_microbatch(TimeToMilliseconds(forward));
    line->set_backward_ms_per_microbatch(TimeToMilliseconds(backward));
    line->set_compute_busy_ms(TimeToMilliseconds(std::max<Time>(0, busy - idle)));
    line->set_idle_ms(TimeToMilliseconds(idle));
    line->set_peak_memory_gib(BytesToGib(static_cast<double>(peak)));
    line->set_oom(static_cast<double>(peak) > st.replica_groups[g].memory_capacity_bytes);
  }
}

}  // namespace hetsim::traces
