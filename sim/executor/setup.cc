#include "sim/executor/setup.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>
#include <utility>

#include "base/units.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/collectives/primitives.h"
#include "sim/collectives/simulate.h"
#include "sim/engine/simulator.h"
#include "proto/layer_count.h"
#include "proto/validate_plan.h"

namespace hetsim::sim::executor {
namespace {

std::vector<GpuId> Slice(const StageLayout& l, int first_replica, int replicas, int tp_rank) {
  std::vector<GpuId> out;
  for (int r = first_replica; r < first_replica + replicas; ++r) out.push_back(l.Gpu(r, tp_rank));
  return out;
}

// The groups a stage collective runs over: every replica's TP group, or for expert parallelism every
// block of `expert_parallel` consecutive replicas at each TP rank. The first is the one timed.
std::vector<std::vector<GpuId>> GroupsOf(const StageLayout& l, workload::CollectiveGroup group) {
  std::vector<std::vector<GpuId>> groups;
  if (group == workload::CollectiveGroup::kTensor) {
    for (int r = 0; r < l.data_parallel; ++r) groups.push_back(l.TensorGroup(r));
    return groups;
  }
  for (int first = 0; first + l.expert_parallel <= l.data_parallel; first += l.expert_parallel) {
    for (int t = 0; t < l.tensor_parallel; ++t) groups.push_back(Slice(l, first, l.expert_parallel, t));
  }
  return groups;
}

// One collective of a pass, `count` times in a row: adds its time (first group) to `time` and the
// load of every group to `load`.
absl::Status AddCollective(CollectiveTimer& timer, CollectiveOp op, const std::vector<std::vector<GpuId>>& groups,
                           int64_t bytes, int64_t count, Time& time, std::vector<LinkLoad>& load) {
  absl::StatusOr<Time> t = timer.TimeOf(op, groups.front(), bytes);
  if (!t.ok()) return t.status();
  time += *t * count;
  for (const std::vector<GpuId>& g : groups) {
    absl::StatusOr<std::vector<LinkLoad>> l = timer.LoadOf(op, g, bytes);
    if (!l.ok()) return l.status();
    AddLoad(load, *l, count);
  }
  return absl::OkStatus();
}

// Adds the list's collectives to `time` and `load`, and the tensor-parallel ones' time also to
// `tensor_time` (what Plan.tp_comm_overlap may hide).
absl::Status CollectivesTime(CollectiveTimer& timer, const StageLayout& l,
                             const std::vector<workload::StageCollective>& list, Time& time, Time& tensor_time,
                             std::vector<LinkLoad>& load) {
  for (const workload::StageCollective& c : list) {
    const Time before = time;
    if (auto s = AddCollective(timer, c.op, GroupsOf(l, c.group), c.bytes, c.count, time, load); !s.ok()) {
      return s;
    }
    if (c.group == workload::CollectiveGroup::kTensor) tensor_time += time - before;
  }
  return absl::OkStatus();
}

// Starts every flow at time 0 on an otherwise idle network; the time the last one ends.
absl::StatusOr<Time> FlowsAloneTime(const topology::Topology& topology, const std::vector<BoundaryFlow>& flows,
                                    NetworkMode mode) {
  if (flows.empty()) return Time{0};
  Simulator simulator;
  auto network = Network::Create(&simulator, NetworkLinks(topology), mode);
  if (!network.ok()) return network.status();
  for (const BoundaryFlow& f : flows) (*network)->StartFlow(f.route, f.bytes, nullptr, 0);
  simulator.Run();
  return simulator.now();
}

absl::Status RouteFlows(topology::Router& router, std::vector<BoundaryFlow>& flows) {
  for (size_t j = 0; j < flows.size(); ++j) {
    BoundaryFlow& f = flows[j];
    if (f.src == f.dst) continue;  // the same GPU: a local copy, no link
    absl::StatusOr<const topology::Route*> route = router.GpuRoute(f.src, f.dst, j);
    if (!route.ok()) return route.status();
    f.route = std::span<const LinkId>((*route)->data(), (*route)->size());
  }
  return absl::OkStatus();
}

topology::LinkClass SlowestClass(const topology::Topology& topology, const std::vector<BoundaryFlow>& flows) {
  double slowest = -1;
  topology::LinkClass cls = topology::LinkClass::kNvlink;
  for (const BoundaryFlow& f : flows) {
    for (LinkId id : f.route) {
      const topology::Link& link = topology.links()[id];
      // Ties go to the slower fabric kind: a gateway's uplink is as wide as the links it feeds.
      if (slowest < 0 || link.bytes_per_second < slowest ||
          (link.bytes_per_second == slowest && link.link_class > cls)) {
        slowest = link.bytes_per_second;
        cls = link.link_class;
      }
    }
  }
  return cls;
}

// ZeRO-3: each layer's weights, sharded over the DP group, are all-gathered before the layer's
// forward and again before its backward (DeepSpeed frees them in between), by every TP rank's DP group
// at once. Timed alone on the network, without prefetch overlap (on the critical path of the pass);
// each layer gathers its share of the virtual stage's dense gradient bytes by parameter count.
absl::Status ZeroThreeGathers(CollectiveTimer& timer, const workload::ModelCost& model, const StageLayout& l,
                              VirtualStageCost& vs) {
  if (l.data_parallel <= 1 || vs.cost.grad_sync_bytes <= 0) return absl::OkStatus();
  std::vector<std::vector<GpuId>> groups;
  for (int t = 0; t < l.tensor_parallel; ++t) groups.push_back(l.DataGroup(t));
  std::vector<double> weight;
  double total = 0;
  for (int i = vs.first_layer; i < vs.first_layer + vs.num_layers; ++i) {
    const workload::LayerCost& layer = model.layer(i);
    weight.push_back(static_cast<double>(layer.param_count - layer.expert_param_count) +
                     (layer.tied_with_embedding ? static_cast<double>(layer.tied_param_count) : 0));
    total += weight.back();
  }
  if (total <= 0) return absl::OkStatus();
  const double all = static_cast<double>(vs.cost.grad_sync_bytes);
  double cumulative = 0;
  int64_t done = 0;
  for (double w : weight) {
    cumulative += w;
    const auto upto = static_cast<int64_t>(std::llround(all * cumulative / total));
    const int64_t bytes = upto - done;
    done = upto;
    if (bytes <= 0) continue;
    absl::StatusOr<Time> t = timer.ConcurrentTimeOf(CollectiveOp::kAllGather, groups, bytes);
    if (!t.ok()) return t.status();
    absl::StatusOr<std::vector<LinkLoad>> load = timer.ConcurrentLoadOf(CollectiveOp::kAllGather, groups, bytes);
    if (!load.ok()) return load.status();
    vs.forward_collective_time += *t;
    vs.backward_collective_time += *t;
    AddLoad(vs.forward_link_load, *load, 1);
    AddLoad(vs.backward_link_load, *load, 1);
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<GpuId> StageLayout::TensorGroup(int replica) const {
  return std::vector<GpuId>(gpus.begin() + replica * tensor_parallel, gpus.begin() + (replica + 1) * tensor_parallel);
}

std::vector<GpuId> StageLayout::DataGroup(int tp_rank) const { return Slice(*this, 0, data_parallel, tp_rank); }

int ExecutionSetup::num_gpus() const {
  int n = 0;
  for (const StageSetup& s : stages) n += static_cast<int>(s.layout.gpus.size());
  return n;
}

std::vector<BoundaryFlow> ReshardFlows(const StageLayout& from, const StageLayout& to, uint64_t micro_batch_size,
                                       double bytes_per_sample) {
  std::vector<BoundaryFlow> flows;
  const int64_t b = static_cast<int64_t>(micro_batch_size);
  const int64_t per_from = b / from.data_parallel;
  const int64_t per_to = b / to.data_parallel;
  const int pieces = std::max(from.tensor_parallel, to.tensor_parallel);
  for (int r = 0; r < from.data_parallel; ++r) {
    const int64_t lo = r * per_from, hi = lo + per_from;
    for (int q = static_cast<int>(lo / per_to); q < to.data_parallel && q * per_to < hi; ++q) {
      const int64_t overlap = std::min(hi, (q + 1) * per_to) - std::max(lo, q * per_to);
      if (overlap <= 0) continue;
      const auto bytes = static_cast<int64_t>(std::ceil(bytes_per_sample * static_cast<double>(overlap)));
      for (int j = 0; j < pieces; ++j) {
        flows.push_back({from.Gpu(r, j % from.tensor_parallel), to.Gpu(q, j % to.tensor_parallel),
                         SplitBytes(bytes, pieces, j), {}});
      }
    }
  }
  return flows;
}

absl::StatusOr<std::unique_ptr<ExecutionSetup>> BuildExecutionSetup(const proto::PlanInputs& inputs,
                                                                    NetworkMode mode) {
  auto setup = std::make_unique<ExecutionSetup>();
  setup->inputs = inputs;
  setup->network_mode = mode;
  setup->microbatches = inputs.microbatches;
  const v1::Plan& plan = setup->inputs.plan;
  const std::string& plan_file = inputs.plan_path;

  absl::StatusOr<topology::Topology> topo = topology::Topology::Build(setup->inputs.cluster);
  if (!topo.ok()) return absl::InvalidArgumentError(absl::StrCat(inputs.cluster_path, ": ", topo.status().message()));
  setup->topology = std::make_unique<topology::Topology>(*std::move(topo));
  setup->router = std::make_unique<topology::Router>(*setup->topology);
  const topology::Topology& topology = *setup->topology;

  absl::StatusOr<workload::ModelCost> model =
      workload::ModelCost::Create(setup->inputs.model, inputs.model_path.empty() ? plan_file + ": model" : inputs.model_path);
  if (!model.ok()) return model.status();
  setup->model = std::make_unique<workload::ModelCost>(*std::move(model));

  const int S = plan.stages_size();
  const int v = std::max<int>(1, static_cast<int>(plan.virtual_stages()));
  CollectiveTimer timer(topology, *setup->router, mode);

  // Physical stages: layout, whole-stage cost, memory, gradient synchronisation.
  std::vector<workload::GpuCompute> gpus_compute;
  for (int s = 0; s < S; ++s) {
    const v1::Stage& st = plan.stages(s);
    const std::string where = absl::StrFormat("%s: stages[%d]", plan_file, s);
    StageSetup out;
    absl::StatusOr<int32_t> island = topology.IslandIndex(st.mesh().island());
    if (!island.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ".mesh.island: ", island.status().message()));
    absl::StatusOr<std::vector<GpuId>> gpus = topology.MeshGpus(st.mesh());
    if (!gpus.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ".mesh: ", gpus.status().message()));
    out.layout.gpus = *std::move(gpus);
    out.layout.island = *island;
    out.layout.tensor_parallel = std::max<int>(1, static_cast<int>(st.tensor_parallel()));
    out.layout.data_parallel = std::max<int>(1, static_cast<int>(st.data_parallel()));
    out.layout.expert_parallel = std::max<int>(1, static_cast<int>(st.expert_parallel()));
    if (static_cast<int>(out.layout.gpus.size()) != out.layout.tensor_parallel * out.layout.data_parallel) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: tensor_parallel %d x data_parallel %d != %d GPUs in the mesh",
                                                        where, out.layout.tensor_parallel, out.layout.data_parallel,
                                                        out.layout.gpus.size()));
    }
    const v1::GpuType& gpu_type = topology.gpu_type(*island);
    absl::StatusOr<workload::GpuCompute> gpu =
        workload::GpuCompute::Create(gpu_type, setup->model->dtype(), absl::StrCat(inputs.cluster_path, ": gpu_types[\"", gpu_type.name(), "\"]"),
                                     topology.cluster().ideal());
    if (!gpu.ok()) return gpu.status();
    out.gpu_type_name = gpu_type.preset().empty() ? gpu_type.name() : absl::StrCat(gpu_type.name(), " (", gpu_type.preset(), ")");
    out.peak_flop_per_s = gpu->peak_flop_per_s();
    out.memory_capacity_bytes = GibToBytes(gpu_type.hbm_gib());
    const workload::StageConfig config = workload::StageConfigFromProto(st, plan.micro_batch_size());
    absl::StatusOr<workload::StageCost> cost = workload::ComputeStageCost(*setup->model, config, *gpu, where);
    if (!cost.ok()) return cost.status();
    out.cost = *std::move(cost);
    const workload::StageMemory& m = out.cost.memory;
    // Adam reads gradients, moments and master weights and writes moments, master and weights.
    // The iteration's own host work (data loading, loss-scaler check, logging) ends it with the step.
    out.optimizer_time = SecondsToTime(
        gpu->MemorySeconds(static_cast<double>(m.grad_bytes + m.param_bytes + 2 * m.optimizer_bytes)) +
        gpu->iteration_overhead_s());
    if (out.layout.data_parallel > 1) {
      const int64_t bytes = out.cost.grad_sync_bytes + out.cost.expert_grad_sync_bytes;
      const CollectiveOp op = config.zero_stage == 0 ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter;
      const int64_t bucket = plan.grad_bucket_bytes() > 0 ? static_cast<int64_t>(plan.grad_bucket_bytes()) : bytes;
      for (int64_t done = 0; done < bytes; done += bucket) out.grad_buckets.push_back({op, std::min(bucket, bytes - done)});
      // ZeRO-1/2 all-gather the updated weights after the step; ZeRO-3 keeps them sharded and gathers
      // each layer's before its forward and again before its backward (ZeroThreeGathers).
      if ((config.zero_stage == 1 || config.zero_stage == 2) && bytes > 0) {
        out.param_gather = GradSyncStep{CollectiveOp::kAllGather, bytes};
      }
    }
    setup->stages.push_back(std::move(out));
    gpus_compute.push_back(*std::move(gpu));
  }

  // Virtual stages: the model's layers dealt in order to k = chunk * S + stage, each stage keeping its
  // plan's layer count, its blocks cut into v chunks, the embedding in the first chunk and the head in
  // the last (Megatron-LM's assignment, pipeline::VirtualStageLayers).
  const int K = S * v;
  setup->virtual_stages.resize(K);
  std::vector<int> stage_layers;
  for (const v1::Stage& st : plan.stages()) stage_layers.push_back(static_cast<int>(st.num_layers()));
  const std::vector<pipeline::LayerRange> ranges =
      pipeline::VirtualStageLayers(stage_layers, v, proto::ModelEdgeLayers(setup->inputs.model));
  for (int c = 0; c < v; ++c) {
    for (int s = 0; s < S; ++s) {
      const v1::Stage& st = plan.stages(s);
      VirtualStageCost& vs = setup->virtual_stages[c * S + s];
      if (v == 1) {
        vs.cost = setup->stages[s].cost;
        vs.first_layer = static_cast<int>(st.first_layer());
        vs.num_layers = static_cast<int>(st.num_layers());
      } else {
        workload::StageConfig config = workload::StageConfigFromProto(st, plan.micro_batch_size());
        const pipeline::LayerRange& range = ranges[c * S + s];
        // A measured stage time is spread over the chunks by their share of the stage's layers.
        const double share = static_cast<double>(range.num_layers) / std::max<double>(1, st.num_layers());
        config.first_layer = range.first_layer;
        config.num_layers = range.num_layers;
        config.measured_forward_ms *= share;
        config.measured_backward_ms *= share;
        absl::StatusOr<workload::StageCost> cost = workload::ComputeStageCost(
            *setup->model, config, gpus_compute[s], absl::StrFormat("%s: stages[%d] (chunk %d)", plan_file, s, c));
        if (!cost.ok()) return cost.status();
        vs.cost = *std::move(cost);
        vs.first_layer = config.first_layer;
        vs.num_layers = config.num_layers;
      }
    }
  }

  // Boundaries between virtual stages, and the TP collective time of every virtual stage.
  for (int k = 0; k + 1 < K; ++k) {
    BoundaryTransfer bt;
    bt.from_stage = k % S;
    bt.to_stage = (k + 1) % S;
    const VirtualStageCost& vs = setup->virtual_stages[k];
    const double bytes_per_sample = setup->model->layer(vs.first_layer + vs.num_layers - 1).output_bytes_per_sample;
    bt.bytes_per_microbatch = vs.cost.boundary_bytes_per_microbatch;
    const StageLayout& a = setup->stages[bt.from_stage].layout;
    const StageLayout& b = setup->stages[bt.to_stage].layout;
    bt.forward_flows = ReshardFlows(a, b, plan.micro_batch_size(), bytes_per_sample);
    bt.backward_flows = ReshardFlows(b, a, plan.micro_batch_size(), bytes_per_sample);
    if (auto s = RouteFlows(*setup->router, bt.forward_flows); !s.ok()) return s;
    if (auto s = RouteFlows(*setup->router, bt.backward_flows); !s.ok()) return s;
    absl::StatusOr<Time> fwd = FlowsAloneTime(topology, bt.forward_flows, mode);
    if (!fwd.ok()) return fwd.status();
    absl::StatusOr<Time> bwd = FlowsAloneTime(topology, bt.backward_flows, mode);
    if (!bwd.ok()) return bwd.status();
    bt.forward_time = *fwd;
    bt.backward_time = *bwd;
    bt.slowest_link_class = SlowestClass(topology, bt.forward_flows);
    setup->boundaries.push_back(std::move(bt));
  }
  for (int k = 0; k < K; ++k) {
    VirtualStageCost& vs = setup->virtual_stages[k];
    const StageLayout& l = setup->stages[k % S].layout;
    Time forward_tp = 0, backward_tp = 0;
    if (auto s = CollectivesTime(timer, l, vs.cost.forward_collectives, vs.forward_collective_time, forward_tp,
                                 vs.forward_link_load);
        !s.ok()) {
      return s;
    }
    if (auto s = CollectivesTime(timer, l, vs.cost.backward_collectives, vs.backward_collective_time, backward_tp,
                                 vs.backward_link_load);
        !s.ok()) {
      return s;
    }
    // Transformer Engine's userbuffers overlap: the TP all-gathers/reduce-scatters run under the GEMMs
    // they feed, hidden up to the pass's compute time (docs/cost-model.md).
    if (plan.tp_comm_overlap()) {
      vs.forward_hidden_comm_time = std::min(forward_tp, vs.cost.forward_time);
      vs.backward_hidden_comm_time = std::min(backward_tp, vs.cost.backward_time);
    }
    if (plan.stages(k % S).zero_stage() == 3) {
      if (auto s = ZeroThreeGathers(timer, *setup->model, l, vs); !s.ok()) return s;
    }
    // Scattered boundary tensors are reassembled over the receiving replica's TP ranks.
    const int64_t samples = static_cast<int64_t>(plan.micro_batch_size()) / l.data_parallel;
    const auto tensor_groups = GroupsOf(l, workload::CollectiveGroup::kTensor);
    auto gathered_bytes = [&](const VirtualStageCost& at) {
      const double bps = setup->model->layer(at.first_layer + at.num_layers - 1).output_bytes_per_sample;
      return static_cast<int64_t>(std::ceil(bps * static_cast<double>(samples)));
    };
    if (k > 0) {
      if (auto s = AddCollective(timer, CollectiveOp::kAllGather, tensor_groups,
                                 gathered_bytes(setup->virtual_stages[k - 1]), 1, vs.forward_collective_time,
                                 vs.forward_link_load);
          !s.ok()) {
        return s;
      }
    }
    if (k + 1 < K) {
      if (auto s = AddCollective(timer, CollectiveOp::kAllGather, tensor_groups, gathered_bytes(vs), 1,
                                 vs.backward_collective_time, vs.backward_link_load);
          !s.ok()) {
        return s;
      }
    }
  }

  // H-1F1B's inputs: c_i per physical boundary and t_max (forward + backward with TP collectives).
  for (int k = 0; k < K; ++k) {
    const VirtualStageCost& vs = setup->virtual_stages[k];
    setup->h1f1b.t_max = std::max(setup->h1f1b.t_max, vs.forward_time() + vs.backward_time());
  }
  for (int i = 0; i + 1 < S; ++i) {
    const BoundaryTransfer& bt = setup->boundaries[i];
    setup->h1f1b.boundary_comm.push_back(std::max(bt.forward_time, bt.backward_time));
  }
  setup->h1f1b.epsilon = proto::H1f1bEpsilon(plan);

  pipeline::ScheduleSpec spec;
  spec.kind = plan.schedule();
  spec.num_stages = S;
  spec.num_microbatches = static_cast<int>(inputs.microbatches);
  spec.virtual_stages = v;
  for (const v1::Stage& st : plan.stages()) spec.warmup_forwards.push_back(static_cast<int>(st.warmup_forwards()));
  spec.h1f1b = setup->h1f1b;
  absl::StatusOr<pipeline::PipelineSchedule> schedule = pipeline::BuildSchedule(spec, plan_file);
  if (!schedule.ok()) return schedule.status();
  schedule->blocking_p2p = plan.blocking_p2p();
  setup->dag = std::make_unique<pipeline::PipelineDag>(*schedule);

  pipeline::UniformCosts costs;
  for (const VirtualStageCost& vs : setup->virtual_stages) {
    costs.forward.push_back(vs.forward_time());
    costs.backward.push_back(vs.backward_time());
  }
  for (const BoundaryTransfer& bt : setup->boundaries) {
    costs.comm_forward.push_back(bt.forward_time);
    costs.comm_backward.push_back(bt.backward_time);
  }
  setup->durations = pipeline::NodeDurations(*setup->dag, costs);
  return setup;
}

}  // namespace hetsim::sim::executor
