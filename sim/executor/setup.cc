#include "sim/executor/setup.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/spec/grad_buckets.h"
#include "base/status_macros.h"
#include "base/units.h"
#include "base/wall_limit.h"
#include "sim/collectives/primitives.h"
#include "sim/collectives/simulate.h"
#include "sim/engine/simulator.h"
#include "sim/executor/cp_ring.h"
#include "sim/executor/lock_step.h"
#include "sim/executor/replica_groups.h"
#include "sim/workload/nccl_contention.h"
#include "sim/workload/optimizer_step.h"

namespace hetsim::executor {
namespace {

std::vector<GpuId> Slice(const StageLayout& l, int first_replica, int replicas, int tp_rank, int cp_rank) {
  std::vector<GpuId> out;
  for (int r = first_replica; r < first_replica + replicas; ++r) out.push_back(l.Gpu(r, tp_rank, cp_rank));
  return out;
}

}  // namespace

std::vector<std::vector<GpuId>> GroupsOf(const StageLayout& l, workload::CollectiveGroup group) {
  std::vector<std::vector<GpuId>> groups;
  if (group == workload::CollectiveGroup::kTensor) {
    for (int r = 0; r < l.data_parallel; ++r) {
      for (int c = 0; c < l.context_parallel; ++c) groups.push_back(l.TensorGroup(r, c));
    }
    return groups;
  }
  if (group == workload::CollectiveGroup::kStage) return {l.gpus};
  const int etp = l.ExpertTensorParallel(), ep = l.expert_parallel;
  const int gpus = static_cast<int>(l.gpus.size());
  if (group == workload::CollectiveGroup::kExpertAndTensor) {
    for (int first = 0; first + etp * ep <= gpus; first += etp * ep) {
      groups.emplace_back(l.gpus.begin() + first, l.gpus.begin() + first + etp * ep);
    }
    return groups;
  }
  for (int first = 0; first + etp * ep <= gpus; first += etp * ep) {
    for (int r = 0; r < (group == workload::CollectiveGroup::kExpertTensor ? ep : etp); ++r) {
      std::vector<GpuId>& g = groups.emplace_back();
      if (group == workload::CollectiveGroup::kExpertTensor) {
        for (int i = 0; i < etp; ++i) g.push_back(l.gpus[first + r * etp + i]);  // ETP consecutive GPUs
      } else {
        for (int j = 0; j < ep; ++j) g.push_back(l.gpus[first + j * etp + r]);  // EP GPUs, ETP apart
      }
    }
  }
  return groups;
}

namespace {

// One collective of a pass, `count` times in a row: adds its time (the slowest group's: the stage's
// replicas run in step) to `time` and the load of every group to `load`. With `at_once` the groups that
// share a node run together (CollectiveTimer::EachNodeSharingSet), else each alone.
absl::Status AddCollective(CollectiveTimer& timer, CollectiveOp op, const std::vector<std::vector<GpuId>>& groups,
                           int64_t bytes, int64_t count, Time& time, std::vector<LinkLoad>& load,
                           bool at_once = false) {
  absl::StatusOr<GroupsTiming> t =
      at_once ? timer.EachNodeSharingSet(op, groups, bytes) : timer.EachGroup(op, groups, bytes);
  if (!t.ok()) return t.status();
  time += t->slowest * count;
  AddLoad(load, t->load, count);
  return absl::OkStatus();
}

// The shares of a pass's collective time the overlaps may hide.
struct HideableTime : workload::TpOverlapTimes {
  std::vector<std::pair<int, Time>> dispatch;  // (layer, time) of each EP all-to-all (Plan.moe_a2a_overlap)
};

// Adds the list's collectives to `time` and `load`, and what the overlaps may hide to `hideable`.
absl::Status CollectivesTime(CollectiveTimer& timer, const StageLayout& l,
                             const std::vector<workload::StageCollective>& list, Time& time, HideableTime& hideable,
                             std::vector<LinkLoad>& load) {
  for (const workload::StageCollective& c : list) {
    const Time before = time;
    // An MoE layer's token all-to-all runs on every expert-parallel group at once (each rank dispatches its
    // own tokens, NCCL's grouped sends and receives to every peer), so the groups of a node share its NICs
    // (an EP group ETP apart leaves the node's other ETP ranks' groups on the same nodes). The other
    // collectives are timed group by group (docs/heterogeneous.md, "MoE all-to-alls across nodes").
    const bool at_once = c.group == workload::CollectiveGroup::kExpert;
    if (auto s = AddCollective(timer, c.op, GroupsOf(l, c.group), c.bytes, c.count, time, load, at_once); !s.ok()) {
      return s;
    }
    hideable.Add(c, time - before);
    if (c.group == workload::CollectiveGroup::kExpert) hideable.dispatch.emplace_back(c.layer, time - before);
  }
  return absl::OkStatus();
}

topology::LinkClass SlowestClass(const topology::Topology& topology, const std::vector<BoundaryFlow>& flows) {
  double slowest = -1;
  topology::LinkClass cls = topology::LinkClass::kNvlink;
  for (const BoundaryFlow& f : flows) {
    for (LinkId id : f.route) {
      const topology::Link& link = topology.link(id);
      // Ties go to the slower fabric kind: a gateway's uplink is as wide as the links it feeds.
      if (slowest < 0 || link.bandwidth.bytes_per_second() < slowest ||
          (link.bandwidth.bytes_per_second() == slowest && link.link_class > cls)) {
        slowest = link.bandwidth.bytes_per_second();
        cls = link.link_class;
      }
    }
  }
  return cls;
}

// What a layer weighs in its stage's ZeRO-3 gathers: its dense parameters (not its experts'), and the
// tied matrix where it holds it; `without_tied` (a layer range of a plan of pipelines whose tied matrix
// gathers over its own group, RangeGather::tied): the dense parameters without the matrix.
double GatherWeight(const workload::ModelCost& model, const workload::LayerCost& layer, bool without_tied = false) {
  const auto dense = static_cast<double>(layer.param_count - layer.expert_param_count);
  if (!without_tied) return dense + (layer.tied_with_embedding ? static_cast<double>(layer.tied_param_count) : 0);
  const workload::LayerCost& head = model.layer(model.num_layers() - 1);
  const bool holds_matrix = layer.kind == workload::LayerKind::kEmbedding && head.tied_with_embedding;
  return dense - (holds_matrix ? static_cast<double>(head.tied_param_count) : 0);
}

// Each gather of `gather` (one per layer of `vs`, in forward order) before the layer's forward and again
// before its backward, exposed or (Plan.zero3_prefetch) hidden up to the compute of the layer before it
// in pass order; the hidden part costs the pass its contention (`share`).
void AddGatherTimes(const std::vector<Time>& gather, bool prefetch, double share, VirtualStageCost& vs) {
  const size_t n = gather.size();
  vs.layer_gather_time = gather;
  const bool layer_times = vs.cost.layer_forward_s.size() == n && vs.cost.layer_backward_s.size() == n;
  Time forward_hidden = 0, backward_hidden = 0;
  for (size_t i = 0; i < n; ++i) {
    Time forward = gather[i], backward = gather[i];
    if (prefetch && layer_times) {
      // Forward runs layers first to last, backward last to first: the hiding layer is the one before.
      if (i > 0) forward = std::max<Time>(0, gather[i] - SecondsToTime(vs.cost.layer_forward_s[i - 1]));
      if (i + 1 < n) backward = std::max<Time>(0, gather[i] - SecondsToTime(vs.cost.layer_backward_s[i + 1]));
    }
    vs.forward_gather_exposed_time += forward;
    vs.backward_gather_exposed_time += backward;
    vs.layer_forward_gather_exposed.push_back(forward);
    vs.layer_backward_gather_exposed.push_back(backward);
    forward_hidden += gather[i] - forward;
    backward_hidden += gather[i] - backward;
  }
  vs.forward_contention_time += workload::ContentionTime(share, forward_hidden);
  vs.backward_contention_time += workload::ContentionTime(share, backward_hidden);
  vs.forward_collective_time += vs.forward_gather_exposed_time;
  vs.backward_collective_time += vs.backward_gather_exposed_time;
}

// One layer's all-gather of `bytes` over `groups` at once, timed alone on the network; its links'
// load counted in both passes.
absl::StatusOr<Time> LayerGather(CollectiveTimer& timer, const std::vector<std::vector<GpuId>>& groups, int64_t bytes,
                                 VirtualStageCost& vs) {
  if (bytes <= 0) return Time();
  HETSIM_ASSIGN_OR_RETURN(const Time t, timer.ConcurrentTimeOf(CollectiveOp::kAllGather, groups, bytes));
  HETSIM_ASSIGN_OR_RETURN(const std::vector<LinkLoad> load,
                          timer.ConcurrentLoadOf(CollectiveOp::kAllGather, groups, bytes));
  AddLoad(vs.forward_link_load, load, 1);
  AddLoad(vs.backward_link_load, load, 1);
  return t;
}

// The bytes of each layer of `range` in its gathers: `all` split by GatherWeight, rounded cumulatively
// so that they add up to `all`.
std::vector<int64_t> LayerGatherBytes(const workload::ModelCost& model, const spec::LayerRange& range, int64_t all,
                                      bool without_tied = false) {
  std::vector<double> weight;
  double total = 0;
  for (int i = range.first_layer; i < range.first_layer + range.num_layers; ++i) {
    weight.push_back(GatherWeight(model, model.layer(i), without_tied));
    total += weight.back();
  }
  std::vector<int64_t> out(weight.size(), 0);
  if (total <= 0) return out;
  double cumulative = 0;
  int64_t done = 0;
  for (size_t i = 0; i < weight.size(); ++i) {
    cumulative += weight[i];
    const auto upto = static_cast<int64_t>(std::llround(static_cast<double>(all) * cumulative / total));
    out[i] = upto - done;
    done = upto;
  }
  return out;
}

// ZeRO-3: each layer's weights, sharded over the DP group, are all-gathered before the layer's
// forward and again before its backward (DeepSpeed and FSDP free them in between), by every TP rank's
// DP group at once; each layer gathers its share of the virtual stage's dense parameter bytes by
// parameter count, timed alone on the network. Without prefetch every gather is on the critical path
// of the pass. With Plan.zero3_prefetch the gather of the next layer (in pass order) is issued when a
// layer starts computing: the first gather of a pass stays exposed, each later one is hidden up to
// the compute time of the layer before it.
// `l` is the stage's layout (a mixed stage gathers over all its replicas, per shard of the finest TP
// split) and `param_bytes` what each of its groups gathers of the virtual stage. The hidden part of the
// gathers costs each pass its contention (`share` of the SMs, Plan.nccl_sm_contention).
absl::Status ZeroThreeGathers(CollectiveTimer& timer, const workload::ModelCost& model, const StageLayout& l,
                              bool prefetch, int64_t param_bytes, double share, VirtualStageCost& vs) {
  if (l.gradient_group_size() <= 1 || param_bytes <= 0) return absl::OkStatus();
  std::vector<std::vector<GpuId>> groups;
  for (int t = 0; t < l.tensor_parallel; ++t) groups.push_back(l.DataGroup(t));
  const std::vector<int64_t> bytes = LayerGatherBytes(model, vs, param_bytes);
  std::vector<Time> gather;
  for (const int64_t b : bytes) {
    HETSIM_ASSIGN_OR_RETURN(gather.emplace_back(), LayerGather(timer, groups, b, vs));
  }
  AddGatherTimes(gather, prefetch, share, vs);
  return absl::OkStatus();
}

// The layer of `vs` whose gathers carry the tied matrix (RangeGather::tied) where `vs` holds a copy:
// the embedding, or without it the head; -1 when it holds none.
int TiedGatherLayer(const workload::ModelCost& model, const spec::LayerRange& vs) {
  if (vs.first_layer == 0) return 0;
  const int head = model.num_layers() - 1;
  return vs.first_layer + vs.num_layers - 1 == head ? head : -1;
}

// ZeRO-3 in a plan of pipelines: each layer of `vs` gathers its share of its layer range's parameters
// (`ranges`, ExecutionSetup::range_gathers) over the range's shard groups, every GPU of every pipeline
// that holds the range, as ZeroThreeGathers gathers over a stage's replicas. With the tied sync a copy's
// layer (TiedGatherLayer) gathers the tied matrix too, over every copy's GPUs, after its range's part
// (one stream: FSDP issues its all-gathers in order).
absl::Status RangeGathers(CollectiveTimer& timer, const workload::ModelCost& model, std::span<const RangeGather> ranges,
                          bool prefetch, double share, VirtualStageCost& vs) {
  std::vector<Time> gather;
  for (const RangeGather& r : ranges) {
    if (r.tied) continue;
    const int first = std::max(r.first_layer, vs.first_layer);
    const int end = std::min(r.first_layer + r.num_layers, vs.first_layer + vs.num_layers);
    if (first >= end) continue;
    const bool alone = r.groups.empty() || r.groups.front().size() <= 1;
    const std::vector<int64_t> bytes = LayerGatherBytes(model, r, alone ? 0 : r.bytes, r.without_tied);
    for (int i = first; i < end; ++i) {
      HETSIM_ASSIGN_OR_RETURN(gather.emplace_back(), LayerGather(timer, r.groups, bytes[i - r.first_layer], vs));
    }
  }
  HETSIM_CHECK(static_cast<int>(gather.size()) == vs.num_layers, "the ranges cover the virtual stage's layers");
  for (const RangeGather& r : ranges) {
    const int layer = TiedGatherLayer(model, vs);
    if (!r.tied || layer < 0 || r.groups.empty() || r.groups.front().size() <= 1) continue;
    HETSIM_ASSIGN_OR_RETURN(const Time t, LayerGather(timer, r.groups, r.bytes, vs));
    gather[layer - vs.first_layer] += t;
  }
  AddGatherTimes(gather, prefetch, share, vs);
  return absl::OkStatus();
}

}  // namespace

std::vector<GpuId> StageLayout::TensorGroup(int replica, int cp_rank) const {
  if (mixed()) {
    const StageLayout& g = GroupOfReplica(replica);
    return g.TensorGroup(replica, cp_rank);
  }
  const auto first = gpus.begin() + (replica * context_parallel + cp_rank) * tensor_parallel;
  return std::vector<GpuId>(first, first + tensor_parallel);
}

std::vector<GpuId> StageLayout::DataGroup(int tp_rank) const {
  if (mixed()) {
    std::vector<GpuId> out;
    for (const StageLayout& g : replica_groups) {
      const int rank = tp_rank * g.tensor_parallel / tensor_parallel;
      for (int r = 0; r < g.data_parallel; ++r) out.push_back(g.Gpu(r, rank));
    }
    return out;
  }
  if (context_parallel == 1) return Slice(*this, 0, data_parallel, tp_rank, 0);
  std::vector<GpuId> out;
  for (int r = 0; r < data_parallel; ++r) {
    for (int c = 0; c < context_parallel; ++c) out.push_back(Gpu(r, tp_rank, c));
  }
  return out;
}

std::vector<GpuId> StageLayout::ExpertDataGroup(int index) const {
  return ExpertShardGroup(index, expert_parallel, ExpertTensorParallel());
}

// Shard `index` of a finer split (EP rank index / etp of `ep`, ETP rank index % etp of `etp`): in a layout
// (or group) of EP e and ETP t dividing them, inside EP rank (that rank) x e / ep and ETP rank (that rank)
// x t / etp, at offset (EP rank) x t + (ETP rank) of each copy of t x e GPUs; a mixed stage's groups each
// at their own.
std::vector<GpuId> StageLayout::ExpertShardGroup(int index, int ep, int etp) const {
  std::vector<GpuId> out;
  const auto add = [&](const StageLayout& g) {
    const int e = g.expert_parallel, t = g.ExpertTensorParallel(), block = e * t;
    const int offset = (index / etp) * e / ep * t + (index % etp) * t / etp;
    for (size_t first = 0; first + block <= g.gpus.size(); first += block) out.push_back(g.gpus[first + offset]);
  };
  if (!mixed()) add(*this);
  for (const StageLayout& g : replica_groups) add(g);
  return out;
}

int StageLayout::expert_gradient_group_size() const {
  if (!mixed()) return static_cast<int>(gpus.size()) / expert_data_groups();
  int copies = 0;
  for (const StageLayout& g : replica_groups) copies += static_cast<int>(g.gpus.size()) / g.expert_data_groups();
  return copies;
}

std::vector<std::vector<GpuId>> SyncGroupsOf(const StageLayout& l, bool experts) {
  std::vector<std::vector<GpuId>> groups;
  if (experts) {
    for (int e = 0; e < l.expert_data_groups(); ++e) groups.push_back(l.ExpertDataGroup(e));
  } else {
    for (int t = 0; t < l.tensor_parallel; ++t) groups.push_back(l.DataGroup(t));
  }
  return groups;
}

int ExecutionSetup::num_gpus() const {
  int n = 0;
  for (const StageSetup& s : stages) n += static_cast<int>(s.layout.gpus.size());
  return n;
}

std::vector<BoundaryFlow> ReshardFlows(const StageLayout& from, const StageLayout& to, uint64_t micro_batch_size,
                                       double bytes_per_sample, bool whole_pieces) {
  std::vector<BoundaryFlow> flows;
  const std::vector<int64_t> from_starts = from.ReplicaSampleStarts(micro_batch_size);
  const std::vector<int64_t> to_starts = to.ReplicaSampleStarts(micro_batch_size);
  // Context parallelism (the same on both sides): CP rank c hands its 1/CP of the tokens to CP rank c.
  const int cp = std::min(from.context_parallel, to.context_parallel);
  int first_q = 0;  // the first destination replica that still ends after the source replica begins
  for (int r = 0; r < from.data_parallel; ++r) {
    const int64_t lo = from_starts[r], hi = from_starts[r + 1];
    const int from_tp = from.ReplicaTensorParallel(r);
    while (first_q < to.data_parallel && to_starts[first_q + 1] <= lo) ++first_q;
    for (int q = first_q; q < to.data_parallel && to_starts[q] < hi; ++q) {
      const int64_t overlap = std::min(hi, to_starts[q + 1]) - std::max(lo, to_starts[q]);
      if (overlap <= 0) continue;
      const int to_tp = to.ReplicaTensorParallel(q);
      const int pieces = std::max(from_tp, to_tp);
      const auto bytes = static_cast<int64_t>(std::ceil(bytes_per_sample * static_cast<double>(overlap) / cp));
      for (int c = 0; c < cp; ++c) {
        for (int j = 0; j < pieces; ++j) {
          const int64_t piece = whole_pieces ? bytes : collectives::SplitBytes(bytes, pieces, j);
          flows.push_back({from.Gpu(r, j % from_tp, c), to.Gpu(q, j % to_tp, c), piece, {}});
        }
      }
    }
  }
  return flows;
}

void AddAttentionMaskBytes(uint64_t seq_length, std::vector<BoundaryFlow>& forward_flows) {
  constexpr uint64_t kFp16Bytes = 2;  // the engine's .half() cast of the boolean mask
  const auto mask_bytes = static_cast<int64_t>(seq_length * seq_length * kFp16Bytes);
  for (BoundaryFlow& flow : forward_flows) flow.bytes += mask_bytes;
}

namespace {

// Phase 1: the routes (unless shared) and the model's per-layer costs.
void BuildRoutesAndModel(ExecutionSetup& setup) {
  if (setup.router == nullptr) setup.router = std::make_shared<topology::Router>(*setup.topology);
  HETSIM_CHECK(&setup.router->topology() == setup.topology.get(), "a shared router routes on another topology");
  setup.model = std::make_unique<workload::ModelCost>(workload::ModelCost::Create(setup.spec.model));
}

// The GPUs of a mesh, node-major (proto/validate_plan.cc checked it against the cluster; GpuIdOf
// still refuses one outside the island).
absl::StatusOr<std::vector<GpuId>> MeshGpus(const topology::Topology& topology, int32_t island,
                                            const spec::MeshSpec& mesh) {
  std::vector<GpuId> out;
  out.reserve(static_cast<size_t>(mesh.node_count) * mesh.gpus_per_node);
  for (uint32_t n = 0; n < mesh.node_count; ++n) {
    for (uint32_t g = 0; g < mesh.gpus_per_node; ++g) {
      HETSIM_ASSIGN_OR_RETURN(GpuId id, topology.GpuIdOf(island, static_cast<int32_t>(mesh.first_node + n),
                                                         static_cast<int32_t>(mesh.first_gpu + g)));
      out.push_back(id);
    }
  }
  return out;
}

// The GPUs of a mesh and how TP, CP (the plan's) and DP split them; `where` names the stage or group.
absl::StatusOr<StageLayout> MeshLayout(const topology::Topology& topology, const spec::MeshSpec& mesh,
                                       int tensor_parallel, int data_parallel, int context_parallel,
                                       const std::string& where) {
  StageLayout layout;
  absl::StatusOr<int32_t> island = topology.IslandIndex(mesh.island);
  if (!island.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".mesh.island: ", island.status().message()));
  }
  absl::StatusOr<std::vector<GpuId>> gpus = MeshGpus(topology, *island, mesh);
  if (!gpus.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ".mesh: ", gpus.status().message()));
  layout.gpus = *std::move(gpus);
  layout.island = *island;
  layout.tensor_parallel = tensor_parallel;
  layout.data_parallel = data_parallel;
  layout.context_parallel = context_parallel;
  if (static_cast<int>(layout.gpus.size()) != layout.tensor_parallel * layout.context_parallel * layout.data_parallel) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: tensor_parallel %d x context_parallel %d x data_parallel %d != %d GPUs in the mesh", where,
                        layout.tensor_parallel, layout.context_parallel, layout.data_parallel, layout.gpus.size()));
  }
  return layout;
}

// The GPUs of stage `st` and how TP, CP (the plan's) and DP split them; a mixed stage's per group.
absl::StatusOr<StageLayout> LayoutOf(const topology::Topology& topology, const spec::StageSpec& st,
                                     int context_parallel) {
  if (st.mixed()) {
    std::vector<StageLayout> groups;
    for (size_t g = 0; g < st.replica_groups.size(); ++g) {
      const spec::ReplicaGroupSpec& group = st.replica_groups[g];
      HETSIM_ASSIGN_OR_RETURN(StageLayout layout,
                              MeshLayout(topology, group.mesh, group.tensor_parallel, group.data_parallel,
                                         context_parallel, absl::StrFormat("%s.replica_groups[%d]", st.where, g)));
      layout.micro_batch_share = group.micro_batch_share;
      // Each group lays the experts out over its own GPUs (its ETP x EP of them a copy).
      layout.expert_parallel = st.GroupExpertParallel(group);
      layout.expert_tensor_parallel = st.GroupExpertTensorParallel(group);
      groups.push_back(std::move(layout));
    }
    StageLayout mixed = MixedLayout(std::move(groups));
    mixed.expert_parallel = st.expert_parallel;
    mixed.expert_tensor_parallel = st.ExpertTensorParallel();
    return mixed;
  }
  HETSIM_ASSIGN_OR_RETURN(StageLayout layout, MeshLayout(topology, st.mesh, st.tensor_parallel, st.data_parallel,
                                                         context_parallel, st.where));
  layout.expert_parallel = st.expert_parallel;
  layout.expert_tensor_parallel = st.expert_tensor_parallel;
  return layout;
}

// What a stage synchronises of `dense` and `expert` bytes: nothing over groups of one GPU.
GradSyncStep SyncStep(const StageLayout& l, CollectiveOp op, int64_t dense, int64_t expert) {
  return {op, l.gradient_group_size() > 1 ? dense : 0, l.expert_gradient_group_size() > 1 ? expert : 0};
}

// The gradients of a stage (or of one model chunk on it) in buckets of Plan.grad_bucket_bytes (one
// bucket when 0): the dense parameters' over the DP x CP groups, then the experts' over the expert-
// data-parallel groups.
void AppendBuckets(const spec::PlanSpec& plan, const StageLayout& l, CollectiveOp op, const workload::StageCost& cost,
                   std::vector<GradSyncStep>& out) {
  const GradSyncStep all = SyncStep(l, op, cost.grad_sync_bytes, cost.expert_grad_sync_bytes);
  for (int64_t GradSyncStep::*part : {&GradSyncStep::bytes, &GradSyncStep::expert_bytes}) {
    const int64_t bytes = all.*part;
    const int64_t bucket = plan.grad_bucket_bytes > 0 ? static_cast<int64_t>(plan.grad_bucket_bytes) : bytes;
    for (int64_t done = 0; done < bytes; done += bucket) {
      GradSyncStep& step = out.emplace_back(GradSyncStep{op});
      step.*part = std::min(bucket, bytes - done);
    }
  }
}

// Adds the buckets AppendBuckets will cut `s`'s gradients into to `buckets` (every stage's so far), before
// any is cut: more than spec::kMaxGradBuckets is an error naming the plan file and Plan.grad_bucket_bytes.
absl::Status CountGradBuckets(const spec::PlanSpec& plan, const StageSetup& s, const std::string& where,
                              int64_t& buckets) {
  const GradSyncStep all =
      SyncStep(s.layout, CollectiveOp::kAllReduce, s.cost.grad_sync_bytes, s.cost.expert_grad_sync_bytes);
  const auto bucket_bytes = static_cast<int64_t>(plan.grad_bucket_bytes);
  buckets += spec::GradBucketCount(all.bytes, bucket_bytes) + spec::GradBucketCount(all.expert_bytes, bucket_bytes);
  if (buckets <= spec::kMaxGradBuckets) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: grad_bucket_bytes: %d cuts the stages' gradients into more than %d buckets (%s alone reduces %d bytes "
      "per GPU)",
      plan.where, bucket_bytes, spec::kMaxGradBuckets, absl::StripPrefix(where, absl::StrCat(plan.where, ": ")),
      all.bytes + all.expert_bytes));
}

// The parameter all-gather of a ZeRO-1/2 stage (or model chunk), both parts at once; nullopt when
// there is nothing to gather.
std::optional<GradSyncStep> ParamGather(const StageLayout& l, const workload::StageCost& cost) {
  const GradSyncStep step = SyncStep(l, CollectiveOp::kAllGather, cost.param_sync_bytes, cost.expert_param_sync_bytes);
  if (step.bytes <= 0 && step.expert_bytes <= 0) return std::nullopt;
  return step;
}

// The data-parallel gradient buckets of a stage and, for ZeRO-1/2, the parameter all-gather after the
// optimizer step.
// Under interleaving AssignGradBuckets replaces both with the model chunks'.
void AddGradSync(const spec::PlanSpec& plan, int zero_stage, StageSetup& out) {
  const CollectiveOp op = zero_stage == 0 ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter;
  AppendBuckets(plan, out.layout, op, out.cost, out.grad_buckets);
  // ZeRO-1/2 all-gather the updated weights after the step; ZeRO-3 keeps them sharded and gathers
  // each layer's before its forward and again before its backward (ZeroThreeGathers).
  if (zero_stage == 1 || zero_stage == 2) out.param_gather = ParamGather(out.layout, out.cost);
}

// The microbatches' passes of one stage alone, in series, within half of int64 picoseconds (about 46 days,
// kMaxSimulatedTime): the plan's rough bound prices FLOPs only, while a GPU type's per-kernel
// floor (host_op_us, kernel_launch_us, up to 1 s each) multiplies by every kernel (host_op_us 1e6 at 1e6 microbatches:
// an event scheduled before now, exit 134, session 42).
absl::Status CheckIterationFits(const workload::StageCost& cost, int64_t microbatches, const spec::GpuSpec& gpu,
                                const workload::GpuCompute& compute, absl::string_view where) {
  const double max_s = TimeToSeconds(kMaxSimulatedTime);
  const double pass_s = TimeToSeconds(cost.forward_time) + TimeToSeconds(cost.backward_time);
  const double total_s = pass_s * static_cast<double>(std::max<int64_t>(1, microbatches));
  if (total_s <= max_s) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: one microbatch's forward and backward take %g s on GPU type \"%s\" (its per-kernel floor: host_op_us "
      "%g, kernel launch %g us), so %d microbatches last %g s, beyond the %g s int64 picoseconds hold",
      where, pass_s, gpu.name, TimeToMicroseconds(SecondsToTime(compute.host_op_s())),
      TimeToMicroseconds(SecondsToTime(compute.kernel_launch_s())), microbatches, total_s, max_s));
}

// What a stage's replicas (or a mixed stage's group) on island `island` cost under `config`, with the
// island's GPU compute model.
struct PricedGroup {
  ReplicaGroupSetup group;
  workload::GpuCompute compute;
};
absl::StatusOr<PricedGroup> PriceOnIsland(const ExecutionSetup& setup, int32_t island_index,
                                          const workload::StageConfig& config, const std::string& where) {
  const spec::IslandSpec& island = setup.spec.cluster.islands[island_index];
  const spec::GpuSpec& gpu_spec = island.gpu;
  HETSIM_ASSIGN_OR_RETURN(
      workload::GpuCompute compute,
      workload::GpuCompute::Create(gpu_spec, setup.model->dtype(), island.gpu_where, setup.spec.cluster.ideal));
  ReplicaGroupSetup out;
  out.gpu_type_name = gpu_spec.preset.empty() ? gpu_spec.name : absl::StrCat(gpu_spec.name, " (", gpu_spec.preset, ")");
  out.peak_flop_per_s = compute.peak_flop_per_s();
  out.memory_capacity_bytes = gpu_spec.hbm_capacity.value();
  HETSIM_ASSIGN_OR_RETURN(out.cost, workload::ComputeStageCost(*setup.model, config, compute, where));
  HETSIM_RETURN_IF_ERROR(CheckIterationFits(out.cost, setup.spec.plan.microbatches, gpu_spec, compute, where));
  // Unscale (FP16), gradient norm and Adam over this GPU's shard of the states (and DeepSpeed 0.3.x's FP16
  // passes when the plan names them), then the iteration's host work; and a DPO reference model's weight
  // swap, once a step with the GPU idle (Plan.reference_policy.cpu_weight_swap).
  out.optimizer_time =
      SecondsToTime(workload::OptimizerStepSeconds(out.cost.optimizer_shard, setup.model->dtype(), compute, config)) +
      out.cost.reference_swap_time;
  return PricedGroup{std::move(out), std::move(compute)};
}

// What the cost model prices of replica group `g` of a mixed stage: its TP, its replicas' share, and
// ZeRO's shards over all the stage's replicas (data_parallel, the resolver's sum of the groups').
workload::StageConfig GroupConfig(const spec::StageSpec& st, const spec::PlanSpec& plan, int g, bool moe) {
  workload::StageConfig config = workload::StageConfigOf(st, plan);
  const spec::ReplicaGroupSpec& group = st.replica_groups[g];
  config.tensor_parallel = group.tensor_parallel;
  config.sequence_parallel = st.sequence_parallel && group.tensor_parallel > 1;  // Megatron-LM's: off at TP 1
  config.expert_tensor_parallel = 0;
  // MoE: the experts on the group's own GPUs at its own EP and ETP (ETP x EP of them a copy); ZeRO shards
  // their states over every group's copies (StageParallelism::expert_data_parallel).
  if (moe) {
    config.expert_parallel = st.GroupExpertParallel(group);
    config.expert_tensor_parallel = st.GroupExpertTensorParallel(group);
    config.expert_data_parallel = st.MixedExpertDataParallel();
  }
  config.micro_batch_size = group.micro_batch_share * static_cast<uint64_t>(st.data_parallel);
  return config;
}

int64_t MicrobatchBytes(double bytes_per_sample, uint64_t micro_batch_size) {
  return static_cast<int64_t>(std::ceil(bytes_per_sample * static_cast<double>(micro_batch_size)));
}

// The groups of a mixed stage priced, and the stage's figures from them (StageSetup::replica_groups).
absl::Status PriceMixedStage(const ExecutionSetup& setup, const spec::StageSpec& st, StageSetup& out,
                             std::vector<workload::GpuCompute>& computes) {
  std::vector<VirtualStageCost> passes;
  double peak_sum = 0;
  for (int g = 0; g < static_cast<int>(st.replica_groups.size()); ++g) {
    const StageLayout& layout = out.layout.replica_groups[g];
    HETSIM_ASSIGN_OR_RETURN(
        PricedGroup priced,
        PriceOnIsland(setup, layout.island, GroupConfig(st, setup.spec.plan, g, setup.model->num_experts() > 1),
                      absl::StrFormat("%s.replica_groups[%d]", st.where, g)));
    peak_sum += priced.group.peak_flop_per_s * static_cast<double>(layout.gpus.size());
    out.gpu_type_name += (g == 0 ? "" : " + ") + priced.group.gpu_type_name;
    out.optimizer_time = std::max(out.optimizer_time, priced.group.optimizer_time);
    passes.emplace_back().cost = priced.group.cost;
    out.replica_groups.push_back(std::move(priced.group));
    computes.push_back(std::move(priced.compute));
  }
  std::vector<const workload::StageCost*> costs;
  for (const ReplicaGroupSetup& g : out.replica_groups) costs.push_back(&g.cost);
  const double sample_bytes = setup.model->layer(st.first_layer + st.num_layers - 1).output_bytes_per_sample;
  out.cost = MixedStageCost(costs, SlowestGroup(passes), {FinestGroup(out.layout), FinestExpertGroup(out.layout)},
                            MicrobatchBytes(sample_bytes, setup.spec.plan.micro_batch_size));
  out.peak_flop_per_s = peak_sum / static_cast<double>(out.layout.gpus.size());
  out.memory_capacity_bytes = out.replica_groups[SlowestGroup(passes)].memory_capacity_bytes;
  return absl::OkStatus();
}

// Phase 2: physical stage `s`: layout, GPU compute model, whole-stage cost, memory, optimizer step and
// gradient synchronisation. `computes` receives the stage's compute model, one per replica group of a
// mixed stage (the virtual stages reuse them).
absl::StatusOr<StageSetup> PhysicalStage(const ExecutionSetup& setup, int s,
                                         std::vector<workload::GpuCompute>& computes, int64_t& buckets) {
  const spec::PlanSpec& plan = setup.spec.plan;
  const spec::StageSpec& st = plan.stages[s];
  StageSetup out;
  HETSIM_ASSIGN_OR_RETURN(out.layout, LayoutOf(*setup.topology, st, plan.context_parallel));
  if (st.mixed()) {
    HETSIM_RETURN_IF_ERROR(PriceMixedStage(setup, st, out, computes));
  } else {
    HETSIM_ASSIGN_OR_RETURN(PricedGroup priced,
                            PriceOnIsland(setup, out.layout.island, workload::StageConfigOf(st, plan), st.where));
    out.cost = std::move(priced.group.cost);
    out.gpu_type_name = std::move(priced.group.gpu_type_name);
    out.peak_flop_per_s = priced.group.peak_flop_per_s;
    out.memory_capacity_bytes = priced.group.memory_capacity_bytes;
    out.optimizer_time = priced.group.optimizer_time;
    computes.push_back(std::move(priced.compute));
  }
  HETSIM_RETURN_IF_ERROR(CountGradBuckets(plan, out, st.where, buckets));
  AddGradSync(plan, st.zero_stage, out);
  auto share_on = [&](int32_t island) {
    return workload::NcclSmShare(plan.nccl_sm_contention, setup.spec.cluster.islands[island]);
  };
  out.nccl_sm_share = share_on(out.layout.island);
  for (const StageLayout& group : out.layout.replica_groups) {
    out.nccl_sm_share = std::max(out.nccl_sm_share, share_on(group.island));
  }
  return out;
}

// A chunk of stage `st`'s layers (range) priced under `config`; a measured stage time is spread over
// the chunks by their share of the stage's layers.
absl::StatusOr<workload::StageCost> ChunkCost(const ExecutionSetup& setup, const spec::StageSpec& st,
                                              workload::StageConfig config, const pipeline::LayerRange& range,
                                              const workload::GpuCompute& compute, const std::string& where) {
  const double share = static_cast<double>(range.num_layers) / std::max<double>(1, st.num_layers);
  static_cast<spec::LayerRange&>(config) = range;
  config.measured_forward_ms *= share;
  config.measured_backward_ms *= share;
  return workload::ComputeStageCost(*setup.model, config, compute, where);
}

// Phase 3: virtual stages: the model's layers dealt in order to k = chunk * S + stage, each stage
// keeping its plan's layer count, its blocks cut into v chunks, the embedding in the first chunk and
// the head in the last (Megatron-LM's assignment, pipeline::VirtualStageLayers). A mixed stage's
// chunks are priced per replica group (VirtualStageCost::replica_groups); CombineReplicaGroups makes
// the chunk's own figures once its collectives are timed.
absl::Status CostVirtualStages(ExecutionSetup& setup, const std::vector<std::vector<workload::GpuCompute>>& computes,
                               int v) {
  const spec::PlanSpec& plan = setup.spec.plan;
  const int S = static_cast<int>(plan.stages.size());
  setup.virtual_stages.resize(S * v);
  std::vector<int> stage_layers;
  for (const spec::StageSpec& st : plan.stages) stage_layers.push_back(st.num_layers);
  const std::vector<pipeline::LayerRange> ranges =
      plan.virtual_stage_layers.empty() ? pipeline::VirtualStageLayers(stage_layers, v, setup.spec.model.edge_layers())
                                        : pipeline::DealtVirtualStageLayers(plan.virtual_stage_layers);
  for (int c = 0; c < v; ++c) {
    for (int s = 0; s < S; ++s) {
      const spec::StageSpec& st = plan.stages[s];
      VirtualStageCost& vs = setup.virtual_stages[c * S + s];
      const spec::LayerRange range = v == 1 ? static_cast<const spec::LayerRange&>(st) : ranges[c * S + s];
      static_cast<spec::LayerRange&>(vs) = range;
      const std::string where = v == 1 ? st.where : absl::StrFormat("%s (chunk %d)", st.where, c);
      for (int g = 0; g < static_cast<int>(st.replica_groups.size()); ++g) {
        VirtualStageCost& group = vs.replica_groups.emplace_back();
        static_cast<spec::LayerRange&>(group) = range;
        if (v == 1) {
          group.cost = setup.stages[s].replica_groups[g].cost;
          continue;
        }
        HETSIM_ASSIGN_OR_RETURN(group.cost,
                                ChunkCost(setup, st, GroupConfig(st, plan, g, setup.model->num_experts() > 1), range,
                                          computes[s][g], absl::StrFormat("%s.replica_groups[%d]", where, g)));
      }
      if (v == 1) {
        vs.cost = setup.stages[s].cost;
        continue;
      }
      if (st.mixed()) continue;
      HETSIM_ASSIGN_OR_RETURN(vs.cost,
                              ChunkCost(setup, st, workload::StageConfigOf(st, plan), range, computes[s][0], where));
    }
  }
  return absl::OkStatus();
}

// Phase 4: the transfers between virtual stages k and k+1, routed and timed alone on the network.
absl::Status BuildBoundaries(ExecutionSetup& setup) {
  const spec::PlanSpec& plan = setup.spec.plan;
  const int S = setup.num_stages();
  const int K = static_cast<int>(setup.virtual_stages.size());
  const topology::Topology& topology = *setup.topology;
  PointFlowTimer timer(topology, setup.network_mode);
  for (int k = 0; k + 1 < K; ++k) {
    BoundaryTransfer bt;
    bt.from_stage = k % S;
    bt.to_stage = (k + 1) % S;
    const VirtualStageCost& vs = setup.virtual_stages[k];
    const double bytes_per_sample = setup.model->layer(vs.first_layer + vs.num_layers - 1).output_bytes_per_sample;
    // A mixed stage's own cost is made with its collectives (phase 5); the microbatch is the same.
    bt.bytes_per_microbatch = vs.replica_groups.empty() ? vs.cost.boundary_bytes_per_microbatch
                                                        : MicrobatchBytes(bytes_per_sample, plan.micro_batch_size);
    const StageLayout& a = setup.stages[bt.from_stage].layout;
    const StageLayout& b = setup.stages[bt.to_stage].layout;
    bt.forward_flows = ReshardFlows(a, b, plan.micro_batch_size, bytes_per_sample);
    bt.backward_flows = ReshardFlows(b, a, plan.micro_batch_size, bytes_per_sample, plan.boundary_grads_whole);
    if (plan.pipeline_sends_attention_mask) AddAttentionMaskBytes(setup.model->seq_length(), bt.forward_flows);
    if (auto s = RouteFlows(*setup.router, bt.forward_flows); !s.ok()) return s;
    if (auto s = RouteFlows(*setup.router, bt.backward_flows); !s.ok()) return s;
    absl::StatusOr<Time> fwd = timer.AloneTime(bt.forward_flows);
    if (!fwd.ok()) return fwd.status();
    absl::StatusOr<Time> bwd = timer.AloneTime(bt.backward_flows);
    if (!bwd.ok()) return bwd.status();
    bt.forward_time = *fwd;
    bt.backward_time = *bwd;
    bt.slowest_link_class = SlowestClass(topology, bt.forward_flows);
    setup.boundaries.push_back(std::move(bt));
  }
  return absl::OkStatus();
}

// The pass's MoE layers in the order it runs them, each with its EP all-to-all time and its compute.
void SetMoeLayers(const std::vector<std::pair<int, Time>>& dispatch, const std::vector<double>& layer_seconds,
                  int first_layer, std::vector<MoeLayerTimes>& out) {
  for (const auto& [layer, time] : dispatch) {
    if (out.empty() || out.back().layer != layer) {
      const auto i = static_cast<size_t>(layer - first_layer);
      out.push_back({layer, 0, i < layer_seconds.size() ? SecondsToTime(layer_seconds[i]) : 0});
    }
    out.back().dispatch += time;
  }
}

// The replicas of virtual stage k whose collectives AddPassCollectives times: `l` their layout (the
// stage's, or one replica group's), `samples` what each computes of a microbatch, and for ZeRO-3 the
// stage's layout and the parameter bytes each of its gather groups moves.
struct PassReplicas {
  const StageLayout* l = nullptr;
  int64_t samples = 0;
  const StageLayout* stage = nullptr;
  int64_t zero3_bytes = 0;
};

// Plan.nccl_sm_contention beyond ZeRO-3's gathers: Megatron-LM's asynchronous TP backward (NCCL
// all-reduces under the weight gradients; not Transformer Engine's userbuffers, whose GEMMs already run
// on the SMs their margins leave, nor PyTorch's async TP, whose symmetric-memory copies are not NCCL's)
// and the context-parallel exchange's hidden part each cost the pass share x their hidden time.
void AddHiddenContention(const spec::PlanSpec& plan, double share, VirtualStageCost& vs) {
  if (share <= 0) return;
  if (plan.tp_backward_overlap && !plan.tp_comm_overlap) {
    vs.backward_contention_time += workload::ContentionTime(share, vs.backward_hidden_comm_time);
  }
  vs.forward_contention_time +=
      workload::ContentionTime(share, vs.cp_forward_exchange_time - vs.cp_forward_exposed_time);
  vs.backward_contention_time +=
      workload::ContentionTime(share, vs.cp_backward_exchange_time - vs.cp_backward_exposed_time);
}

// The tensor-/expert-parallel collectives of virtual stage k on `on`'s replicas (with the TP overlap,
// ZeRO-3's gathers and the all-gathers that reassemble scattered boundary tensors), into `vs`.
absl::Status AddPassCollectives(const ExecutionSetup& setup, CollectiveTimer& timer, CpRingTimer& cp_timer, int k,
                                const PassReplicas& on, VirtualStageCost& vs) {
  const spec::PlanSpec& plan = setup.spec.plan;
  const int S = setup.num_stages();
  const int K = static_cast<int>(setup.virtual_stages.size());
  const StageLayout& l = *on.l;
  HideableTime forward_hideable, backward_hideable;
  HETSIM_RETURN_IF_ERROR(CollectivesTime(timer, l, vs.cost.forward_collectives, vs.forward_collective_time,
                                         forward_hideable, vs.forward_link_load));
  HETSIM_RETURN_IF_ERROR(CollectivesTime(timer, l, vs.cost.backward_collectives, vs.backward_collective_time,
                                         backward_hideable, vs.backward_link_load));
  // Transformer Engine's userbuffers overlap: the TP all-gathers/reduce-scatters run under the GEMMs
  // they feed, hidden up to the pass's compute time; Megatron-LM's asynchronous backward: the
  // input-gradient reductions run under the column-parallel weight gradients (docs/cost-model.md).
  vs.forward_userbuffers_comm_time = forward_hideable.userbuffers.all;
  vs.backward_userbuffers_comm_time = backward_hideable.userbuffers.all;
  SetMoeLayers(forward_hideable.dispatch, vs.cost.layer_forward_s, vs.first_layer, vs.forward_moe_layers);
  SetMoeLayers(backward_hideable.dispatch, vs.cost.layer_backward_s, vs.first_layer, vs.backward_moe_layers);
  // Transformer Engine's userbuffers, PyTorch's async TP or Megatron-LM's asynchronous backward, as the
  // planner prices them.
  vs.forward_hidden_comm_time =
      workload::PassHiddenByTpOverlap(plan, l.tensor_parallel, true, vs.cost, vs.first_layer, forward_hideable);
  vs.backward_hidden_comm_time =
      workload::PassHiddenByTpOverlap(plan, l.tensor_parallel, false, vs.cost, vs.first_layer, backward_hideable);
  const double share = workload::NcclSmShare(plan.nccl_sm_contention, setup.spec.cluster.islands[l.island]);
  if (plan.stages[k % S].zero_stage == 3 && !setup.range_gathers.empty()) {
    HETSIM_RETURN_IF_ERROR(RangeGathers(timer, *setup.model, setup.range_gathers, plan.zero3_prefetch, share, vs));
  } else if (plan.stages[k % S].zero_stage == 3) {
    HETSIM_RETURN_IF_ERROR(
        ZeroThreeGathers(timer, *setup.model, *on.stage, plan.zero3_prefetch, on.zero3_bytes, share, vs));
  }
  HETSIM_RETURN_IF_ERROR(AddContextParallelExchange(cp_timer, l, plan.cp_comm, vs, plan.pytorch_context_parallel));
  AddHiddenContention(plan, share, vs);
  // Scattered boundary tensors are reassembled over the receiving replica's TP ranks, unless the stage
  // runs sequence parallelism: its blocks take their input, and its output gradient, as the
  // sequence shards the TP ranks received (Megatron sends the [s/TP, b, h] shard and gathers nothing).
  if (plan.stages[k % S].sequence_parallel) return absl::OkStatus();
  const int64_t samples = on.samples;
  const auto tensor_groups = GroupsOf(l, workload::CollectiveGroup::kTensor);
  auto gathered_bytes = [&](const VirtualStageCost& at) {
    const double bps = setup.model->layer(at.first_layer + at.num_layers - 1).output_bytes_per_sample;
    return static_cast<int64_t>(std::ceil(bps * static_cast<double>(samples) / l.context_parallel));
  };
  if (k > 0) {
    HETSIM_RETURN_IF_ERROR(AddCollective(timer, CollectiveOp::kAllGather, tensor_groups,
                                         gathered_bytes(setup.virtual_stages[k - 1]), 1, vs.forward_collective_time,
                                         vs.forward_link_load));
  }
  if (k + 1 < K) {
    HETSIM_RETURN_IF_ERROR(AddCollective(timer, CollectiveOp::kAllGather, tensor_groups, gathered_bytes(vs), 1,
                                         vs.backward_collective_time, vs.backward_link_load));
  }
  return absl::OkStatus();
}

// Phase 5: the tensor-/expert-parallel collectives of virtual stage k; a mixed stage's per replica
// group, then the stage's figures from the groups' (CombineReplicaGroups).
absl::Status AddStageCollectives(ExecutionSetup& setup, CollectiveTimer& timer, CpRingTimer& cp_timer, int k) {
  const uint64_t micro = setup.spec.plan.micro_batch_size;
  VirtualStageCost& vs = setup.virtual_stages[k];
  const StageLayout& l = setup.stages[k % setup.num_stages()].layout;
  if (!l.mixed()) {
    const PassReplicas on{&l, static_cast<int64_t>(micro) / l.data_parallel, &l, vs.cost.param_sync_bytes};
    return AddPassCollectives(setup, timer, cp_timer, k, on, vs);
  }
  const int finest = FinestGroup(l);
  const int64_t zero3_bytes = vs.replica_groups[finest].cost.param_sync_bytes;
  for (size_t g = 0; g < l.replica_groups.size(); ++g) {
    const StageLayout& group = l.replica_groups[g];
    const PassReplicas on{&group, static_cast<int64_t>(group.micro_batch_share), &l, zero3_bytes};
    HETSIM_RETURN_IF_ERROR(AddPassCollectives(setup, timer, cp_timer, k, on, vs.replica_groups[g]));
  }
  const double sample_bytes = setup.model->layer(vs.first_layer + vs.num_layers - 1).output_bytes_per_sample;
  CombineReplicaGroups(vs, {finest, FinestExpertGroup(l)}, MicrobatchBytes(sample_bytes, micro));
  if (setup.spec.plan.zero3_lock_step && setup.range_gathers.empty()) {
    LockStepReplicaGroups(vs, setup.spec.plan.zero3_prefetch);
  }
  return absl::OkStatus();
}

// Phase 6: H-1F1B's inputs: c_i per physical boundary and t_max (forward + backward with TP collectives).
void SetH1f1bInputs(ExecutionSetup& setup) {
  for (const VirtualStageCost& vs : setup.virtual_stages) {
    setup.h1f1b.t_max = std::max(setup.h1f1b.t_max, vs.forward_time() + vs.backward_time());
  }
  for (int i = 0; i + 1 < setup.num_stages(); ++i) {
    const BoundaryTransfer& bt = setup.boundaries[i];
    setup.h1f1b.boundary_comm.push_back(std::max(bt.forward_time, bt.backward_time));
  }
  setup.h1f1b.epsilon = setup.spec.plan.h1f1b_epsilon;
}

// Plan.moe_a2a_overlap, Megatron-LM's combined 1F1B: in its steady state a stage runs a backward and
// the forward after it (of another microbatch) as one step, layer by layer on two streams: the j-th
// MoE layer of each pass beside the other pass's j-th, each layer's EP all-to-alls hidden behind the
// other's layer compute (up to it; Megatron's windows are sub-layers, so this is an upper bound). The
// warm-up's forwards and the cool-down's backwards run alone, and so do a forward and the backward of
// its own microbatch (the backward needs the forward's output). Pairs are taken left to right.
Time HiddenDispatch(const std::vector<MoeLayerTimes>& pass, const std::vector<MoeLayerTimes>& partner) {
  Time hidden = 0;
  for (size_t j = 0; j < std::min(pass.size(), partner.size()); ++j) {
    hidden += std::min(pass[j].dispatch, partner[j].compute);
  }
  return hidden;
}

void PairMoeDispatch(ExecutionSetup& setup) {
  const pipeline::PipelineDag& dag = *setup.dag;
  for (int s = 0; s < dag.num_stages(); ++s) {
    const std::vector<pipeline::NodeId>& order = dag.stage_compute_order()[s];
    for (size_t i = 0; i + 1 < order.size(); ++i) {
      const pipeline::DagNode& b = dag.node(order[i]);
      const pipeline::DagNode& f = dag.node(order[i + 1]);
      if (b.kind != pipeline::NodeKind::kBackward || f.kind != pipeline::NodeKind::kForward ||
          b.microbatch == f.microbatch) {
        continue;
      }
      const VirtualStageCost& bv = setup.virtual_stages[b.virtual_stage];
      const VirtualStageCost& fv = setup.virtual_stages[f.virtual_stage];
      // Each hidden all-to-all runs beside the other pass's compute (Plan.nccl_sm_contention).
      const Time backward_hidden = HiddenDispatch(bv.backward_moe_layers, fv.forward_moe_layers);
      const Time forward_hidden = HiddenDispatch(fv.forward_moe_layers, bv.backward_moe_layers);
      const double share = setup.stages[s].nccl_sm_share;
      const Time contention =
          workload::ContentionTime(share, backward_hidden) + workload::ContentionTime(share, forward_hidden);
      setup.durations[order[i]] -= backward_hidden - workload::ContentionTime(share, forward_hidden);
      setup.durations[order[i + 1]] -= forward_hidden - workload::ContentionTime(share, backward_hidden);
      setup.stages[s].moe_pair_contention_time += contention;
      ++i;  // f is taken
    }
  }
}

// Phase 7: the schedule, its DAG and the uncontended duration of every node.
absl::Status BuildDag(ExecutionSetup& setup, int v) {
  const spec::PlanSpec& plan = setup.spec.plan;
  pipeline::ScheduleSpec schedule_spec = pipeline::ScheduleSpecFromPlan(plan);
  schedule_spec.num_microbatches = static_cast<int>(setup.microbatches);
  schedule_spec.virtual_stages = v;
  schedule_spec.h1f1b = setup.h1f1b;
  absl::StatusOr<pipeline::PipelineSchedule> schedule = pipeline::BuildSchedule(schedule_spec, plan.where);
  if (!schedule.ok()) return schedule.status();
  schedule->blocking_p2p = plan.blocking_p2p;
  schedule->p2p_rendezvous = plan.p2p_rendezvous;
  setup.dag = std::make_unique<pipeline::PipelineDag>(*schedule);

  pipeline::UniformCosts costs;
  for (const VirtualStageCost& vs : setup.virtual_stages) {
    costs.forward.push_back(vs.forward_time());
    costs.backward.push_back(vs.backward_time());
  }
  for (const BoundaryTransfer& bt : setup.boundaries) {
    costs.comm_forward.push_back(bt.forward_time);
    costs.comm_backward.push_back(bt.backward_time);
  }
  setup.durations = pipeline::NodeDurations(*setup.dag, costs);
  if (plan.moe_a2a_overlap) PairMoeDispatch(setup);
  return absl::OkStatus();
}

// Phase 6: when each gradient bucket is ready (StageSetup::bucket_ready). Without interleaving the
// stage's buckets fill through its last operation. With v chunks each chunk has its own buckets, of
// its own gradients, filling through the chunk's last operation on the stage: Megatron-LM wraps each
// model chunk in its own DDP module and launches a chunk's reductions when its last microbatch's
// backward has produced them. Chunks launch in the order those operations come in the schedule.
// With Plan.overlap_param_gather, the ZeRO parameter all-gather of the step before runs per chunk at
// the iteration's start (Megatron-LM's distributed optimizer gathers a bucket when the forward first
// needs it; hetsim's grain is the chunk). ExecutionSetup::first_bucket indexes the buckets by the node
// that fills them, for the executor and the Chakra export alike.
void AssignGradBuckets(ExecutionSetup& setup, int v) {
  const int S = setup.num_stages();
  for (int s = 0; s < S; ++s) {
    StageSetup& st = setup.stages[s];
    const std::vector<pipeline::NodeId>& order = setup.dag->stage_compute_order()[s];
    if (order.empty()) continue;
    const int zero = setup.spec.plan.stages[s].zero_stage;
    if (v > 1 && (zero == 1 || zero == 2)) {
      // The parameters a stage gathers are its chunks' layers, not its contiguous range's (which may
      // hold no expert where a chunk does).
      workload::StageCost held;
      for (int c = 0; c < v; ++c) {
        held.param_sync_bytes += setup.virtual_stages[c * S + s].cost.param_sync_bytes;
        held.expert_param_sync_bytes += setup.virtual_stages[c * S + s].cost.expert_param_sync_bytes;
      }
      st.param_gather = ParamGather(st.layout, held);
    }
    std::vector<int> chunk_end(v, -1);  // position in `order` of each chunk's last operation
    for (size_t i = 0; i < order.size(); ++i)
      chunk_end[setup.dag->node(order[i]).virtual_stage / S] = static_cast<int>(i);
    std::vector<int> chunks;
    for (int c = 0; c < v; ++c) {
      if (chunk_end[c] >= 0) chunks.push_back(c);
    }
    std::sort(chunks.begin(), chunks.end(), [&](int a, int b) { return chunk_end[a] < chunk_end[b]; });
    if (st.param_gather && setup.spec.plan.overlap_param_gather) {
      for (int c = 0; c < v; ++c) {
        const workload::StageCost& cost = v == 1 ? st.cost : setup.virtual_stages[c * S + s].cost;
        // One per chunk, which its first forward waits for, even when it has nothing to gather.
        st.early_param_gathers.push_back(ParamGather(st.layout, cost).value_or(GradSyncStep{CollectiveOp::kAllGather}));
      }
    }
    if (v > 1) {
      const CollectiveOp op = zero == 0 ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter;
      st.grad_buckets.clear();
      for (int c : chunks) {
        const workload::StageCost& cost = setup.virtual_stages[c * S + s].cost;
        const size_t first = st.grad_buckets.size();
        AppendBuckets(setup.spec.plan, st.layout, op, cost, st.grad_buckets);
        const int pieces = static_cast<int>(st.grad_buckets.size() - first);
        for (int j = 0; j < pieces; ++j) st.bucket_ready.push_back({order[chunk_end[c]], j, pieces});
      }
      continue;
    }
    const int pieces = static_cast<int>(st.grad_buckets.size());
    for (int j = 0; j < pieces; ++j) st.bucket_ready.push_back({order.back(), j, pieces});
  }
  setup.first_bucket.assign(setup.dag->num_nodes(), -1);
  for (const StageSetup& st : setup.stages) {
    for (size_t j = 0; j < st.bucket_ready.size(); ++j) {
      if (st.bucket_ready[j].piece == 0) setup.first_bucket[st.bucket_ready[j].node] = static_cast<int32_t>(j);
    }
  }
}

// Plan.tied_embedding_grad_sync: DeepSpeed's ReduceTiedGrads, an all-reduce of the tied embedding's
// gradients between the first stage (the embedding) and the last (the head) after the last backward,
// one group per rank (GPU i of the first stage's layout with GPU i of the last; DeepSpeed's stages have
// equal layouts, of unequal ones the smaller's count pair up), all at once. The gradients are the model's element type,
// or FP32 for the main gradients of a BF16 run with grad_reduce_in_fp32 (Megatron's); each GPU holds its vocabulary
// shard (1 / TP of V h).
absl::Status AddTiedEmbeddingSync(ExecutionSetup& setup, CollectiveTimer& timer) {
  const int S = setup.num_stages();
  const spec::PlanSpec& plan = setup.spec.plan;
  if (!plan.tied_embedding_grad_sync || S < 2) return absl::OkStatus();
  const workload::LayerCost& head = setup.model->layer(setup.model->num_layers() - 1);
  if (!head.tied_with_embedding || head.tied_param_count == 0) return absl::OkStatus();
  const spec::DType dtype = setup.model->dtype();
  const int element =
      workload::TiedGradientsInFp32(dtype, plan.grad_reduce_in_fp32) ? 4 : workload::ElementBytes(dtype);
  const StageLayout& first = setup.stages[0].layout;
  const StageLayout& last = setup.stages[S - 1].layout;
  const int64_t bytes =
      static_cast<int64_t>(head.tied_param_count / static_cast<uint64_t>(first.tensor_parallel)) * element;
  std::vector<std::vector<GpuId>> groups;
  for (size_t i = 0; i < std::min(first.gpus.size(), last.gpus.size()); ++i)
    groups.push_back({first.gpus[i], last.gpus[i]});
  HETSIM_ASSIGN_OR_RETURN(const Time t, timer.ConcurrentTimeOf(CollectiveOp::kAllReduce, groups, bytes));
  setup.stages[0].tied_grad_sync_time = t;
  setup.stages[S - 1].tied_grad_sync_time = t;
  setup.tied_grad_sync_groups = std::move(groups);
  setup.tied_grad_sync_bytes = bytes;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ExecutionSetup>> BuildExecutionSetup(spec::SimulationSpec spec,
                                                                    std::shared_ptr<const topology::Topology> topology,
                                                                    network::NetworkMode mode, ReplicaReuse reuse,
                                                                    std::shared_ptr<topology::Router> router,
                                                                    std::span<const RangeGather> range_gathers) {
  auto setup = std::make_unique<ExecutionSetup>();
  setup->spec = std::move(spec);
  setup->range_gathers.assign(range_gathers.begin(), range_gathers.end());
  setup->network_mode = mode;
  setup->microbatches = setup->spec.plan.microbatches;
  setup->topology = std::move(topology);
  setup->router = std::move(router);
  BuildRoutesAndModel(*setup);
  constexpr absl::string_view kSettingUp = "setting up the simulation";
  HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check(kSettingUp));

  const spec::PlanSpec& plan = setup->spec.plan;
  std::vector<std::vector<workload::GpuCompute>> gpus_compute(plan.stages.size());
  int64_t buckets = 0;  // every stage's gradient buckets so far (CountGradBuckets)
  for (int s = 0; s < static_cast<int>(plan.stages.size()); ++s) {
    HETSIM_ASSIGN_OR_RETURN(StageSetup stage, PhysicalStage(*setup, s, gpus_compute[s], buckets));
    setup->stages.push_back(std::move(stage));
    HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check(kSettingUp));
  }
  const int v = plan.virtual_stages;
  HETSIM_RETURN_IF_ERROR(CostVirtualStages(*setup, gpus_compute, v));
  HETSIM_RETURN_IF_ERROR(BuildBoundaries(*setup));
  CollectiveTimer timer(*setup->topology, *setup->router, mode, reuse);
  CpRingTimer cp_timer(*setup->topology, *setup->router, mode);
  for (int k = 0; k < static_cast<int>(setup->virtual_stages.size()); ++k) {
    HETSIM_RETURN_IF_ERROR(AddStageCollectives(*setup, timer, cp_timer, k));
    HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check(kSettingUp));
  }
  HETSIM_RETURN_IF_ERROR(AddTiedEmbeddingSync(*setup, timer));
  setup->mapped_collective_groups = timer.mapped_groups();
  setup->simulated_collective_groups = timer.simulated_groups();
  SetH1f1bInputs(*setup);
  HETSIM_RETURN_IF_ERROR(BuildDag(*setup, v));
  AssignGradBuckets(*setup, v);
  HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check(kSettingUp));
  return setup;
}

}  // namespace hetsim::executor
